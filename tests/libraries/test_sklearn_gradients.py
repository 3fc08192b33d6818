"""scikit-learn's Array API paths on StrideWeave arrays: gradients agree with torch.autograd, or fail loudly.

Each case runs under ``sklearn.config_context(array_api_dispatch=True)`` on
every carrier; ``_library_harness.check`` fails on a wrong gradient, on a
``None`` gradient without an error, and on any error the case does not
accept (see ``_sklearn_cases``).
"""

import warnings

import pytest

pytest.importorskip("sklearn")
pytest.importorskip("scipy")

from _library_harness import CARRIERS, check, require_scipy_array_api  # noqa: E402

require_scipy_array_api()

from _sklearn_cases import CASES  # noqa: E402


@pytest.mark.parametrize("carrier", CARRIERS)
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_gradient_agrees_or_fails_loudly(case, carrier):
    with warnings.catch_warnings():
        # scikit-learn and SciPy warn about dtypes and conversions; the verdict is the gradient.
        warnings.simplefilter("ignore")
        check(case, carrier)
