"""Standard indexing for Tensors: ints, slices of any step, ``...``, ``None``, boolean masks, integer arrays.

One rule for basic keys: any mix of ints, slices with a positive step,
``...`` and ``None`` is one view (``ops.views.getitem``: the key is
normalised, ``...`` spelled out and each ``None`` an inserted extent-1 mode,
then one differentiable ``View``), so ``x[..., ::2]``, ``x[None, 1]`` and
``x[1, ...]`` share ``x``'s carrier and writes through them reach ``x``.
The rest is a gather: the flat C-order positions the key selects (boolean
masks, integer arrays, and negative steps, which no layout with
non-negative strides expresses) are computed once on the host, and the
result is a differentiable ``take`` from the flattened Tensor, so its VJP
scatters back (duplicates add).
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from ..carriers.jax_carrier import holds_tracers, refuse_traced
from ..dtypes import DType
from ..ops.arrays import _c_reshape, take
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
            part = part.numpy()
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
    positions = _positions(shape, parts)
    flat = _c_reshape(x, (x.size,), None)
    # int32 positions where they fit: JAX carriers have no 64-bit integers by default.
    flat_positions = np.ascontiguousarray(positions.reshape(-1), dtype=np.int32 if x.size < 2**31 else np.int64)
    index = tensor(flat_positions, carrier=x._carriers[0].kind)
    picked = take(flat, index, axis=0)
    return _c_reshape(picked, tuple(out_shape), None)


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
    if isinstance(value, Tensor):
        host_value: Any = value.numpy()
    elif isinstance(value, (bool, int, float, complex)):
        host_value = value
    else:
        raise TypeError(f"cannot assign {type(value).__name__} {value!r}; expected a Tensor or a Python scalar")
    current = np.array(x.numpy(), copy=True)
    try:
        current[parts] = host_value
    except ValueError as exc:
        raise ValueError(f"cannot assign a value of shape {np.shape(host_value)} to x[{key!r}] "
                         f"(x has shape {shape}): {exc}") from None
    write(x, current.item() if current.ndim == 0 else current, False)
