"""The standard's elementwise functions the op library does not define itself: conj, real, imag, clip, where.

Every other elementwise function is the op library's own (``ops.elementwise``),
complex operands included (they run forward only, ``ops._complex``).
"""

from __future__ import annotations

from .. import ops as _ops
from ..ops._args import tensor as _check
from ..ops._complex import complex_forward as _complex_forward
from ._creation import zeros_like

__all__ = ["clip", "conj", "imag", "real", "where"]


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


def clip(x, /, min=None, max=None):  # noqa: A002
    """Clamp into ``[min, max]``."""
    return _ops.clip(_check(x, "clip"), min, max)


def where(condition, x1, x2, /):
    """``x1`` where ``condition`` holds, else ``x2`` (broadcast)."""
    return _ops.where(condition, x1, x2)
