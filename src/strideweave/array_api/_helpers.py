"""Checks and helpers shared by the namespace's functions: dtypes, shapes, 0-d results.

A Tensor argument and axes are checked by ``ops._args``, as the op library checks them.
"""

from __future__ import annotations

import numpy as np

from .. import ops as _ops
from ..dtypes import as_dtype
from ..layout import Shape
from ..tensors.tensor import Tensor

__all__: list[str] = []


def to_0d(t: Tensor) -> Tensor:
    """``t`` (one element) as a 0-d Tensor (a view)."""
    return t if t._layout.rank == 0 else _ops.reshape(t, Shape(()))


def checked_dtype(dtype, default):
    """The namespace's dtype that ``dtype`` names (``xp.float32``, ``np.float32``, ``"float32"``, a torch
    dtype); ``default`` for None."""
    if dtype is None:
        return default
    return as_dtype(dtype)


def checked_shape(shape) -> tuple:
    """``shape`` (an int or a sequence of ints >= 0) as a tuple of ints."""
    if isinstance(shape, (int, np.integer)) and not isinstance(shape, bool):
        shape = (int(shape),)
    if not isinstance(shape, (tuple, list)) or not all(
            isinstance(n, (int, np.integer)) and not isinstance(n, bool) and n >= 0 for n in shape):
        raise TypeError(f"shape must be an int or a tuple of ints >= 0, got {shape!r}")
    return tuple(int(n) for n in shape)
