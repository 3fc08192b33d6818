"""Requirement: Node-rooted traversal propagates a cotangent without a target Tensor."""

import inspect

import numpy as np
import pytest
from _spec_support import Probe, arr, assert_unchanged, snapshot, vec

import strideweave as sw


def _graph(carrier):
    xv, wv = np.array([0.4, -1.1]), np.array([2.0, 3.0])
    x, w = vec(xv, carrier), vec(wv, carrier)
    out = sw.tanh(x * w) + x
    return xv, wv, x, w, out


def test_propagate_from_an_autograd_node(carrier):
    cv = np.array([1.5, -0.5])
    # reference: backward on an identical graph
    _, _, rx, rw, rout = _graph(carrier)
    rout.backward(vec(cv, carrier))
    xv, wv, x, w, out = _graph(carrier)
    out.retain_grad()
    assert sw.Tensor.backwards_traversal(vec(cv, carrier), out.autograd_ctx) is None
    np.testing.assert_allclose(arr(x.grad), arr(rx.grad), rtol=1e-6)
    np.testing.assert_allclose(arr(w.grad), arr(rw.grad), rtol=1e-6)
    t = np.tanh(xv * wv)
    np.testing.assert_allclose(arr(x.grad), cv * ((1 - t * t) * wv + 1), rtol=1e-5)
    assert out.grad is None  # no target Tensor, even a retaining one
    assert type(x.grad.carrier) is type(x.carrier) and x.grad.autograd_ctx is None


def test_the_root_operation_runs_backward_with_the_gradient(carrier):
    x = vec([1.0, 2.0], carrier)
    probe = Probe()
    y = probe(x)
    sw.Tensor.backwards_traversal(vec([3.0, 4.0], carrier), y.autograd_ctx)
    np.testing.assert_array_equal(probe.calls[0], [3.0, 4.0])
    np.testing.assert_array_equal(arr(x.grad), [3.0, 4.0])


def test_traverse_no_graph(carrier):
    x = vec([1.0, 2.0], carrier)
    x.grad = vec([1.0, 1.0], carrier)
    before = snapshot([x])
    assert sw.Tensor.backwards_traversal(vec([1.0, 1.0], carrier), None) is None
    assert sw.Tensor.backwards_traversal(vec([1.0, 1.0], carrier), None, retain_graph=True) is None
    assert_unchanged([x], before)


def test_reject_a_second_node_rooted_traversal(carrier):
    x = vec([1.0, 2.0], carrier)
    node = (x * 2.0).autograd_ctx
    sw.Tensor.backwards_traversal(vec([1.0, 1.0], carrier), node)
    before = snapshot([x])
    with pytest.raises(RuntimeError, match="retain_graph=True"):
        sw.Tensor.backwards_traversal(vec([1.0, 1.0], carrier), node)
    assert_unchanged([x], before)
    np.testing.assert_allclose(arr(x.grad), [2.0, 2.0])


def test_node_rooted_traversal_with_retain_graph(carrier):
    x = vec([1.0, 2.0], carrier)
    node = (x * 2.0).autograd_ctx
    sw.Tensor.backwards_traversal(vec([1.0, 1.0], carrier), node, retain_graph=True)
    assert node.inputs() != ()
    sw.Tensor.backwards_traversal(vec([1.0, 1.0], carrier), node)
    np.testing.assert_allclose(arr(x.grad), [4.0, 4.0])
    assert node.inputs() == ()


def test_node_rooted_traversal_reports_the_backward_failure_for_a_bad_gradient(carrier):
    x = vec([1.0, 2.0], carrier)
    node = (x * 2.0).autograd_ctx
    with pytest.raises(TypeError):
        sw.Tensor.backwards_traversal([1.0, 1.0], node)
    with pytest.raises(ValueError):
        sw.Tensor.backwards_traversal(vec([1.0, 1.0, 1.0], carrier), node)
    assert x.grad is None


@pytest.mark.parametrize("operation", [object(), 42, "node"])
def test_node_rooted_traversal_rejects_a_non_node(carrier, operation):
    with pytest.raises(AttributeError):
        sw.Tensor.backwards_traversal(vec([1.0], carrier), operation)


def test_node_rooted_traversal_checks_saved_versions(carrier):
    x = vec([1.0, 2.0], carrier)
    node = (x * x).autograd_ctx
    x.fill_(3.0)
    with pytest.raises(RuntimeError, match="in-place"):
        sw.Tensor.backwards_traversal(vec([1.0, 1.0], carrier), node)
    assert x.grad is None


def test_backwards_traversal_signature():
    params = inspect.signature(sw.Tensor.backwards_traversal).parameters
    assert list(params) == ["gradient", "operation", "retain_graph"]
    assert params["retain_graph"].default is False
