"""SciPy's Array API paths (SCIPY_ARRAY_API=1) on StrideWeave arrays: gradients agree with torch, or fail loudly.

``_library_harness.check`` fails on a wrong gradient, on a ``None``
gradient without an error, and on any error the case does not accept
(SciPy computing on NumPy is accepted as a refused implicit export, see
``_scipy_cases``).
"""

import warnings

import pytest

pytest.importorskip("scipy")

from _library_harness import CARRIERS, check, require_scipy_array_api  # noqa: E402

require_scipy_array_api()

from _scipy_cases import CASES  # noqa: E402


@pytest.mark.parametrize("carrier", CARRIERS)
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_gradient_agrees_or_fails_loudly(case, carrier):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check(case, carrier)
