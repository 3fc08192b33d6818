"""View backward: a cotangent stored in a permutation view's layout becomes the source's cotangent as is."""

import numpy as np
import pytest

import strideweave as sw

CARRIERS = sw.testing.available_carriers()


def _values(t):
    return np.asarray(t.numpy(), dtype=np.float64)


@pytest.mark.parametrize("carrier", CARRIERS)
def test_transpose_backward_matches_the_matrix_gradient(carrier):
    w0 = np.arange(12, dtype=np.float32).reshape(3, 4) / 7
    x0 = np.linspace(-1, 1, 8, dtype=np.float32).reshape(2, 4)
    w = sw.tensor(w0, carrier=carrier)
    x = sw.tensor(x0, carrier=carrier)
    out = x @ sw.transpose(w)                   # (2, 3)
    sw.sum(out * out).backward()
    expected = 2 * (x0 @ w0.T).T @ x0           # d/dw sum((x w^T)^2)
    np.testing.assert_allclose(_values(w.grad), expected, rtol=1e-5)
    np.testing.assert_allclose(_values(x.grad), 2 * (x0 @ w0.T) @ w0, rtol=1e-5)


@pytest.mark.parametrize("carrier", CARRIERS)
def test_a_slice_cotangent_stays_inside_the_slice(carrier):
    # The cotangent of the first half lives in a carrier as large as the source:
    # only the slice's slots may reach the source's gradient.
    x = sw.tensor(np.arange(8, dtype=np.float32), carrier=carrier)
    head = x[0:4]
    big = sw.tensor(np.full(8, 5.0, np.float32), carrier=carrier)
    head.backward(big[0:4])
    np.testing.assert_array_equal(_values(x.grad), [5, 5, 5, 5, 0, 0, 0, 0])


def test_gradients_through_one_transpose_do_not_share_storage():
    w = sw.tensor(np.ones((2, 3), np.float32))
    t = sw.transpose(w)
    t.retain_grad()
    sw.sum(t * 3.0).backward()
    np.testing.assert_array_equal(_values(w.grad), np.full((2, 3), 3.0))
    np.testing.assert_array_equal(_values(t.grad), np.full((3, 2), 3.0))
    assert not np.shares_memory(w.grad.carrier.array, t.grad.carrier.array)
