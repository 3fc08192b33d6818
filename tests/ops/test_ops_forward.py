"""Forward values of every operation against NumPy, on every carrier and layout kind, plus bad inputs."""

import numpy as np
import pytest
from ops_cases import ALL_KINDS, CARRIERS, FLAT_KINDS, canonical, canonical_like, make

import strideweave as sw

F32 = sw.DType.Float32


@pytest.fixture(params=CARRIERS)
def carrier(request):
    return request.param


def close(t, expected, rtol=1e-5, atol=1e-6):
    got = np.asarray(t.numpy())
    expected = np.asarray(expected)
    assert got.shape == expected.shape, (got.shape, expected.shape)
    np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol)


def assert_fresh_dense(t, *operands):
    """Fresh compact storage in the memory order of the dense operands (docs/api.md section 5).

    A dense operand of the result's shape (offset 0, storage exactly its
    size, a compact layout) gives the result its layout when all such
    operands agree; otherwise the result is canonical.
    """
    shape = t.layout.shape
    dense = {x.layout for x in operands
             if x.layout.shape == shape and x.layout.is_compact() and x.offset == 0
             and x.carrier.size == x.layout.size}
    expected = dense.pop() if len(dense) == 1 else sw.Layout.canonical(shape)
    assert t.layout == expected
    assert t.offset == 0 and t.carrier.size == t.layout.size
    assert all(t.carrier is not x.carrier for x in operands)


# ----- elementwise ---------------------------------------------------------------------------------

UNARY = {"negative": np.negative, "exp": np.exp, "log": np.log, "sqrt": np.sqrt, "sin": np.sin, "cos": np.cos,
         "tanh": np.tanh, "abs": np.abs}
BINARY = {"add": np.add, "subtract": np.subtract, "multiply": np.multiply, "divide": np.divide,
          "power": np.power, "maximum": np.maximum, "minimum": np.minimum}


@pytest.mark.parametrize("kind", ALL_KINDS)
def test_unary_forward(carrier, kind):
    for name, ref in UNARY.items():
        x = make(kind, seed=1, domain="pos" if name in ("log", "sqrt") else "any", carrier=carrier)
        out = getattr(sw, name)(x)
        assert out.dtype == F32 and type(out.carrier) is type(x.carrier)
        assert out.shape == x.shape
        assert_fresh_dense(out, x)
        close(out, ref(x.numpy()))


@pytest.mark.parametrize("kind", ALL_KINDS)
def test_binary_forward(carrier, kind):
    for name, ref in BINARY.items():
        a = make(kind, seed=2, domain="pos" if name == "power" else "any", carrier=carrier)
        b = canonical_like(a, seed=3, carrier=carrier)
        for x, y in ((a, b), (b, a)):
            if name == "power":
                x, y = sw.abs(x), y
            out = getattr(sw, name)(x, y)
            assert_fresh_dense(out, x, y)
            close(out, ref(x.numpy(), y.numpy()), rtol=1e-5)


@pytest.mark.parametrize("other", [(4,), (3, 1), (1, 4), (2, 3, 4), (2, 1, 1)])
@pytest.mark.parametrize("kind", FLAT_KINDS)
def test_broadcasting_forward(carrier, kind, other):
    a = make(kind, seed=4, carrier=carrier)
    b = canonical(other, seed=5, carrier=carrier)
    expected_shape = np.broadcast_shapes((3, 4), other)
    for out, ref in ((a + b, a.numpy() + b.numpy()), (b * a, b.numpy() * a.numpy()),
                     (sw.maximum(a, b), np.maximum(a.numpy(), b.numpy()))):
        assert out.shape == tuple(expected_shape)
        close(out, ref)


def test_broadcasting_nested_forward(carrier):
    a = make("nested", seed=6, carrier=carrier)
    b = canonical([1, [2, 2]], seed=7, carrier=carrier)
    out = a * b
    assert out.layout.shape == sw.Shape([3, [2, 2]]) and out.shape == (3, 4)
    close(out, a.numpy() * b.numpy())
    c = canonical([3, 1], seed=8, carrier=carrier)
    close(a - c, a.numpy() - c.numpy())
    with pytest.raises(ValueError, match=r"\(3,\(2,2\)\).*\(3,4\)|\(3,4\).*\(3,\(2,2\)\)"):
        a + canonical((3, 4), carrier=carrier)


def test_python_scalars_keep_dtype(carrier):
    x = make("holes", seed=9, carrier=carrier)
    xs = x.numpy()
    cases = [(x + 2, xs + 2), (2 + x, 2 + xs), (x - 1.5, xs - 1.5), (1.5 - x, 1.5 - xs), (x * 3, xs * 3),
             (x / 4.0, xs / 4.0), (4.0 / x, 4.0 / xs), (x ** 2, xs ** 2), (2.0 ** x, 2.0 ** xs), (-x, -xs),
             (abs(x), np.abs(xs)), (sw.maximum(x, 0.5), np.maximum(xs, 0.5)), (sw.minimum(0.5, x), np.minimum(0.5, xs))]
    for out, ref in cases:
        assert out.dtype == F32
        close(out, ref.astype(np.float32))
    i = sw.tensor([[1, 2], [3, 4]], carrier=carrier)
    assert (i + 1).dtype == sw.DType.Int32
    assert (i * 2).numpy().tolist() == [[2, 4], [6, 8]]


@pytest.mark.parametrize("kind", ["holes", "nested_broadcast"])
def test_comparisons_are_bool_without_node(carrier, kind):
    x = make(kind, seed=10, carrier=carrier)
    y = canonical_like(x, seed=11, carrier=carrier)
    xs, ys = x.numpy(), y.numpy()
    for out, ref in ((x < y, xs < ys), (x <= y, xs <= ys), (x > 0.0, xs > 0), (x >= y, xs >= ys),
                     (x == x, xs == xs), (x != y, xs != ys), (sw.less(x, y), xs < ys),
                     (sw.greater_equal(x, 0.0), xs >= 0), (sw.equal(x, y), xs == ys),
                     (sw.not_equal(x, y), xs != ys), (sw.less_equal(x, y), xs <= ys), (sw.greater(x, y), xs > ys)):
        assert out.dtype == sw.DType.Bool
        assert out.autograd_ctx is None
        assert not out.is_differentiable()
        assert out.numpy().tolist() == ref.tolist()


# ----- where / clip ---------------------------------------------------------------------------------


def test_where_clip_forward(carrier):
    x = make("transposed", seed=12, carrier=carrier)
    y = canonical_like(x, seed=13, carrier=carrier)
    xs, ys = x.numpy(), y.numpy()
    cond = x > y
    close(sw.where(cond, x, y), np.where(xs > ys, xs, ys))
    close(sw.where(cond, x, 0.0), np.where(xs > ys, xs, 0.0))
    close(sw.clip(x, -0.5, 0.5), np.clip(xs, -0.5, 0.5))
    close(sw.clip(x, None, 0.5), np.minimum(xs, 0.5))
    close(sw.clip(x, -0.5), np.maximum(xs, -0.5))
    close(x.clip(y, None), np.maximum(xs, ys))
    close(sw.where(canonical((4,), carrier=carrier) > 0.0, x, y),
          np.where(canonical((4,)).numpy() > 0, xs, ys))


# ----- reductions ---------------------------------------------------------------------------------------

REDUCTIONS = {"sum": np.sum, "mean": np.mean, "max": np.max, "min": np.min, "prod": np.prod}


@pytest.mark.parametrize("kind", ALL_KINDS)
def test_reductions_forward(carrier, kind):
    x = make(kind, seed=14, carrier=carrier)
    xs = x.numpy()
    for name, ref in REDUCTIONS.items():
        fn = getattr(sw, name)
        whole = fn(x)
        assert whole.layout == sw.Layout(sw.Shape(1), sw.Stride(1))
        close(whole, np.reshape(ref(xs), (1,)), rtol=1e-5)
        for modes in ((0,), (1,), (0, 1), (-1,)):
            axes = tuple(m % 2 for m in modes)
            out = fn(x, modes=modes)
            expected = ref(xs, axis=axes)
            close(out, np.reshape(expected, (1,)) if expected.ndim == 0 else expected, rtol=1e-5)
            kept = fn(x, modes=modes, keepdims=True)
            assert kept.layout.rank == 2
            assert kept.layout.mode_sizes == tuple(1 if i in axes else n for i, n in enumerate(xs.shape))
            close(kept, ref(xs, axis=axes, keepdims=True), rtol=1e-5)


def test_reduction_bad_mode(carrier):
    x = make("canonical", carrier=carrier)
    with pytest.raises((ValueError, IndexError), match="5"):
        sw.sum(x, modes=(5,))


def test_max_min_ties_split_evenly(carrier):
    x = sw.tensor([[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]], carrier=carrier)
    sw.max(x, modes=(1,)).backward(sw.tensor([1.0, 6.0], carrier=carrier))
    np.testing.assert_allclose(x.grad.numpy(), [[0, 0.5, 0.5], [2, 2, 2]])
    y = sw.tensor([[1.0, 1.0], [5.0, 1.0]], carrier=carrier)
    sw.min(y).backward()
    np.testing.assert_allclose(y.grad.numpy(), [[1 / 3, 1 / 3], [0, 1 / 3]], rtol=1e-6)
    a = sw.tensor([1.0, 2.0, 3.0], carrier=carrier)
    b = sw.tensor([1.0, 0.0, 3.0], carrier=carrier)
    sw.sum(sw.maximum(a, b)).backward()
    np.testing.assert_allclose(a.grad.numpy(), [0.5, 1.0, 0.5])
    np.testing.assert_allclose(b.grad.numpy(), [0.5, 0.0, 0.5])
    a2 = sw.tensor([1.0, 2.0], carrier=carrier)
    b2 = sw.tensor([1.0, 5.0], carrier=carrier)
    sw.sum(sw.minimum(a2, b2)).backward()
    np.testing.assert_allclose(a2.grad.numpy(), [0.5, 1.0])
    np.testing.assert_allclose(b2.grad.numpy(), [0.5, 0.0])


# ----- linear algebra ----------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", FLAT_KINDS)
def test_matmul_tensordot_forward(carrier, kind):
    a = make(kind, seed=15, carrier=carrier)
    b = canonical((4, 2), seed=16, carrier=carrier)
    v = canonical((4,), seed=17, carrier=carrier)
    batch = canonical((2, 2, 3), seed=18, carrier=carrier)
    an, bn, vn, batchn = a.numpy(), b.numpy(), v.numpy(), batch.numpy()
    close(sw.matmul(a, b), an @ bn, rtol=1e-5)
    close(a @ b, an @ bn, rtol=1e-5)
    close(a @ v, an @ vn, rtol=1e-5)
    close(sw.matmul(batch, a), batchn @ an, rtol=1e-5)
    close(sw.matmul(v, v), np.reshape(vn @ vn, (1,)) if sw.matmul(v, v).numpy().ndim else vn @ vn, rtol=1e-5)
    close(sw.tensordot(a, b, modes=1), np.tensordot(an, bn, axes=1), rtol=1e-5)
    close(sw.tensordot(a, batch, modes=((0,), (2,))), np.tensordot(an, batchn, axes=((0,), (2,))), rtol=1e-5)


def test_matmul_errors_name_both_shapes(carrier):
    a = canonical((2, 3), carrier=carrier)
    b = canonical((4, 5), carrier=carrier)
    with pytest.raises(ValueError) as info:
        sw.matmul(a, b)
    assert "(2, 3)" in str(info.value) and "(4, 5)" in str(info.value)
    with pytest.raises(ValueError):
        sw.tensordot(a, b, modes=1)


def test_broadcast_errors_name_both_shapes(carrier):
    a = canonical((3, 4), carrier=carrier)
    b = canonical((2, 4), carrier=carrier)
    for fn in (sw.add, sw.multiply, sw.maximum, sw.power, lambda x, y: sw.where(x > 0.0, x, y)):
        with pytest.raises(ValueError) as info:
            fn(a, b)
        assert "(3,4)" in str(info.value) and "(2,4)" in str(info.value), str(info.value)
    with pytest.raises(ValueError):
        sw.broadcast_to(a, (3, 5))


# ----- concat / stack / astype / copy ----------------------------------------------------------------------


@pytest.mark.parametrize("kind", FLAT_KINDS)
def test_concat_stack_forward(carrier, kind):
    a = make(kind, seed=19, carrier=carrier)
    b = canonical((2, 4), seed=20, carrier=carrier)
    c = canonical_like(a, seed=21, carrier=carrier)
    close(sw.concat([a, b]), np.concatenate([a.numpy(), b.numpy()]))
    close(sw.concat([a, c], mode=1), np.concatenate([a.numpy(), c.numpy()], axis=1))
    close(sw.stack([a, c]), np.stack([a.numpy(), c.numpy()]))
    close(sw.stack([a, c], mode=2), np.stack([a.numpy(), c.numpy()], axis=2))
    with pytest.raises(ValueError):
        sw.concat([a, b], mode=1)
    with pytest.raises(ValueError):
        sw.stack([a, b])


def test_astype_copy_detach(carrier):
    x = make("holes", seed=22, carrier=carrier)
    if carrier == "jax":  # JAX without x64 mode stores a 64-bit request in 32 bits, as jax.numpy does
        with pytest.warns(UserWarning, match="jax_enable_x64"):
            d = sw.astype(x, sw.DType.Float64)
        assert d.dtype == F32
        close(d, x.numpy())
    else:
        d = sw.astype(x, sw.DType.Float64)
        assert d.dtype == sw.DType.Float64 and d.autograd_ctx is None
        close(d, x.numpy().astype(np.float64))
    i = x.astype(sw.DType.Int32)
    assert i.dtype == sw.DType.Int32
    assert i.numpy().tolist() == x.numpy().astype(np.int32).tolist()
    same = sw.astype(x, F32)
    assert same.autograd_ctx is not None
    c = sw.copy(x)
    close(c, x.numpy())
    assert c.carrier is not x.carrier
    assert c.autograd_ctx is not None
    det = sw.detach(x * 2.0)
    assert det.autograd_ctx is None
    close(det, x.numpy() * 2)


# ----- views -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", FLAT_KINDS)
def test_view_forward(carrier, kind):
    x = make(kind, seed=23, carrier=carrier)
    xs = x.numpy()
    for view, ref in ((x[1], xs[1]), (x[1:3], xs[1:3]), (x[::2, 1::2], xs[::2, 1::2]), (x[:, 3], xs[:, 3]),
                      (x[2, 1:], xs[2, 1:]), (sw.permute(x, (1, 0)), xs.T), (sw.transpose(x), xs.T), (x.T, xs.T),
                      (sw.broadcast_to(x, (2, 3, 4)), np.broadcast_to(xs, (2, 3, 4))),
                      (sw.reshape(x, (4, 3)), xs.reshape((4, 3), order="F")),
                      (sw.reshape(x, (12,)), xs.reshape(-1, order="F"))):
        close(view, ref)
        assert type(view.carrier) is type(x.carrier)
    for view in (x[1], x[1:3], sw.transpose(x), sw.broadcast_to(x, (2, 3, 4)), x[::2, 1::2]):
        assert view.carrier is x.carrier  # views share storage
    assert x[2, 1].numpy().tolist() == [xs[2, 1]] or x[2, 1].item() == pytest.approx(float(xs[2, 1]))


def test_reshape_is_colexicographic_and_nested(carrier):
    x = sw.arange(12, carrier=carrier)
    r = sw.reshape(x, (3, 4))
    assert r.numpy().tolist() == np.arange(12).reshape((3, 4), order="F").tolist()
    n = sw.reshape(x, [3, [2, 2]])
    assert n.layout.shape == sw.Shape([3, [2, 2]]) and n.shape == (3, 4)
    assert n.numpy().tolist() == np.arange(12).reshape((3, 4), order="F").tolist()
    with pytest.raises(ValueError, match="12"):
        sw.reshape(x, (5, 2))


def test_view_layout_forward(carrier):
    x = sw.Tensor.from_storage(list(range(10)), sw.Layout(sw.Shape(10)), sw.DType.Float32, carrier=carrier)
    v = x.view(sw.Layout(sw.Shape([2, 3]), sw.Stride([3, 1])))
    assert v.numpy().tolist() == [[0, 1, 2], [3, 4, 5]]
    assert v.carrier is x.carrier
    with pytest.raises(ValueError):
        x.view(sw.Layout(sw.Shape([4, 4])))


# ----- carriers and execution options ----------------------------------------------------------------------


def test_mixed_carriers_need_options():
    if len(CARRIERS) < 2:
        pytest.skip("one carrier available")
    for other in CARRIERS[1:]:
        a = canonical((2, 3), seed=24)
        b = canonical((2, 3), seed=25, carrier=other)
        with pytest.raises(TypeError) as info:
            sw.add(a, b)
        message = str(info.value)
        assert "NumpyCarrier" in message and type(b.carrier).__name__ in message
        with pytest.raises(TypeError):
            sw.matmul(a, sw.transpose(b))


def test_execution_options_run_mixed_carriers_and_route_cotangents_home():
    if len(CARRIERS) < 2:
        pytest.skip("one carrier available")
    for first in CARRIERS:
        for second in CARRIERS:
            if first == second:
                continue
            a = canonical((2, 3), seed=26, carrier=first)
            b = canonical((2, 3), seed=27, carrier=second)
            opts = sw.ExecutionOptions(carrier="numpy")
            out = sw.multiply(a, b, options=opts)
            assert type(out.carrier) is sw.NumpyCarrier
            close(out, a.numpy() * b.numpy())
            loss = sw.sum(sw.matmul(out, sw.transpose(b), options=opts))
            loss.backward()
            assert type(a.grad.carrier) is type(a.carrier)
            assert type(b.grad.carrier) is type(b.carrier)
            an, bn = a.numpy().astype(np.float64), b.numpy().astype(np.float64)
            # loss = sum((a*b) @ b.T) = sum_ij (a*b)_ik b_jk
            colsum = bn.sum(axis=0)
            np.testing.assert_allclose(a.grad.numpy(), bn * colsum, rtol=1e-5)
            np.testing.assert_allclose(b.grad.numpy(), an * colsum + (an * bn).sum(axis=0), rtol=1e-5)
