"""``strideweave.array_api``: the Array API standard (2024.12) over differentiable StrideWeave Tensors.

Its array object is ``sw.Tensor``. Where ``strideweave`` itself keeps its
layout-native semantics (``modes=``, colexicographic ``reshape``, full
reductions of shape ``(1)``), this namespace follows the standard: ``axis=``,
C-order ``reshape``, 0-d results, ``keepdims``, ``correction``. Every
function whose result depends differentiably on a Float32 input is recorded
by the autograd engine. The default carrier is ``sw.get_default_carrier()``
(set it with ``STRIDEWEAVE_CARRIER``); ``device=`` takes a carrier name, a
carrier's native device or ``x.device``.
"""

from __future__ import annotations

import builtins
import math
from typing import Any

import numpy as np

from .. import ops as _ops
from ..operation import no_grad
from ..tensors.creation import tensor as _sw_tensor
from ..dtypes import DType, SimpleDType, result_type as _result_type
from ..layout import Layout, Shape
from ..ops.arrays import expand_dims as _expand_dims
from ..ops.arrays import (argmax, argmin, argsort, count_nonzero, cumulative_prod, cumulative_sum, diff,
                          flip, moveaxis, nonzero, repeat, roll, searchsorted, sort, squeeze, std, take,
                          take_along_axis, tile, tril, triu, var, vecdot)
from ..ops.arrays import _c_reshape
from ..ops.sets import unique_all, unique_counts, unique_inverse, unique_values
from ..ops.elementwise import (abs, acos, acosh, add, asin, asinh, atan, atan2, atanh, bitwise_and, bitwise_invert,
                               bitwise_left_shift, bitwise_or, bitwise_right_shift, bitwise_xor, ceil, copysign,
                               cos, cosh, divide, equal, exp, expm1, floor, floor_divide, greater, greater_equal,
                               hypot, isfinite, isinf, isnan, less, less_equal, log, log1p, log2, log10, logaddexp,
                               logical_and, logical_not, logical_or, logical_xor, maximum, minimum, multiply,
                               negative, nextafter, not_equal, positive, pow, reciprocal, remainder, round, sign,
                               signbit, sin, sinh, sqrt, square, subtract, tan, tanh, trunc)
from ..operation import ExecutionOptions as _ExecutionOptions, outside_operation as _outside_operation
from ..tensors.tensor import Tensor
from ..ops._natural import COMPLEX_ELEMENTWISE as _COMPLEX_ELEMENTWISE
from ._complex import complex_forward as _complex_forward
from ._devices import Info, default_int, kind_for_device
from ..tensors.values import joins_partner as _joins_partner
from . import fft, linalg, special  # noqa: F401  (the extensions are attributes of the namespace)

__array_api_version__ = "2024.12"

# ----- data types and constants ----------------------------------------------------------------------

bool = DType.Bool  # noqa: A001
int8, int16, int32, int64 = DType.Int8, DType.Int16, DType.Int32, DType.Int64
uint8 = DType.UInt8
float32, float64 = DType.Float32, DType.Float64
e, pi, inf, nan = math.e, math.pi, math.inf, math.nan


complex64, complex128 = DType.Complex64, DType.Complex128
newaxis = None

_INFO = Info()


def __array_namespace_info__() -> Info:
    """The inspection object of the standard: devices, dtypes, capabilities."""
    return _INFO


# ----- helpers ---------------------------------------------------------------------------------------

def _check(x: Any, name: str) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"{name} expects a Tensor, got {type(x).__name__}: {x!r}")
    return x


def _axes(axis: Any, ndim: int, name: str) -> tuple | None:
    if axis is None:
        return None
    axes = axis if isinstance(axis, tuple) else (axis,)
    out = []
    for a in axes:
        if isinstance(a, builtins.bool) or not isinstance(a, (int, np.integer)):
            raise TypeError(f"{name}: axis must be an int or a tuple of ints, got {axis!r}")
        if not -ndim <= a < builtins.max(ndim, 1) or (ndim == 0 and a not in (0, -1)):
            raise IndexError(f"{name}: axis {a} is out of range for an array with {ndim} axes")
        out.append(int(a) % builtins.max(ndim, 1))
    if len(set(out)) != len(out):
        raise ValueError(f"{name}: axis {axis!r} repeats an axis")
    return tuple(sorted(out))


def _to_0d(t: Tensor) -> Tensor:
    return t if t._layout.rank == 0 else _ops.reshape(t, Shape(()))


def _reduce(fn, name: str, x: Tensor, axis, keepdims: builtins.bool, dtype=None) -> Tensor:
    x = _check(x, name)
    if dtype is not None and dtype is not x.dtype:
        x = _ops.astype(x, dtype)
    ndim = x._layout.rank
    axes = _axes(axis, ndim, name)
    if ndim == 0 or axes == ():
        return _ops.copy(x) if fn is not None else x
    full = axes is None or len(axes) == ndim
    out = fn(x, modes=axes, keepdims=keepdims)
    return _to_0d(out) if full and not keepdims else out


def _sum_dtype(x: Tensor, dtype):
    # The standard: integer sums and products accumulate in the default integer dtype. Unsigned
    # ones would take the default unsigned dtype, which StrideWeave does not store (only uint8):
    # they widen to the default integer dtype, as in PyTorch.
    if dtype is None and x.dtype.kind in ("int", "uint", "bool"):
        default = default_int(x._carriers[0].kind)
        return default if x.dtype.bits < default.bits or x.dtype.kind == "bool" else None
    return dtype


def _accumulate(fn, name, x, axis, dtype, keepdims):
    x = _check(x, name)
    dtype = _sum_dtype(x, dtype)
    want = dtype or x.dtype
    compute = dtype
    if want.kind == "uint":
        # NumPy widens unsigned sums to uint64, which is not stored: accumulate in the default
        # integer dtype and wrap back to ``want``, as accumulating in it would.
        compute = default_int(x._carriers[0].kind)
    out = _reduce(fn, name, x, axis, keepdims, compute)
    # Some backends widen small integer sums on their own (torch: uint8 -> int64); the standard fixes the dtype.
    return out if out.dtype is want else _ops.astype(out, want)


def sum(x, /, *, axis=None, dtype=None, keepdims=False):  # noqa: A001
    """Sum over ``axis`` (all axes: a 0-d result)."""
    return _accumulate(_ops.sum, "sum", x, axis, dtype, keepdims)


def prod(x, /, *, axis=None, dtype=None, keepdims=False):
    """Product over ``axis``."""
    return _accumulate(_ops.prod, "prod", x, axis, dtype, keepdims)


def mean(x, /, *, axis=None, keepdims=False):
    """Arithmetic mean over ``axis``."""
    return _reduce(_ops.mean, "mean", x, axis, keepdims)


def max(x, /, *, axis=None, keepdims=False):  # noqa: A001
    """Maximum over ``axis`` (ties share the gradient as in torch)."""
    return _reduce(_ops.max, "max", x, axis, keepdims)


def min(x, /, *, axis=None, keepdims=False):  # noqa: A001
    """Minimum over ``axis``."""
    return _reduce(_ops.min, "min", x, axis, keepdims)


def all(x, /, *, axis=None, keepdims=False):  # noqa: A001
    """Logical AND over ``axis`` (not differentiable)."""
    x = _check(x, "all")
    return _logical_reduce(x, axis, keepdims, "all")


def any(x, /, *, axis=None, keepdims=False):  # noqa: A001
    """Logical OR over ``axis`` (not differentiable)."""
    x = _check(x, "any")
    return _logical_reduce(x, axis, keepdims, "any")


def _logical_reduce(x: Tensor, axis, keepdims, name):
    axes = _axes(axis, x._layout.rank, name)
    kind = x._carriers[0].kind
    xp = kind.namespace
    native = x.to_array()
    out = getattr(xp, name)(native, axis=axes, keepdims=keepdims)
    return _wrap(out, kind)


def _wrap(native: Any, kind) -> Tensor:
    """A Tensor holding a native result (0-d included) on ``kind``."""
    from ..ops._natural import wrap_natural

    return wrap_natural(native, kind)


# ----- creation -----------------------------------------------------------------------------------

def _kind(device: Any):
    return kind_for_device(device)


def _dtype(dtype, default):
    if dtype is None:
        return default
    if not isinstance(dtype, SimpleDType):
        raise TypeError(f"dtype must be one of this namespace's dtypes (e.g. float32), got {dtype!r}")
    return dtype


def asarray(obj, /, *, dtype=None, device=None, copy=None):
    """A Tensor from a Tensor, a native array, a Python scalar or nested sequences (C order)."""
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
    if hasattr(obj, "__array_namespace__") or hasattr(obj, "__dlpack__") and not isinstance(obj, np.generic):
        try:
            with no_grad():
                out = _native(obj, kind if device is not None else None)
        except TypeError:
            out = None
        if out is not None:
            if dtype is not None and dtype is not out.dtype:
                out = _ops.astype(out, dtype)
            elif copy:
                out = _ops.copy(out)
            return _joins_partner(out) if device is None and out._layout.rank == 0 else out
    if copy is False:
        raise ValueError(f"asarray: copy=False needs an array, got {type(obj).__name__}")
    if isinstance(obj, (list, tuple)) and obj and _has_tensor(obj):
        return _from_sequence(obj, dtype, device)
    host = _host_values(obj, dtype, kind)
    out = _from_host(host, kind, dtype is not None)
    if device is None and not host.ndim:
        _joins_partner(out)  # a scalar as library code writes it: it meets any carrier (torch's 0-d CPU rule)
    return out


def _from_sequence(obj, dtype, device) -> Tensor:
    """``asarray`` of a sequence holding Tensors: a differentiable ``stack`` where every item is one.

    Other mixes are copied through the host; a Float32 result that depends on a
    Float32 Tensor that way raises at backward instead of cutting its gradient.
    """
    items = [_from_sequence(o, dtype, device) if isinstance(o, (list, tuple)) and o and _has_tensor(o) else o
             for o in obj]
    first = next(o for o in items if isinstance(o, Tensor))
    if builtins.all(isinstance(o, (Tensor, builtins.bool, int, float, complex)) for o in items) and first.ndim == 0:
        # Python scalars beside 0-d Tensors: 0-d Tensors on the first one's carrier.
        items = [o if isinstance(o, Tensor) else asarray(o, device=first.device) for o in items]
    if builtins.all(isinstance(o, Tensor) for o in items) and len({o.shape for o in items}) == 1:
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
    return _outside_operation("asarray", tuple(_tensors_in(items)), out)


def _tensors_in(seq):
    for o in seq:
        if isinstance(o, Tensor):
            yield o
        elif isinstance(o, (list, tuple)):
            yield from _tensors_in(o)


def _host_values(obj, dtype, kind) -> np.ndarray:
    if isinstance(obj, (list, tuple)):
        obj = [o.numpy() if isinstance(o, Tensor) else o for o in obj] if _has_tensor(obj) else obj
    flat = np.asarray(obj)
    if dtype is None:
        if flat.dtype.kind == "b":
            dtype = bool
        elif flat.dtype.kind in "iu":
            dtype = default_int(kind)
        elif flat.dtype.kind == "f":
            dtype = float32 if not isinstance(obj, np.ndarray) else _from_numpy_dtype(flat.dtype)
        elif flat.dtype.kind == "c":
            dtype = complex64 if not isinstance(obj, np.ndarray) else _from_numpy_dtype(flat.dtype)
        else:
            raise TypeError(f"asarray: cannot convert {obj!r} (NumPy kind {flat.dtype.kind!r}) to a Tensor")
    else:
        dtype = _dtype(dtype, None)
    if dtype.kind in ("int", "uint") and flat.dtype.kind in "iu":
        info = np.iinfo(dtype.name)
        if flat.size and (flat.min() < info.min or flat.max() > info.max):
            raise OverflowError(f"asarray: values {obj!r} do not fit {dtype!r}")
    return np.asarray(flat, dtype=dtype.name)


def _has_tensor(seq) -> builtins.bool:
    return builtins.any(isinstance(o, Tensor) or (isinstance(o, (list, tuple)) and _has_tensor(o)) for o in seq)


def _from_numpy_dtype(npdtype) -> SimpleDType:
    from ..dtypes import dtype_from_name

    return dtype_from_name(np.dtype(npdtype).name)


_WIDE = ("float64", "int64", "complex128")


def _from_host(host: np.ndarray, kind, requested: builtins.bool = True) -> Tensor:
    """Host values on ``kind``; ``requested``: their dtype was asked for (JAX without x64 then warns as
    jax.numpy does when it stores a 64-bit request in 32 bits; moving values narrows silently)."""
    if requested and host.dtype.name in _WIDE:
        kind.cls._native_dtype_in(kind.namespace, _from_numpy_dtype(host.dtype))
    with no_grad():
        if host.ndim == 0:
            t = _sw_tensor(host.reshape(1), carrier=kind)
            return Tensor._make(t._carriers[0], Layout._trusted((), ()), t._offset)
        return _sw_tensor(np.ascontiguousarray(host), carrier=kind)


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
    out = _from_host(host, kind)
    return _joins_partner(out) if device is None and not shape else out


def _shape(shape) -> tuple:
    if isinstance(shape, (int, np.integer)) and not isinstance(shape, builtins.bool):
        shape = (int(shape),)
    if not isinstance(shape, (tuple, list)) or not builtins.all(
            isinstance(n, (int, np.integer)) and not isinstance(n, builtins.bool) and n >= 0 for n in shape):
        raise TypeError(f"shape must be an int or a tuple of ints >= 0, got {shape!r}")
    return tuple(int(n) for n in shape)


def zeros(shape, *, dtype=None, device=None):
    """A Tensor of zeros."""
    return _filled(shape, 0, _dtype(dtype, float32), device)


def ones(shape, *, dtype=None, device=None):
    """A Tensor of ones."""
    return _filled(shape, 1, _dtype(dtype, float32), device)


def empty(shape, *, dtype=None, device=None):
    """An uninitialised Tensor (zeros here)."""
    return zeros(shape, dtype=dtype, device=device)


def full(shape, fill_value, *, dtype=None, device=None):
    """A Tensor filled with ``fill_value`` (dtype from the value when not given)."""
    if dtype is None:
        dtype = (bool if isinstance(fill_value, builtins.bool) else
                 default_int(_kind(device)) if isinstance(fill_value, int) else
                 complex64 if isinstance(fill_value, complex) else float32)
    return _filled(shape, fill_value, _dtype(dtype, float32), device)


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
    if dtype is None:
        dtype = (float32 if builtins.any(isinstance(v, float) for v in (start, stop, step))
                 else default_int(_kind(device)))
    host = np.arange(start, stop, step, dtype=np.float64 if dtype.kind == "float" else np.int64)
    return _from_host(host.astype(dtype.name), _kind(device))


def linspace(start, stop, /, num, *, dtype=None, device=None, endpoint=True):
    """``num`` evenly spaced values from ``start`` to ``stop``."""
    host = np.linspace(start, stop, num, endpoint=endpoint, dtype=np.float64)
    return _from_host(host.astype(_dtype(dtype, float32).name), _kind(device))


def eye(n_rows, n_cols=None, /, *, k=0, dtype=None, device=None):
    """A 2-D Tensor with ones on diagonal ``k``."""
    host = np.eye(n_rows, n_cols, k=k, dtype=_dtype(dtype, float32).name)
    return _from_host(host, _kind(device))


def from_dlpack(x, /, *, device=None, copy=None):
    """A Tensor from any DLPack-capable array."""
    from ..ops import from_dlpack as _sw_from_dlpack

    if isinstance(x, Tensor):
        # Inside StrideWeave nothing leaves: the same storage, and the history (a differentiable view).
        out = _sw_from_dlpack(x)
        out = out if device is None else to_device(out, device)
        return _ops.copy(out) if copy else out
    if getattr(x, "ndim", 1) == 0:
        return asarray(np.from_dlpack(x), device=device)
    return _sw_from_dlpack(x) if device is None else to_device(_sw_from_dlpack(x), device)


def meshgrid(*arrays, indexing="xy"):
    """Coordinate grids from 1-D Tensors (differentiable: reshape + broadcast)."""
    if indexing not in ("xy", "ij"):
        raise ValueError(f"meshgrid: indexing must be 'xy' or 'ij', got {indexing!r}")
    arrays = [_check(a, "meshgrid") for a in arrays]
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


# ----- data type functions --------------------------------------------------------------------------

def astype(x, dtype, /, *, copy=True, device=None):
    """``x`` converted to ``dtype`` (and moved to ``device``)."""
    x = _check(x, "astype")
    if device is not None:
        x = to_device(x, device)
    if dtype is x.dtype and not copy:
        return x
    return _ops.astype(x, _dtype(dtype, x.dtype))


def result_type(*arrays_and_dtypes):
    """The promoted dtype (StrideWeave's one promotion rule, see ``strideweave.dtypes``)."""
    ops = [a.dtype if isinstance(a, Tensor) else a for a in arrays_and_dtypes]
    return _result_type(*ops)


def can_cast(from_, to, /):
    """Whether ``from_`` promotes to ``to`` without changing kind downwards."""
    src = from_.dtype if isinstance(from_, Tensor) else from_
    try:
        return _result_type(src, to) is to
    except TypeError:
        return False


class finfo:
    """Machine limits of a floating dtype."""

    def __init__(self, type, /):  # noqa: A002
        dtype = type.dtype if isinstance(type, Tensor) else type
        info = np.finfo(dtype.name)
        self.bits, self.eps, self.max = int(info.bits), float(info.eps), float(info.max)
        real = {"complex64": float32, "complex128": float64}.get(dtype.name, dtype)
        self.min, self.smallest_normal, self.dtype = float(info.min), float(info.smallest_normal), real


class iinfo:
    """Machine limits of an integer dtype."""

    def __init__(self, type, /):  # noqa: A002
        dtype = type.dtype if isinstance(type, Tensor) else type
        info = np.iinfo(dtype.name)
        self.bits, self.max, self.min, self.dtype = int(info.bits), int(info.max), int(info.min), dtype


_KIND_NAMES = {"bool": ("bool",), "signed integer": ("int",), "unsigned integer": ("uint",),
               "integral": ("int", "uint"), "real floating": ("float",), "complex floating": ("complex",),
               "numeric": ("int", "uint", "float", "complex")}


def isdtype(dtype, kind):
    """Whether ``dtype`` is of ``kind`` (a dtype, a kind name, or a tuple of them)."""
    if isinstance(kind, tuple):
        return builtins.any(isdtype(dtype, k) for k in kind)
    if isinstance(kind, SimpleDType):
        return dtype is kind
    if kind not in _KIND_NAMES:
        raise ValueError(f"isdtype: unknown kind {kind!r}; expected one of {sorted(_KIND_NAMES)}")
    return dtype.kind in _KIND_NAMES[kind]


# ----- manipulation ----------------------------------------------------------------------------------

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
    if sorted(a % builtins.max(x.ndim, 1) for a in axes) != list(range(x.ndim)):
        raise ValueError(f"permute_dims: axes {axes!r} are not a permutation of {x.ndim} axes")
    return _ops.permute(x, tuple(a % x.ndim for a in axes))


def matrix_transpose(x, /):
    """Swap the last two axes (a view)."""
    x = _check(x, "matrix_transpose")
    if x.ndim < 2:
        raise ValueError(f"matrix_transpose needs at least 2 axes, got shape {x.shape}")
    order = list(range(x.ndim))
    order[-1], order[-2] = order[-2], order[-1]
    return _ops.permute(x, tuple(order))


def broadcast_to(x, /, shape):
    """Stretch ``x`` to ``shape`` (stride-0 view)."""
    x = _check(x, "broadcast_to")
    shape = _shape(shape)
    if x._layout.rank == 0:
        x = _ops.reshape(x, Shape((1,) * builtins.max(len(shape), 1)))
        if not shape:
            return _to_0d(x)
    return _ops.broadcast_to(x, Shape(shape)) if shape else _to_0d(x)


def broadcast_arrays(*arrays):
    """Every array broadcast to their common shape."""
    shape = np.broadcast_shapes(*[_check(a, "broadcast_arrays").shape for a in arrays])
    return [broadcast_to(a, shape) for a in arrays]


def concat(arrays, /, *, axis=0):
    """Join arrays along ``axis`` (``None``: flattened first)."""
    arrays = [_check(a, "concat") for a in arrays]
    if axis is None:
        arrays, axis = [reshape(a, (-1,)) for a in arrays], 0
    dtype = result_type(*arrays)
    arrays = [a if a.dtype is dtype else _ops.astype(a, dtype) for a in arrays]
    ndim = arrays[0].ndim
    return _ops.concat(arrays, axis % builtins.max(ndim, 1) if isinstance(axis, int) else axis)


def stack(arrays, /, *, axis=0):
    """Join arrays along a new ``axis``."""
    arrays = [_check(a, "stack") for a in arrays]
    dtype = result_type(*arrays)
    arrays = [a if a.dtype is dtype else _ops.astype(a, dtype) for a in arrays]
    ndim = arrays[0].ndim + 1
    if not -ndim <= axis < ndim:
        raise IndexError(f"stack: axis {axis} out of range for {ndim} axes")
    return _ops.stack(arrays, axis % ndim)


def unstack(x, /, *, axis=0):
    """The slices of ``x`` along ``axis``, as a tuple."""
    x = _check(x, "unstack")
    axis = _axes(axis, x.ndim, "unstack")[0]
    moved = moveaxis(x, axis, 0) if axis else x
    return tuple(moved[i] for i in range(moved.shape[0]))


def where(condition, x1, x2, /):
    """``x1`` where ``condition`` holds, else ``x2`` (broadcast)."""
    return _ops.where(condition, x1, x2)


def clip(x, /, min=None, max=None):  # noqa: A002
    """Clamp into ``[min, max]``."""
    return _ops.clip(_check(x, "clip"), min, max)


def matmul(x1, x2, /):
    """Matrix product (Array API rules)."""
    out = _ops.matmul(x1, x2)
    return _to_0d(out) if x1.ndim == 1 and x2.ndim == 1 and out.shape == (1,) else out


def tensordot(x1, x2, /, *, axes=2):
    """Contract ``axes`` of ``x1`` with ``axes`` of ``x2``."""
    out = _ops.tensordot(x1, x2, modes=axes)
    expect = x1.ndim + x2.ndim - 2 * (axes if isinstance(axes, int) else len(axes[0]))
    return _to_0d(out) if expect == 0 else out


def conj(x, /):
    """Complex conjugate (the identity on real dtypes; complex: forward only)."""
    x = _check(x, "conj")
    return _complex_forward("conj", x) if x.dtype.kind == "complex" else _ops.copy(x)


def real(x, /):
    """Real part (the identity on real dtypes; complex: forward only)."""
    x = _check(x, "real")
    return _complex_forward("real", x) if x.dtype.kind == "complex" else _ops.copy(x)


def imag(x, /):
    """Imaginary part (zeros on real dtypes; complex: forward only)."""
    x = _check(x, "imag")
    return _complex_forward("imag", x) if x.dtype.kind == "complex" else zeros_like(x)


def expand_dims(x, /, axis=0):
    """Insert an extent-1 axis at ``axis``."""
    return _expand_dims(x, axis=axis)


def to_device(x, device, /, *, stream=None):
    """``x`` on ``device``: a carrier name, a native device, or another array's ``device``."""
    from ..carriers.registry import transfer

    kind = _kind(device)
    x = _check(x, "to_device")
    here = x._carriers[0].kind
    if kind == here:
        return x
    if len(x._carriers) != 1:
        return _native(transfer(x.to_array(), kind), kind)
    # A differentiable copy: the gradient flows back to x on its own carrier.
    return _ops.copy(x, options=_ExecutionOptions(carrier=kind))


# Complex operands run forward through the carrier's own namespace (no VJP:
# only Float32 is differentiable); real operands take the differentiable rules.
for _name in sorted(_COMPLEX_ELEMENTWISE):
    globals()[_name] = _complex_forward.wrap(_name, globals()[_name])

__all__ = [name for name in dir() if not name.startswith("_") and name not in ("annotations", "builtins", "math",
                                                                               "np", "Any", "Layout", "Shape",
                                                                               "Tensor", "DType", "SimpleDType",
                                                                               "Info", "kind_for_device", "annotations",
                                                                               "no_grad")]
