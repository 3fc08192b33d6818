"""Argument checks shared by the namespace's functions: Tensors, axes, dtypes, shapes, and 0-d results."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import ops as _ops
from ..dtypes import SimpleDType
from ..layout import Shape
from ..tensors.tensor import Tensor

__all__: list[str] = []


def check(x: Any, name: str) -> Tensor:
    """``x`` itself when it is a Tensor (else a TypeError naming ``name``)."""
    if not isinstance(x, Tensor):
        raise TypeError(f"{name} expects a Tensor, got {type(x).__name__}: {x!r}")
    return x


def axes(axis: Any, ndim: int, name: str) -> tuple | None:
    """``axis`` (None, an int or a tuple of ints) normalised and sorted; None stays None."""
    if axis is None:
        return None
    picked = axis if isinstance(axis, tuple) else (axis,)
    out = []
    for a in picked:
        if isinstance(a, bool) or not isinstance(a, (int, np.integer)):
            raise TypeError(f"{name}: axis must be an int or a tuple of ints, got {axis!r}")
        if not -ndim <= a < max(ndim, 1) or (ndim == 0 and a not in (0, -1)):
            raise IndexError(f"{name}: axis {a} is out of range for an array with {ndim} axes")
        out.append(int(a) % max(ndim, 1))
    if len(set(out)) != len(out):
        raise ValueError(f"{name}: axis {axis!r} repeats an axis")
    return tuple(sorted(out))


def to_0d(t: Tensor) -> Tensor:
    """``t`` (one element) as a 0-d Tensor (a view)."""
    return t if t._layout.rank == 0 else _ops.reshape(t, Shape(()))


def checked_dtype(dtype, default):
    """``dtype`` when it is one of the namespace's dtypes, ``default`` for None."""
    if dtype is None:
        return default
    if not isinstance(dtype, SimpleDType):
        raise TypeError(f"dtype must be one of this namespace's dtypes (e.g. float32), got {dtype!r}")
    return dtype


def checked_shape(shape) -> tuple:
    """``shape`` (an int or a sequence of ints >= 0) as a tuple of ints."""
    if isinstance(shape, (int, np.integer)) and not isinstance(shape, bool):
        shape = (int(shape),)
    if not isinstance(shape, (tuple, list)) or not all(
            isinstance(n, (int, np.integer)) and not isinstance(n, bool) and n >= 0 for n in shape):
        raise TypeError(f"shape must be an int or a tuple of ints >= 0, got {shape!r}")
    return tuple(int(n) for n in shape)
