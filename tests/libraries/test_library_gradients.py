"""scikit-learn and SciPy Array API paths on StrideWeave arrays: gradients agree with torch.autograd, or fail loudly.

scikit-learn runs under ``sklearn.config_context(array_api_dispatch=True)``,
SciPy with ``SCIPY_ARRAY_API=1``, on every carrier. ``_library_harness.check``
fails on a wrong gradient, on a ``None`` gradient without an error, and on
any error the case does not accept (see ``_sklearn_cases`` and
``_scipy_cases``; SciPy computing on NumPy is accepted as a refused
implicit export).
"""

import warnings

import pytest

pytest.importorskip("sklearn")
pytest.importorskip("scipy")

from _library_harness import CARRIERS, check, require_scipy_array_api

require_scipy_array_api()

import _scipy_cases  # noqa: E402
import _sklearn_cases  # noqa: E402

CASES = _sklearn_cases.CASES + _scipy_cases.CASES


@pytest.mark.parametrize("carrier", CARRIERS)
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_gradient_agrees_or_fails_loudly(case, carrier):
    with warnings.catch_warnings():
        # the libraries warn about dtypes and conversions; the verdict is the gradient
        warnings.simplefilter("ignore")
        check(case, carrier)
