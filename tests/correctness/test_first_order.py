"""Differentiating a gradient is refused clearly: the engine is first order (spec)."""

import numpy as np
import pytest

import strideweave as sw

FIRST_ORDER = "first order"


def test_grad_of_a_gradient_raises(carrier):
    x = sw.tensor([1.0, 2.0], carrier=carrier)
    (g,) = sw.grad(sw.sum(x * x), [x], sw.ones(1, carrier=carrier))
    with pytest.raises(RuntimeError, match=FIRST_ORDER):
        sw.grad(sw.sum(g), [x], sw.ones(1, carrier=carrier))


def test_grad_of_a_dot_grad_raises(carrier):
    x = sw.tensor([1.0, 2.0], carrier=carrier)
    sw.sum(x * x).backward()
    with pytest.raises(RuntimeError, match=FIRST_ORDER):
        sw.grad(sw.sum(x.grad * 2.0), [x], sw.ones(1, carrier=carrier))
    with pytest.raises(RuntimeError, match=FIRST_ORDER):
        sw.grad(x.grad, [x], sw.ones(2, carrier=carrier))


def test_a_gradient_is_still_a_valid_leaf_for_itself(carrier):
    x = sw.tensor([1.0, 2.0], carrier=carrier)
    (g,) = sw.grad(sw.sum(x * x), [x], sw.ones(1, carrier=carrier))
    (gg,) = sw.grad(sw.sum(g * 3.0), [g], sw.ones(1, carrier=carrier))
    np.testing.assert_array_equal(gg.numpy(), [3.0, 3.0])
    g.backward(sw.ones(2, carrier=carrier))        # spec: propagates to no other Tensor
    assert x.grad is None


def test_ordinary_unreachable_inputs_still_give_none(carrier):
    x = sw.tensor([1.0, 2.0], carrier=carrier)
    y = sw.tensor([3.0, 4.0], carrier=carrier)
    assert sw.grad(sw.sum(x * x), [x, y], sw.ones(1, carrier=carrier))[1] is None
