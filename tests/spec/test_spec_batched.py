"""Requirement: Batched functional gradients return one stacked gradient per reachable input."""

import numpy as np
import pytest
from _spec_support import arr, canonical, layout, stored, vec

import strideweave as sw


def _batched(values, out_layout, carrier, batch_stride=None):
    """K cotangents (rows of ``values``) for an output with ``out_layout``: batch mode prepended."""
    values = np.asarray(values, dtype=np.float64)
    k = values.shape[0]
    cos = out_layout.cosize
    bstride = cos if batch_stride is None else batch_stride
    lay = sw.Layout(sw.Shape((k, *out_layout.shape.modes)), sw.Stride((bstride, *out_layout.stride.modes)))
    return canonical(values, lay, carrier)


def test_reconstruct_a_jacobian_from_basis_cotangents(carrier):
    av = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    xv = np.array([0.5, -1.0, 2.0])
    A, x = vec(av, carrier), vec(xv, carrier)
    out = A @ x
    assert out.layout == layout(2, 1)
    basis = _batched(np.eye(2), out.layout, carrier)
    assert basis.layout == layout([2, 2], [2, 1])
    jx, jA = sw.grad(out, [x, A], basis, batched=True)
    assert jx.layout == layout([2, 3], [3, 1])
    np.testing.assert_allclose(arr(jx), av)  # row k = d out[k] / d x
    expected_A = np.zeros((2, 2, 3))
    expected_A[0, 0], expected_A[1, 1] = xv, xv
    assert jA.layout == sw.Layout(sw.Shape([2, 2, 3]), sw.Stride([6, 1, 2]))
    np.testing.assert_allclose(arr(jA), expected_A)
    assert x.grad is None and A.grad is None
    assert jx.autograd_ctx is None and type(jx.carrier) is type(x.carrier)


def test_keep_batch_indices_disjoint_across_storage_holes(carrier):
    xl = layout(2, 3)                      # cosize 4 > size 2
    x = stored([1.0, 0.0, 0.0, 2.0], xl, carrier)
    wv = np.array([5.0, -7.0])
    out = x * vec(wv, carrier)
    cots = np.array([[1.0, 0.0], [0.0, 1.0], [2.0, 3.0]])
    (stacked,) = sw.grad(out, [x], _batched(cots, out.layout, carrier), batched=True)
    single = x.layout  # injective: the single-gradient layout is the input's own
    assert stacked.layout == sw.Layout(sw.Shape([3, 2]), sw.Stride([single.cosize, 3]))
    assert stacked.layout.stride.modes[0] == 4
    np.testing.assert_allclose(arr(stacked), cots * wv)
    # each batch index equals the unbatched request for its cotangent alone
    for k in range(3):
        x2 = stored([1.0, 0.0, 0.0, 2.0], xl, carrier)
        out2 = x2 * vec(wv, carrier)
        (g,) = sw.grad(out2, [x2], vec(cots[k], carrier))
        assert g.layout == single
        np.testing.assert_allclose(arr(stacked)[k], arr(g))


def test_batched_gradient_for_a_broadcast_input(carrier):
    x = stored([1.0, 2.0], layout([3, 2], [0, 1]), carrier)
    out = x * 1.0
    rng = np.random.default_rng(1)
    cots = np.round(rng.normal(size=(2, 3, 2)), 2)
    (stacked,) = sw.grad(out, [x], _batched(cots, out.layout, carrier), batched=True)
    single = layout([3, 2], [1, 3])
    assert stacked.layout == sw.Layout(sw.Shape([2, 3, 2]), sw.Stride([6, 1, 3]))
    for k in range(2):
        np.testing.assert_allclose(arr(stacked)[k], np.broadcast_to(cots[k].sum(axis=0), (3, 2)), rtol=1e-6)
    assert single.cosize == 6


def test_batched_cotangent_with_a_padded_batch_stride(carrier):
    x = vec([1.0, 2.0], carrier)
    out = x * 3.0
    cots = _batched(np.array([[1.0, 2.0], [3.0, 4.0]]), out.layout, carrier, batch_stride=5)
    (stacked,) = sw.grad(out, [x], cots, batched=True)
    np.testing.assert_allclose(arr(stacked), [[3.0, 6.0], [9.0, 12.0]])


def test_batched_returns_none_for_an_unreachable_input(carrier):
    x, other = vec([1.0, 2.0], carrier), vec([3.0], carrier)
    out = x * 2.0
    gx, go = sw.grad(out, [x, other], _batched(np.ones((3, 2)), out.layout, carrier), batched=True)
    np.testing.assert_allclose(arr(gx), np.full((3, 2), 2.0))
    assert go is None


@pytest.mark.parametrize("case", ["trailing_stride", "trailing_shape", "no_batch_mode", "nested_batch_mode"])
def test_reject_a_batched_cotangent_with_a_different_trailing_layout(carrier, case):
    x = vec([1.0, 2.0], carrier)
    out = x * 2.0
    assert out.layout == layout(2, 1)
    bad = {
        "trailing_stride": stored(np.ones(8), layout([2, 2], [4, 2]), carrier),
        "trailing_shape": stored(np.ones(6), layout([2, 3], [3, 1]), carrier),
        "no_batch_mode": stored(np.ones(2), layout(2, 1), carrier),
        "nested_batch_mode": stored(np.ones(4), layout([[2], 2], [[2], 1]), carrier),
    }[case]
    with pytest.raises(ValueError, match="prepended leaf batch mode") as info:
        sw.grad(out, [x], bad, batched=True)
    assert str(out.layout) in str(info.value)
    assert x.grad is None
    assert out.autograd_ctx.inputs() != ()


def test_release_the_graph_after_the_final_cotangent(carrier):
    x = vec([1.0, 2.0], carrier)
    out = sw.exp(x)
    cots = _batched(np.eye(2), out.layout, carrier)
    (first,) = sw.grad(out, [x], cots, batched=True, retain_graph=True)
    assert out.autograd_ctx.inputs() != ()
    (second,) = sw.grad(out, [x], cots, batched=True)
    np.testing.assert_allclose(arr(second), np.diag(np.exp([1.0, 2.0])), rtol=1e-5)
    np.testing.assert_allclose(arr(first), arr(second))
    assert out.autograd_ctx.inputs() == ()
    with pytest.raises(RuntimeError, match="retain_graph=True"):
        sw.grad(out, [x], cots, batched=True)
    assert x.grad is None
