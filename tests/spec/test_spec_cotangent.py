"""Requirement: Cotangent layouts must address the target tensor exactly."""

import numpy as np
import pytest
from _spec_support import Returns, arr, assert_unchanged, canonical, layout, snapshot, stored, vec

import strideweave as sw

INJECTIVE = layout([2, 2], [1, 2])


def test_reject_a_mismatched_cotangent_layout(carrier):
    x = stored([1.0, 2.0, 3.0, 4.0], INJECTIVE, carrier)
    x.grad = canonical([[1.0, 1.0], [1.0, 1.0]], INJECTIVE, carrier)
    y = x * 2.0
    assert y.layout == INJECTIVE
    wrong = [canonical([[1.0, 2.0], [3.0, 4.0]], layout([2, 2], [2, 1]), carrier),  # same shape, other strides
             stored([1.0, 2.0, 3.0, 4.0], layout(4, 1), carrier),                  # other shape
             sw.Tensor.from_storage([0.0, 1.0, 2.0, 3.0, 4.0], INJECTIVE, offset=1, carrier=carrier)]
    before = snapshot([x])
    for target in (x, y):
        for cot in wrong[:2]:
            with pytest.raises(ValueError):
                target.backward(cot)
            assert_unchanged([x], before)
    # an offset does not change the layout: accepted, values read through the layout
    y.backward(wrong[2])
    np.testing.assert_allclose(arr(x.grad), 1.0 + 2.0 * np.array([[1.0, 3.0], [2.0, 4.0]]))


def test_reject_a_mismatched_cotangent_layout_from_grad(carrier):
    x = stored([1.0, 2.0, 3.0, 4.0], INJECTIVE, carrier)
    y = x * 2.0
    with pytest.raises(ValueError):
        sw.grad(y, [x], canonical([[1.0, 2.0], [3.0, 4.0]], layout([2, 2], [2, 1]), carrier))
    assert x.grad is None
    (g,) = sw.grad(y, [x], canonical([[1.0, 2.0], [3.0, 4.0]], INJECTIVE, carrier))
    np.testing.assert_allclose(arr(g), [[2.0, 4.0], [6.0, 8.0]])


def test_reject_a_non_tensor_cotangent(carrier):
    x = vec([1.0, 2.0], carrier)
    y = x * 2.0
    for bad in ([1.0, 1.0], np.ones(2, dtype=np.float32), 1.0):
        with pytest.raises(TypeError):
            y.backward(bad)
        with pytest.raises(TypeError):
            x.backward(bad)
        with pytest.raises(TypeError):
            sw.grad(y, [x], bad)
    assert x.grad is None


def test_reject_a_non_tensor_cotangent_produced_by_a_node(carrier):
    x = vec([1.0, 2.0], carrier)
    x.grad = vec([4.0, 4.0], carrier)
    y = Returns(lambda g: (g.numpy(),))(x)
    before = snapshot([x])
    with pytest.raises(TypeError):
        y.backward(vec([1.0, 1.0], carrier))
    assert_unchanged([x], before)


def test_reject_a_node_cotangent_in_the_wrong_layout(carrier):
    x = stored([1.0, 2.0, 3.0, 4.0], INJECTIVE, carrier)
    x.grad = canonical(np.full((2, 2), 3.0), INJECTIVE, carrier)
    y = Returns(lambda g: (canonical(np.ones((2, 2)), layout([2, 2], [2, 1]), carrier),))(x)
    before = snapshot([x])
    with pytest.raises(ValueError):
        y.backward(canonical(np.ones((2, 2)), y.layout, carrier))
    assert_unchanged([x], before)


def _overlapping(carrier):
    return stored([1.0, 2.0, 3.0, 4.0, 5.0], layout([4, 2], [1, 1]), carrier)


def test_refuse_aliasing_that_broadcast_modes_do_not_explain(carrier):
    x = _overlapping(carrier)
    assert x.layout.aliasing() == "overlapping"
    y = x * 2.0
    cot = canonical(np.ones((4, 2)), layout([4, 2], [1, 4]), carrier)
    with pytest.raises(ValueError):
        y.backward(cot)
    assert x.grad is None
    with pytest.raises(ValueError):
        x.backward(cot)
    assert x.grad is None
    with pytest.raises(ValueError):
        sw.grad(y, [x], cot)
    assert x.grad is None


def test_refuse_an_overlapping_intermediate(carrier):
    base = vec([1.0, 2.0, 3.0, 4.0, 5.0], carrier)
    x = base.view(layout([4, 2], [1, 1]))
    y = x * 2.0
    y.retain_grad()
    with pytest.raises(ValueError):
        y.backward(canonical(np.ones((4, 2)), y.layout, carrier))
    assert base.grad is None and y.grad is None


@pytest.mark.parametrize("bad_layout", [layout([4, 2], [0, 1]), layout([2, 4], [1, 2]), layout(8, 1)])
def test_broadcast_target_needs_its_shape_in_an_injective_layout(carrier, bad_layout):
    x = stored([1.0, 2.0], layout([4, 2], [0, 1]), carrier)
    y = x * 1.0
    bad = stored(np.arange(1.0, 9.0), bad_layout, carrier)
    with pytest.raises(ValueError):
        x.backward(bad)
    with pytest.raises(ValueError):
        sw.grad(x * 1.0, [x], bad)
    assert x.grad is None
    assert y.autograd_ctx is not None


def test_broadcast_target_accepts_any_injective_layout_of_its_shape(carrier):
    x = stored([1.0, 2.0], layout([4, 2], [0, 1]), carrier)
    values = np.arange(1.0, 9.0).reshape(4, 2)
    cot = canonical(values, layout([4, 2], [2, 1]), carrier)
    x.backward(cot)
    assert x.grad.layout == layout([4, 2], [1, 4])
    np.testing.assert_allclose(arr(x.grad), np.broadcast_to(values.sum(axis=0), (4, 2)))
