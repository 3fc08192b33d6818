"""The Array API's functions along axes, with their VJPs: cumulative, sorting, selecting, shaping, statistics.

Every function takes the standard's own signature (``axis=``, ``keepdims=``,
``correction=``, ``stable=``, ``descending=``, ...) and counts axes as
top-level modes. Rules are written on natural arrays (see ``_natural``):
``forward(xp, *arrays, **params) -> (out, kept)`` and ``vjp(xp, g, kept,
*arrays, **params) -> one gradient per input``. Integer results (argsort,
argmax, searchsorted, nonzero, count_nonzero) are computed forward only and
are never differentiable. The set functions (``unique_*``) are in ``sets``.
"""

from __future__ import annotations

import math
import operator
from typing import Any

import numpy as np

from ..carriers import default_int, transfer
from ..carriers.dask_namespace import standard_rule
from ..carriers.jax_carrier import holds_tracers, is_tracer, refuse_traced
from ..dtypes import accumulation_dtype
from ..layout import Layout
from ..layout.order import row_major
from ..operation import outside_operation
from ..tensors.broadcasting import sum_to as _sum_to
from ..tensors.tensor import Tensor, to_numpy
from ..tensors.values import kind_of, operation_kind
from ._args import axes as _axes
from ._args import axis as _axis
from ._args import tensor as _tensor
from ._gather import along_add, index_add, repeat_positions
from ._gather import take_along as _take_along
from ._natural import natural, natural_op, wrap_natural
from .manipulation import astype
from .views import View

__all__ = [
    "argmax",
    "argmin",
    "argsort",
    "count_nonzero",
    "cumulative_prod",
    "cumulative_sum",
    "diff",
    "expand_dims",
    "flip",
    "moveaxis",
    "nonzero",
    "repeat",
    "roll",
    "searchsorted",
    "sort",
    "squeeze",
    "std",
    "take",
    "take_along_axis",
    "tile",
    "tril",
    "triu",
    "var",
    "vecdot",
]


# ----- argument checks ---------------------------------------------------------------------------------

def _float_only(x: Tensor, name: str) -> None:
    if x._dtype.kind != "float":
        raise TypeError(f"{name} expects a floating-point Tensor, got dtype {x._dtype!r}")


def _run(op_class, tensors, options, **params) -> Tensor:
    return op_class()(*tensors, params=params, options=options)


def _forward_only(fn, *tensors: Tensor, options=None, name=None):
    """Run ``fn(xp, *natural arrays)`` (non-differentiable results) and wrap every array it returns.

    A Float32 result gets a node that raises at backward (``outside_operation``), named ``name``.
    """
    kind = operation_kind(tensors, options)
    out = fn(kind.namespace, *[natural(t, kind) for t in tensors])
    out = tuple(wrap_natural(o, kind) for o in out) if isinstance(out, tuple) else wrap_natural(out, kind)
    return outside_operation(name or fn.__name__, tensors, out)


def _like(xp, values, shape, fill=0):
    return xp.full(shape, fill, dtype=values.dtype, device=getattr(values, "device", None))


def _rev_cumsum(xp, g, axis):
    """sum_{j >= i} g_j along ``axis``: the VJP of a cumulative sum."""
    return xp.flip(xp.cumulative_sum(xp.flip(g, axis=axis), axis=axis), axis=axis)


# ----- cumulative sums and products -------------------------------------------------------------

def _cumsum_forward(xp, a, *, axis, include_initial):
    out = xp.cumulative_sum(a, axis=axis, dtype=a.dtype)  # the caller cast ``a`` to the accumulation dtype
    if include_initial:
        shape = list(a.shape)
        shape[axis] = 1
        out = xp.concat([_like(xp, a, tuple(shape)), out], axis=axis)
    return out, None


def _cumsum_vjp(xp, g, kept, *, axis, include_initial):
    if include_initial:
        g = xp.moveaxis(xp.moveaxis(g, axis, 0)[1:, ...], 0, axis)
    return (_rev_cumsum(xp, g, axis),)


def _cumprod_forward(xp, a, *, axis, include_initial):
    out = xp.cumulative_prod(a, axis=axis, dtype=a.dtype)
    full = out
    if include_initial:
        shape = list(a.shape)
        shape[axis] = 1
        full = xp.concat([_like(xp, a, tuple(shape), 1), out], axis=axis)
    return full, out


def _cumprod_vjp(xp, g, out, a, *, axis, include_initial):
    if include_initial:
        g = xp.moveaxis(xp.moveaxis(g, axis, 0)[1:, ...], 0, axis)
    zero = a == 0
    if not is_tracer(a) and not bool(xp.any(zero)):  # traced: the general rule, which holds either way
        return (_rev_cumsum(xp, g * out, axis) / a,)
    # torch's rule, O(n) per lane: before a lane's first zero the factors divide out (every later
    # product is 0 there); the first zero gets sum_j g_j * (product of a_k, k <= j, k != zero);
    # after it every product holds that zero, so the gradient is 0.
    seen = xp.cumulative_sum(xp.astype(zero, a.dtype), axis=axis)
    before, first = seen == 0, zero & (seen == 1)
    one, nothing = xp.ones_like(a), xp.zeros_like(a)
    grad = xp.where(before, _rev_cumsum(xp, g * out, axis) / xp.where(before, a, one), nothing)
    skipped = xp.cumulative_prod(xp.where(first, one, a), axis=axis)
    at_first = xp.sum(xp.where(seen >= 1, g * skipped, nothing), axis=axis, keepdims=True)
    return (xp.where(first, at_first, grad),)


_CumulativeSum = natural_op("cumulative_sum", _cumsum_forward, _cumsum_vjp, reads_inputs=False)
_CumulativeProd = natural_op("cumulative_prod", _cumprod_forward, _cumprod_vjp)


def _cumulative(op_class, name, x, axis, dtype, include_initial, options):
    x = _tensor(x, name)
    ndim = len(x._layout.mode_sizes)
    if axis is None:
        if ndim != 1:
            raise ValueError(f"{name}: axis is required for an array with {ndim} axes")
        axis = 0
    # The standard: integers accumulate in the default integer dtype, unsigned ones in the unsigned type of
    # its width. Unsigned ones are computed in the default integer (not every backend accumulates them:
    # torch) and wrapped back, as accumulating in the unsigned type would.
    default = default_int(kind_of(x._carriers[0]))
    want = dtype if dtype is not None else accumulation_dtype(x._dtype, default) or x._dtype
    compute = default if want.kind == "uint" else want
    if compute is not x._dtype:
        x = astype(x, compute, options=options)
    out = _run(op_class, (x,), options, axis=_axis(axis, ndim, name), include_initial=bool(include_initial))
    return out if out._dtype is want else astype(out, want, options=options)


def cumulative_sum(x, /, *, axis=None, dtype=None, include_initial=False, options=None) -> Tensor:
    """Cumulative sum along ``axis`` (optionally starting with 0); the VJP is a reversed cumulative sum."""
    return _cumulative(_CumulativeSum, "cumulative_sum", x, axis, dtype, include_initial, options)


def cumulative_prod(x, /, *, axis=None, dtype=None, include_initial=False, options=None) -> Tensor:
    """Cumulative product along ``axis``; the VJP is exact at zeros too (torch's O(n) rule per lane)."""
    return _cumulative(_CumulativeProd, "cumulative_prod", x, axis, dtype, include_initial, options)


# ----- sorting and searching ----------------------------------------------------------------------

def _sort_forward(xp, a, *, axis, descending, stable):
    order = xp.argsort(a, axis=axis, descending=descending, stable=stable)
    return _take_along(xp, a, order, axis), order


def _sort_vjp(xp, g, order, *, axis, descending, stable):
    # Each input element went to one output position: send the cotangent back through the inverse permutation.
    return (_take_along(xp, g, xp.argsort(order, axis=axis), axis),)


_Sort = natural_op("sort", _sort_forward, _sort_vjp, reads_inputs=False)


def sort(x, /, *, axis=-1, descending=False, stable=True, options=None) -> Tensor:
    """Sorted copy along ``axis``; each element's gradient follows it to its sorted position."""
    x = _tensor(x, "sort")
    axis = _axis(axis, len(x._layout.mode_sizes), "sort")
    return _run(_Sort, (x,), options, axis=axis, descending=bool(descending), stable=bool(stable))


def argsort(x, /, *, axis=-1, descending=False, stable=True, options=None) -> Tensor:
    """Indices that sort ``x`` along ``axis`` (not differentiable)."""
    x = _tensor(x, "argsort")
    axis = _axis(axis, len(x._layout.mode_sizes), "argsort")
    return _forward_only(lambda xp, a: xp.argsort(a, axis=axis, descending=descending, stable=stable), x,
                         options=options)


def _arg_extremum(name, x, axis, keepdims, options):
    x = _tensor(x, name)
    ndim = len(x._layout.mode_sizes)
    if axis is not None:
        axis = _axis(axis, ndim, name)
    if x._layout.size == 0:
        raise ValueError(f"{name} of an empty array (shape {tuple(x._layout.mode_sizes)}) is undefined")
    return _forward_only(lambda xp, a: getattr(xp, name)(a, axis=axis, keepdims=keepdims), x, options=options)


def argmax(x, /, *, axis=None, keepdims=False, options=None) -> Tensor:
    """Index of the first maximum along ``axis`` (None: of the flattened array); not differentiable."""
    return _arg_extremum("argmax", x, axis, keepdims, options)


def argmin(x, /, *, axis=None, keepdims=False, options=None) -> Tensor:
    """Index of the first minimum along ``axis`` (None: of the flattened array); not differentiable."""
    return _arg_extremum("argmin", x, axis, keepdims, options)


def searchsorted(x1, x2, /, *, side="left", sorter=None, options=None) -> Tensor:
    """Insertion indices of ``x2`` into the sorted 1-D ``x1`` (not differentiable)."""
    x1, x2 = _tensor(x1, "searchsorted"), _tensor(x2, "searchsorted")
    if side not in ("left", "right"):
        raise ValueError(f"searchsorted: side must be 'left' or 'right', got {side!r}")
    if len(x1._layout.mode_sizes) != 1:
        raise ValueError(f"searchsorted: x1 must be 1-D, got shape {tuple(x1._layout.mode_sizes)}")
    tensors = (x1, x2) if sorter is None else (x1, x2, _tensor(sorter, "searchsorted"))
    out = _forward_only(lambda xp, a, v, *s: xp.searchsorted(a, v, side=side, sorter=s[0] if s else None),
                        *tensors, options=options)
    index = default_int(kind_of(out._carriers[0]))  # the standard's index dtype (JAX returns int32)
    if out._dtype is index:
        return out
    return astype(out, index)


def nonzero(x, /, *, options=None) -> tuple[Tensor, ...]:
    """One index array per axis for the non-zero elements (a data-dependent shape; not differentiable)."""
    x = _tensor(x, "nonzero")
    if not x._layout.mode_sizes:
        raise ValueError("nonzero does not accept a 0-d array")
    return _forward_only(_nonzero, x, options=options)


def _nonzero(xp, a):
    refuse_traced("nonzero", a)
    return tuple(xp.nonzero(a))


def count_nonzero(x, /, *, axis=None, keepdims=False, options=None) -> Tensor:
    """Number of non-zero elements over ``axis`` (not differentiable)."""
    x = _tensor(x, "count_nonzero")
    axes = _axes(axis, len(x._layout.mode_sizes), "count_nonzero")
    return _forward_only(lambda xp, a: xp.count_nonzero(a, axis=axes, keepdims=keepdims), x, options=options)


# ----- selecting: take, take_along_axis ------------------------------------------------------------

def _take_forward(xp, a, indices, *, axis):
    return xp.take(a, indices, axis=axis), (a.shape[axis], indices)


def _take_vjp(xp, g, kept, *, axis):
    n, indices = kept
    return index_add(xp, g, indices, n, axis), None  # repeated indices accumulate


# Dask's take of a one-element Dask index gives a wrong shape (carriers/dask_namespace.py).
_Take = natural_op("take", standard_rule(_take_forward), _take_vjp, reads_inputs=False)


def _check_indices(x: Tensor, indices: Any, name: str) -> Tensor:
    indices = _tensor(indices, name)
    if indices._dtype.kind not in ("int", "uint"):
        raise TypeError(f"{name}: indices must have an integer dtype, got {indices._dtype!r}")
    return _follow(indices, x)


def _follow(data: Tensor, x: Tensor) -> Tensor:
    """Index data (never differentiable) moved onto ``x``'s carrier when it lives elsewhere."""
    here, there = operation_kind((data,), None), operation_kind((x,), None)
    if here == there:
        return data
    return wrap_natural(transfer(natural(data, here), there), there)


def _host_indices(indices: Tensor) -> np.ndarray | None:
    """The index values on the host for the range check, or None for traced ones (JAX gives NaN for an
    out-of-range index there). Read from storage, not through ``to_array``: the buffer is not handed
    out, so it stays unwatched and later operations that save it digest nothing."""
    if holds_tracers(indices._carriers):
        return None
    return to_numpy(indices.rev_array())


def take(x, indices, /, *, axis=None, options=None) -> Tensor:
    """Elements of ``x`` at ``indices`` (1-D) along ``axis``; repeated indices accumulate their gradients."""
    x = _tensor(x, "take")
    ndim = len(x._layout.mode_sizes)
    if axis is None:
        if ndim != 1:
            raise ValueError(f"take: axis is required for an array with {ndim} axes")
        axis = 0
    axis = _axis(axis, ndim, "take")
    indices = _check_indices(x, indices, "take")
    if len(indices._layout.mode_sizes) != 1:
        raise ValueError(f"take: indices must be 1-D, got shape {tuple(indices._layout.mode_sizes)}")
    extent = x._layout.mode_sizes[axis]
    values = _host_indices(indices)
    if values is not None and values.size and (values.max() >= extent or values.min() < -extent):
        raise IndexError(f"take: indices {values.tolist()} out of range for axis {axis} of extent {extent}")
    return _run(_Take, (x, indices), options, axis=axis)


def _take_along_forward(xp, a, indices, *, axis):
    if xp.__name__.endswith("torch") and indices.dtype != xp.int64:
        indices = xp.astype(indices, xp.int64)  # torch.take_along_dim takes int64 indices only
    return _take_along(xp, a, indices, axis), (a.shape, indices)


def _take_along_vjp(xp, g, kept, *, axis):
    shape, indices = kept
    return _sum_to(xp, along_add(xp, g, indices, shape[axis], axis), shape), None


_TakeAlongAxis = natural_op("take_along_axis", _take_along_forward, _take_along_vjp, reads_inputs=False)


def take_along_axis(x, indices, /, *, axis=-1, options=None) -> Tensor:
    """``x`` picked by ``indices`` along ``axis`` (as NumPy); repeated indices accumulate their gradients."""
    x = _tensor(x, "take_along_axis")
    ndim = len(x._layout.mode_sizes)
    axis = _axis(axis, ndim, "take_along_axis")
    indices = _check_indices(x, indices, "take_along_axis")
    if len(indices._layout.mode_sizes) != ndim:
        raise ValueError(f"take_along_axis: indices of shape {tuple(indices._layout.mode_sizes)} need as many axes "
                         f"as x of shape {tuple(x._layout.mode_sizes)}")
    extent = x._layout.mode_sizes[axis]
    values = _host_indices(indices)
    if values is not None and values.size and (values.max() >= extent or values.min() < -extent):
        raise IndexError(f"take_along_axis: indices out of range for axis {axis} of extent {extent} "
                         f"(min {values.min()}, max {values.max()})")
    return _run(_TakeAlongAxis, (x, indices), options, axis=axis)


# ----- shaping: flip, roll, repeat, tile, squeeze, expand_dims, moveaxis, tril, triu, diff --------------

_Flip = natural_op("flip", lambda xp, a, *, axis: (xp.flip(a, axis=axis), None),
                   lambda xp, g, kept, *, axis: (xp.flip(g, axis=axis),), reads_inputs=False)
_Roll = natural_op("roll", lambda xp, a, *, shift, axis: (xp.roll(a, shift, axis=axis), None),
                   lambda xp, g, kept, *, shift, axis: (xp.roll(g, _negate(shift), axis=axis),), reads_inputs=False)
# Dask reshapes only by merging or splitting axes evenly (carriers/dask_namespace.py goes through 1-D).
_Reshape = natural_op("reshape_c", standard_rule(lambda xp, a, *, shape: (xp.reshape(a, shape), a.shape)),
                      standard_rule(lambda xp, g, kept, *, shape: (xp.reshape(g, kept),)), reads_inputs=False)
_Moveaxis = natural_op("moveaxis", lambda xp, a, *, source, destination: (xp.moveaxis(a, source, destination), None),
                       lambda xp, g, kept, *, source, destination: (xp.moveaxis(g, destination, source),),
                       reads_inputs=False)
_Tril = natural_op("tril", lambda xp, a, *, k: (xp.tril(a, k=k), None),
                   lambda xp, g, kept, *, k: (xp.tril(g, k=k),), reads_inputs=False)
_Triu = natural_op("triu", lambda xp, a, *, k: (xp.triu(a, k=k), None),
                   lambda xp, g, kept, *, k: (xp.triu(g, k=k),), reads_inputs=False)
# Rules whose backward keeps nothing of their result (a write into it leaves their history exact).
for _rule in (_Take, _TakeAlongAxis, _Flip, _Roll, _Reshape, _Moveaxis, _Tril, _Triu, _CumulativeSum, _Sort):
    _rule.reads_result = False


def _negate(shift):
    return tuple(-s for s in shift) if isinstance(shift, tuple) else -shift


def flip(x, /, *, axis=None, options=None) -> Tensor:
    """Reverse the order of elements along ``axis`` (None: every axis)."""
    x = _tensor(x, "flip")
    return _run(_Flip, (x,), options, axis=_axes(axis, len(x._layout.mode_sizes), "flip"))


def roll(x, /, shift, *, axis=None, options=None) -> Tensor:
    """Shift elements cyclically along ``axis`` (None: over the flattened array, C order)."""
    x = _tensor(x, "roll")
    ndim = len(x._layout.mode_sizes)
    if isinstance(shift, (tuple, list)):
        shift = tuple(operator.index(s) for s in shift)
    else:
        shift = operator.index(shift)
    if axis is not None:
        axis = tuple(_axis(a, ndim, "roll") for a in axis) if isinstance(axis, (tuple, list)) \
            else _axis(axis, ndim, "roll")
        if isinstance(shift, tuple) != isinstance(axis, tuple) or \
                (isinstance(shift, tuple) and len(shift) != len(axis)):
            raise ValueError(f"roll: shift {shift!r} and axis {axis!r} must be both ints or tuples of one length")
    elif isinstance(shift, tuple):
        raise ValueError(f"roll: a tuple shift {shift!r} needs a tuple axis")
    return _run(_Roll, (x,), options, shift=shift, axis=axis)


def _c_reshape(x: Tensor, shape: tuple, options) -> Tensor:
    shape = tuple(shape)
    if options is None and x._blocks is None and x._raw is None and len(x._carriers) == 1 \
            and -1 not in shape and x._layout == row_major(x._layout.mode_sizes):
        # C-contiguous: the reshape is a view of the same carrier, so a write through either is
        # a write to one storage with one version (a reshaped native array would be a second
        # carrier over the same memory, invisible to the other's version).
        return View()(x, layout=row_major(shape), offset=x._offset)
    return _run(_Reshape, (x,), options, shape=shape)


def squeeze(x, /, axis, *, options=None) -> Tensor:
    """Remove extent-1 axes (``axis``: an int or tuple; a non-1 extent is a ValueError)."""
    x = _tensor(x, "squeeze")
    shape = x._layout.mode_sizes
    axes = _axes(axis, len(shape), "squeeze")
    for a in axes:
        if shape[a] != 1:
            raise ValueError(f"squeeze: axis {a} has extent {shape[a]} in shape {tuple(shape)}, expected 1")
    if options is None and x._blocks is None:
        # Dropping extent-1 axes is a view in every layout (torch's and NumPy's squeeze are views too).
        modes = x._layout
        keep = [i for i in range(len(shape)) if i not in axes]
        layout = Layout._trusted(tuple(modes._shape_modes[i] for i in keep),
                                 tuple(modes._stride_modes[i] for i in keep))
        return View()(x, layout=layout, offset=x._offset)
    return _c_reshape(x, tuple(n for i, n in enumerate(shape) if i not in axes), options)


def expand_dims(x, /, *, axis=0, options=None) -> Tensor:
    """Insert an extent-1 axis at ``axis`` (counted in the result, -ndim-1 <= axis <= ndim)."""
    x = _tensor(x, "expand_dims")
    shape = tuple(x._layout.mode_sizes)
    axis = _axis(axis, len(shape) + 1, "expand_dims")
    if options is None and x._blocks is None:
        # An extent-1 axis is a view in every layout, so writes into ``x`` show through it as in torch and
        # NumPy (a reshape copies a layout that is not row-major, and a result not yet materialised).
        modes = x._layout
        layout = Layout._trusted((*modes._shape_modes[:axis], 1, *modes._shape_modes[axis:]),
                                 (*modes._stride_modes[:axis], 1, *modes._stride_modes[axis:]))
        return View()(x, layout=layout, offset=x._offset)
    return _c_reshape(x, (*shape[:axis], 1, *shape[axis:]), options)


def moveaxis(x, source, destination, /, *, options=None) -> Tensor:
    """Move axes ``source`` to positions ``destination`` (ints or equal-length tuples)."""
    x = _tensor(x, "moveaxis")
    ndim = len(x._layout.mode_sizes)
    src = tuple(_axis(a, ndim, "moveaxis") for a in (source if isinstance(source, (tuple, list)) else (source,)))
    dst = tuple(_axis(a, ndim, "moveaxis")
                for a in (destination if isinstance(destination, (tuple, list)) else (destination,)))
    if len(src) != len(dst) or len(set(src)) != len(src) or len(set(dst)) != len(dst):
        raise ValueError(f"moveaxis: source {source!r} and destination {destination!r} must be distinct axes of "
                         "one length")
    return _run(_Moveaxis, (x,), options, source=src, destination=dst)


def tril(x, /, *, k=0, options=None) -> Tensor:
    """Lower triangle of the last two axes (elements above diagonal ``k`` zeroed)."""
    x = _tensor(x, "tril")
    if len(x._layout.mode_sizes) < 2:
        raise ValueError(f"tril needs at least 2 axes, got shape {tuple(x._layout.mode_sizes)}")
    return _run(_Tril, (x,), options, k=operator.index(k))


def triu(x, /, *, k=0, options=None) -> Tensor:
    """Upper triangle of the last two axes (elements below diagonal ``k`` zeroed)."""
    x = _tensor(x, "triu")
    if len(x._layout.mode_sizes) < 2:
        raise ValueError(f"triu needs at least 2 axes, got shape {tuple(x._layout.mode_sizes)}")
    return _run(_Triu, (x,), options, k=operator.index(k))


def _repeat_forward(xp, a, *counts, axis, repeats):
    if axis is None:
        a = xp.reshape(a, (-1,))
    ax = 0 if axis is None else axis
    if counts:
        return xp.take(a, repeat_positions(xp, counts[0], a.shape[ax]), axis=ax), None
    return xp.repeat(a, repeats, axis=ax), None


def _repeat_vjp(xp, g, kept, a, *counts, axis, repeats):
    source = xp.reshape(a, (-1,)) if axis is None else a
    ax = 0 if axis is None else axis
    n = source.shape[ax]
    if counts:
        # Output slice j came from input slice positions[j]: a scatter-add over sorted positions.
        grad = index_add(xp, g, repeat_positions(xp, counts[0], n), n, ax)
    else:
        # Each input slice was repeated ``repeats`` times in a row: sum those runs.
        moved = xp.moveaxis(g, ax, 0)
        runs = xp.sum(xp.reshape(moved, (n, repeats, *moved.shape[1:])), axis=1)
        grad = xp.moveaxis(runs, 0, ax)
    return (xp.reshape(grad, a.shape),) + (None,) * len(counts)


_Repeat = natural_op("repeat", _repeat_forward, _repeat_vjp)
_Repeat.reads_result = False  # it keeps nothing of its result: a write into it leaves the history exact


def repeat(x, repeats, /, *, axis=None, options=None) -> Tensor:
    """Repeat each element ``repeats`` times (an int or a 1-D integer Tensor) along ``axis`` (None: flattened)."""
    x = _tensor(x, "repeat")
    ndim = len(x._layout.mode_sizes)
    if axis is not None:
        axis = _axis(axis, ndim, "repeat")
    if isinstance(repeats, Tensor):
        if repeats._dtype.kind not in ("int", "uint"):
            raise TypeError(f"repeat: repeats must have an integer dtype, got {repeats._dtype!r}")
        return _run(_Repeat, (x, _follow(repeats, x)), options, axis=axis, repeats=None)
    repeats = operator.index(repeats)
    if repeats < 0:
        raise ValueError(f"repeat: repeats must be >= 0, got {repeats}")
    return _run(_Repeat, (x,), options, axis=axis, repeats=repeats)


def _tile_forward(xp, a, *, reps):
    return xp.tile(a, reps), a.shape


def _tile_vjp(xp, g, shape, *, reps):
    full = (1,) * (len(reps) - len(shape)) + tuple(shape)
    reps = (1,) * (len(full) - len(reps)) + tuple(reps)
    split = tuple(n for pair in zip(reps, full) for n in pair)              # (r0, n0, r1, n1, ...)
    grad = xp.sum(xp.reshape(g, split), axis=tuple(range(0, len(split), 2)))
    return (xp.reshape(grad, shape),)


_Tile = natural_op("tile", _tile_forward, _tile_vjp, reads_inputs=False)
_Tile.reads_result = False


def tile(x, repetitions, /, *, options=None) -> Tensor:
    """Repeat the whole array ``repetitions[i]`` times along each axis; copies' gradients add up."""
    x = _tensor(x, "tile")
    reps = tuple(operator.index(r) for r in repetitions)
    if any(r < 0 for r in reps):
        raise ValueError(f"tile: repetitions must be >= 0, got {reps}")
    return _run(_Tile, (x,), options, reps=reps)


def _diff_forward(xp, *arrays, axis, n):
    a = xp.concat(arrays, axis=axis) if len(arrays) > 1 else arrays[0]
    for _ in range(n):
        a = xp.moveaxis(xp.moveaxis(a, axis, 0)[1:, ...] - xp.moveaxis(a, axis, 0)[:-1, ...], 0, axis)
    return a, tuple(array.shape[axis] for array in arrays)


def _diff_vjp(xp, g, extents, *, axis, n):
    g = xp.moveaxis(g, axis, 0)
    for _ in range(n):
        zero = xp.zeros_like(g[:1, ...])
        g = xp.concat([zero, g], axis=0) - xp.concat([g, zero], axis=0)
    grads, start = [], 0
    for extent in extents:
        grads.append(xp.moveaxis(g[start:start + extent, ...], 0, axis))
        start += extent
    return tuple(grads)


_Diff = natural_op("diff", _diff_forward, _diff_vjp, reads_inputs=False)
_Diff.reads_result = False


def diff(x, /, *, axis=-1, n=1, prepend=None, append=None, options=None) -> Tensor:
    """The ``n``-th forward difference along ``axis``, after joining ``prepend`` and ``append`` (Tensors)."""
    x = _tensor(x, "diff")
    ndim = len(x._layout.mode_sizes)
    axis = _axis(axis, ndim, "diff")
    n = operator.index(n)
    if n < 0:
        raise ValueError(f"diff: n must be >= 0, got {n}")
    parts = [p for p in (prepend, x, append) if p is not None]
    for part in parts:
        _tensor(part, "diff")
        shape = part._layout.mode_sizes
        if len(shape) != ndim or any(a != b for i, (a, b) in enumerate(zip(shape, x._layout.mode_sizes))
                                     if i != axis):
            raise ValueError(f"diff: prepend/append of shape {tuple(shape)} does not fit x of shape "
                             f"{tuple(x._layout.mode_sizes)} outside axis {axis}")
    return _run(_Diff, tuple(parts), options, axis=axis, n=n)


# ----- statistics: var, std ------------------------------------------------------------------------

def _moments(xp, a, axes, correction):
    count = 1
    for ax in axes:
        count *= a.shape[ax]
    centred = a - xp.mean(a, axis=axes, keepdims=True)
    # Past the count the divisor is 0, as in torch and NumPy (NaN or inf); the VJP keeps the signed one.
    squares = xp.sum(centred * centred, axis=axes, keepdims=True)
    return centred, squares / max(count - correction, 0), count - correction


def _var_forward(xp, a, *, axes, correction, keepdims, root):
    centred, var, dof = _moments(xp, a, axes, correction)
    out = xp.sqrt(var) if root else var
    return (out if keepdims else xp.reshape(out, tuple(n for i, n in enumerate(a.shape) if i not in axes))), \
        (centred, out, dof)


def _var_vjp(xp, g, kept, *, axes, correction, keepdims, root):
    centred, out, dof = kept
    g = xp.reshape(g, out.shape)  # reduced axes back as extent 1
    if root:
        # d std = d var / (2 std), and zero where std == 0 (torch's subgradient, not 0 / 0).
        g = xp.where(out == 0, xp.zeros_like(g), g / (2 * xp.where(out == 0, xp.ones_like(out), out)))
    # d var = 2 (x - mean) / dof
    with np.errstate(divide="ignore", invalid="ignore"):
        return (g * centred * (2 / dof if dof else math.inf),)


_Var = natural_op("var", _var_forward, _var_vjp, reads_inputs=False)
_Var.reads_result = False  # the variance's VJP reads the kept centred values, its result only for the shape
#: the same rules with ``root``: d std reads std itself, so a write into the result fails backward
_Std = natural_op("std", _var_forward, _var_vjp, reads_inputs=False)


def _statistic(name, x, axis, correction, keepdims, options, root):
    x = _tensor(x, name)
    _float_only(x, name)
    axes = _axes(axis, len(x._layout.mode_sizes), name)
    correction = float(correction)
    if correction < 0:
        raise ValueError(f"{name}: correction must be >= 0, got {correction}")
    return _run(_Std if root else _Var, (x,), options, axes=axes, correction=correction, keepdims=bool(keepdims),
                root=root)


def var(x, /, *, axis=None, correction=0.0, keepdims=False, options=None) -> Tensor:
    """Variance over ``axis`` with ``correction`` degrees of freedom removed (1: the sample variance)."""
    return _statistic("var", x, axis, correction, keepdims, options, False)


def std(x, /, *, axis=None, correction=0.0, keepdims=False, options=None) -> Tensor:
    """Standard deviation over ``axis`` with ``correction`` degrees of freedom removed."""
    return _statistic("std", x, axis, correction, keepdims, options, True)


# ----- vecdot --------------------------------------------------------------------------------------

def _vecdot_forward(xp, a, b, *, axis):
    if xp.isdtype(a.dtype, "complex floating"):
        a = xp.conj(a)  # the standard conjugates the first argument
    products = a * b
    out = xp.sum(products, axis=axis)
    # The result has the operands' promoted dtype, not the wider one ``sum`` accumulates integers in.
    return (out if out.dtype == products.dtype else xp.astype(out, products.dtype)), None


def _vecdot_vjp(xp, g, kept, a, b, *, axis):
    g = xp.expand_dims(g, axis=axis)
    return _sum_to(xp, g * b, a.shape), _sum_to(xp, g * a, b.shape)


_Vecdot = natural_op("vecdot", _vecdot_forward, _vecdot_vjp)
_Vecdot.reads_result = False  # it keeps nothing of its result


def vecdot(x1, x2, /, *, axis=-1, options=None) -> Tensor:
    """Dot products along ``axis`` (a negative axis of the broadcast shape), broadcasting the other axes."""
    x1, x2 = _tensor(x1, "vecdot"), _tensor(x2, "vecdot")
    s1, s2 = tuple(x1._layout.mode_sizes), tuple(x2._layout.mode_sizes)
    ndim = max(len(s1), len(s2))
    index = operator.index(axis)
    if not -min(len(s1), len(s2)) <= index < 0:
        raise IndexError(f"vecdot: axis {axis!r} must be negative and within both shapes {s1} and {s2}")
    if s1[index] != s2[index]:
        raise ValueError(f"vecdot: shapes {s1} and {s2} differ along axis {axis} ({s1[index]} vs {s2[index]})")
    return _run(_Vecdot, (x1, x2), options, axis=index % ndim)

