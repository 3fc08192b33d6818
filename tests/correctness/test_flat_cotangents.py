"""Raw cotangents between flat built-in nodes: in-place accumulation, ownership, observers.

Between elementwise nodes that ran on flat buffers the engine passes native
arrays and adds further contributions into buffers it allocated, in place.
None of that may be observable: gradients, saved values, retained and
repeated traversals must be exactly what the Tensor path gives.
"""

import numpy as np
import pytest

import strideweave as sw

torch = pytest.importorskip("torch")


def _values(t):
    return np.asarray(t.numpy(), dtype=np.float64)


def _storage(t):
    return [c.array for c in t.carriers]


def _program(lib, x, w):
    """Fan-out everywhere: ``y`` and ``x`` each reach the loss along several flat paths."""
    y = x * 1.5 + w
    z = y * y + y * x - lib.exp(y * 0.5) + lib.sin(x) * y - y / (w * w + 1.0)
    return z * z + z


X0 = np.array([0.3, -1.2, 0.7, 2.0, -0.4, 1.1], dtype=np.float32)
W0 = np.array([0.5, 0.25, -0.75, 1.5, -1.0, 0.1], dtype=np.float32)


def _reference():
    x = torch.tensor(X0, dtype=torch.float64, requires_grad=True)
    w = torch.tensor(W0, dtype=torch.float64, requires_grad=True)
    _program(torch, x, w).sum().backward()
    return x.grad.numpy(), w.grad.numpy()


def test_fan_out_gradients_match_torch(carrier):
    x = sw.tensor(X0, carrier=carrier)
    w = sw.tensor(W0, carrier=carrier)
    _program(sw, x, w).sum().backward()
    gx, gw = _reference()
    np.testing.assert_allclose(_values(x.grad), gx, rtol=2e-5, atol=1e-5)
    np.testing.assert_allclose(_values(w.grad), gw, rtol=2e-5, atol=1e-5)
    np.testing.assert_array_equal(_values(x), X0)        # in-place accumulation never reaches inputs
    np.testing.assert_array_equal(_values(w), W0)


def test_retained_graph_traversed_twice_accumulates_exactly(carrier):
    x = sw.tensor(X0, carrier=carrier)
    w = sw.tensor(W0, carrier=carrier)
    loss = _program(sw, x, w).sum()
    loss.backward(retain_graph=True)
    first = _values(x.grad)
    loss.backward()
    # Saved values (and the exp result a unit cotangent hands on as is) were never written.
    np.testing.assert_allclose(_values(x.grad), 2 * first, rtol=1e-6)


def test_every_grad_owns_storage_no_one_else_sees(carrier):
    x = sw.tensor(X0, carrier=carrier)
    w = sw.tensor(W0, carrier=carrier)
    e = sw.exp(x)
    loss = (e * x + e * w + x * w).sum()
    loss.backward()
    others = [x, w, e]
    for grad in (x.grad, w.grad):
        for other in others + [g for g in (x.grad, w.grad) if g is not grad]:
            for a in _storage(grad):
                for b in _storage(other):
                    assert a is not b
                    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
                        assert not np.shares_memory(a, b)
    saved_e = _values(e)
    x.grad.fill_(0.0)
    w.grad.fill_(0.0)
    np.testing.assert_array_equal(_values(e), saved_e)
    np.testing.assert_array_equal(_values(x), X0)


def test_retained_intermediate_on_a_flat_chain(carrier):
    x = sw.tensor(X0, carrier=carrier)
    y = x * 2.0
    y.retain_grad()
    z = y * 3.0 + y
    z.retain_grad()
    (z * z).sum().backward()
    expected_z = 2 * (8 * X0.astype(np.float64))
    np.testing.assert_allclose(_values(z.grad), expected_z, rtol=1e-6)
    np.testing.assert_allclose(_values(y.grad), 4 * expected_z, rtol=1e-6)
    np.testing.assert_allclose(_values(x.grad), 8 * expected_z, rtol=1e-6)
    y.grad.fill_(0.0)
    np.testing.assert_allclose(_values(x.grad), 8 * expected_z, rtol=1e-6)
    np.testing.assert_allclose(_values(z.grad), expected_z, rtol=1e-6)


def test_flat_and_layout_nodes_meet_on_one_tensor(carrier):
    """A flat cotangent and a Tensor cotangent (from a transpose) reach the same Tensor."""
    a0 = np.arange(12, dtype=np.float32).reshape(3, 4) / 7
    a = sw.tensor(a0, carrier=carrier)
    h = a * a                                     # flat
    t = sw.transpose(h)                           # a layout node: Tensor cotangents
    loss = (h * 2.0).sum() + (t * t).sum() + sw.sum(sw.exp(h))
    loss.backward()
    ta = torch.tensor(a0, dtype=torch.float64, requires_grad=True)
    th = ta * ta
    ((th * 2.0).sum() + (th.T * th.T).sum() + torch.exp(th).sum()).backward()
    np.testing.assert_allclose(_values(a.grad), ta.grad.numpy(), rtol=2e-5)


def test_functional_grad_of_one_input_on_a_flat_graph(carrier):
    x = sw.tensor(X0, carrier=carrier)
    w = sw.tensor(W0, carrier=carrier)
    (gw,) = sw.grad(_program(sw, x, w), [w], sw.ones(6, carrier=carrier))
    np.testing.assert_allclose(_values(gw), _reference()[1], rtol=2e-5, atol=1e-5)
    assert x.grad is None and w.grad is None


def test_custom_operation_inside_a_flat_chain_gets_a_tensor(carrier):
    seen = []

    class Double(sw.Operation):
        def forward(self, x, options=None):
            return x * 2.0

        def backward(self, gradient):
            seen.append(type(gradient))
            return (gradient * 2.0,)

    x = sw.tensor(X0, carrier=carrier)
    (Double()(x * 3.0) * x).sum().backward()
    assert seen == [sw.Tensor]
    np.testing.assert_allclose(_values(x.grad), 12 * X0.astype(np.float64), rtol=1e-6)


# ----- Tensor cotangents a rule owns ----------------------------------------------------------------

def test_fresh_gemm_cotangents_accumulate_and_own_their_grads(carrier):
    w0 = np.arange(12, dtype=np.float32).reshape(3, 4) / 10
    x0 = np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)
    w = sw.tensor(w0, carrier=carrier)
    x = sw.tensor(x0, carrier=carrier)
    loss = sw.sum(sw.tanh(x @ w)) + sw.sum((x @ w) * 2.0) + sw.sum(sw.transpose(w) * 3.0)
    loss.backward()
    tw = torch.tensor(w0, dtype=torch.float64, requires_grad=True)
    tx = torch.tensor(x0, dtype=torch.float64, requires_grad=True)
    (torch.tanh(tx @ tw).sum() + ((tx @ tw) * 2.0).sum() + (tw.T * 3.0).sum()).backward()
    np.testing.assert_allclose(_values(w.grad), tw.grad.numpy(), rtol=2e-5)
    np.testing.assert_allclose(_values(x.grad), tx.grad.numpy(), rtol=2e-5)
    assert not any(a is b for a in _storage(w.grad) for b in _storage(x.grad) + _storage(w) + _storage(x))


def test_a_custom_backward_returning_one_tensor_for_two_inputs_gives_each_its_own_grad(carrier):
    class SameForBoth(sw.Operation):
        def forward(self, a, b, options=None):
            return a + b

        def backward(self, gradient):
            shared = gradient * 1.0
            return (shared, shared)

    a = sw.tensor([1.0, 2.0], carrier=carrier)
    b = sw.tensor([3.0, 4.0], carrier=carrier)
    SameForBoth()(a, b).backward(sw.ones(2, carrier=carrier))
    assert not any(ca is cb for ca in _storage(a.grad) for cb in _storage(b.grad))
    a.grad.fill_(-1.0)
    np.testing.assert_array_equal(_values(b.grad), [1.0, 1.0])


def test_one_array_a_rule_hands_to_two_inputs_is_owned_by_neither(carrier):
    a = sw.tensor([1.0, 2.0], carrier=carrier)
    b = sw.tensor([3.0, 4.0], carrier=carrier)
    node = (a * b).autograd_ctx
    xp = node.kind.namespace
    one, other = xp.asarray([1.0, 1.0], dtype=xp.float32), xp.asarray([2.0, 2.0], dtype=xp.float32)
    assert node.cotangents((one, one), owned=True)[1] == (False, False)
    assert node.cotangents((one, other), owned=True)[1] == (True, True)
    assert node.cotangents((one, other))[1] == (False, False)


# ----- Tensors whose layout has holes: contributions summed, then placed once ---------------------

def _with_holes(carrier):
    storage = np.linspace(-1, 1, 26, dtype=np.float32)
    layout = sw.Layout(sw.Shape([3, 4]), sw.Stride([8, 1]))      # rows of 8 slots, 4 used: holes
    return sw.Tensor.from_storage(sw.tensor(storage, carrier=carrier).carrier.array, layout, offset=1), storage


def test_contributions_for_a_layout_with_holes_are_summed_then_placed(carrier):
    x, storage = _with_holes(carrier)
    (sw.exp(x) * x + x * 3.0 + sw.sin(x)).sum().backward()
    v = storage[1:1 + 24].reshape(3, 8)[:, :4].astype(np.float64)
    np.testing.assert_allclose(_values(x.grad), np.exp(v) * (v + 1) + 3.0 + np.cos(v), rtol=2e-5)
    assert x.grad.layout == x.layout
    # Every storage slot the layout does not address holds zero.
    whole = sw.Layout.canonical(sw.Shape([x.grad.carrier.size]))
    storage_values = np.asarray(sw.Tensor.from_storage(x.grad.carrier.array, whole).numpy(), dtype=np.float64)
    np.testing.assert_allclose(storage_values.sum(), _values(x.grad).sum(), rtol=1e-5)


def test_a_built_in_backward_called_directly_returns_placed_tensors(carrier):
    x, _ = _with_holes(carrier)
    y = sw.exp(x)
    (cotangent,) = y.autograd_ctx.backward(sw.ones(sw.Shape([3, 4]), carrier=carrier))
    assert isinstance(cotangent, sw.Tensor) and cotangent.layout == x.layout
    np.testing.assert_allclose(_values(cotangent), _values(y), rtol=1e-6)
