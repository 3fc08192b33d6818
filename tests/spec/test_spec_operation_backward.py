"""Requirement: Operation backward returns one gradient per saved tensor input."""

import numpy as np
import pytest
from _spec_support import FirstOnly, Probe, Raises, Returns, arr, assert_unchanged, snapshot, vec

import strideweave as sw


def test_propagate_only_to_the_inputs_an_operation_differentiates(carrier):
    x1, x2 = vec([1.0, 2.0], carrier), vec([3.0, 4.0], carrier)
    x2.grad = vec([-1.0, -2.0], carrier)
    p1, p2 = Probe(), Probe()
    op = FirstOnly()
    out = op(p1(x1), p2(x2))
    out.backward(vec([5.0, 6.0], carrier))
    assert op.calls == 1
    assert len(p1.calls) == 1 and p2.calls == []  # traversal continued through the first input only
    np.testing.assert_array_equal(p1.calls[0], [5.0, 6.0])
    np.testing.assert_array_equal(arr(x1.grad), [5.0, 6.0])
    np.testing.assert_array_equal(arr(x2.grad), [-1.0, -2.0])  # kept the value it already held
    assert p2.inputs() == () and p1.inputs() == () and op.inputs() == ()  # all released


def test_operation_receives_the_accumulated_cotangent_through_backward(carrier):
    x = vec([1.0, 2.0], carrier)
    probe = Probe()
    h = probe(x)
    out = h * 2.0 + h * 3.0 + h
    out.backward(vec([1.0, -1.0], carrier))
    assert len(probe.calls) == 1
    np.testing.assert_allclose(probe.calls[0], [6.0, -6.0])


@pytest.mark.parametrize("make", [lambda g: (), lambda g: (g,), lambda g: (g, g, g), lambda g: [g]])
def test_reject_a_mismatched_gradient_count(carrier, make):
    a, b = vec([1.0, 2.0], carrier), vec([3.0, 4.0], carrier)
    a.grad = vec([1.0, 1.0], carrier)
    out = Returns(make)(a, b)
    assert len(out.autograd_ctx.inputs()) == 2
    before = snapshot([a, b])
    with pytest.raises(ValueError):
        out.backward(vec([1.0, 1.0], carrier))
    assert_unchanged([a, b], before)


def test_reject_a_mismatched_gradient_count_deep_in_the_graph(carrier):
    x, w = vec([1.0, 2.0], carrier), vec([3.0, 4.0], carrier)
    bad = Returns(lambda g: ())(x)
    out = bad * 2.0 + w * 1.0
    with pytest.raises(ValueError):
        out.backward(vec([1.0, 1.0], carrier))
    assert x.grad is None and w.grad is None


def test_a_none_entry_and_a_non_differentiable_input_contribute_nothing(carrier):
    x = vec([1.0, 2.0], carrier)
    i = sw.tensor([1, 2], carrier=carrier)
    # the entry for the Int32 input is ignored, whatever it holds
    op = Returns(lambda g: (g * 2.0, vec([9.0, 9.0, 9.0], carrier)))
    out = op(x, i)
    assert len(op.inputs()) == 2 and op.inputs()[1] is i
    out.backward(vec([1.0, 3.0], carrier))
    np.testing.assert_allclose(arr(x.grad), [2.0, 6.0])
    y = vec([5.0, 5.0], carrier)
    out2 = Returns(lambda g: (None, g))(x, y)
    out2.backward(vec([1.0, 1.0], carrier))
    np.testing.assert_allclose(arr(x.grad), [2.0, 6.0])
    np.testing.assert_allclose(arr(y.grad), [1.0, 1.0])


def test_a_raising_backward_changes_no_grad(carrier):
    x, w = vec([1.0, 2.0], carrier), vec([3.0, 4.0], carrier)
    w.grad = vec([1.0, 1.0], carrier)
    out = Raises()(x * 2.0) + w * 5.0
    before = snapshot([x, w])
    with pytest.raises(ArithmeticError):
        out.backward(vec([1.0, 1.0], carrier))
    assert_unchanged([x, w], before)
