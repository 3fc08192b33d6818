"""Batched ``grad`` runs all K cotangents through one traversal when every node allows it.

The vectorised traversal must give exactly what K separate traversals give,
for every kind of node, layout and carrier.
"""

import numpy as np
import pytest

import strideweave as sw
import strideweave.autograd.functional as functional

CARRIERS = ["numpy", "torch", "jax", "array_api_strict"]


def _storage(layout, seed):
    return np.random.default_rng(seed).uniform(0.5, 1.5, layout.cosize + 3).astype(np.float32)


def _leaf(layout, carrier, seed, offset=0):
    return sw.Tensor.from_storage(_storage(layout, seed), layout, offset=offset, carrier=carrier)


def _basis(output, carrier):
    """K = output.size basis cotangents laid out as (K, *output.layout)."""
    layout = output.layout
    k = layout.size
    stacked = sw.Layout((k, *layout.shape.modes), (layout.cosize, *layout.stride.modes))
    storage = np.zeros(k * layout.cosize, np.float32)
    for i in range(k):
        storage[i * layout.cosize + layout(i)] = 1.0
    return sw.Tensor.from_storage(storage, stacked, carrier=carrier)


PROGRAMS = {
    "elementwise": lambda a, b: sw.tanh(a * b + 1.0) - sw.exp(a) / (b + 2.0),
    "broadcast_binary": lambda a, b: a * sw.sum(b, modes=(0,), keepdims=True),
    "reductions": lambda a, b: sw.stack([sw.mean(a * b, modes=(1,)), sw.max(a + b, modes=(1,))]),
    "matmul": lambda a, b: sw.sin(a @ sw.transpose(b)),
    "matvec_and_vecmat": lambda a, b: sw.tanh(a @ b[0, :]) * (b[:, 1] @ a).sum(),
    "batched_matmul": lambda a, b: sw.stack([a, b]) @ sw.transpose(b),
    "views": lambda a, b: a[1:, :] * b[:2, :] + sw.transpose(a)[0:2, 0:2].sum(),
    "copy_and_astype": lambda a, b: sw.copy(a) * sw.astype(b, sw.DType.Float32),
}


@pytest.mark.parametrize("carrier", CARRIERS)
@pytest.mark.parametrize("program", sorted(PROGRAMS))
@pytest.mark.parametrize("layout_kind", ["canonical", "row_major_with_holes"])
def test_vectorised_batched_grad_matches_one_traversal_per_cotangent(carrier, program, layout_kind, monkeypatch):
    pytest.importorskip({"numpy": "numpy", "torch": "torch", "jax": "jax",
                         "array_api_strict": "array_api_strict"}[carrier])
    if layout_kind == "canonical":
        layout = sw.Layout((3, 2))
    else:
        layout = sw.Layout((3, 2), (4, 1))  # row-major, a hole after each row
    fn = PROGRAMS[program]
    a, b = _leaf(layout, carrier, 1), _leaf(layout, carrier, 2, offset=1)
    out = fn(a, b)
    cot = _basis(out, carrier)
    fast = sw.grad(out, [a, b], cot, batched=True, retain_graph=True)
    monkeypatch.setattr(functional, "_run_batched", lambda *args: None)
    slow = sw.grad(out, [a, b], cot, batched=True)
    for f, s in zip(fast, slow):
        assert f.layout == s.layout
        assert type(f.carrier) is type(a.carrier)
        np.testing.assert_allclose(f.numpy(), s.numpy(), rtol=1e-5, atol=1e-6)


def test_vectorised_batched_grad_releases_the_graph_once():
    a = sw.tensor([1.0, 2.0])
    out = sw.tanh(a * a)
    cot = sw.tensor(np.eye(2, dtype=np.float32))
    (jac,) = sw.grad(out, [a], cot, batched=True)
    expected = np.diag(2 * np.array([1.0, 2.0]) * (1 - np.tanh([1.0, 4.0]) ** 2))
    np.testing.assert_allclose(jac.numpy(), expected, rtol=1e-4)
    assert out.autograd_ctx.released
    with pytest.raises(RuntimeError, match="retain_graph=True"):
        sw.grad(out, [a], cot, batched=True)


def test_custom_operation_falls_back_to_one_traversal_per_cotangent():
    class Double(sw.Operation):
        def forward(self, x, options=None):
            return sw.multiply(x, 2.0)

        def backward(self, gradient):
            assert gradient.layout.rank == 1  # never handed a batched cotangent
            return (sw.multiply(gradient, 2.0),)

    a = sw.tensor([1.0, 2.0, 3.0])
    out = sw.exp(Double()(a))
    cot = sw.tensor(np.eye(3, dtype=np.float32))
    (jac,) = sw.grad(out, [a], cot, batched=True)
    np.testing.assert_allclose(jac.numpy(), np.diag(2 * np.exp(2 * np.array([1.0, 2.0, 3.0]))), rtol=1e-5)
