"""One promotion rule on every carrier: result dtypes over the full dtype x dtype x carrier grid.

The rule is StrideWeave's own (``sw.dtypes.result_type``): the Array API
table within a kind and, across kinds, the rule JAX and PyTorch share.
Python and NumPy scalars are weak. The expected dtypes are written out here
independently of the implementation, from that rule.
"""

import itertools
import warnings

import numpy as np
import pytest

import strideweave as sw
from strideweave.dtypes import SIMPLE_DTYPES

D = sw.DType
RANK = {"bool": 0, "int": 1, "uint": 1, "float": 2}
SIGNED = {8: D.Int8, 16: D.Int16, 32: D.Int32, 64: D.Int64}


def expected(a, b):
    """The rule, spelled out: same kind -> wider; uint8 with intN -> signed holding both; else higher kind."""
    if a == b:
        return a
    if a.kind == b.kind:
        return a if a.bits >= b.bits else b
    if {a.kind, b.kind} == {"int", "uint"}:
        u, s = (a, b) if a.kind == "uint" else (b, a)
        return SIGNED[max(s.bits, 2 * u.bits)]
    return a if RANK[a.kind] > RANK[b.kind] else b


def _storable(dtype, carrier):
    """Whether the carrier's library has the dtype (JAX: 64-bit only in x64 mode; array-api-strict: no float16)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # JAX without x64 narrows a 64-bit request, as jax.numpy does
            return sw.zeros(1, dtype, carrier=carrier).dtype is dtype
    except TypeError:
        return False


def _make(dtype, carrier):
    if dtype.kind == "bool":
        return sw.tensor([True, False, True], carrier=carrier)
    return sw.astype(sw.tensor([1, 2, 3], carrier=carrier), dtype)


PAIRS = list(itertools.product(SIMPLE_DTYPES, repeat=2))


@pytest.mark.parametrize("op", ["add", "multiply", "maximum"])
def test_tensor_tensor_promotion_grid(op, carrier):
    fn = getattr(sw, op)
    seen = {}
    for a, b in PAIRS:
        if not (_storable(a, carrier) and _storable(b, carrier) and _storable(expected(a, b), carrier)):
            continue
        x, y = _make(a, carrier), _make(b, carrier)
        if a.kind == "bool" and b.kind == "bool":
            continue  # arithmetic on two Bool Tensors is not defined by the standard
        out = fn(x, y)
        seen[(a, b)] = out.dtype
        assert out.dtype is expected(a, b), (op, a, b, out.dtype)
        want = getattr(np, op)(x.numpy().astype(np.float64), y.numpy().astype(np.float64))
        np.testing.assert_array_equal(out.numpy().astype(np.float64), want)
    assert len(seen) >= 36


@pytest.mark.parametrize(("a", "b"), [(D.Float32, D.Int32), (D.Int32, D.Float32), (D.Float32, D.Bool),
                                 (D.UInt8, D.Float32), (D.Float32, D.Int16)])
def test_mixed_kind_results_stay_differentiable(a, b, carrier):
    x, y = _make(a, carrier), _make(b, carrier)
    out = x * y
    assert out.dtype is D.Float32
    assert out.autograd_ctx is not None
    assert out.autograd_ctx.inputs() == (x, y)
    out.backward(sw.ones(3, carrier=carrier))
    leaf, other = (x, y) if a is D.Float32 else (y, x)
    assert leaf.grad.dtype is D.Float32
    np.testing.assert_array_equal(leaf.grad.numpy(), other.numpy().astype(np.float32))


SCALARS = [True, 2, 0.5, np.bool_(True), np.int64(2), np.int8(2), np.float64(0.5), np.float32(0.5), np.float16(0.5)]


def _scalar_kind(value):
    value = value.item() if isinstance(value, np.generic) else value
    return "bool" if isinstance(value, bool) else "int" if isinstance(value, int) else "float"


@pytest.mark.parametrize("scalar", SCALARS, ids=[f"{type(s).__name__}" for s in SCALARS])
def test_scalars_are_weak_on_every_carrier(scalar, carrier):
    for dtype in SIMPLE_DTYPES:
        if not _storable(dtype, carrier):
            continue
        x = _make(dtype, carrier)
        kind = _scalar_kind(scalar)
        if RANK[kind] <= RANK[dtype.kind]:
            want = dtype
        else:
            want = D.Int32 if kind == "int" else D.Float32
        if dtype.kind == "bool" and kind == "bool":
            out = sw.where(sw.equal(x, scalar), x, x)  # no arithmetic on two bools in the standard
        else:
            out = x * scalar
        assert out.dtype is want, (dtype, scalar, out.dtype)


def test_numpy_scalars_keep_the_graph(carrier):
    x = sw.tensor([1.0, 2.0], carrier=carrier)
    for scalar in (np.float64(0.5), np.float32(0.5), np.int64(3)):
        y = x + scalar
        assert y.dtype is D.Float32 and y.autograd_ctx is not None


def test_out_of_range_scalar_is_refused(carrier):
    x = _make(D.Int8, carrier)
    with pytest.raises(OverflowError, match="1000"):
        x + 1000
