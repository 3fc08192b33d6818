"""Building Tensors: from Python data, native arrays, storage, constants, ranges, random draws, blocks."""

from __future__ import annotations

import operator
import sys
from collections.abc import Sequence
from typing import Any

import numpy as np

from .._marks import mark_unit
from ..carriers import (
    CarrierKind,
    TracerError,
    carrier_for_array,
    kind_for_array,
    resolve,
    transfer,
)
from ..dtypes import CompoundDType, DType, SimpleDType, as_dtype, dtype_from_name
from ..layout import Layout, Shape
from ..layout.order import row_major
from .tensor import Tensor
from .values import operand

__all__ = ["arange", "converted", "from_storage", "from_subtensors", "full", "ones", "tensor", "wrap_native",
           "wrapped_torch", "zeros"]

def _shape_modes(shape: Any) -> tuple:
    return shape.modes if isinstance(shape, Shape) else Shape(shape).modes


def _python_values(data: Any, dtype: SimpleDType | None) -> tuple[np.ndarray, SimpleDType]:
    """NumPy array and dtype for nested Python lists / scalars.

    Floats give Float32, ints Int32, complex numbers Complex64.
    """
    try:
        host = np.asarray(data)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"cannot build a Tensor from {data!r}: {exc}") from None
    if host.dtype == object or host.dtype.kind not in "biufc":
        raise TypeError(f"Tensor data must be numbers, bools or native arrays, got {data!r}")
    if dtype is None:
        dtype = {"b": DType.Bool, "f": DType.Float32, "c": DType.Complex64}.get(host.dtype.kind, DType.Int32)
        if not isinstance(data, (list, tuple, int, float, bool, complex)):
            try:
                dtype = dtype_from_name(host.dtype.name)  # a NumPy scalar keeps its dtype
            except TypeError:
                pass
    if not isinstance(dtype, SimpleDType):
        raise TypeError(f"dtype must be a SimpleDType such as DType.Float32, got {dtype!r}")
    return host.astype(dtype.name, copy=False), dtype


def _canonical_tensor(host: np.ndarray, kind) -> Tensor:
    """Copy host values into canonical storage of ``kind``."""
    modes = tuple(int(e) for e in host.shape) or (1,)
    flat = np.ravel(host, order="F")  # first axis fastest: canonical storage order
    return Tensor._make(kind.from_array(transfer(np.ascontiguousarray(flat), kind)), Layout.canonical(modes), 0)


#: (array type, dtype, shape, strides, device) -> (kind, layout, span, order) for NumPy arrays and torch
#: tensors, or None for those laid out otherwise (0-d, empty, negative or odd strides, foreign dtypes).
#: Wrapping is per call in a training loop; what depends only on these keys is found once, and the
#: Layout is shared, so its cached facts (storage order, aliasing) are too. ``order`` says how the 1-D
#: storage is taken with the fewest calls: "C" / "F" (a reshape of a C- / F-contiguous NumPy array),
#: "1-D" (a contiguous 1-D torch tensor is its own storage), "view" (``view(-1)`` of a contiguous
#: torch tensor), None (one strided view spanning the memory).
_WRAPS: dict = {}
_WRAPS_LIMIT = 1024


def _wrap_plan(array: Any, key: tuple, numpy: bool):
    shape = tuple(key[2])
    plan = None
    if shape and 0 not in shape:
        if numpy:
            item = array.itemsize
            strides = None if any(s < 0 or s % item for s in array.strides) else \
                tuple(s // item for s in array.strides)
        else:
            strides = tuple(array.stride())
        if strides is not None:
            kind: CarrierKind | None
            kind = kind_for_array(array)
            try:
                kind.cls._sw_dtype_in(kind.namespace, array.dtype)
            except TypeError:
                kind = None
            if kind is not None:
                span = 1 + sum((e - 1) * s for e, s in zip(shape, strides))
                order = None
                if numpy:
                    if span == array.size and key[0] is np.ndarray:  # np.matrix reshapes to 2-D
                        order = "C" if array.flags.c_contiguous else "F" if array.flags.f_contiguous else None
                elif span == array.numel() and array.is_contiguous():
                    order = "1-D" if strides == (1,) else "view"
                plan = (kind, Layout(shape, strides), span, order)
    if len(_WRAPS) >= _WRAPS_LIMIT:
        _WRAPS.clear()
    _WRAPS[key] = plan
    return plan


def _plan(key: tuple, array: Any, numpy: bool):
    """The cached wrap plan for ``key``, made on first sight (None: the array is laid out otherwise)."""
    plan = _WRAPS.get(key)
    if plan is None and key not in _WRAPS:
        plan = _wrap_plan(array, key, numpy)
    return plan


def _wrapped_strided(array: Any) -> Tensor | None:
    """A NumPy array or torch tensor as a Tensor over its own memory, from the cached plan; None if none fits."""
    if isinstance(array, np.ndarray):
        plan = _plan((array.__class__, array.dtype, array.shape, array.strides, None), array, True)
        if plan is None:
            return None
        kind, layout, span, order = plan
        if order == "C":
            storage = array.reshape(-1)
        elif order == "F":
            storage = array.T.reshape(-1)
        else:
            storage = np.lib.stride_tricks.as_strided(array, shape=(span,), strides=(array.itemsize,))
    else:
        torch = sys.modules.get("torch")
        if torch is None or not isinstance(array, torch.Tensor):
            return None
        return wrapped_torch(array, torch.Tensor)
    return Tensor._make(kind.cls._adopt(storage, kind.namespace, kind.device, kind), layout, 0)


def wrapped_torch(array: Any, tensor_type: type) -> Tensor | None:
    """``_wrapped_strided`` for an array the caller knows is a ``torch.Tensor`` (``tensor_type``), unwatched.

    Torch carriers read torch's own version counter, so nothing needs watching; the bridges call this.
    """
    plan = _plan((tensor_type, array.dtype, array.shape, array.stride(), array.device), array, False)
    if plan is None:
        return None
    kind, layout, span, order = plan
    storage = array.detach()
    if order == "view":
        storage = storage.view(-1)
    elif order is None:
        storage = storage.as_strided((span,), (1,), array.storage_offset())
    return Tensor._make(kind.cls._adopt(storage, kind.namespace, kind.device, kind), layout, 0)


def wrap_native(array: Any) -> Tensor:
    """Wrap a native array without copying where its strides allow.

    The caller still holds the array, so the carrier watches for writes made
    through it (see ``Carrier.watch_external``).
    """
    wrapped = _wrapped_strided(array)
    if wrapped is None:
        wrapped = _laid_out(array)
    wrapped._carriers[0].watch_external(fresh=True)
    return wrapped


def _laid_out(array: Any) -> Tensor:
    """A native array without usable strides (0-d, empty, JAX, array-api-strict) in row-major flat storage."""
    kind = kind_for_array(array)
    if array.ndim == 0:
        return Tensor._make(kind.from_array(kind.namespace.reshape(array, (1,))), Layout.canonical((1,)), 0)
    carrier = kind.from_array(kind.namespace.reshape(array, (-1,)))
    carrier._remember_shaped(array)
    return Tensor._make(carrier, row_major(tuple(int(e) for e in array.shape)), 0)


def tensor(data: Any, dtype: SimpleDType | None = None, *, carrier: Any = None, device: Any = None,
           requires_grad: Any = None) -> Tensor:
    """A Tensor from nested Python lists / scalars or a native array.

    ``data[i][j]`` is the value at coordinate ``(i, j)``. Python floats give
    Float32, ints Int32, bools Bool; a native array keeps its dtype and is
    wrapped without copying where its strides allow, unless ``carrier``
    names another carrier (then the values are copied there). ``dtype`` may
    also be given as NumPy or torch give it (``np.float32``, ``"float32"``).
    ``requires_grad`` is torch's switch, which StrideWeave has no use for
    (every Float32 Tensor is differentiable): any value raises ``TypeError``.
    """
    if requires_grad is not None:
        raise TypeError(f"tensor() got an unexpected keyword argument 'requires_grad' (requires_grad="
                        f"{requires_grad!r}): in StrideWeave every Float32 Tensor is differentiable and no other "
                        f"is, so sw.tensor(data, dtype=sw.DType.Float32) is a leaf whose .grad backward fills; "
                        f"run code under `with sw.no_grad():`, or use t.detach(), to keep it out of the graph")
    dtype = None if dtype is None else as_dtype(dtype, "tensor: dtype")
    if isinstance(data, Tensor):
        data = data.to_array()
    try:
        carrier_for_array(data)
        native = not isinstance(data, np.generic)
    except TracerError:
        raise
    except TypeError:
        native = False
    if not native:
        host, dtype = _python_values(data, dtype)
        return _canonical_tensor(host, resolve(carrier, device=device))
    result = wrap_native(data)
    kind = result._carriers[0].kind
    if carrier is not None or device is not None:
        kind = resolve(carrier if carrier is not None else kind, device=device)
    if kind != result._carriers[0].kind or (dtype is not None and dtype != result.dtype):
        result = converted(result, dtype, kind)
    return result


def converted(t: Tensor, dtype: SimpleDType | None = None, kind: Any = None) -> Tensor:
    """``t``'s values as a new leaf in fresh canonical storage, in ``dtype`` on ``kind`` (default: ``t``'s own).

    A native conversion: nothing is recorded, whatever the grad mode.
    """
    kind = t._carriers[0].kind if kind is None else kind
    xp = kind.namespace
    values = xp.reshape(operand(t, kind), (-1,))
    if dtype is not None and dtype != t._dtype:
        values = xp.astype(values, kind.cls._native_dtype_in(xp, dtype))
    else:
        values = xp.asarray(values, copy=True)  # the reshape may be a view of t's storage
    return Tensor._make(kind.cls.from_array(values), Layout.canonical(t._layout._shape_modes), 0)


def from_storage(storage: Any, layout: Layout, dtype: SimpleDType | None = None, *, offset: int = 0,
                 carrier: Any = None, device: Any = None) -> Tensor:
    """View a flat sequence or 1-D native array through ``layout`` at ``offset``, as is."""
    dtype = None if dtype is None else as_dtype(dtype, "from_storage: dtype")
    if not isinstance(layout, Layout):
        raise TypeError(f"from_storage: layout must be a Layout, got {type(layout).__name__}: {layout!r}")
    if isinstance(offset, bool) or not isinstance(offset, (int, np.integer)) or offset < 0:
        raise ValueError(f"from_storage: offset must be an int >= 0, got {offset!r}")
    try:
        kind = kind_for_array(storage)
    except TypeError:
        kind = None
    if kind is None:
        host, dtype = _python_values(storage, dtype)
        if host.ndim != 1:
            raise ValueError(f"from_storage: storage must be flat, got shape {host.shape}")
        kind = resolve(carrier, device=device)
        buffer = kind.from_array(transfer(host, kind))
    else:
        if storage.ndim != 1:
            raise ValueError(f"from_storage: storage must be 1-D, got shape {tuple(storage.shape)}")
        if carrier is not None or device is not None:
            target = resolve(carrier if carrier is not None else kind, device=device)
            storage = transfer(storage, target) if target != kind else storage
            kind = target
        buffer = kind.from_array(storage)
        if dtype is not None and dtype != buffer.dtype:
            buffer = kind.from_array(kind.namespace.astype(buffer.array, buffer.native_dtype(dtype)))
        else:
            buffer.watch_external()  # the caller still holds ``storage``
    needed = int(offset) + layout.cosize
    if layout.size and buffer.size < needed:
        raise ValueError(f"from_storage: storage of {buffer.size} elements is shorter than offset + layout.cosize "
                         f"= {offset} + {layout.cosize} = {needed} for layout {layout}")
    return Tensor._make(buffer, layout, int(offset))


def full(shape: Any, value: Any, dtype: SimpleDType | CompoundDType = DType.Float32, *, carrier: Any = None,
         layout: Layout | None = None, device: Any = None) -> Tensor:
    """A Tensor of ``shape`` filled with ``value``, stored in ``layout`` (default canonical)."""
    modes = _shape_modes(shape)
    if layout is None:
        layout = Layout.canonical(modes)
    elif not isinstance(layout, Layout):
        raise TypeError(f"layout must be a Layout, got {layout!r}")
    elif layout.shape.modes != modes:
        raise ValueError(f"layout {layout} does not have the requested shape {Shape(modes)}")
    kind = resolve(carrier, device=device)
    if not isinstance(dtype, CompoundDType):
        dtype = as_dtype(dtype, "dtype")
    fields = dtype.fields if isinstance(dtype, CompoundDType) else (("", dtype),)
    carriers = []
    for _, field_dtype in fields:
        if not isinstance(field_dtype, SimpleDType):
            raise TypeError(f"dtype must be a SimpleDType or CompoundDType, got {dtype!r}")
        buffer = kind.allocate(layout.cosize, field_dtype)
        if value != 0 and layout.cosize:
            buffer = kind.from_array(kind.namespace.full(layout.cosize, value, dtype=buffer.native_dtype(),
                                                         device=kind.device))
            if value == 1 and field_dtype is DType.Float32 and buffer.immutable_arrays:
                # Ones that stay ones: used as a cotangent, they are known without reading a value back.
                mark_unit(buffer.dense_values())
        carriers.append(buffer)
    if isinstance(dtype, CompoundDType):
        return fresh_buffer(Tensor(carriers, layout, 0, dtype))
    return fresh_buffer(Tensor._make(carriers[0], layout, 0))


def fresh_buffer(t: Tensor) -> Tensor:
    """Mark the newly made leaf ``t`` as a fresh buffer; returns it.

    Until a recorded operation reads it (``operation.versions_of``), a Float32
    Tensor written into it is recorded and makes it a result (docs/api.md section 4,
    the write rule: ``out = xp.zeros(n); out[1:] = x * 2``).
    """
    for carrier in t._carriers:
        carrier._unread = True
    return t


def zeros(shape: Any, dtype: SimpleDType | CompoundDType = DType.Float32, *, carrier: Any = None,
          layout: Layout | None = None, device: Any = None) -> Tensor:
    """A Tensor of zeros (``layout`` chooses the storage layout; default canonical)."""
    return full(shape, 0, dtype, carrier=carrier, layout=layout, device=device)


def ones(shape: Any, dtype: SimpleDType | CompoundDType = DType.Float32, *, carrier: Any = None,
         layout: Layout | None = None, device: Any = None) -> Tensor:
    """A Tensor of ones (``layout`` chooses the storage layout; default canonical)."""
    return full(shape, 1, dtype, carrier=carrier, layout=layout, device=device)


def arange(start: Any, stop: Any = None, step: Any = 1, *, dtype: SimpleDType | None = None,
           carrier: Any = None, device: Any = None) -> Tensor:
    """Evenly spaced values in ``[start, stop)`` (Int32 for int arguments, else Float32)."""
    if stop is None:
        start, stop = 0, start
    if dtype is None:
        integral = all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in (start, stop, step))
        dtype = DType.Int32 if integral else DType.Float32
    host = np.arange(start, stop, step).astype(dtype.name, copy=False)
    return fresh_buffer(_canonical_tensor(host, resolve(carrier, device=device)))


def from_subtensors(blocks: Sequence[Tensor], mode: int = 0) -> Tensor:
    """A multi-subtensor Tensor whose top-level ``mode`` concatenates ``blocks`` (no copy)."""
    blocks = tuple(blocks)
    if not blocks:
        raise ValueError("from_subtensors needs at least one block")
    for block in blocks:
        if not isinstance(block, Tensor):
            raise TypeError(f"from_subtensors expects Tensors, got {type(block).__name__}: {block!r}")
        if block._blocks is not None or len(block._carriers) != 1:
            raise ValueError("each block must be a one-subtensor Tensor on a single carrier")
    first = blocks[0]
    rank = first._layout.rank
    mode = operator.index(mode)
    if not -rank <= mode < rank:
        raise IndexError(f"from_subtensors: mode {mode} is out of range for {rank} top-level modes")
    mode %= rank
    modes = first._layout.shape.modes
    for block in blocks:
        other = block._layout.shape.modes
        if block.dtype != first.dtype:
            raise ValueError(f"from_subtensors: blocks disagree on dtype ({first.dtype!r} and {block.dtype!r})")
        if len(other) != rank or any(a != b for i, (a, b) in enumerate(zip(modes, other)) if i != mode):
            raise ValueError(f"from_subtensors: block shapes {first.shape} and {block.shape} differ outside "
                             f"mode {mode}")
        if not isinstance(other[mode], int):
            raise ValueError(f"from_subtensors: mode {mode} of block shape {block.shape} is nested")
    total = sum(block._layout.mode_sizes[mode] for block in blocks)
    layout = Layout.canonical((*modes[:mode], total, *modes[mode + 1:]))
    result = object.__new__(Tensor)
    result._init(tuple(block._carriers[0] for block in blocks), layout, 0, first.dtype, (blocks, mode))
    return result
