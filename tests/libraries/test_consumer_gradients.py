"""xarray, marray, einops and array-api-extra on StrideWeave arrays: gradients agree, or fail loudly.

Each case runs the library's own code on a Float32 Tensor on every carrier
and compares the gradient with torch.autograd in float64 on the same code
where torch runs it, else with float64 central differences of the same code
on NumPy (``_library_harness``). ``check`` fails on a wrong gradient, on a
``None`` gradient without an error, and on any error the case does not
accept (see ``_consumer_cases`` and ``_xarray_cases``).
"""

import warnings

import pytest

pytest.importorskip("einops")
pytest.importorskip("marray")
pytest.importorskip("array_api_extra")
pytest.importorskip("xarray")

import _consumer_cases
import _xarray_cases
from _library_harness import CARRIERS, check

CASES = _consumer_cases.CASES + _xarray_cases.CASES


@pytest.mark.parametrize("carrier", CARRIERS)
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_gradient_agrees_or_fails_loudly(case, carrier):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the libraries warn about dtypes and conversions; the verdict is the gradient
        check(case, carrier)
