"""Requirements: Reverse mode is the complete differentiation surface; one-subtensor entry points."""

import numpy as np
import pytest
from _spec_support import Scale, arr, assert_unchanged, snapshot, vec

import strideweave as sw


def test_reject_a_create_graph_argument(carrier):
    x = vec([1.0, 2.0], carrier)
    y = x * 2.0
    c = vec([1.0, 1.0], carrier)
    with pytest.raises(TypeError):
        y.backward(c, create_graph=True)
    with pytest.raises(TypeError):
        sw.Tensor.backwards_traversal(c, y.autograd_ctx, create_graph=True)
    with pytest.raises(TypeError):
        sw.grad(y, [x], c, create_graph=True)
    assert x.grad is None
    assert y.autograd_ctx.inputs() != ()


def test_produce_detached_gradients(carrier):
    x = vec([1.0, 2.0], carrier)
    scale = Scale(3.0)  # its backward computes with public operations
    out = scale(x * x)
    out.backward(vec([1.0, 1.0], carrier))
    assert x.grad.autograd_ctx is None
    np.testing.assert_allclose(arr(x.grad), [6.0, 12.0])
    x2 = vec([1.0, 2.0], carrier)
    (g,) = sw.grad(Scale(3.0)(x2 * x2), [x2], vec([1.0, 1.0], carrier))
    assert g.autograd_ctx is None
    # differentiating a gradient reaches no other Tensor
    before = snapshot([x, x2])
    grad_value = arr(x.grad).copy()
    x.grad.backward(vec([1.0, 1.0], carrier))
    g.backward(vec([1.0, 1.0], carrier))
    assert_unchanged([x, x2], before)
    np.testing.assert_array_equal(arr(x.grad), grad_value)
    np.testing.assert_array_equal(arr(g.grad), [1.0, 1.0])


def test_retained_and_functional_gradients_of_intermediates_are_detached(carrier):
    x = vec([1.0, 2.0], carrier)
    h = Scale(2.0)(x)
    h.retain_grad()
    out = Scale(5.0)(h)
    (gh,) = sw.grad(out, [h], vec([1.0, 1.0], carrier), retain_graph=True)
    out.backward(vec([1.0, 1.0], carrier))
    assert h.grad.autograd_ctx is None and gh.autograd_ctx is None
    np.testing.assert_allclose(arr(h.grad), [5.0, 5.0])


def test_public_differentiation_surface_exists_and_is_reverse_mode_only():
    for name in ("grad", "is_grad_enabled", "set_grad_enabled", "no_grad"):
        assert callable(getattr(sw, name))
    for name in ("backward", "backwards_traversal", "retain_grad", "is_differentiable"):
        assert callable(getattr(sw.Tensor, name))
    assert isinstance(sw.Tensor.grad, property) and isinstance(sw.Tensor.autograd_ctx, property)
    for name in ("jvp", "jacfwd", "forward_ad", "hessian"):
        assert not hasattr(sw, name)


# ----- Autograd entry points require a one-subtensor Tensor -----

def _multi(carrier):
    a, b = vec([1.0, 2.0], carrier), vec([3.0, 4.0, 5.0], carrier)
    t = sw.Tensor.from_subtensors([a, b])
    assert len(t.subtensors) == 2 and t.is_differentiable()
    return a, b, t


def test_reject_a_multi_subtensor_output(carrier, monkeypatch):
    a, b, t = _multi(carrier)
    a.grad = vec([9.0, 9.0], carrier)
    cot = vec([1.0] * 5, carrier)
    allocations = []
    cls = type(a.carrier)
    original = cls.allocate.__func__

    def counting(klass, *args, **kwargs):
        allocations.append(args)
        return original(klass, *args, **kwargs)

    monkeypatch.setattr(cls, "allocate", classmethod(counting))
    before = snapshot([a, b, t])
    with pytest.raises(NotImplementedError):
        t.backward(cot)
    with pytest.raises(NotImplementedError):
        t.backward()
    with pytest.raises(NotImplementedError):
        sw.grad(t, [a], cot)
    assert allocations == []
    assert_unchanged([a, b, t], before)


def test_one_block_of_a_multi_subtensor_tensor_is_still_differentiable(carrier):
    a, _b, _t = _multi(carrier)
    y = a * 2.0
    y.backward(vec([1.0, 1.0], carrier))
    np.testing.assert_allclose(arr(a.grad), [2.0, 2.0])
