"""``scipy.differentiate.derivative`` on StrideWeave arrays: why a Float32 input stops with LeafWriteError.

SciPy allocates ``df = xp.full_like(f, nan)``, copies it (``xp.asarray(df, copy=True)``, a
recorded copy whose gradient flows to the leaf ``df``) and then writes its Float32 estimate,
computed from ``x``, into ``df``. The one rule for writes into leaves (docs/array-api.md,
"SciPy's differentiate") refuses that write: recording it would end ``df`` as a leaf and drop
the copy's gradient, an update would drop the estimate's. The values are there under no_grad
or in Float64.
"""

import warnings

import numpy as np
import pytest

import strideweave as sw
import strideweave.array_api as xp
from strideweave.errors import LeafWriteError

pytest.importorskip("scipy")
from scipy.differentiate import derivative  # after the skip; SCIPY_ARRAY_API: tests/conftest.py

POINTS = [0.5, 1.0, 2.0]


def test_derivative_of_a_float32_input_raises_the_leaf_write_error():
    x = xp.asarray(POINTS)
    with pytest.raises(LeafWriteError, match="fresh buffer"):
        derivative(xp.exp, x)
    assert x.tolist() == POINTS and x.grad is None


def test_the_refused_write_would_drop_the_gradient_a_recorded_copy_sends_to_the_leaf():
    # SciPy's steps, without SciPy: the copy's gradient reaches df.grad, so df must stay a leaf.
    x = xp.asarray(POINTS)
    f = xp.exp(x)
    df = xp.full_like(f, xp.nan)
    df_last = xp.asarray(df, copy=True)
    xp.sum(df_last * 3.0).backward()
    assert df.grad.tolist() == [3.0, 3.0, 3.0]
    with pytest.raises(LeafWriteError):
        df[xp.asarray([True, False, True])] = f[::2] * 2.0
    assert np.isnan(df.numpy()).all()  # refused before anything was written
    df[...] = 1.0  # a constant into a leaf is an update
    assert df.tolist() == [1.0, 1.0, 1.0]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_derivative_values_under_no_grad_or_in_float64(dtype):
    x = xp.asarray(POINTS, dtype=getattr(xp, dtype))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # SciPy's own dtype warnings
        if dtype == "float32":
            with sw.no_grad():
                result = derivative(xp.exp, x)
        else:
            result = derivative(xp.exp, x)  # Float64 values are constants: the writes are updates
    assert result.success.tolist() == [True] * 3
    tolerance = 1e-5 if dtype == "float32" else 1e-10
    np.testing.assert_allclose(result.df.numpy(), np.exp(np.array(POINTS, np.float64)), rtol=tolerance)
