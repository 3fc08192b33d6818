"""The standard's creation functions, and the moves between carriers: ``asarray``, ``to_device``, ``from_dlpack``."""

from __future__ import annotations

import operator

import numpy as np

from .. import ops as _ops
from ..carriers import kind_for_array, one_call, transfer
from ..dtypes import DType, SimpleDType, dtype_from_name
from ..layout import Layout
from ..operation import ExecutionOptions, no_grad, outside_operation
from ..ops import from_dlpack as _sw_from_dlpack
from ..ops._args import tensor as _check
from ..tensors.creation import fresh_buffer
from ..tensors.creation import tensor as _sw_tensor
from ..tensors.tensor import Tensor
from ..tensors.values import joins_partner
from ._devices import default_int
from ._devices import kind_for_device as _kind
from ._helpers import checked_dtype as _dtype
from ._helpers import checked_shape as _shape
from ._manipulation import broadcast_to, reshape, stack

__all__ = [
    "arange",
    "asarray",
    "empty",
    "empty_like",
    "eye",
    "from_dlpack",
    "full",
    "full_like",
    "linspace",
    "meshgrid",
    "ones",
    "ones_like",
    "to_device",
    "zeros",
    "zeros_like",
]


def asarray(obj, /, *, dtype=None, device=None, copy=None):
    """A Tensor from a Tensor, a native array, a Python scalar or nested sequences (C order).

    Without ``device``, a Tensor stays where it is; a NumPy array is host data,
    as a list is, and lands on the default carrier (zero-copy through DLPack
    where that library shares host memory); an array of any other library is
    wrapped without copying on its own library's carrier.
    """
    dtype = _dtype(dtype, None)
    out: Tensor | None
    if isinstance(obj, Tensor):
        out = obj
        if device is not None and _kind(device) != obj._carriers[0].kind:
            if copy is False:
                raise ValueError("asarray: copy=False cannot move an array to another device")
            out = to_device(out, device)
            copy = False
        if dtype is not None and dtype is not out.dtype:
            if copy is False:
                raise ValueError(f"asarray: copy=False cannot convert {out.dtype!r} to {dtype!r}")
            return _ops.astype(out, dtype)
        return _ops.copy(out) if copy else out
    kind = _kind(device)
    if hasattr(obj, "__array_namespace__") or (hasattr(obj, "__dlpack__") and not isinstance(obj, np.generic)):
        try:
            with no_grad():
                if device is not None:
                    out = _native(obj, kind)
                else:
                    moved = _default_for_native(obj, kind)
                    out = _native(obj if moved is None else transfer(obj, moved), None)
        except TypeError:
            out = None
        if out is not None:
            if dtype is not None and dtype is not out.dtype:
                out = _ops.astype(out, dtype)
            elif copy:
                out = _ops.copy(out)
            return joins_partner(out) if device is None and out._layout.rank == 0 else out
    if copy is False:
        raise ValueError(f"asarray: copy=False needs an array, got {type(obj).__name__}")
    if isinstance(obj, (list, tuple)) and obj and _has_tensor(obj):
        return _from_sequence(obj, dtype, device)
    host = _host_values(obj, dtype, kind)
    # Python values make a new host array; any other object may lend its memory to NumPy (a memoryview).
    out = _from_host(host, kind, dtype is not None, own=isinstance(obj, _PYTHON_VALUES))
    if device is None and not host.ndim:
        joins_partner(out)  # a scalar as library code writes it: it meets any carrier (torch's 0-d CPU rule)
    return out


#: DLPack's device type of host memory (``kDLCPU``)
_DLPACK_CPU = 1
#: per carrier kind: whether its arrays live in host memory
_HOST_KINDS: dict = {}


def _in_host_memory(array) -> bool:
    try:
        return int(array.__dlpack_device__()[0]) == _DLPACK_CPU
    except (AttributeError, TypeError, ValueError, RuntimeError, BufferError):
        return False  # no DLPack device (a lazy or traced array): it stays on its own carrier


def _default_for_native(obj, default):
    """Where ``asarray`` puts a native array given no device: ``default`` (the default carrier's kind) for
    a NumPy array when ``default`` lives in host memory too, else None (its own carrier)."""
    if not isinstance(obj, np.ndarray):
        return None  # torch, JAX, array-api-strict arrays: wrapped on their own carrier, without copying
    try:
        own = kind_for_array(obj)
    except TypeError:
        return None
    if own.cls is default.cls and own.namespace is default.namespace:
        return None
    return default if _kind_in_host_memory(default) and _in_host_memory(obj) else None


def _kind_in_host_memory(kind) -> bool:
    try:
        return _HOST_KINDS[kind]
    except KeyError:
        host = _HOST_KINDS[kind] = getattr(kind.cls, "cpu_only", False) or _in_host_memory(
            kind.namespace.empty((0,), device=kind.device))
        return host
    except TypeError:  # an unhashable device: asked each time
        return _in_host_memory(kind.namespace.empty((0,), device=kind.device))


def _from_sequence(obj, dtype, device) -> Tensor:
    """``asarray`` of a sequence holding Tensors: a differentiable ``stack`` where every item is one.

    Other mixes are copied through the host; a Float32 result that depends on a
    Float32 Tensor that way raises at backward instead of cutting its gradient.
    """
    items = [_from_sequence(o, dtype, device) if isinstance(o, (list, tuple)) and o and _has_tensor(o) else o
             for o in obj]
    first = next(o for o in items if isinstance(o, Tensor))
    if all(isinstance(o, (Tensor, bool, int, float, complex)) for o in items) and first.ndim == 0:
        # Python scalars beside 0-d Tensors: 0-d Tensors on the first one's carrier.
        items = [o if isinstance(o, Tensor) else asarray(o, device=first.device) for o in items]
    if all(isinstance(o, Tensor) for o in items) and len({o.shape for o in items}) == 1:
        if device is not None:
            items = [asarray(o, device=device) for o in items]
        try:
            out = stack(items)
        except TypeError:  # dtypes the standard does not promote (int with float): through the host
            pass
        else:
            return out if dtype is None or out.dtype is dtype else _ops.astype(out, dtype)
    kind = _kind(device) if device is not None else first._carriers[0].kind
    out = _from_host(_host_values(items, dtype, kind), kind, dtype is not None)
    return outside_operation("asarray", tuple(_tensors_in(items)), out)


def _tensors_in(seq):
    for o in seq:
        if isinstance(o, Tensor):
            yield o
        elif isinstance(o, (list, tuple)):
            yield from _tensors_in(o)


def _host_values(obj, dtype, kind) -> np.ndarray:
    if isinstance(obj, (list, tuple)):
        obj = [o._read_numpy() if isinstance(o, Tensor) else o for o in obj] if _has_tensor(obj) else obj
    flat = np.asarray(obj)
    if dtype is None:
        if flat.dtype.kind == "b":
            dtype = DType.Bool
        elif flat.dtype.kind in "iu":
            dtype = default_int(kind)
        elif flat.dtype.kind == "f":
            dtype = DType.Float32 if not isinstance(obj, np.ndarray) else _from_numpy_dtype(flat.dtype)
        elif flat.dtype.kind == "c":
            dtype = DType.Complex64 if not isinstance(obj, np.ndarray) else _from_numpy_dtype(flat.dtype)
        else:
            raise TypeError(f"asarray: cannot convert {obj!r} (NumPy kind {flat.dtype.kind!r}) to a Tensor")
    else:
        dtype = _dtype(dtype, None)
    if dtype.kind in ("int", "uint") and flat.dtype.kind in "iu":
        info = np.iinfo(dtype.name)
        if flat.size and (flat.min() < info.min or flat.max() > info.max):
            raise OverflowError(f"asarray: values {obj!r} do not fit {dtype!r}")
    return np.asarray(flat, dtype=dtype.name)


def _has_tensor(seq) -> bool:
    return any(isinstance(o, Tensor) or (isinstance(o, (list, tuple)) and _has_tensor(o)) for o in seq)


def _from_numpy_dtype(npdtype) -> SimpleDType:
    return dtype_from_name(np.dtype(npdtype).name)


_WIDE = ("float64", "int64", "uint64", "complex128")
#: what ``asarray`` turns into a host array of its own (NumPy scalars are immutable)
_PYTHON_VALUES = (list, tuple, bool, int, float, complex, np.generic)


def _from_host(host: np.ndarray, kind, requested: bool = True, own: bool = True) -> Tensor:
    """Host values on ``kind``; ``requested``: their dtype was asked for (JAX without x64 then warns as
    jax.numpy does when it stores a 64-bit request in 32 bits; moving values narrows silently).

    ``own``: ``host`` was made here and no one else holds it, so the wrapped buffer is not watched for
    writes from outside (the user guide: buffers StrideWeave allocated itself are never digested).
    """
    if requested and host.dtype.name in _WIDE:
        kind.cls._native_dtype_in(kind.namespace, _from_numpy_dtype(host.dtype))
    with no_grad():
        if host.ndim == 0:
            t = _sw_tensor(host.reshape(1), carrier=kind)
            t = Tensor._make(t._carriers[0], Layout._trusted((), ()), t._offset)
        else:
            t = _sw_tensor(np.ascontiguousarray(host), carrier=kind)
    if own:
        t._carriers[0].drop_watch()
    return t


def _native(obj, kind) -> Tensor:
    """Wrap a native array without copying (moved onto ``kind`` when given)."""
    shape = tuple(int(n) for n in obj.shape)
    if len(shape) == 0:
        xp = obj.__array_namespace__() if hasattr(obj, "__array_namespace__") else None
        one = xp.reshape(obj, (1,)) if xp is not None else obj.reshape(1)
        t = _sw_tensor(one, carrier=kind)
        return Tensor._make(t._carriers[0], Layout._trusted((), ()), t._offset)
    return _sw_tensor(obj, carrier=kind)


def _filled(shape, value, dtype, device) -> Tensor:
    shape = _shape(shape)
    kind = _kind(device)
    host = np.full(shape, value, dtype=dtype.name)
    out = fresh_buffer(_from_host(host, kind))
    return joins_partner(out) if device is None and not shape else out


def zeros(shape, *, dtype=None, device=None):
    """A Tensor of zeros."""
    return _filled(shape, 0, _dtype(dtype, DType.Float32), device)


def ones(shape, *, dtype=None, device=None):
    """A Tensor of ones."""
    return _filled(shape, 1, _dtype(dtype, DType.Float32), device)


def empty(shape, *, dtype=None, device=None):
    """An uninitialised Tensor (zeros here)."""
    return zeros(shape, dtype=dtype, device=device)


def full(shape, fill_value, *, dtype=None, device=None):
    """A Tensor filled with ``fill_value`` (dtype from the value when not given).

    ``fill_value`` may be a 0-d Tensor: its dtype and carrier are the
    defaults, and the result is differentiable with respect to it.
    """
    if isinstance(fill_value, Tensor):
        return _filled_by(shape, _scalar_operand(fill_value, "full", "fill_value"), dtype, device)
    if dtype is None:
        dtype = (DType.Bool if isinstance(fill_value, bool) else
                 default_int(_kind(device)) if isinstance(fill_value, int) else
                 DType.Complex64 if isinstance(fill_value, complex) else DType.Float32)
    return _filled(shape, fill_value, _dtype(dtype, DType.Float32), device)


def _scalar_operand(value: Tensor, name: str, what: str) -> Tensor:
    """``value`` when it is a 0-d Tensor, else ValueError naming its shape."""
    if value.ndim != 0:
        raise ValueError(f"{name}: {what} must be a scalar or a 0-d array, got an array of shape {value.shape}")
    return value


def _filled_by(shape, value: Tensor, dtype, device) -> Tensor:
    """``value`` (0-d) broadcast to ``shape`` in fresh storage: a differentiable copy."""
    shape = _shape(shape)
    dtype = _dtype(dtype, value.dtype)
    if device is not None:
        value = asarray(value, device=device)
    if dtype is not value.dtype:
        value = _ops.astype(value, dtype)
    return _ops.copy(broadcast_to(value, shape))


def _like_device(x, device):
    return x._carriers[0].kind if device is None else device


def zeros_like(x, /, *, dtype=None, device=None):
    """Zeros with ``x``'s shape (and dtype, device unless given)."""
    x = _check(x, "zeros_like")
    return zeros(x.shape, dtype=dtype or x.dtype, device=_like_device(x, device))


def ones_like(x, /, *, dtype=None, device=None):
    """Ones with ``x``'s shape."""
    x = _check(x, "ones_like")
    return ones(x.shape, dtype=dtype or x.dtype, device=_like_device(x, device))


def empty_like(x, /, *, dtype=None, device=None):
    """An uninitialised Tensor with ``x``'s shape."""
    return zeros_like(x, dtype=dtype, device=device)


def full_like(x, /, fill_value, *, dtype=None, device=None):
    """``fill_value`` with ``x``'s shape."""
    x = _check(x, "full_like")
    return full(x.shape, fill_value, dtype=dtype or x.dtype, device=_like_device(x, device))


def arange(start, /, stop=None, step=1, *, dtype=None, device=None):
    """Evenly spaced values in ``[start, stop)``."""
    if stop is None:
        start, stop = 0, start
    dtype = _dtype(dtype, None)
    if dtype is None:
        dtype = (DType.Float32 if any(isinstance(v, float) for v in (start, stop, step))
                 else default_int(_kind(device)))
    host = np.arange(start, stop, step, dtype=np.float64 if dtype.kind == "float" else np.int64)
    # No second host copy when the staging dtype is the one asked for (a full-size copy per call).
    return fresh_buffer(_from_host(host.astype(dtype.name, copy=False), _kind(device)))


def linspace(start, stop, /, num, *, dtype=None, device=None, endpoint=True):
    """``num`` evenly spaced values from ``start`` to ``stop``.

    ``start`` and ``stop`` may be 0-d Tensors; the result is then
    ``start * (1 - t) + stop * t`` for the fractions ``t`` (differentiable
    with respect to both, with the gradients of ``start + (stop - start) * t``),
    on their carrier and of their floating dtype unless told otherwise.
    """
    if isinstance(start, Tensor) or isinstance(stop, Tensor):
        return _linspace_between(start, stop, num, dtype, device, endpoint)
    host = np.linspace(start, stop, num, endpoint=endpoint, dtype=np.float64)
    return fresh_buffer(_from_host(host.astype(_dtype(dtype, DType.Float32).name), _kind(device)))


def _linspace_between(start, stop, num, dtype, device, endpoint) -> Tensor:
    bounds = [_scalar_operand(b, "linspace", what) for b, what in ((start, "start"), (stop, "stop"))
              if isinstance(b, Tensor)]
    floating = [b._dtype for b in bounds if b._dtype.kind in ("float", "complex")]
    dtype = _dtype(dtype, floating[0] if floating else DType.Float32)
    kind = _kind(device) if device is not None else bounds[0]._carriers[0].kind
    start, stop = (asarray(b, dtype=dtype, device=kind) for b in (start, stop))
    count = operator.index(num)
    if count < 0:
        raise ValueError(f"linspace: num must be >= 0, got {num!r}")
    steps = count - 1 if endpoint else count
    fractions = np.arange(count, dtype=np.float64) / steps if steps > 0 else np.zeros(count)
    if endpoint and count > 1:
        fractions[-1] = 1.0  # so the last value is stop exactly, as NumPy's
    real = {"complex64": "float32", "complex128": "float64"}.get(dtype.name, dtype.name)
    t = _from_host(fractions.astype(real), kind, False)
    # The lerp form keeps both ends exact; its gradients are those of start + (stop - start) * t.
    return _ops.add(_ops.multiply(start, 1.0 - t), _ops.multiply(stop, t))


def eye(n_rows, n_cols=None, /, *, k=0, dtype=None, device=None):
    """A 2-D Tensor with ones on diagonal ``k``."""
    host = np.eye(n_rows, n_cols, k=k, dtype=_dtype(dtype, DType.Float32).name)
    return fresh_buffer(_from_host(host, _kind(device)))


def from_dlpack(x, /, *, device=None, copy=None):
    """A Tensor from any DLPack-capable array."""
    if isinstance(x, Tensor):
        # Inside StrideWeave nothing leaves: the same storage, and the history (a differentiable view).
        out = _sw_from_dlpack(x)
        out = out if device is None else to_device(out, device)
        return _ops.copy(out) if copy else out
    if getattr(x, "ndim", 1) == 0:
        return asarray(np.from_dlpack(x), device=device)
    return _sw_from_dlpack(x) if device is None else to_device(_sw_from_dlpack(x), device)


@one_call
def meshgrid(*arrays, indexing="xy"):
    """Coordinate grids from 1-D Tensors (differentiable: reshape + broadcast)."""
    if indexing not in ("xy", "ij"):
        raise ValueError(f"meshgrid: indexing must be 'xy' or 'ij', got {indexing!r}")
    arrays = tuple([_check(a, "meshgrid") for a in arrays])
    shape = [a.shape[0] for a in arrays]
    if indexing == "xy" and len(arrays) >= 2:
        shape[0], shape[1] = shape[1], shape[0]
    out = []
    for i, a in enumerate(arrays):
        j = i
        if indexing == "xy" and len(arrays) >= 2 and i < 2:
            j = 1 - i
        view = [1] * len(arrays)
        view[j] = a.shape[0]
        out.append(broadcast_to(reshape(a, tuple(view)), tuple(shape)))
    return out


def to_device(x, device, /, *, stream=None):
    """``x`` on ``device``: a carrier name, a native device, or another array's ``device``."""
    kind = _kind(device)
    x = _check(x, "to_device")
    here = x._carriers[0].kind
    if kind == here:
        return x
    if len(x._carriers) != 1:
        return _native(transfer(x.to_array(), kind), kind)
    # A differentiable copy: the gradient flows back to x on its own carrier.
    return _ops.copy(x, options=ExecutionOptions(carrier=kind))
