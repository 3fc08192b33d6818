"""Requirements: Leaf tensors accumulate detached gradients; Non-leaf tensors retain gradients only on request."""

import inspect

import numpy as np
from _spec_support import PassThrough, arr, vec

import strideweave as sw


def test_detach_the_accumulated_gradient(carrier):
    x = vec([1.0, 2.0, 3.0], carrier)
    c = vec([0.5, -1.0, 2.0], carrier)
    assert x.backward(c) is None
    c[1] = 100.0
    c.fill_(7.0)
    np.testing.assert_array_equal(arr(x.grad), [0.5, -1.0, 2.0])
    assert type(x.grad.carrier) is type(x.carrier)
    assert x.grad.carrier is not c.carrier
    assert x.grad.autograd_ctx is None


def test_detach_the_accumulated_gradient_through_a_node(carrier):
    x = vec([1.0, 2.0, 3.0], carrier)
    c = vec([0.5, -1.0, 2.0], carrier)
    y = PassThrough()(x)  # hands the very cotangent object to x
    y.backward(c)
    c[0] = 100.0
    np.testing.assert_array_equal(arr(x.grad), [0.5, -1.0, 2.0])
    assert x.grad.carrier is not c.carrier
    assert type(x.grad.carrier) is type(x.carrier)
    assert x.grad.autograd_ctx is None


def test_gradient_lives_in_the_leaf_carrier_class_even_for_a_foreign_cotangent(carrier):
    x = vec([1.0, 2.0], carrier)
    c = vec([3.0, 4.0], "numpy")
    x.backward(c)
    assert type(x.grad.carrier) is type(x.carrier)
    np.testing.assert_array_equal(arr(x.grad), [3.0, 4.0])


def test_accumulate_across_two_traversals(carrier):
    xv = np.array([1.0, -2.0])
    x = vec(xv, carrier)
    w = vec([3.0, 0.5], carrier)
    y = x * w
    g = vec([1.0, 2.0], carrier)
    y.backward(g, retain_graph=True)
    np.testing.assert_allclose(arr(x.grad), [3.0, 1.0])
    y.backward(g)
    np.testing.assert_allclose(arr(x.grad), [6.0, 2.0])
    np.testing.assert_allclose(arr(w.grad), 2 * xv * [1.0, 2.0])


def test_accumulate_across_distinct_forward_graphs_until_reset(carrier):
    x = vec([1.0, 2.0], carrier)
    (x * 3.0).backward(vec([1.0, 1.0], carrier))
    (x * x).backward(vec([1.0, 1.0], carrier))
    np.testing.assert_allclose(arr(x.grad), [3.0 + 2.0, 3.0 + 4.0])
    assert type(x.grad.carrier) is type(x.carrier)
    x.grad = None
    (x * 3.0).backward(vec([1.0, 1.0], carrier))
    np.testing.assert_allclose(arr(x.grad), [3.0, 3.0])


def test_accumulation_adds_to_an_assigned_grad_without_mutating_it(carrier):
    x = vec([1.0, 2.0], carrier)
    assigned = vec([10.0, 20.0], carrier)
    x.grad = assigned
    (x * 2.0).backward(vec([1.0, 1.0], carrier))
    np.testing.assert_allclose(arr(x.grad), [12.0, 22.0])


def test_backward_on_a_tensor_without_a_node_propagates_no_further(carrier):
    x = vec([1.0, 2.0], carrier)
    y = x * 2.0
    y.autograd_ctx = None  # y is now a leaf
    y.backward(vec([1.0, 5.0], carrier))
    np.testing.assert_array_equal(arr(y.grad), [1.0, 5.0])
    assert x.grad is None
    y.backward(vec([1.0, 1.0], carrier))
    np.testing.assert_array_equal(arr(y.grad), [2.0, 6.0])


# ----- Non-leaf tensors retain gradients only on request -----

def _chain(carrier):
    xv = np.array([0.2, -0.7])
    x = vec(xv, carrier)
    a = x * 2.0
    b = sw.sin(a)
    out = b * 3.0
    return xv, x, a, b, out


def test_retain_one_intermediate_gradient(carrier):
    xv, x, a, b, out = _chain(carrier)
    assert a.retain_grad() is None
    cv = np.array([1.0, -2.0])
    out.backward(vec(cv, carrier))
    np.testing.assert_allclose(arr(a.grad), 3.0 * np.cos(2 * xv) * cv, rtol=1e-5)
    assert a.grad.autograd_ctx is None and type(a.grad.carrier) is type(a.carrier)
    assert b.grad is None and out.grad is None
    np.testing.assert_allclose(arr(x.grad), 6.0 * np.cos(2 * xv) * cv, rtol=1e-5)


def test_leave_intermediates_without_gradients_by_default(carrier):
    xv = np.array([0.2, -0.7])
    x = vec(xv, carrier)
    a = x * 2.0
    out = sw.sin(a)
    out.backward(vec([1.0, 1.0], carrier))
    assert out.grad is None and a.grad is None
    np.testing.assert_allclose(arr(x.grad), 2.0 * np.cos(2 * xv), rtol=1e-5)


def test_retain_grad_defaults_to_true(carrier):
    assert inspect.signature(sw.Tensor.retain_grad).parameters["retain"].default is True


def test_retain_grad_false_disables_retention(carrier):
    _xv, _x, a, _b, out = _chain(carrier)
    a.retain_grad()
    assert a.retain_grad(False) is None
    out.backward(vec([1.0, 1.0], carrier))
    assert a.grad is None


def test_retained_gradient_accumulates_across_traversals(carrier):
    _xv, _x, _a, b, out = _chain(carrier)
    b.retain_grad(True)
    out.backward(vec([1.0, 2.0], carrier), retain_graph=True)
    out.backward(vec([1.0, 2.0], carrier))
    np.testing.assert_allclose(arr(b.grad), [6.0, 12.0])


def test_retained_result_receives_the_root_cotangent(carrier):
    *_, out = _chain(carrier)
    out.retain_grad()
    out.backward(vec([1.0, 2.0], carrier))
    np.testing.assert_allclose(arr(out.grad), [1.0, 2.0])
