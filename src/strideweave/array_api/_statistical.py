"""The standard's reductions: ``axis=``, ``keepdims``, 0-d full reductions, the standard's accumulation dtypes."""

from __future__ import annotations

from .. import ops as _ops
from ..dtypes import DType, accumulation_dtype, as_dtype
from ..ops._args import axes as _axes
from ..ops._args import tensor as _check
from ..ops._natural import wrap_natural
from ..ops.reduction import RULES as _RULES
from ..tensors.tensor import Tensor
from ._devices import default_int

__all__ = ["all", "any", "max", "mean", "min", "prod", "sum"]

_bool = bool
_Sum, _Prod, _Mean, _Max, _Min = (_RULES[name] for name in ("sum", "prod", "mean", "max", "min"))


def _reduce(op_class, name: str, x: Tensor, axis, keepdims: _bool, dtype=None) -> Tensor:
    """The reduction ``op_class`` of the Tensor ``x`` over ``axis`` (normalised here, once)."""
    if dtype is not None and dtype is not x._dtype:
        x = _ops.astype(x, dtype)
    ndim = x._layout.rank
    reduced = _axes(axis, ndim, name, scalar=True)
    if ndim == 0 or not reduced:
        return _ops.copy(x)
    if axis is None and not keepdims and x._dtype is DType.Float32:
        result = op_class.full_flat(x)  # a dense Float32 Tensor: made and recorded in one step
        if result is not None:
            return result
    # A full reduction is 0-d in the same one node (the layout-native ``sw.sum`` gives (1):(1)).
    return op_class()(x, reduced=reduced, keepdims=keepdims, zero_d=True)


def _sum_dtype(x: Tensor, dtype):
    # The standard: integer sums and products accumulate in the default integer dtype, unsigned
    # ones in the unsigned type of its width.
    if dtype is None and x._dtype.kind in ("int", "uint", "bool"):
        return accumulation_dtype(x._dtype, default_int(x._carriers[0].kind))
    return dtype


def _accumulate(op_class, name, x, axis, dtype, keepdims):
    if dtype is None and x.__class__ is Tensor and x._dtype.kind in ("float", "complex"):
        return _reduce(op_class, name, x, axis, keepdims)  # accumulated in its own dtype, as below
    x = _check(x, name)
    dtype = None if dtype is None else as_dtype(dtype, f"{name}: dtype")
    dtype = _sum_dtype(x, dtype)
    want = dtype or x.dtype
    compute = dtype
    if want.kind == "uint":
        # Not every backend sums wide unsigned types (torch): accumulate in the default integer
        # dtype and wrap back to ``want``, as accumulating in it would (two's complement).
        compute = default_int(x._carriers[0].kind)
    out = _reduce(op_class, name, x, axis, keepdims, compute)
    # Some backends widen small integer sums on their own (torch: uint8 -> int64); the standard fixes the dtype.
    return out if out.dtype is want else _ops.astype(out, want)


def sum(x, /, *, axis=None, dtype=None, keepdims=False):  # noqa: A001
    """Sum over ``axis`` (all axes: a 0-d result)."""
    return _accumulate(_Sum, "sum", x, axis, dtype, keepdims)


def prod(x, /, *, axis=None, dtype=None, keepdims=False):
    """Product over ``axis``."""
    return _accumulate(_Prod, "prod", x, axis, dtype, keepdims)


def mean(x, /, *, axis=None, keepdims=False):
    """Arithmetic mean over ``axis``."""
    return _reduce(_Mean, "mean", _check(x, "mean"), axis, keepdims)


def max(x, /, *, axis=None, keepdims=False):  # noqa: A001
    """Maximum over ``axis`` (ties share the gradient as in torch)."""
    return _reduce(_Max, "max", _check(x, "max"), axis, keepdims)


def min(x, /, *, axis=None, keepdims=False):  # noqa: A001
    """Minimum over ``axis``."""
    return _reduce(_Min, "min", _check(x, "min"), axis, keepdims)


def all(x, /, *, axis=None, keepdims=False):  # noqa: A001
    """Logical AND over ``axis`` (not differentiable)."""
    return _logical_reduce(_check(x, "all"), axis, keepdims, "all")


def any(x, /, *, axis=None, keepdims=False):  # noqa: A001
    """Logical OR over ``axis`` (not differentiable)."""
    return _logical_reduce(_check(x, "any"), axis, keepdims, "any")


def _logical_reduce(x: Tensor, axis, keepdims, name):
    axes = None if axis is None else _axes(axis, x._layout.rank, name, scalar=True)
    kind = x._carriers[0].kind
    native = x._read_array()
    return wrap_natural(getattr(kind.namespace, name)(native, axis=axes, keepdims=keepdims), kind)
