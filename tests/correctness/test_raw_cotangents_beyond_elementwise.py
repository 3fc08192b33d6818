"""Raw cotangents through matmul, full reductions, whole-buffer views and broadcasting ops.

Where every Tensor of such a node is dense over its whole buffer, backward
passes native arrays in each Tensor's storage order instead of cotangent
Tensors. None of that may be observable: gradients match torch in every
memory order, saved values and inputs are never written, every ``.grad``
owns its storage, and retained Tensors see exactly their totals.
"""

import numpy as np
import pytest

import strideweave as sw

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(7)
X0 = RNG.standard_normal((5, 3)).astype(np.float32)
W10 = RNG.standard_normal((4, 3)).astype(np.float32)
B10 = RNG.standard_normal(4).astype(np.float32)
W20 = RNG.standard_normal((2, 4)).astype(np.float32)


def _values(t):
    return np.asarray(t.numpy(), dtype=np.float64)


def _leaf(values, carrier, order):
    """``values`` as a leaf whose storage runs in ``order`` ("C": row-major, "F": column-major)."""
    if order == "C":
        return sw.tensor(np.ascontiguousarray(values), carrier=carrier)
    layout = sw.Layout.canonical(values.shape)
    return sw.Tensor.from_storage(np.asfortranarray(values).ravel(order="F"), layout, carrier=carrier)


def _mlp(lib, x, W1, b1, W2, transpose):
    hidden = lib.tanh(x @ transpose(W1) + b1)
    return hidden @ transpose(W2)


def _torch_grads(reduce="sum"):
    leaves = [torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in (X0, W10, B10, W20)]
    out = _mlp(torch, *leaves, lambda t: t.T)
    (out.sum() if reduce == "sum" else out.mean()).backward()
    return [t.grad.numpy() for t in leaves]


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("reduce", ["sum", "mean"])
def test_mlp_gradients_match_torch_in_every_memory_order(carrier, order, reduce):
    leaves = [_leaf(v, carrier, order) for v in (X0, W10, B10, W20)]
    out = _mlp(sw, *leaves, sw.transpose)
    (sw.sum(out) if reduce == "sum" else sw.mean(out)).backward()
    for leaf, expected, original in zip(leaves, _torch_grads(reduce), (X0, W10, B10, W20)):
        assert leaf.grad.layout == leaf.layout
        np.testing.assert_allclose(_values(leaf.grad), expected, rtol=2e-5, atol=1e-6)
        np.testing.assert_array_equal(_values(leaf), original)


def test_the_nodes_run_on_raw_buffers_where_arrays_reshape_for_free(carrier):
    x, W1, b1, _W2 = (_leaf(v, carrier, "C") for v in (X0, W10, B10, W20))
    W1t = sw.transpose(W1)
    product = x @ W1t
    shifted = product + b1
    loss = sw.sum(shifted)
    flat = carrier != "jax"  # JAX keeps N-D Tensors: its reshapes between 1-D and N-D copy
    assert [node.flat for node in (W1t._ctx, product._ctx, shifted._ctx, loss._ctx)] == [flat] * 4
    loss.backward()
    np.testing.assert_allclose(_values(W1.grad), np.tile(X0.sum(axis=0), (4, 1)), rtol=1e-5)
    np.testing.assert_allclose(_values(b1.grad), np.full(4, 5.0), rtol=1e-6)


def test_a_retained_view_and_its_source_never_share_a_grad(carrier):
    x = _leaf(X0, carrier, "C")
    W = _leaf(W10, carrier, "C")
    Wt = sw.transpose(W)
    Wt.retain_grad()
    sw.sum(x @ Wt).backward()
    expected = np.tile(X0.sum(axis=0), (4, 1))
    np.testing.assert_allclose(_values(W.grad), expected, rtol=1e-5)
    np.testing.assert_allclose(_values(Wt.grad), expected.T, rtol=1e-5)
    Wt.grad.fill_(0.0)
    np.testing.assert_allclose(_values(W.grad), expected, rtol=1e-5)
    W.grad.fill_(0.0)
    np.testing.assert_array_equal(_values(Wt.grad), np.zeros((3, 4)))


def test_contributions_through_two_views_add_up_without_touching_saved_values(carrier):
    x = _leaf(X0, carrier, "F")
    W = _leaf(W10, carrier, "C")
    hidden = x @ sw.transpose(W)         # (5, 4)
    back = hidden @ W                     # (5, 3): W saved by this matmul, and reached twice
    loss = sw.sum(back * back) + sw.sum(sw.reshape(sw.transpose(W), (12,)))
    loss.backward(retain_graph=True)
    first = _values(W.grad)
    loss.backward()
    np.testing.assert_allclose(_values(W.grad), 2 * first, rtol=1e-5)
    tx = torch.tensor(X0, dtype=torch.float64)
    tW = torch.tensor(W10, dtype=torch.float64, requires_grad=True)
    tb = (tx @ tW.T) @ tW
    ((tb * tb).sum() + tW.T.reshape(12).sum()).backward()
    np.testing.assert_allclose(first, tW.grad.numpy(), rtol=2e-5, atol=1e-5)
    np.testing.assert_array_equal(_values(W), W10)


def test_a_broadcast_operand_gets_its_sum_in_its_own_storage_order(carrier):
    a = _leaf(RNG.standard_normal((3, 4)).astype(np.float32), carrier, "C")
    row = _leaf(RNG.standard_normal((1, 4)).astype(np.float32), carrier, "C")
    column = _leaf(RNG.standard_normal((3, 1)).astype(np.float32), carrier, "F")
    sw.sum((a * row) * column).backward()
    av, rv, cv = _values(a), _values(row), _values(column)
    np.testing.assert_allclose(_values(row.grad), (av * cv).sum(axis=0, keepdims=True), rtol=1e-5)
    np.testing.assert_allclose(_values(column.grad), (av * rv).sum(axis=1, keepdims=True), rtol=1e-5)
    np.testing.assert_allclose(_values(a.grad), np.broadcast_to(rv * cv, (3, 4)), rtol=1e-6)
    assert row.grad.layout == row.layout and column.grad.layout == column.layout


BROADCAST_OPS = {
    "add": (sw.add, torch.add), "subtract": (sw.subtract, torch.subtract),
    "multiply": (sw.multiply, torch.multiply), "divide": (sw.divide, torch.divide),
    "power": (sw.pow, torch.pow), "maximum": (sw.maximum, torch.maximum),
    "atan2": (sw.atan2, torch.atan2), "hypot": (sw.hypot, torch.hypot),
    "logaddexp": (sw.logaddexp, torch.logaddexp),
}


@pytest.mark.parametrize("name", sorted(BROADCAST_OPS))
@pytest.mark.parametrize("orders", ["CC", "CF", "FF"])
def test_outer_broadcasting_matches_torch_for_every_binary_rule(carrier, name, orders):
    """Two operands that both stretch ((3, 1) against (1, 4)), then a full operand against a row."""
    sw_op, torch_op = BROADCAST_OPS[name]
    column0 = RNG.uniform(0.5, 2.0, (3, 1)).astype(np.float32)
    row0 = RNG.uniform(0.5, 2.0, (1, 4)).astype(np.float32)
    full0 = RNG.uniform(0.5, 2.0, (3, 4)).astype(np.float32)
    column, row, full = (_leaf(v, carrier, o) for v, o in ((column0, orders[0]), (row0, orders[1]),
                                                            (full0, orders[0])))
    outer = sw_op(column, row)
    sw.sum(sw_op(full, outer) * outer).backward()
    tc, tr, tf = (torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in (column0, row0, full0))
    t_outer = torch_op(tc, tr)
    (torch_op(tf, t_outer) * t_outer).sum().backward()
    for leaf, reference in ((column, tc), (row, tr), (full, tf)):
        assert leaf.grad.layout == leaf.layout
        np.testing.assert_allclose(_values(leaf.grad), reference.grad.numpy(), rtol=5e-5, atol=1e-5)


def test_functional_grad_prunes_unrequested_leaves_on_the_raw_path(carrier):
    x, W1, b1, W2 = (_leaf(v, carrier, "C") for v in (X0, W10, B10, W20))
    out = _mlp(sw, x, W1, b1, W2, sw.transpose)
    loss = sw.sum(out)
    (gW1,) = sw.grad(loss, [W1], sw.tensor(np.ones(1, dtype=np.float32), carrier=carrier))
    _, expected_W1, _, _ = _torch_grads()
    np.testing.assert_allclose(_values(gW1), expected_W1, rtol=2e-5, atol=1e-6)
    assert all(leaf.grad is None for leaf in (x, W1, b1, W2))


def test_matmul_over_nested_modes_in_either_storage_order(carrier):
    """A (2, 3) nested mode takes part as one axis of 6, flattened colexicographically."""
    values = RNG.standard_normal(24).astype(np.float32)
    B0 = RNG.standard_normal((4, 5)).astype(np.float32)
    nested = sw.Layout(sw.Shape([[2, 3], 4]))                           # (6, 4), canonical
    nested_rows = sw.Layout(sw.Shape([[2, 3], 4]), sw.Stride([[4, 8], 1]))  # row-major over (6, 4)
    for layout in (nested, nested_rows):
        A = sw.Tensor.from_storage(values, layout, carrier=carrier)
        B = _leaf(B0, carrier, "C")
        sw.sum(sw.tanh(A @ B)).backward()
        A_natural = _values(A).reshape(6, 4, order="F") if _values(A).ndim != 2 else _values(A)
        tA = torch.tensor(A_natural, requires_grad=True)
        tB = torch.tensor(B0.astype(np.float64), requires_grad=True)
        torch.tanh(tA @ tB).sum().backward()
        np.testing.assert_allclose(_values(B.grad), tB.grad.numpy(), rtol=2e-5, atol=1e-6)
        assert A.grad.layout == A.layout
        np.testing.assert_allclose(_values(A.grad).reshape(tA.shape, order="F") if _values(A.grad).ndim != 2
                                   else _values(A.grad), tA.grad.numpy(), rtol=2e-5, atol=1e-6)


@pytest.mark.parametrize("name", ["multiply", "add"])
def test_a_full_operands_gradient_is_private_whether_or_not_flattening_copied(carrier, name):
    """``sum(A * w)``: A's gradient is w broadcast, which flattening copies; ``sum(A + w)``: the ones."""
    A0 = RNG.standard_normal((3, 4)).astype(np.float32)
    w0 = RNG.standard_normal((1, 4)).astype(np.float32)
    A, w = _leaf(A0, carrier, "C"), _leaf(w0, carrier, "C")
    sw.sum(BROADCAST_OPS[name][0](A, w)).backward()
    expected_A = np.broadcast_to(w0, (3, 4)) if name == "multiply" else np.ones((3, 4))
    expected_w = A0.sum(axis=0, keepdims=True) if name == "multiply" else np.full((1, 4), 3.0)
    np.testing.assert_allclose(_values(A.grad), expected_A, rtol=1e-6)
    A.grad.fill_(7.0)
    np.testing.assert_allclose(_values(w.grad), expected_w, rtol=1e-5)
    np.testing.assert_array_equal(_values(w), w0)
    np.testing.assert_array_equal(_values(A), A0)


@pytest.mark.parametrize("orders", ["CC", "CF", "FC", "FF"])
def test_matmul_of_two_matrices_in_any_pair_of_storage_orders(carrier, orders):
    """Each operand's gradient is written in its own storage order, whichever the other's is."""
    A0, B0 = X0, W10.T.copy()  # (5, 3) @ (3, 4)
    A, B = _leaf(A0, carrier, orders[0]), _leaf(B0, carrier, orders[1])
    sw.sum(sw.tanh(A @ B)).backward()
    tA = torch.tensor(A0.astype(np.float64), requires_grad=True)
    tB = torch.tensor(B0.astype(np.float64), requires_grad=True)
    torch.tanh(tA @ tB).sum().backward()
    assert A.grad.layout == A.layout and B.grad.layout == B.layout
    np.testing.assert_allclose(_values(A.grad), tA.grad.numpy(), rtol=2e-5, atol=1e-6)
    np.testing.assert_allclose(_values(B.grad), tB.grad.numpy(), rtol=2e-5, atol=1e-6)
    np.testing.assert_array_equal(A.numpy(), A0)  # saved operands never written
    np.testing.assert_array_equal(B.numpy(), B0)
