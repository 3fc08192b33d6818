"""Elementwise results keep the memory order of their dense operands (docs/api.md section 5).

C-ordered arrays wrapped with ``sw.tensor`` give row-major results, with
broadcasting too; operands that disagree give canonical results; backward
builds each gradient in its leaf's own layout, from the same storage order.
"""

import numpy as np
import pytest

import strideweave as sw

CARRIERS = [c for c in sw.testing.available_carriers() if c in ("numpy", "torch", "jax")]


@pytest.fixture(params=CARRIERS)
def carrier(request):
    return request.param


def native(values, carrier, dtype=np.float32):
    """A C-ordered native array of ``carrier``'s library holding ``values``."""
    values = np.ascontiguousarray(values, dtype=dtype)
    if carrier == "torch":
        import torch

        return torch.from_numpy(values.copy())
    if carrier == "jax":
        import jax.numpy as jnp

        return jnp.asarray(values)
    return values.copy()


def row_major(shape):
    """The layout sw.tensor gives a C-ordered array of ``shape``: last mode fastest."""
    strides, step = [], 1
    for extent in reversed(shape):
        strides.insert(0, step)
        step *= extent
    return sw.Layout(sw.Shape(list(shape)), sw.Stride(strides))


def storage(t):
    """The result's flat storage buffer as NumPy (what memory order means)."""
    return np.asarray(sw.Tensor.from_storage(t.carrier.array, sw.Layout(t.carrier.size)).numpy())


def test_unary_keeps_row_major_and_gradient_layout(carrier):
    x0 = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)
    x = sw.tensor(native(x0, carrier))
    assert x.layout == row_major((3, 4))
    y = sw.exp(x)
    assert y.layout == x.layout and y.offset == 0
    np.testing.assert_allclose(storage(y), np.exp(x0).ravel(order="C"), rtol=1e-6)
    (y * x).sum().backward()
    assert x.grad.layout == x.layout
    np.testing.assert_allclose(x.grad.numpy(), np.exp(x0) * (x0 + 1), rtol=1e-5)


def test_binary_same_layout_and_scalar_keep_it(carrier):
    a0 = np.arange(1, 7, dtype=np.float32).reshape(2, 3)
    b0 = a0[::-1].copy() + 0.5
    a, b = sw.tensor(native(a0, carrier)), sw.tensor(native(b0, carrier))
    for out, expected in ((a * b, a0 * b0), (a / b, a0 / b0), (a * 2.0, a0 * 2), (1.0 - a, 1 - a0)):
        assert out.layout == row_major((2, 3))
        np.testing.assert_allclose(storage(out), expected.ravel(order="C"), rtol=1e-6)
    (a / b).sum().backward()
    assert a.grad.layout == b.grad.layout == row_major((2, 3))
    np.testing.assert_allclose(a.grad.numpy(), 1 / b0, rtol=1e-6)
    np.testing.assert_allclose(b.grad.numpy(), -a0 / b0 ** 2, rtol=1e-6)


@pytest.mark.parametrize("w_shape", [(1, 4), (4,), (3, 1)])
def test_broadcast_result_follows_the_full_shape_operand(carrier, w_shape):
    A0 = np.arange(12, dtype=np.float32).reshape(3, 4) / 7
    w0 = np.arange(1, 1 + int(np.prod(w_shape)), dtype=np.float32).reshape(w_shape)
    A, w = sw.tensor(native(A0, carrier)), sw.tensor(native(w0, carrier))
    for out in (A * w, w * A):
        assert out.layout == row_major((3, 4))
        np.testing.assert_allclose(storage(out), (A0 * w0).ravel(order="C"), rtol=1e-6)
    (sw.sin(A * w)).sum().backward()
    assert A.grad.layout == A.layout and w.grad.layout == w.layout
    np.testing.assert_allclose(A.grad.numpy(), np.cos(A0 * w0) * w0, rtol=1e-5)
    lined_up = (1,) * (2 - len(w_shape)) + w_shape
    expected_w = (np.cos(A0 * w0) * A0).sum(axis=tuple(i for i in range(2) if lined_up[i] == 1))
    np.testing.assert_allclose(w.grad.numpy(), expected_w.reshape(w_shape), rtol=1e-5)


def test_operands_that_disagree_give_canonical():
    a0 = np.arange(6, dtype=np.float32).reshape(2, 3)
    a = sw.tensor(a0)                                   # row-major
    b = sw.tensor(a0.tolist())                          # canonical
    out = a + b
    assert out.layout == sw.Layout.canonical(sw.Shape([2, 3]))
    np.testing.assert_allclose(out.numpy(), 2 * a0)


def test_dense_views_keep_their_order_and_strided_views_do_not():
    base = sw.Tensor.from_storage(np.arange(12, dtype=np.float32), sw.Layout.canonical(sw.Shape([3, 4])))
    transposed = sw.transpose(base)                     # dense: a permutation of compact storage
    out = sw.negative(transposed)
    assert out.layout == transposed.layout
    np.testing.assert_allclose(out.numpy(), -base.numpy().T)
    sliced = base[0:2, :]                               # holes: not dense
    assert sw.exp(sliced).layout == sw.Layout.canonical(sw.Shape([2, 4]))


def test_nested_dense_layout_round_trips_values_and_gradients(carrier):
    layout = sw.Layout(sw.Shape([2, [3, 2]]), sw.Stride([6, [1, 3]]))
    assert layout.is_compact() and not layout.is_canonical()
    x = sw.Tensor.from_storage(native(np.linspace(0.1, 1.2, 12), carrier), layout)
    y = x * x + sw.tanh(x)
    assert y.layout == layout
    np.testing.assert_allclose(y.numpy(), x.numpy() ** 2 + np.tanh(x.numpy()), rtol=1e-5)
    y.sum().backward()
    assert x.grad.layout == layout
    np.testing.assert_allclose(x.grad.numpy(), 2 * x.numpy() + 1 - np.tanh(x.numpy()) ** 2, rtol=1e-5)


@pytest.mark.parametrize("w_shape", [(3, 1), (4,), (2, 1, 4), (1, 1, 1)])
def test_rank3_broadcast_gradients_in_storage_order(carrier, w_shape):
    A0 = np.linspace(-1, 1, 24, dtype=np.float32).reshape(2, 3, 4)
    w0 = np.linspace(0.5, 1.5, int(np.prod(w_shape)), dtype=np.float32).reshape(w_shape)
    A, w = sw.tensor(native(A0, carrier)), sw.tensor(native(w0, carrier))
    out = A / w - A * A
    assert out.layout == row_major((2, 3, 4))
    np.testing.assert_allclose(storage(out), (A0 / w0 - A0 * A0).ravel(order="C"), rtol=1e-5, atol=1e-6)
    out.sum().backward()
    assert A.grad.layout == A.layout and w.grad.layout == w.layout
    np.testing.assert_allclose(A.grad.numpy(), np.broadcast_to(1 / w0, A0.shape) - 2 * A0, rtol=1e-5, atol=1e-6)
    lined_up = (1,) * (3 - len(w_shape)) + w_shape
    axes = tuple(i for i in range(3) if lined_up[i] == 1)
    np.testing.assert_allclose(w.grad.numpy(), (-A0 / w0 ** 2).sum(axis=axes).reshape(w_shape),
                               rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("w_shape", [(2, 1, 4), (1, 3, 4), (1, 1, 4), (3, 4)])
def test_broadcast_operands_in_another_storage_order(carrier, w_shape):
    # A row-major A beside a w in canonical (first-mode-fastest) storage: a w whose own order runs
    # against A's is read through its layout; a w with one moving mode lines up with a reshape.
    from strideweave.ops._storage import lined_up_shape

    A0 = np.linspace(-1, 1, 24, dtype=np.float32).reshape(2, 3, 4)
    w0 = np.linspace(0.5, 1.5, int(np.prod(w_shape)), dtype=np.float32).reshape(w_shape)
    A = sw.tensor(native(A0, carrier))
    w = sw.Tensor.from_storage(sw.tensor(w0.ravel(order="F"), carrier=carrier).carrier.array,
                               sw.Layout.canonical(sw.Shape(list(w_shape))))
    lines_up = lined_up_shape(w.layout, A.layout) is not None
    assert lines_up == (w_shape in ((1, 1, 4),))
    (A * w + A).sum().backward()
    np.testing.assert_allclose(A.grad.numpy(), np.broadcast_to(w0, A0.shape) + 1, rtol=1e-6)
    lined = (1,) * (3 - len(w_shape)) + w_shape
    axes = tuple(i for i in range(3) if lined[i] == 1)
    np.testing.assert_allclose(w.grad.numpy(), A0.sum(axis=axes).reshape(w_shape), rtol=1e-5, atol=1e-6)
    assert w.grad.layout == w.layout


@pytest.mark.parametrize("w_shape", [(3, 3), (1, 3), (3,)])
def test_mixed_dtype_gradients_in_storage_order_and_batched(carrier, w_shape):
    # A row-major Float32 A beside Int32 w: backward runs in A's storage order with w read as Float32;
    # square extents tell the orders apart. A batched cotangent runs in rev space, cast the same way.
    A0 = np.linspace(0.5, 2.0, 9, dtype=np.float32).reshape(3, 3)
    w0 = (np.arange(int(np.prod(w_shape)), dtype=np.int32) % 4 + 1).reshape(w_shape)
    g0 = np.linspace(-1.0, 1.0, 9).reshape(3, 3)
    A = sw.tensor(native(A0, carrier))
    w = sw.tensor(native(w0, carrier, np.int32))
    assert A.layout == row_major((3, 3)) and w.dtype.kind == "int"
    cotangent = sw.tensor(native(g0, carrier))
    for op, grad_a in ((sw.multiply, lambda: g0 * w0), (sw.divide, lambda: g0 / w0),
                       (lambda a, b: sw.divide(b, a), lambda: -g0 * w0 / A0.astype(np.float64) ** 2)):
        out = op(A, w)
        assert out.layout == A.layout
        (ga,) = sw.grad(out, [A], cotangent)
        assert ga.layout == A.layout
        np.testing.assert_allclose(ga.numpy(), grad_a(), rtol=1e-5, atol=1e-6)
        stacked = sw.tensor(native(np.stack([g0, 2 * g0]), carrier))
        (batched,) = sw.grad(op(A, w), [A], stacked, batched=True)
        np.testing.assert_allclose(batched.numpy(), np.stack([grad_a(), 2 * grad_a()]), rtol=1e-5, atol=1e-6)


def test_lined_up_shapes():
    from strideweave.ops._storage import lined_up_shape

    rows = row_major((2, 3, 4))
    assert lined_up_shape(row_major((3, 1)), rows) == (1, 3, 1)
    assert lined_up_shape(row_major((2, 1, 4)), rows) == (2, 1, 4)
    assert lined_up_shape(row_major((4,)), rows) == (1, 1, 4)
    assert lined_up_shape(sw.Layout.canonical(sw.Shape([2, 1, 4])), rows) is None
    canonical = sw.Layout.canonical(sw.Shape([2, 3, 4]))
    assert lined_up_shape(sw.Layout.canonical(sw.Shape([2, 1, 4])), canonical) == (4, 1, 2)
    assert lined_up_shape(row_major((2, 1, 4)), canonical) is None



ALL_CARRIERS = sw.testing.available_carriers()


@pytest.mark.parametrize("where", ALL_CARRIERS)
@pytest.mark.parametrize("order", ["canonical", "row-major"])
@pytest.mark.parametrize("shapes", [((3, 3), (3,)), ((3,), (3, 3)), ((2, 3, 3), (3,)), ((2, 3, 4), (4, 2))],
                         ids=["square @ vector", "vector @ square", "batch @ vector", "batch @ matrix"])
def test_matmul_beyond_two_modes_reads_either_storage_order(where, order, shapes):
    # Square operands tell the orders apart: read in the wrong one, a square matrix is its transpose.
    torch = pytest.importorskip("torch")  # the reference: torch.autograd in float64
    rng = np.random.default_rng(11)
    a0, b0 = (rng.standard_normal(s).astype(np.float32) for s in shapes)
    g0 = rng.standard_normal(np.matmul(a0, b0).shape).astype(np.float32)

    def leaf(values):
        if order == "row-major":  # a C-ordered native array of the carrier's library, wrapped as is
            return sw.tensor(sw.tensor(values.copy(), carrier=where).to_array()) if where != "numpy" \
                else sw.tensor(values.copy())
        return sw.tensor(values.tolist(), carrier=where)  # lists give canonical (first-mode-fastest) storage

    a, b = leaf(a0), leaf(b0)
    out = sw.array_api.matmul(a, b)
    cotangent = sw.zeros(out.shape, carrier=where, layout=out.layout)
    cotangent[...] = sw.tensor(g0.tolist(), carrier=where)
    ga, gb = sw.grad(out, [a, b], cotangent)

    ta, tb = (torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in (a0, b0))
    want = ta @ tb
    want_a, want_b = torch.autograd.grad(want, [ta, tb], torch.tensor(g0, dtype=torch.float64))
    np.testing.assert_allclose(out.numpy(), want.detach().numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(ga.numpy(), want_a.numpy(), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(gb.numpy(), want_b.numpy(), rtol=1e-4, atol=1e-4)
