"""The standard's data types and data-type functions (StrideWeave's one promotion rule, ``dtypes``)."""

from __future__ import annotations

import builtins

import numpy as np

from .. import ops as _ops
from ..dtypes import DType, as_dtype
from ..dtypes import result_type as _result_type
from ..ops._args import tensor as _check
from ..tensors.tensor import Tensor
from ..tensors.values import _JOINS_PARTNER, joins_partner
from ._creation import to_device

__all__ = [
    "astype",
    "bool",
    "can_cast",
    "complex64",
    "complex128",
    "finfo",
    "float32",
    "float64",
    "iinfo",
    "int8",
    "int16",
    "int32",
    "int64",
    "isdtype",
    "result_type",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
]

bool = DType.Bool  # noqa: A001
int8, int16, int32, int64 = DType.Int8, DType.Int16, DType.Int32, DType.Int64
uint8, uint16, uint32, uint64 = DType.UInt8, DType.UInt16, DType.UInt32, DType.UInt64
float32, float64 = DType.Float32, DType.Float64
complex64, complex128 = DType.Complex64, DType.Complex128


def astype(x, dtype, /, *, copy=True, device=None):
    """``x`` converted to ``dtype`` (and moved to ``device``); ``dtype`` may be given as NumPy or torch gives it."""
    x = _check(x, "astype")
    dtype = as_dtype(dtype, "astype: dtype")
    if device is not None:
        x = to_device(x, device)
    if dtype is x.dtype and not copy:
        return x
    out = _ops.astype(x, dtype)
    # a scalar made without device= still joins its partners' carrier after a cast (xarray casts its fill values)
    return joins_partner(out) if device is None and x._layout.rank == 0 and x in _JOINS_PARTNER else out


def result_type(*arrays_and_dtypes):
    """The promoted dtype (StrideWeave's one promotion rule, see ``strideweave.dtypes``); dtypes may be given
    as NumPy gives them (``result_type(x, "int8")``)."""
    ops = [a.dtype if isinstance(a, Tensor) else a for a in arrays_and_dtypes]
    return _result_type(*ops)


def _dtype_of(value, what):
    return value.dtype if isinstance(value, Tensor) else as_dtype(value, what)


def can_cast(from_, to, /):
    """Whether ``from_`` promotes to ``to`` without changing kind downwards."""
    src, to = _dtype_of(from_, "can_cast: from_"), as_dtype(to, "can_cast: to")
    try:
        return _result_type(src, to) is to
    except TypeError:
        return False


class finfo:
    """Machine limits of a floating dtype."""

    def __init__(self, type, /):  # noqa: A002
        dtype = _dtype_of(type, "finfo")
        info = np.finfo(dtype.name)
        self.bits, self.eps, self.max = int(info.bits), float(info.eps), float(info.max)
        real = {"complex64": float32, "complex128": float64}.get(dtype.name, dtype)
        self.min, self.smallest_normal, self.dtype = float(info.min), float(info.smallest_normal), real


class iinfo:
    """Machine limits of an integer dtype."""

    def __init__(self, type, /):  # noqa: A002
        dtype = _dtype_of(type, "iinfo")
        info = np.iinfo(dtype.name)
        self.bits, self.max, self.min, self.dtype = int(info.bits), int(info.max), int(info.min), dtype


_KIND_NAMES = {"bool": ("bool",), "signed integer": ("int",), "unsigned integer": ("uint",),
               "integral": ("int", "uint"), "real floating": ("float",), "complex floating": ("complex",),
               "numeric": ("int", "uint", "float", "complex")}


def isdtype(dtype, kind):
    """Whether ``dtype`` is of ``kind`` (a dtype, a kind name, or a tuple of them)."""
    dtype = as_dtype(dtype, "isdtype: dtype")
    if isinstance(kind, tuple):
        return builtins.any(isdtype(dtype, k) for k in kind)
    if not isinstance(kind, str):
        return dtype is as_dtype(kind, "isdtype: kind")
    if kind not in _KIND_NAMES:
        raise ValueError(f"isdtype: unknown kind {kind!r}; expected one of {sorted(_KIND_NAMES)}")
    return dtype.kind in _KIND_NAMES[kind]
