"""Requirement: Gradient buffers use injective layouts and aggregate broadcast aliases."""

import numpy as np
import pytest
from _spec_support import arr, canonical, layout, stored, vec

import strideweave as sw


def _expected_broadcast_grad(lay, contributions):
    """Sum logical contributions per storage slot, then place each sum at every position of its slot."""
    flat = contributions.reshape(-1, order="F")
    offsets = np.array([lay(i) for i in range(lay.size)])
    sums = {}
    for off, v in zip(offsets, flat):
        sums[off] = sums.get(off, 0.0) + v
    return np.array([sums[o] for o in offsets]).reshape(contributions.shape, order="F")


def test_sum_contributions_of_a_top_level_broadcast_mode(carrier):
    lay = layout([4, 2], [0, 1])
    x = stored([1.5, -2.0], lay, carrier)
    wv = np.arange(1.0, 9.0).reshape(4, 2)
    cv = np.array([[1.0, 0.5], [2.0, -1.0], [0.0, 3.0], [-1.0, 1.0]])
    y = x * canonical(wv, layout([4, 2], [1, 4]), carrier)
    y.backward(canonical(cv, y.layout, carrier))
    assert x.grad.layout == layout([4, 2], [1, 4])
    assert x.grad.layout.is_injective()
    expected = np.broadcast_to((cv * wv).sum(axis=0), (4, 2))
    np.testing.assert_allclose(arr(x.grad), expected)
    np.testing.assert_allclose(expected, _expected_broadcast_grad(lay, cv * wv))
    assert type(x.grad.carrier) is type(x.carrier)


def test_sum_contributions_at_hierarchy_depth(carrier):
    lay = layout([2, [4, 3]], [1, [0, 2]])
    assert lay.aliasing() == "broadcast"
    x = stored(np.arange(1.0, 1.0 + lay.cosize), lay, carrier)
    rng = np.random.default_rng(0)
    wv = np.round(rng.normal(size=(2, 12)), 2)
    cv = np.round(rng.normal(size=(2, 12)), 2)
    canon = sw.Layout.canonical(sw.Shape([2, [4, 3]]))
    assert canon == layout([2, [4, 3]], [1, [2, 8]])
    y = x * canonical(wv, canon, carrier)
    y.backward(canonical(cv, y.layout, carrier))
    assert x.grad.layout == canon
    expected = _expected_broadcast_grad(lay, cv * wv)
    # nested coordinate k = (k % 4, k // 4); the stride-0 leaf is k % 4
    by_hand = np.stack([(cv * wv)[i].reshape(3, 4).sum(axis=1) for i in range(2)])  # (2, 3)
    np.testing.assert_allclose(expected, np.repeat(by_hand, 4, axis=1), rtol=1e-12)
    np.testing.assert_allclose(arr(x.grad), expected, rtol=1e-5, atol=1e-6)
    g = arr(x.grad)
    for k in range(12):  # each replicated position holds the same summed value
        np.testing.assert_array_equal(g[:, k], g[:, (k // 4) * 4])


def test_broadcast_aggregation_from_broadcast_to(carrier):
    x = vec([[1.0, 2.0, 3.0]], carrier)  # shape (1, 3)
    b = sw.broadcast_to(x, sw.Shape([4, 3]))
    b.retain_grad()
    cv = np.arange(12.0).reshape(4, 3)
    out = b * 1.0
    out.backward(canonical(cv, out.layout, carrier))
    assert b.layout.aliasing() == "broadcast"
    assert b.grad.layout == sw.Layout.canonical(sw.Shape([4, 3]))
    np.testing.assert_allclose(arr(b.grad), np.broadcast_to(cv.sum(axis=0), (4, 3)))
    np.testing.assert_allclose(arr(x.grad), cv.sum(axis=0, keepdims=True))


@pytest.mark.parametrize(("shape", "stride"), [([2, 3], [4, 1]), ([2, 3], [1, 3]), ([2, [2, 2]], [5, [1, 2]]), (3, 2)])
def test_gradient_preserves_an_injective_layout(carrier, shape, stride):
    lay = layout(shape, stride)
    assert lay.is_injective()
    x = stored(np.arange(1.0, 1.0 + lay.cosize), lay, carrier)
    y = x * x
    cv = np.arange(1.0, 1.0 + lay.size).reshape(arr(x).shape, order="F")
    y.backward(canonical(cv, y.layout, carrier))
    assert x.grad.layout == lay
    np.testing.assert_allclose(arr(x.grad), 2 * arr(x) * cv)


def test_gradient_buffers_for_a_broadcast_leaf_agree_across_traversals(carrier):
    lay = layout([3, 2], [0, 1])
    x = stored([1.0, 2.0], lay, carrier)
    (x * 1.0).backward(canonical(np.ones((3, 2)), layout([3, 2], [1, 3]), carrier))
    (x * 2.0).backward(canonical(np.ones((3, 2)), layout([3, 2], [1, 3]), carrier))
    assert x.grad.layout == layout([3, 2], [1, 3])
    np.testing.assert_allclose(arr(x.grad), np.full((3, 2), 3.0 + 6.0))
