"""Every script under examples/ runs to completion in a fresh interpreter."""

import pathlib
import subprocess
import sys

import pytest

# every example runs in its own interpreter (imports torch and JAX afresh): the slow step of CI
pytestmark = pytest.mark.slow

EXAMPLES = sorted((pathlib.Path(__file__).resolve().parent.parent / "examples").glob("*.py"))
NEEDS = {"mixed_carriers.py": ("torch", "jax"), "torch_module.py": ("torch",), "jax_jit.py": ("jax", "torch"),
         "jax_inplace.py": ("jax",), "array_api_libraries.py": ("scipy", "array_api_extra"),
         "xarray_regression.py": ("xarray",)}


@pytest.mark.parametrize("script", EXAMPLES, ids=lambda p: p.name)
def test_example_runs(script):
    for module in NEEDS.get(script.name, ()):
        pytest.importorskip(module)
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120,
                          cwd=script.parent)
    assert done.returncode == 0, f"{script.name} failed:\n{done.stdout}\n{done.stderr}"
    assert done.stdout.strip(), f"{script.name} printed nothing"
