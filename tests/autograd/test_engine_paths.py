"""Engine fast paths must not change results: pruned leaves, storage-level sums, construction."""

import numpy as np
import pytest

import strideweave as sw

CARRIERS = ["numpy", "torch", "jax", "array_api_strict"]


@pytest.fixture(params=CARRIERS)
def carrier(request):
    pytest.importorskip({"numpy": "numpy", "torch": "torch", "jax": "jax",
                         "array_api_strict": "array_api_strict"}[request.param])
    return request.param


def test_grad_for_one_input_matches_backward_when_other_leaves_are_skipped(carrier):
    a = sw.tensor([[1.0, 2.0], [3.0, 4.0]], carrier=carrier)
    w = sw.tensor([[0.5, -1.0]], carrier=carrier)
    b = sw.tensor([[2.0], [3.0]], carrier=carrier)
    out = sw.sum(sw.tanh(a * w) @ b)
    (gw,) = sw.grad(out, [w], sw.ones(1, carrier=carrier), retain_graph=True)
    out.backward()
    np.testing.assert_allclose(gw.numpy(), w.grad.numpy(), rtol=1e-6)
    assert a.grad is not None and b.grad is not None  # backward still reaches every leaf


def test_two_cotangents_in_a_layout_with_holes_sum_exactly(carrier):
    storage = np.arange(1.0, 13.0, dtype=np.float32)
    layout = sw.Layout((2, 3), (1, 4))  # holes at offsets 2, 3, 6, 7
    x = sw.Tensor.from_storage(storage, layout, carrier=carrier)
    (sw.exp(x) * x).sum().backward()
    values = x.numpy().astype(np.float64)
    assert x.grad.layout == layout
    np.testing.assert_allclose(x.grad.numpy(), np.exp(values) * (1 + values), rtol=1e-5)
    holes = type(x.grad.carrier).to_numpy(x.grad.carrier.array)[[2, 3, 6, 7]]
    np.testing.assert_array_equal(holes, 0)


def test_tensor_from_a_native_array_onto_another_carrier_is_a_leaf(carrier):
    t = sw.tensor(np.ones((2, 2), np.float32), carrier=carrier)
    assert t.autograd_ctx is None
    (t * t).sum().backward()
    np.testing.assert_array_equal(t.grad.numpy(), 2 * np.ones((2, 2)))
    converted = sw.tensor(sw.tensor([1.0, 2.0]) * 3.0, dtype=sw.DType.Float32, carrier=carrier)
    assert converted.autograd_ctx is None


def test_unit_cotangent_products_give_detached_gradients(carrier):
    # loss.backward() seeds a unit cotangent; products skip multiplying by it,
    # yet every .grad must still be a detached copy, not a view of an input.
    a = sw.tensor([[1.0, 2.0], [3.0, 4.0]], carrier=carrier)
    b = sw.tensor([[5.0, 6.0]], carrier=carrier)
    (a * b).sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), [[5.0, 6.0], [5.0, 6.0]])
    np.testing.assert_array_equal(b.grad.numpy(), [[4.0, 6.0]])
    b.fill_(0.0)
    a.fill_(0.0)
    np.testing.assert_array_equal(a.grad.numpy(), [[5.0, 6.0], [5.0, 6.0]])
    np.testing.assert_array_equal(b.grad.numpy(), [[4.0, 6.0]])


def test_unit_cotangent_through_exp_and_tanh(carrier):
    x = sw.tensor([0.5, -0.25, 1.0], carrier=carrier)
    (sw.exp(x) * sw.tanh(x)).sum().backward()
    v = np.array([0.5, -0.25, 1.0])
    expected = np.exp(v) * np.tanh(v) + np.exp(v) * (1 - np.tanh(v) ** 2)
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-5)


def _chain(x, start, steps, keep=None):
    """``steps`` of ``y * 2 + 1`` from ``start``; ``keep(i, y)`` sees every intermediate."""
    y = start
    for i in range(steps):
        y = y * 2.0 + 1.0
        if keep is not None:
            keep(i, y)
    return y


def test_a_chain_of_flat_nodes_reaches_retained_and_requested_intermediates(carrier):
    # The engine runs such a chain on raw buffers without settling anything, except where a
    # Tensor on it is observed: retained, requested, or consumed by a second path.
    x = sw.tensor(np.arange(4, dtype=np.float32), carrier=carrier)
    kept = {}

    def keep(i, y):
        kept[i] = y
        if i == 3:
            y.retain_grad()

    y = _chain(x, x, 6, keep)
    branch = kept[1] * 3.0  # a second consumer of an intermediate: its total arrives twice
    loss = sw.sum(y) + sw.sum(branch)
    (g_mid, g_x) = sw.grad(loss, [kept[2], x], sw.ones((1,), carrier=carrier), retain_graph=True)
    np.testing.assert_allclose(g_mid.numpy(), np.full(4, 2.0 ** 3))  # steps 3..5 each double
    np.testing.assert_allclose(g_x.numpy(), np.full(4, 2.0 ** 6 + 3.0 * 2.0 ** 2))
    loss.backward()
    np.testing.assert_allclose(x.grad.numpy(), g_x.numpy())
    np.testing.assert_allclose(kept[3].grad.numpy(), np.full(4, 2.0 ** 2))
    with pytest.warns(UserWarning, match="not a leaf"):
        assert kept[2].grad is None  # not retained: torch's warning says so


def test_a_chain_still_checks_an_intermediate_written_in_place(carrier):
    # The chain's fast path skips the version check only for inputs that never had a carrier.
    x = sw.tensor(np.arange(4, dtype=np.float32), carrier=carrier)
    kept = {}
    y = _chain(x, x, 4, lambda i, y: kept.setdefault(i, y))
    loss = sw.sum(y * y)
    kept[1][0] = 5.0  # after step 2 saved it: that node's history no longer describes its input
    with pytest.raises(RuntimeError, match="in-place modification"):
        loss.backward()
    assert x.grad is None


# ----- the one loop: every node hands its last contribution on the same way ---------------------------
#
# A node whose last contribution was just produced runs next, whatever made it: a flat call (a raw
# buffer), a rule (a Tensor, or ``Unplaced`` values), a custom backward (a Tensor it may share). A node
# whose contributions were summed in ``pending`` runs later, on a raw sum where flat calls made them all.


class Twice(sw.Operation):
    """A custom node: ``2 x``, whose backward returns a Tensor it computed (nothing the engine owns)."""

    def __init__(self):
        self.calls = 0

    def forward(self, x, options=None):
        return x * 2.0

    def backward(self, gradient):
        self.calls += 1
        return (gradient * 2.0,)


def _values(tensor):
    return np.asarray(tensor.numpy(), dtype=np.float64)


def test_a_sum_of_raw_contributions_runs_later_and_its_owned_total_is_handed_on_once(carrier):
    # ``y`` has two consumers, both flat: their raw contributions meet in ``pending`` and the add
    # node runs on the owned sum, which it may hand on to one input as it is, never to both.
    a = sw.tensor([1.0, 2.0, 3.0], carrier=carrier)
    b = sw.tensor([0.5, -1.0, 4.0], carrier=carrier)
    y = a + b
    (y * 3.0 + y * 4.0).sum().backward()
    np.testing.assert_array_equal(_values(a.grad), [7.0, 7.0, 7.0])
    np.testing.assert_array_equal(_values(b.grad), [7.0, 7.0, 7.0])
    a.grad[0] = 100.0  # the two gradients are separate buffers
    np.testing.assert_array_equal(_values(b.grad), [7.0, 7.0, 7.0])


def test_a_summed_total_that_is_observed_is_settled_before_its_node_runs(carrier):
    x = sw.tensor([0.5, -0.25, 1.0], carrier=carrier)
    y = sw.exp(x)
    y.retain_grad()
    loss = (y * 3.0 + y * 4.0).sum()
    (g_y, g_x) = sw.grad(loss, [y, x], sw.ones((), carrier=carrier), retain_graph=True)
    expected = 7.0 * np.exp(np.array([0.5, -0.25, 1.0]))
    np.testing.assert_allclose(_values(g_y), [7.0, 7.0, 7.0])
    np.testing.assert_allclose(_values(g_x), expected, rtol=1e-6)
    loss.backward()
    np.testing.assert_allclose(_values(y.grad), [7.0, 7.0, 7.0])
    np.testing.assert_allclose(_values(x.grad), expected, rtol=1e-6)


def test_a_rule_hands_unplaced_values_straight_to_a_view_with_holes(carrier):
    # ``exp`` of a strided view runs its rule (not flat), whose cotangent for the view is
    # ``Unplaced``; the view node runs next and places it in the view's layout.
    values = np.arange(12, dtype=np.float32).reshape(3, 4) / 8
    x = sw.tensor(values, carrier=carrier)
    y = x[:, ::2]
    sw.exp(y).sum().backward()
    expected = np.zeros((3, 4))
    expected[:, ::2] = np.exp(values[:, ::2].astype(np.float64))
    np.testing.assert_allclose(_values(x.grad), expected, rtol=1e-6)


def test_a_custom_node_hands_its_cotangent_straight_into_a_flat_chain(carrier):
    # Flat nodes on either side of the custom one: its Tensor cotangent goes on to the chain
    # below without passing through ``pending``, and the chain must not write into it.
    x = sw.tensor([1.0, -2.0, 0.5], carrier=carrier)
    op = Twice()
    h = op(x * 3.0 + 1.0)
    loss = (h * 5.0).sum()
    loss.backward(retain_graph=True)
    assert op.calls == 1
    np.testing.assert_array_equal(_values(x.grad), [30.0, 30.0, 30.0])
    h.retain_grad()
    x.grad = None
    loss.backward()
    np.testing.assert_array_equal(_values(h.grad), [5.0, 5.0, 5.0])
    np.testing.assert_array_equal(_values(x.grad), [30.0, 30.0, 30.0])


def test_an_owned_raw_leaf_total_is_the_grad_and_accumulates(carrier):
    # tanh's VJP allocates the leaf's total, which becomes its .grad without a copy: it must still be a
    # detached gradient in the leaf's layout and carrier class, and a second backward must add to it.
    values = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]], np.float32)
    x = sw.tensor(values, carrier=carrier)
    sw.tanh(x).sum().backward()
    expected = 1.0 - np.tanh(values.astype(np.float64)) ** 2
    assert x.grad.layout == x.layout and type(x.grad.carrier) is type(x.carrier)
    assert x.grad.autograd_ctx is None
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-6)
    sw.tanh(x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * expected, rtol=1e-6)
    first = x.grad
    x.grad = None
    sw.tanh(x).sum().backward()
    assert x.grad is not first
    np.testing.assert_allclose(first.numpy(), 2 * expected, rtol=1e-6)  # the earlier .grad was not reused


def test_a_shared_raw_leaf_total_is_copied_into_a_private_grad(carrier):
    # x's total in (x * w).sum() is w's own values (a unit cotangent times w), and a full sum's total is
    # one value spread over x: each .grad must be a private, writable copy.
    x0 = np.array([[1.0, -2.0], [3.5, 0.25]], np.float32)
    w0 = np.array([[0.5, 4.0], [-1.5, 2.0]], np.float32)
    x, w = sw.tensor(x0, carrier=carrier), sw.tensor(w0, carrier=carrier)
    (x * w).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), w0)
    np.testing.assert_array_equal(w.grad.numpy(), x0)
    assert x.grad.layout == x.layout and type(x.grad.carrier) is type(x.carrier)
    x.grad.fill_(5.0)
    np.testing.assert_array_equal(w.numpy(), w0)
    w.fill_(0.0)
    np.testing.assert_array_equal(x.grad.numpy(), np.full((2, 2), 5.0))
    y = sw.tensor(x0, carrier=carrier)
    y.sum().backward()
    np.testing.assert_array_equal(y.grad.numpy(), np.ones((2, 2)))
    y.grad.fill_(2.0)
    y.sum().backward()
    np.testing.assert_array_equal(y.grad.numpy(), np.full((2, 2), 3.0))
