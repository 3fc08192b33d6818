"""The standard's manipulation functions that differ from the op library's: C-order ``reshape``, ``axis=``, 0-d."""

from __future__ import annotations

import math
import operator

import numpy as np

from .. import ops as _ops
from ..carriers import one_call
from ..dtypes import result_type as _result_type
from ..layout import Shape
from ..ops._args import axis as _axis
from ..ops._args import tensor as _check
from ..ops.arrays import _c_reshape, moveaxis
from ..ops.arrays import expand_dims as _expand_dims
from ..ops.views import slices as _slices
from ..tensors.tensor import Tensor
from ._helpers import checked_shape as _shape
from ._helpers import to_0d as _to_0d

__all__ = [
    "broadcast_arrays",
    "broadcast_to",
    "concat",
    "expand_dims",
    "inferred_shape",
    "permute_dims",
    "reshape",
    "stack",
    "unstack",
]


def inferred_shape(x: Tensor, shape: tuple, what: str, noun: str) -> tuple:
    """``shape`` with its one ``-1`` filled in, checked against ``x``'s size (NumPy's messages)."""
    if shape.count(-1) > 1:
        raise ValueError(f"{what}: shape {shape} has more than one -1")
    if -1 in shape:
        known = math.prod(n for n in shape if n != -1)
        if known == 0 or x.size % known:
            raise ValueError(f"{what}: cannot reshape {noun} of size {x.size} into shape {shape}")
        shape = tuple(x.size // known if n == -1 else n for n in shape)
    if math.prod(shape) != x.size:
        raise ValueError(f"{what}: cannot reshape {noun} of shape {x.shape} (size {x.size}) into {shape}")
    return shape


@one_call
def reshape(x, /, shape, *, copy=None):
    """C-order reshape (a view when the layout allows); ``-1`` infers one extent."""
    x = _check(x, "reshape")
    shape = inferred_shape(x, tuple(int(n) for n in (shape if isinstance(shape, tuple) else tuple(shape))),
                           "reshape", "an array")
    if copy is False:
        raise ValueError("reshape: copy=False is not supported when the result would need a copy")
    if shape == ():
        return _to_0d(x)
    if x._layout.rank == 0:
        return _ops.reshape(x, Shape(shape))
    out = _c_reshape(x, shape, None)
    return _ops.copy(out) if copy else out


def permute_dims(x, /, axes):
    """Reorder the axes (a view)."""
    x = _check(x, "permute_dims")
    ndim = x.ndim
    # Negative axes count from the end; an axis out of range is no axis (taken modulo, it would name another).
    order = tuple(a + ndim if -ndim <= a < 0 else a for a in map(operator.index, axes))
    if sorted(order) != list(range(ndim)):
        raise ValueError(f"permute_dims: axes {axes!r} are not a permutation of {ndim} axes")
    return _ops.permute(x, order)


@one_call
def broadcast_to(x, /, shape):
    """Stretch ``x`` to ``shape`` (stride-0 view)."""
    x = _check(x, "broadcast_to")
    shape = _shape(shape)
    if x._layout.rank == 0:
        x = _ops.reshape(x, Shape((1,) * max(len(shape), 1)))
        if not shape:
            return _to_0d(x)
    return _ops.broadcast_to(x, Shape(shape)) if shape else _to_0d(x)


def broadcast_arrays(*arrays):
    """Every array broadcast to their common shape."""
    shape = np.broadcast_shapes(*[_check(a, "broadcast_arrays").shape for a in arrays])
    return [broadcast_to(a, shape) for a in arrays]


def _promoted(arrays: list) -> list:
    """``arrays`` cast to their promoted dtype (the namespace's ``result_type``)."""
    dtype = _result_type(*[a.dtype for a in arrays])
    return [a if a.dtype is dtype else _ops.astype(a, dtype) for a in arrays]


@one_call
def concat(arrays, /, *, axis=0):
    """Join arrays along ``axis`` (``None``: flattened first)."""
    arrays = [_check(a, "concat") for a in arrays]
    if axis is None:
        arrays, axis = [reshape(a, (-1,)) for a in arrays], 0
    arrays = _promoted(arrays)
    return _ops.concat(arrays, _axis(axis, arrays[0].ndim, "concat"))


def stack(arrays, /, *, axis=0):
    """Join arrays along a new ``axis``."""
    arrays = _promoted([_check(a, "stack") for a in arrays])
    return _ops.stack(arrays, _axis(axis, arrays[0].ndim + 1, "stack"))


@one_call
def unstack(x, /, *, axis=0):
    """The slices of ``x`` along ``axis``, as a tuple."""
    x = _check(x, "unstack")
    axis = _axis(axis, x.ndim, "unstack")
    moved = moveaxis(x, axis, 0) if axis else x
    return _slices(moved, scalar_rank=0)


def expand_dims(x, /, axis=0):
    """Insert an extent-1 axis at ``axis``."""
    return _expand_dims(x, axis=axis)
