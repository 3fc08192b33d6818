"""The traversal's one loop: every node hands its last contribution on the same way.

A node whose last contribution was just produced runs next, whatever made it: a
flat call (a raw buffer), a rule (a Tensor, or ``Unplaced`` values), a custom
backward (a Tensor it may share). A node whose contributions were summed in
``pending`` runs later, on a raw sum where flat calls made them all.
"""

import numpy as np
import pytest

import strideweave as sw

CARRIERS = ["numpy", "torch", "jax", "array_api_strict"]


@pytest.fixture(params=CARRIERS)
def carrier(request):
    pytest.importorskip({"numpy": "numpy", "torch": "torch", "jax": "jax",
                         "array_api_strict": "array_api_strict"}[request.param])
    return request.param


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
