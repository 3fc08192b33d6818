"""Every differentiable operation against float64 central differences, on every carrier and layout kind.

Each case runs ``sw.testing.gradcheck`` (all available carriers) on inputs
whose layouts are canonical, transposed, sliced with holes, broadcast-aliased
(stride 0) and nested.  Inputs stay away from kinks (abs at 0, ties of
max/min/maximum/minimum, clip bounds) so finite differences are meaningful.
"""

import numpy as np
import pytest
from ops_cases import ALL_KINDS, FLAT_KINDS, KINDS, canonical, canonical_like, check, from_numpy, make

import strideweave as sw

F32 = sw.DType.Float32

# ----- unary elementwise ------------------------------------------------------------------------

UNARY = {
    "negative": (sw.negative, "any"),
    "exp": (sw.exp, "any"),
    "log": (sw.log, "pos"),
    "sqrt": (sw.sqrt, "pos"),
    "sin": (sw.sin, "any"),
    "cos": (sw.cos, "any"),
    "tanh": (sw.tanh, "any"),
    "abs": (sw.abs, "any"),
    "astype_same": (lambda x: sw.astype(x, x.dtype), "any"),
    "copy": (sw.copy, "any"),
    "op_neg": (lambda x: -x, "any"),
    "op_abs": (lambda x: abs(x), "any"),
    "op_scalar_pow": (lambda x: x ** 3, "any"),
    "op_pow_scalar_base": (lambda x: 2.0 ** x, "any"),
    "op_scalar_arith": (lambda x: (2.0 - x) * 3.0 + x / 4.0 - 1.0, "any"),
    "op_rdiv": (lambda x: 1.0 / x, "any"),
    "method_chain": (lambda x: x.exp().tanh().sin(), "any"),
}


# Operator / method spellings reuse the functional ops: two layout kinds suffice for them.
SPELLING_KINDS = ["holes", "nested_broadcast"]


@pytest.mark.parametrize(("name", "kind"), [(n, k) for n in UNARY
                                       for k in (SPELLING_KINDS if n.startswith(("op_", "method")) else ALL_KINDS)])
def test_unary(name, kind):
    fn, domain = UNARY[name]
    check(fn, [make(kind, seed=3, domain=domain)])


# ----- binary elementwise -----------------------------------------------------------------------------

BINARY = {
    "add": (sw.add, "any", "any"),
    "subtract": (sw.subtract, "any", "any"),
    "multiply": (sw.multiply, "any", "any"),
    "divide": (sw.divide, "any", "any"),
    "power": (sw.power, "pos", "any"),
    "op_add": (lambda a, b: a + b, "any", "any"),
    "op_sub": (lambda a, b: a - b, "any", "any"),
    "op_mul": (lambda a, b: a * b, "any", "any"),
    "op_div": (lambda a, b: a / b, "any", "any"),
    "op_pow": (lambda a, b: a ** b, "pos", "any"),
}


@pytest.mark.parametrize("swap", [False, True], ids=["kind_first", "kind_second"])
@pytest.mark.parametrize(("name", "kind"), [(n, k) for n in BINARY
                                       for k in (SPELLING_KINDS if n.startswith("op_") else ALL_KINDS)])
def test_binary(name, kind, swap):
    fn, da, db = BINARY[name]
    if swap:
        b = make(kind, seed=4, domain=db)
        a = canonical_like(b, seed=5, domain=da)
    else:
        a = make(kind, seed=4, domain=da)
        b = canonical_like(a, seed=5, domain=db)
    check(fn, [a, b])


@pytest.mark.parametrize("kind", ALL_KINDS)
def test_binary_same_tensor_twice(kind):
    x = make(kind, seed=6)
    check(lambda a, b: a * b + a, [x, x])


def _separated(kind, seed):
    """(a, b) with |a - b| >= 0.2 everywhere, so maximum/minimum have no ties."""
    a = make(kind, seed=seed)
    rng = np.random.default_rng(seed + 100)
    shift = rng.choice([-1.0, 1.0], a.numpy().shape) * rng.uniform(0.2, 0.6, a.numpy().shape)
    # canonical storage is first-mode-fastest (F order), nested modes flattened colexicographically
    b = sw.Tensor.from_storage(np.asarray(a.numpy() + shift, np.float32).reshape(-1, order="F"),
                               sw.Layout.canonical(a.layout.shape), F32)
    return a, b


@pytest.mark.parametrize("kind", ALL_KINDS)
@pytest.mark.parametrize("name", ["maximum", "minimum"])
def test_maximum_minimum(name, kind):
    a, b = _separated(kind, seed=7)
    fn = getattr(sw, name)
    check(fn, [a, b])
    check(lambda x, y: fn(y, x), [a, b])


@pytest.mark.parametrize("kind", FLAT_KINDS)
@pytest.mark.parametrize("other_shape", [(4,), (3, 1), (1, 4), (2, 3, 4)])
@pytest.mark.parametrize("name", ["add", "multiply", "divide"])
def test_binary_broadcasting(name, other_shape, kind):
    a = make(kind, seed=8)
    b = canonical(other_shape, seed=9)
    fn = getattr(sw, name)
    check(fn, [a, b])
    check(lambda x, y: fn(y, x), [a, b])


@pytest.mark.parametrize("kind", ["nested", "nested_broadcast"])
def test_binary_broadcasting_nested(kind):
    a = make(kind, seed=10)
    check(sw.multiply, [a, canonical([1, [2, 2]], seed=11)])
    check(sw.add, [a, canonical([3, 1], seed=12)])


# ----- where / clip -----------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ALL_KINDS)
def test_where(kind):
    a = make(kind, seed=13)
    b = canonical_like(a, seed=14)
    mask = np.random.default_rng(15).random(a.numpy().shape) > 0.5
    cond = sw.Tensor.from_storage(mask.reshape(-1, order="F").tolist(), sw.Layout.canonical(a.layout.shape))
    assert cond.dtype == sw.DType.Bool
    check(sw.where, [cond, a, b])
    check(lambda c, x: sw.where(c, x, 0.5), [cond, a])


def _away_from(values, kinks, margin=0.05):
    out = np.array(values, dtype=np.float64)
    for k in kinks:
        near = np.abs(out - k) < margin
        out[near] = k + margin * 2
    return out


@pytest.mark.parametrize("kind", ALL_KINDS)
def test_clip_scalar_bounds(kind):
    layout, offset, n = KINDS[kind]
    vals = _away_from(np.random.default_rng(16).uniform(-1.5, 1.5, n), [-0.6, 0.7]).astype(np.float32)
    x = sw.Tensor.from_storage(vals, layout, F32, offset=offset)
    check(lambda t: sw.clip(t, -0.6, 0.7), [x])
    check(lambda t: sw.clip(t, None, 0.7), [x])
    check(lambda t: sw.clip(t, -0.6, None), [x])
    check(lambda t: t.clip(-0.6, 0.7), [x])


@pytest.mark.parametrize("kind", FLAT_KINDS)
def test_clip_tensor_bounds(kind):
    x = make(kind, seed=17, domain="small")
    xs = x.numpy()
    low = from_numpy(xs - np.where(np.arange(12).reshape(3, 4) % 2, 0.3, -0.3))  # below/above alternately
    high = from_numpy(xs + np.where(np.arange(12).reshape(3, 4) % 3, 0.2, -0.2) + 0.7)
    check(lambda t, lo, hi: sw.clip(t, lo, hi), [x, low, high])


# ----- reductions -------------------------------------------------------------------------------------

REDUCTIONS = ["sum", "mean", "max", "min", "prod"]
REDUCE_ARGS = [{}, {"modes": (0,)}, {"modes": (1,), "keepdims": True}, {"modes": (0, 1), "keepdims": True}]


@pytest.mark.parametrize("kind", ALL_KINDS)
@pytest.mark.parametrize("args", REDUCE_ARGS, ids=lambda a: "-".join(f"{k}={v}" for k, v in a.items()) or "all")
@pytest.mark.parametrize("name", REDUCTIONS)
def test_reduction(name, args, kind):
    x = make(kind, seed=18)
    fn = getattr(sw, name)
    check(lambda t: fn(t, **args), [x])


@pytest.mark.parametrize("name", REDUCTIONS)
def test_reduction_methods(name):
    # The methods have NumPy's meaning: ``axis=``, and a full reduction is 0-d.
    x = make("transposed", seed=19)
    check(lambda t: getattr(t, name)(axis=0), [x])
    check(lambda t: getattr(t, name)(), [x])
    assert getattr(x, name)().shape == () and getattr(x, name)(axis=0, keepdims=True).shape == (1, x.shape[1])


def test_prod_with_a_zero():
    x = sw.tensor([[0.0, 2.0, 3.0], [1.5, 0.5, -2.0]])
    check(lambda t: sw.prod(t, modes=(1,)), [x])


def test_reduction_of_3d():
    x = canonical((2, 3, 2), seed=20)
    for name in REDUCTIONS:
        check(lambda t, name=name: getattr(sw, name)(t, modes=(0, 2)), [x])


# ----- linear algebra ---------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", FLAT_KINDS)
def test_matmul(kind):
    a = make(kind, seed=21)
    check(sw.matmul, [a, canonical((4, 2), seed=22)])
    check(sw.matmul, [canonical((2, 3), seed=23), a])
    check(lambda x, y: x @ y, [a, canonical((4, 2), seed=22)])


@pytest.mark.parametrize("kind", FLAT_KINDS)
def test_matmul_vector_and_batched(kind):
    a = make(kind, seed=24)
    check(sw.matmul, [a, canonical((4,), seed=25)])
    check(sw.matmul, [canonical((3,), seed=26), a])
    check(sw.matmul, [canonical((2, 1, 3), seed=27), a])
    check(sw.matmul, [canonical((2, 2, 4), seed=28), sw.transpose(a)])
    check(sw.matmul, [canonical((4,), seed=29), canonical((4,), seed=30)])


@pytest.mark.parametrize("kind", FLAT_KINDS)
def test_tensordot(kind):
    a = make(kind, seed=31)
    check(lambda x, y: sw.tensordot(x, y, modes=1), [a, canonical((4, 2), seed=32)])
    check(lambda x, y: sw.tensordot(x, y, modes=((0,), (1,))), [a, canonical((2, 3), seed=33)])
    check(lambda x, y: sw.tensordot(x, y, modes=2), [a, canonical((3, 4), seed=34)])
    check(lambda x, y: sw.tensordot(x, y, modes=0), [a, canonical((2,), seed=35)])


# ----- concat / stack -----------------------------------------------------------------------------------


@pytest.mark.parametrize(("kind", "mode"), [(k, m) for k in FLAT_KINDS for m in (0, 1, -1)]
                         + [(k, 0) for k in ALL_KINDS if k not in FLAT_KINDS])
def test_concat(kind, mode):
    a = make(kind, seed=36)
    b = canonical_like(a, seed=37)
    check(lambda x, y: sw.concat([x, y], mode=mode), [a, b])
    check(lambda x, y: sw.concat([y, x, y], mode=mode), [a, b])


@pytest.mark.parametrize("kind", ALL_KINDS)
@pytest.mark.parametrize("mode", [0, 1, 2])
def test_stack(kind, mode):
    a = make(kind, seed=38)
    b = canonical_like(a, seed=39)
    check(lambda x, y: sw.stack([x, y], mode=mode), [a, b])


# ----- views ----------------------------------------------------------------------------------------------

VIEWS = {
    "int": lambda x: x[1],
    "int_int": lambda x: x[2, 1],
    "slice": lambda x: x[1:3],
    "slice_step": lambda x: x[0:3:2, 1:4:2],
    "slice_int": lambda x: x[:, 2],
    "int_slice": lambda x: x[1, 1:],
    "permute": lambda x: sw.permute(x, (1, 0)),
    "transpose": sw.transpose,
    "T": lambda x: x.T,
    "reshape_flat": lambda x: sw.reshape(x, (12,)),
    "reshape_2d": lambda x: sw.reshape(x, (4, 3)),
    "reshape_nested": lambda x: sw.reshape(x, [2, [3, 2]]),
    "broadcast_to": lambda x: sw.broadcast_to(x, (2, *x.layout.shape.modes)),
    "view_then_mul": lambda x: sw.permute(x, (1, 0))[1:3] * 2.0,
    "view_of_view": lambda x: sw.reshape(sw.transpose(x)[::2], (6,)),
}


# Slicing a nested mode works only where that mode coalesces to a single leaf (not for a
# stride-0 nested mode), so those views skip the nested_broadcast kind.
SLICES_NESTED_MODE = {"slice_step", "int_slice", "view_then_mul", "view_of_view"}


@pytest.mark.parametrize(("name", "kind"), [(n, k) for n in VIEWS for k in ALL_KINDS
                                       if not (n in SLICES_NESTED_MODE and k == "nested_broadcast")])
def test_view_ops(name, kind):
    check(VIEWS[name], [make(kind, seed=40)])


@pytest.mark.parametrize("kind", ["canonical", "transposed", "holes"])
def test_view_layout(kind):
    x = make(kind, seed=41)
    # a compact sub-view of x's own storage: first two columns, rows in x's own strides
    layout = sw.Layout(sw.Shape([3, 2]), sw.Stride(list(x.layout.stride.modes)))
    check(lambda t: sw.view(t, layout), [x])
    check(lambda t: t.view(layout) * t[:, 0:2], [x])


def test_broadcast_to_from_extent_one():
    check(lambda t: sw.broadcast_to(t, (3, 4)), [canonical((1, 4), seed=42)])
    check(lambda t: sw.broadcast_to(t, (3, 4)) * 2.0, [canonical((3, 1), seed=43)])
    check(lambda t: sw.broadcast_to(t, (2, 4)), [canonical((4,), seed=44)])


@pytest.mark.parametrize("kind", ["nested", "nested_strided", "nested_broadcast"])
def test_nested_int_index(kind):
    x = make(kind, seed=45)
    check(lambda t: t[:, 3], [x])
    check(lambda t: t[1, 2], [x])


def test_composite_program():
    w = make("transposed", seed=46)
    b = canonical((4,), seed=47)
    x = make("holes", seed=48)

    def mlp(w, b, x):
        h = sw.tanh(sw.matmul(x, w.T[:, 0:3]) + b[0:3])
        return sw.mean(h * h) + sw.sum(sw.exp(b) / 4.0)

    check(mlp, [w, b, x])
