"""Requirement: Backward rejects storage modified after the forward pass."""

import numpy as np
import pytest
from _spec_support import Probe, alias, arr, assert_unchanged, snapshot, vec

import strideweave as sw

INPLACE = "in-place"


def test_reject_a_traversal_after_an_in_place_mutation(carrier):
    x = vec([[1.0, 2.0], [3.0, 4.0]], carrier)
    x.grad = vec([[1.0, 1.0], [1.0, 1.0]], carrier)
    y = x * x
    x[0, 1] = 10.0
    before = snapshot([x])
    with pytest.raises(RuntimeError, match=INPLACE):
        y.backward(vec([[1.0, 1.0], [1.0, 1.0]], carrier))
    assert_unchanged([x], before)


def test_reject_a_traversal_after_a_mutation_through_the_source(carrier):
    src = vec([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], carrier)
    with sw.no_grad():
        v = src[1]
    assert v.autograd_ctx is None and v.carrier is src.carrier
    y = v * v
    src[0, 0] = -1.0  # an element the view does not even address
    with pytest.raises(RuntimeError, match=INPLACE):
        y.backward(vec([1.0, 1.0, 1.0], carrier))
    assert v.grad is None and src.grad is None


def test_reject_a_traversal_after_a_mutation_through_a_recorded_view(carrier):
    src = vec([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], carrier)
    v = src[1]
    y = v * v
    src[1, 2] = 0.0
    with pytest.raises(RuntimeError, match=INPLACE):
        y.backward(vec([1.0, 1.0, 1.0], carrier))
    assert src.grad is None


@pytest.mark.parametrize("mutation", ["setitem", "slice_setitem", "fill_", "copy_", "add_"])
def test_every_public_mutation_changes_the_version_seen_by_every_sharer(carrier, mutation):
    x = vec([1.0, 2.0, 3.0, 4.0], carrier)
    shared = alias(x)
    with sw.no_grad():
        view = x[1:3]
    y = x * 2.0
    before = (x.carrier.version, shared.carrier.version, view.carrier.version)
    target = {"setitem": shared, "slice_setitem": view, "fill_": view, "copy_": shared, "add_": x}[mutation]
    if mutation == "setitem":
        target[0] = 5.0
    elif mutation == "slice_setitem":
        with sw.no_grad():  # a Float32 Tensor into a leaf: an update only under no_grad (docs/api.md section 4)
            target[0:1] = vec([9.0], carrier)
    elif mutation == "fill_":
        target.fill_(0.0)
    elif mutation == "copy_":
        with sw.no_grad():
            target.copy_(vec([4.0, 3.0, 2.0, 1.0], carrier))
    else:
        target.add_(1.0)
    after = (x.carrier.version, shared.carrier.version, view.carrier.version)
    assert all(a != b for a, b in zip(after, before))
    with pytest.raises(RuntimeError, match=INPLACE):
        y.backward(vec([1.0, 1.0, 1.0, 1.0], carrier))
    assert x.grad is None


def test_complete_a_traversal_before_mutating_parameters(carrier):
    wv, xv = np.array([0.5, -1.0]), np.array([2.0, 3.0])
    w, data = vec(wv, carrier), vec(xv, carrier)
    loss = (w * w * data).sum()
    loss.backward(retain_graph=True)
    np.testing.assert_allclose(arr(w.grad), 2 * wv * xv)
    with sw.no_grad():
        w.add_(w.grad * -0.1)  # a parameter update after the traversal
    np.testing.assert_allclose(arr(w), wv - 0.1 * 2 * wv * xv, rtol=1e-6)
    before = snapshot([w])
    with pytest.raises(RuntimeError, match=INPLACE):
        loss.backward()
    assert_unchanged([w], before)
    loss2 = (w * w * data).sum()  # a new forward pass is traversable
    loss2.backward()
    w_new = wv - 0.1 * 2 * wv * xv
    np.testing.assert_allclose(arr(w.grad), 2 * wv * xv + 2 * w_new * xv, rtol=1e-5)


@pytest.mark.parametrize("order", ["near_first", "deep_first"])
def test_a_version_failure_deep_in_the_graph_changes_no_grad(carrier, order):
    x, b = vec([1.0, 2.0], carrier), vec([3.0, 4.0], carrier)
    x.grad = vec([7.0, 7.0], carrier)
    near = x * 2.0
    near.retain_grad()
    deep = ((b * b) * 3.0) * 4.0
    # x also feeds the sum directly, so a leaf contribution exists before the deep node fails
    total = (near + x) + deep if order == "near_first" else deep + (x + near)
    probe = Probe()
    out = probe(total)
    b.add_(1.0)              # invalidates b * b only
    before = snapshot([x, b, near])
    with pytest.raises(RuntimeError, match=INPLACE):
        out.backward(vec([1.0, 1.0], carrier))
    assert len(probe.calls) == 1  # the traversal did start
    assert_unchanged([x, b, near], before)
    assert out.grad is None


def test_a_failing_branch_changes_no_grad_whichever_order_it_runs(carrier):
    x, w = vec([1.0, 2.0], carrier), vec([3.0, 4.0], carrier)
    for total in (lambda bad: bad + x * w, lambda bad: x * w + bad):
        c = vec([5.0, 6.0], carrier)
        bad = (c * c) * 1.0
        out = total(bad)
        c.fill_(0.0)
        with pytest.raises(RuntimeError, match=INPLACE):
            out.backward(vec([1.0, 1.0], carrier))
        assert x.grad is None and w.grad is None


def test_grad_rejects_modified_saved_storage(carrier):
    x = vec([1.0, 2.0], carrier)
    y = sw.exp(x)
    x[0] = 0.0
    with pytest.raises(RuntimeError, match=INPLACE):
        sw.grad(y, [x], vec([1.0, 1.0], carrier))
    assert x.grad is None
