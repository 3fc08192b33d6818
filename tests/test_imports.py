"""Importing StrideWeave must not import optional backends (checked in a clean subprocess)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

CHECK = textwrap.dedent("""
    import sys
    try:
        import {module}
    except ImportError as exc:  # the top-level package may still be under construction
        if "{module}" == "strideweave":
            print("SKIP", exc)
            raise SystemExit(0)
        raise
    backends = ("torch", "jax", "jaxlib", "array_api_strict", "dask", "distributed")
    loaded = sorted(m for m in backends if m in sys.modules)
    print("LOADED", loaded)
""")


@pytest.mark.parametrize("module", ["strideweave.carriers", "strideweave.dtypes", "strideweave"])
def test_import_pulls_in_no_optional_backend(module):
    out = subprocess.run([sys.executable, "-c", CHECK.format(module=module)],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    if out.stdout.startswith("SKIP"):
        pytest.skip(f"import {module} failed: {out.stdout}")
    assert out.stdout.strip() == "LOADED []", out.stdout


def test_carrier_classes_available_without_backends():
    out = subprocess.run([sys.executable, "-c", textwrap.dedent("""
        import sys
        from strideweave.carriers import TorchCarrier, JaxCarrier, carrier_for_array
        import numpy as np
        assert carrier_for_array(np.zeros(1)).__name__ == "NumpyCarrier"
        assert "torch" not in sys.modules and "jax" not in sys.modules
    """)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
