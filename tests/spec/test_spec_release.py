"""Requirement: Backward releases graph state unless the graph is retained."""

import numpy as np
import pytest
from _spec_support import FirstOnly, Probe, arr, assert_unchanged, snapshot, vec

import strideweave as sw


class WithContext(sw.Operation):
    """y = x * x, keeping x's values in ``context``."""

    def forward(self, x, options=None):
        self.context["x"] = x.numpy().copy()
        return x * x

    def backward(self, gradient):
        x = self.inputs()[0]
        return (gradient * 2.0 * x,)


def _assert_released(op):
    assert op.inputs() == ()
    assert tuple(op.input_versions()) == ()
    assert dict(op.context) == {}


def test_release_the_graph_after_the_default_traversal(carrier):
    x = vec([1.0, 2.0], carrier)
    op = WithContext()
    h = op(x)
    y = sw.sin(h)
    assert op.context and op.inputs()
    g = vec([1.0, 1.0], carrier)
    y.backward(g)
    _assert_released(op)
    _assert_released(y.autograd_ctx)
    assert h.autograd_ctx is op  # still attached: not a leaf
    before = snapshot([x])
    with pytest.raises(RuntimeError, match="retain_graph=True"):
        y.backward(g)
    with pytest.raises(RuntimeError, match="retain_graph=True"):
        h.backward(g)
    assert_unchanged([x], before)
    assert h.grad is None


def test_release_includes_nodes_that_received_no_cotangent(carrier):
    x1, x2 = vec([1.0, 2.0], carrier), vec([3.0, 4.0], carrier)
    p2 = Probe()
    h2 = p2(x2)
    out = FirstOnly()(x1 * 1.0, h2)
    out.backward(vec([1.0, 1.0], carrier))
    assert p2.calls == []
    _assert_released(p2)
    with pytest.raises(RuntimeError, match="retain_graph=True"):
        h2.backward(vec([1.0, 1.0], carrier))
    assert x2.grad is None


def test_release_a_shared_subgraph_from_the_first_root(carrier):
    x = vec([1.0, 2.0], carrier)
    h = sw.exp(x)
    first, second = h * 2.0, h * 3.0
    first.backward(vec([1.0, 1.0], carrier))
    np.testing.assert_allclose(arr(x.grad), 2.0 * np.exp([1.0, 2.0]), rtol=1e-5)
    before = snapshot([x])
    with pytest.raises(RuntimeError, match="retain_graph=True"):
        second.backward(vec([1.0, 1.0], carrier))
    assert_unchanged([x], before)


def test_a_released_node_fails_before_version_checks_and_backward(carrier):
    x = vec([1.0, 2.0], carrier)
    probe = Probe()
    h = probe(x)
    first, second = h * 2.0, h * 3.0
    first.backward(vec([1.0, 1.0], carrier))
    assert len(probe.calls) == 1
    x.add_(1.0)  # would fail a version check, were one made
    with pytest.raises(RuntimeError, match="retain_graph=True"):
        second.backward(vec([1.0, 1.0], carrier))
    assert len(probe.calls) == 1


def test_retain_graph_true_preserves_saved_state(carrier):
    x = vec([1.0, 2.0], carrier)
    op = WithContext()
    y = op(x)
    inputs, versions, context = op.inputs(), tuple(op.input_versions()), dict(op.context)
    y.backward(vec([1.0, 1.0], carrier), retain_graph=True)
    assert op.inputs() == inputs and len(inputs) == 1 and op.inputs()[0] is x
    assert tuple(op.input_versions()) == versions
    assert list(op.context) == list(context) and np.array_equal(op.context["x"], context["x"])
    y.backward(vec([1.0, 1.0], carrier))
    np.testing.assert_allclose(arr(x.grad), [4.0, 8.0])
    _assert_released(op)


def test_a_leaf_keeps_accumulating_after_its_consumers_were_released(carrier):
    x = vec([1.0, 2.0], carrier)
    (x * 2.0).backward(vec([1.0, 1.0], carrier))
    (x * 5.0).backward(vec([1.0, 1.0], carrier))
    x.backward(vec([1.0, 1.0], carrier))
    np.testing.assert_allclose(arr(x.grad), [8.0, 8.0])
