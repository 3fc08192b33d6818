"""examples/array_api_libraries.py's library calls, checked with the plugin's check_grad on every carrier."""

import pathlib
import sys

import numpy as np
import pytest

pytest.importorskip("scipy")
pytest.importorskip("array_api_extra")

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "examples"))
import array_api_libraries as examples

sys.path.pop(0)


def test_scipy_dispatches_to_array_api():
    from scipy._lib._array_api import SCIPY_ARRAY_API

    assert SCIPY_ARRAY_API, "SciPy was imported before SCIPY_ARRAY_API=1 was set (tests/testing/conftest.py)"


@pytest.mark.parametrize("name", list(examples.PROGRAMS))
def test_library_function_matches_torch_and_jax(name, check_grad, sw_carrier):
    report = check_grad(examples.PROGRAMS[name], [examples.VALUES.astype(np.float64)])
    assert set(report.errors) == {(sw_carrier, r) for r in report.references}
    assert max(report.errors.values()) < 1e-5


def test_xp_fixture_makes_tensors_on_its_carrier(xp, sw_carrier):
    import strideweave as sw

    x = xp.asarray(examples.VALUES)  # a NumPy array, placed on the fixture's carrier
    assert type(x.carrier) is type(sw.zeros([1], carrier=sw_carrier).carrier)
    y = examples.PROGRAMS["scipy.special.logsumexp"](x)
    xp.sum(y).backward()
    assert x.grad.shape == x.shape
