"""View backward: a cotangent stored in a permutation view's layout becomes the source's cotangent as is."""

import numpy as np
import pytest

import strideweave as sw

CARRIERS = sw.testing.available_carriers()


def _values(t):
    return np.asarray(t.numpy(), dtype=np.float64)


def _weight_and_input(carrier, rows=2, cols=3, batch=4):
    """A (rows, cols) weight and a (batch, cols) input, as NumPy values and as Tensors on ``carrier``."""
    w0 = np.arange(rows * cols, dtype=np.float32).reshape(rows, cols) / 5
    x0 = np.linspace(-1, 1, batch * cols, dtype=np.float32).reshape(batch, cols)
    return w0, x0, sw.tensor(w0, carrier=carrier), sw.tensor(x0, carrier=carrier)


@pytest.mark.parametrize("carrier", CARRIERS)
def test_transpose_backward_matches_the_matrix_gradient(carrier):
    w0, x0, w, x = _weight_and_input(carrier, rows=3, cols=4, batch=2)
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


@pytest.mark.parametrize("carrier", CARRIERS)
def test_a_handed_on_cotangent_takes_further_contributions(carrier):
    # The transpose's cotangent (a fresh GEMM result) becomes w's total, which then
    # receives the second path's contribution: added in place where the library allows.
    w0, x0, w, x = _weight_and_input(carrier)
    first = x @ sw.transpose(w)                 # (4, 2)
    loss = sw.sum(first * first) + sw.sum(w * 2.0)
    loss.backward()
    expected = 2 * (x0 @ w0.T).T @ x0 + 2.0
    np.testing.assert_allclose(_values(w.grad), expected, rtol=1e-5)
    np.testing.assert_allclose(_values(x.grad), 2 * (x0 @ w0.T) @ w0, rtol=1e-5)


def test_a_retained_view_cotangent_is_not_handed_on():
    w = sw.tensor(np.ones((2, 3), np.float32))
    x = sw.tensor(np.full((4, 3), 0.5, np.float32))
    t = sw.transpose(w)
    t.retain_grad()
    loss = sw.sum(x @ t) + sw.sum(w * 3.0)
    loss.backward()
    np.testing.assert_allclose(_values(t.grad), np.full((3, 2), 2.0))
    np.testing.assert_allclose(_values(w.grad), np.full((2, 3), 5.0))
    assert not np.shares_memory(w.grad.carrier.array, t.grad.carrier.array)


def test_two_views_of_one_cotangent_share_no_total():
    # add hands its cotangent to both operands unchanged: neither may own it.
    w = sw.tensor(np.ones((2, 3), np.float32))
    v = sw.tensor(np.ones((2, 3), np.float32))
    x = sw.tensor(np.full((4, 3), 0.5, np.float32))
    s = sw.transpose(w) + sw.transpose(v)
    loss = sw.sum(x @ s) + sw.sum(w * 3.0)
    loss.backward()
    np.testing.assert_allclose(_values(w.grad), np.full((2, 3), 5.0))
    np.testing.assert_allclose(_values(v.grad), np.full((2, 3), 2.0))
    assert not np.shares_memory(w.grad.carrier.array, v.grad.carrier.array)


@pytest.mark.parametrize("carrier", CARRIERS)
def test_two_handed_on_cotangents_for_one_source_add_up(carrier):
    w0, x0, w, x = _weight_and_input(carrier)
    first = x @ sw.transpose(w)
    second = (x * 2.0) @ sw.transpose(w)
    (sw.sum(first * first) + sw.sum(second)).backward()
    expected = 2 * (x0 @ w0.T).T @ x0 + np.ones((4, 2)).T @ (2 * x0)
    np.testing.assert_allclose(_values(w.grad), expected, rtol=1e-5)
