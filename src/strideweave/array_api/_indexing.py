"""Standard indexing for Tensors: ints, slices of any step, ``...``, ``None``, boolean masks, integer arrays.

One rule for basic keys: any mix of ints, slices with a positive step,
``...`` and ``None`` is one view (``ops.views.getitem``: the key is
normalised, ``...`` spelled out and each ``None`` an inserted extent-1 mode,
then one differentiable ``View``), so ``x[..., ::2]``, ``x[None, 1]`` and
``x[1, ...]`` share ``x``'s carrier and writes through them reach ``x``.
A negative step selects the elements of a positive-step slice in reverse:
the read is that view, flipped (no layout with non-negative strides walks
backwards), and a write goes through that view with the value flipped.
The rest is a gather: one integer array (or a boolean mask turned into its
positions) among full slices is a ``take`` along its axis; any other key's
flat C-order positions are computed once on the host, and the result is a
``take`` from the flattened Tensor. A ``take``'s VJP is a scatter-add
(duplicates add), linear in the sizes.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from ..carriers.jax_carrier import holds_tracers, refuse_traced
from ..dtypes import DType
from ..operation import no_grad
from ..ops.arrays import _c_reshape, flip, take
from ..ops.views import getitem as _view_getitem
from ..ops.views import setitem as _view_setitem
from ..tensors.creation import tensor
from ..tensors.tensor import Tensor
from ..tensors.writes import write
from ._write_plan import _offsets
from ._writes import recorded_setitem

__all__ = ["getitem", "setitem"]

_FLOAT32 = DType.Float32

def _host_key(key: Any, shape: tuple) -> Any:
    """The key with Tensors turned into NumPy arrays, validated against ``shape``."""
    parts = key if isinstance(key, tuple) else (key,)
    out = []
    for part in parts:
        if isinstance(part, Tensor):
            if part._dtype.kind not in ("bool", "int", "uint"):
                raise IndexError(f"an array index must have an integer or boolean dtype, got {part.dtype!r}")
            if holds_tracers(part._carriers):
                refuse_traced("Tensor.__getitem__ / __setitem__", part.carrier.dense_values(),
                              "x[key] reads the positions an index Tensor holds (for traced indices use xp.take "
                              "or xp.take_along_axis)")
            part = part._read_numpy()
        elif isinstance(part, np.ndarray) and part.ndim:  # a NumPy index array (xarray's .sel, .groupby)
            if part.dtype.kind not in "biu":
                raise IndexError(f"an array index must have an integer or boolean dtype, got NumPy {part.dtype}")
        elif part is None or part is Ellipsis or isinstance(part, slice):
            pass
        elif isinstance(part, (bool, np.bool_)):
            part = bool(part)
        else:
            try:
                part = operator.index(part)
            except TypeError:
                raise IndexError(f"unsupported index {part!r} ({type(part).__name__}); expected an int, a slice, "
                                 f"..., None, a boolean or integer array") from None
        out.append(part)
    if sum(p is Ellipsis for p in out) > 1:
        raise IndexError(f"an index can only have a single ellipsis, got {key!r}")
    return tuple(out)


def _is_basic(parts: tuple) -> bool:
    """Whether one view expresses ``x[parts]`` (validated parts: no bools, no arrays, no zero steps)."""
    return all(p is None or p is Ellipsis or type(p) is int or (type(p) is slice and (p.step is None or p.step > 0))
               for p in parts)


def _result_shape(parts: tuple, shape: tuple) -> tuple:
    # NumPy's own rules on a stride-0 stand-in: no allocation, exact errors.
    probe = np.broadcast_to(np.empty((), dtype=np.int8), shape)
    try:
        return probe[parts].shape
    except IndexError as exc:
        raise IndexError(f"index {parts!r} does not fit shape {shape}: {exc}") from None


def _reversed_steps(parts: tuple, shape: tuple) -> tuple[tuple, tuple] | None:
    """For a key of ints, slices, ``...`` and ``None`` with a negative step somewhere: the key with
    each such slice replaced by the positive-step slice over the same elements, and the result's axes
    that read them in reverse. None for any other key."""
    if not all(p is None or p is Ellipsis or type(p) is int or type(p) is slice for p in parts):
        return None
    if all(type(p) is not slice or p.step is None or p.step > 0 for p in parts):
        return None
    used = sum(1 for p in parts if p is not None and p is not Ellipsis)
    forward, flipped, axis, out_axis = [], [], 0, 0
    for p in parts:
        if p is Ellipsis:
            axis += len(shape) - used
            out_axis += len(shape) - used
        elif p is None:
            out_axis += 1
        elif type(p) is int:
            axis += 1
        else:
            if p.step is not None and p.step < 0:
                start, stop, step = p.indices(shape[axis])
                count = len(range(start, stop, step))
                if count:
                    p = slice(start + (count - 1) * step, start + 1, -step)
                    flipped.append(out_axis)
                else:
                    p = slice(0, 0)
            forward.append(p)
            axis += 1
            out_axis += 1
            continue
        forward.append(p)
    return tuple(forward), tuple(flipped)


def _single_array(parts: tuple, shape: tuple) -> tuple[int, np.ndarray] | None:
    """``(axis, integer array)`` when the key is one integer array, or one 1-D boolean mask, among full
    slices (and ``...``): NumPy's result is then a ``take`` along that axis."""
    arrays = [i for i, p in enumerate(parts) if isinstance(p, np.ndarray)]
    if len(arrays) != 1:
        return None
    i = arrays[0]
    if not all(p is Ellipsis or (type(p) is slice and p == slice(None)) for j, p in enumerate(parts) if j != i):
        return None
    index = parts[i]
    if index.dtype == np.bool_:
        if index.ndim != 1:
            return None
        index = np.flatnonzero(index)
    axis = i if Ellipsis not in parts[:i] else len(shape) - len(parts) + i
    return axis, np.where(index < 0, index + shape[axis], index)


def _positions(shape: tuple, parts: tuple) -> np.ndarray:
    """The flat C-order positions ``parts`` selects in an array of ``shape``, in the selection's shape."""
    return np.arange(int(np.prod(shape, dtype=np.int64)), dtype=np.int64).reshape(shape)[parts]


def getitem(x: Tensor, key: Any) -> Tensor:
    """``x[key]`` with the Array API's semantics (0-d results for full integer keys)."""
    shape = x._layout.mode_sizes
    parts = _host_key(key, shape)
    out_shape = _result_shape(parts, shape)
    if _is_basic(parts):
        return _view_getitem(x, parts, scalar_rank=0)
    reversed_steps = _reversed_steps(parts, shape)
    if reversed_steps is not None:
        forward, axes = reversed_steps
        picked = _view_getitem(x, forward, scalar_rank=0)
        return flip(picked, axis=axes) if axes else picked
    single = _single_array(parts, shape)
    if single is not None:
        axis, index = single
        if index.ndim == 1:
            return take(x, _index_tensor(index, shape[axis], x), axis=axis)
        picked = take(x, _index_tensor(index.reshape(-1), shape[axis], x), axis=axis)
        return _c_reshape(picked, tuple(out_shape), None)
    positions = _positions(shape, parts)
    flat = _c_reshape(x, (x.size,), None)
    picked = take(flat, _index_tensor(positions.reshape(-1), x.size, x), axis=0)
    return _c_reshape(picked, tuple(out_shape), None)


def _index_tensor(index: np.ndarray, extent: int, x: Tensor) -> Tensor:
    """Host indices into an axis of ``extent`` as a Tensor on ``x``'s carrier: int32 where they fit
    (JAX carriers have no 64-bit integers by default)."""
    dtype = np.int32 if extent < 2**31 else np.int64
    return tensor(np.ascontiguousarray(index, dtype=dtype), carrier=x._carriers[0].kind)


def setitem(x: Tensor, key: Any, value: Any) -> None:
    """``x[key] = value``: writes through to ``x``'s storage and bumps its version.

    A key that selects nothing (an all-False mask, an empty slice) writes nothing,
    so it changes no version: graphs recorded before it stay valid. Writing a
    view of ``x`` back where it already lies (the last step of ``x[k] += v``)
    changes nothing either. With gradients on, a write into storage that has a
    history, or of a value that carries a gradient, is recorded (``_writes``).
    """
    shape = x._layout.mode_sizes
    parts = _host_key(key, shape)
    selected = _result_shape(parts, shape)
    if 0 in selected:
        value_shape = value.shape if isinstance(value, Tensor) else ()
        try:
            np.broadcast_shapes(tuple(value_shape), tuple(selected))
        except ValueError:
            raise ValueError(f"cannot assign a value of shape {tuple(value_shape)} to x[{key!r}] "
                             f"(it selects shape {tuple(selected)})") from None
        return
    if isinstance(value, Tensor) and _lies_at(value, x, parts):
        return
    recorded_setitem(x, parts, tuple(selected), value, lambda: _write_item(x, parts, key, value))


def _fits(shape: tuple, target: tuple) -> bool:
    try:
        return np.broadcast_shapes(shape, target) == target
    except ValueError:
        return False


def _flipped_value(value: Any, axes: tuple, selected: tuple) -> Any:
    """``value``, broadcast to ``selected``, in reverse along the selection's ``axes``: what the
    positive-step view of a negative-step selection receives."""
    if not isinstance(value, Tensor):
        return value
    shape = tuple(value.shape)
    pad = len(selected) - len(shape)
    mine = tuple(a - pad for a in axes if a >= pad and shape[a - pad] != 1)  # extent 1 reads the same
    if not mine:
        return value
    with no_grad():
        return flip(value, axis=mine)


def _lies_at(value: Tensor, x: Tensor, parts: tuple) -> bool:
    """Whether ``value`` is a view of exactly the storage slots ``x[parts]`` addresses, in order."""
    if not any(c is t for c in value._carriers for t in x._carriers):
        return False
    selected = _offsets(x)[parts]
    return selected.shape == tuple(value.shape) and bool(np.array_equal(selected, _offsets(value)))


def _write_item(x: Tensor, parts: tuple, key: Any, value: Any) -> None:
    shape = x._layout.mode_sizes
    if _is_basic(parts):
        # A view's window: one write through the layout (nested modes included).
        _view_setitem(x, parts, value, scalar_rank=0)
        return
    if holds_tracers(x._carriers) or (isinstance(value, Tensor) and holds_tracers(value._carriers)):
        # Staged by JAX: the same assignment as a functional update of x's values.
        native = value.to_array() if isinstance(value, Tensor) else value
        write(x, x.to_array().at[parts].set(native), False)
        return
    if not isinstance(value, (Tensor, bool, int, float, complex)):
        raise TypeError(f"cannot assign {type(value).__name__} {value!r}; expected a Tensor or a Python scalar")
    reversed_steps = _reversed_steps(parts, shape)
    if reversed_steps is not None:
        forward, axes = reversed_steps
        selected = _result_shape(parts, shape)
        value_shape = tuple(value.shape) if isinstance(value, Tensor) else ()
        if not _fits(value_shape, tuple(selected)):
            raise ValueError(f"cannot assign a value of shape {value_shape} to x[{key!r}] "
                             f"(it selects shape {tuple(selected)})")
        _view_setitem(x, forward, _flipped_value(value, axes, tuple(selected)), scalar_rank=0)
        return
    host_value: Any = value._read_numpy() if isinstance(value, Tensor) else value
    current = np.array(x._read_numpy(), copy=True)
    try:
        current[parts] = host_value
    except ValueError as exc:
        raise ValueError(f"cannot assign a value of shape {np.shape(host_value)} to x[{key!r}] "
                         f"(x has shape {shape}): {exc}") from None
    write(x, current.item() if current.ndim == 0 else current, False)
