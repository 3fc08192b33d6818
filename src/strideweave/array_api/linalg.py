"""``strideweave.array_api.linalg``: the standard's linear-algebra extension (differentiable)."""

from __future__ import annotations

from ..carriers import one_call
from ..ops.arrays import vecdot as _vecdot
from ..ops.linalg_ext import (
    cholesky,
    cross,
    det,
    diagonal,
    eigh,
    eigvalsh,
    inv,
    matrix_norm,
    matrix_power,
    matrix_rank,
    outer,
    pinv,
    qr,
    slogdet,
    solve,
    svd,
    svdvals,
    vector_norm,
)
from . import _linear_algebra
from ._statistical import sum as _sum

__all__ = [
    "cholesky", "cross", "det", "diagonal", "eigh", "eigvalsh", "inv", "matmul", "matrix_norm", "matrix_power",
    "matrix_rank", "matrix_transpose", "outer", "pinv", "qr", "slogdet", "solve", "svd", "svdvals", "tensordot",
    "trace", "vecdot", "vector_norm",
]


def matmul(x1, x2, /):
    """Matrix product (as the main namespace's)."""
    return _linear_algebra.matmul(x1, x2)


def matrix_transpose(x, /):
    """Swap the last two axes."""
    return _linear_algebra.matrix_transpose(x)


def tensordot(x1, x2, /, *, axes=2):
    """Contract ``axes`` (as the main namespace's)."""
    return _linear_algebra.tensordot(x1, x2, axes=axes)


def vecdot(x1, x2, /, *, axis=-1):
    """Dot product along ``axis``."""
    return _vecdot(x1, x2, axis=axis)


@one_call
def trace(x, /, *, offset=0, dtype=None):
    """Sum along diagonal ``offset`` of the last two axes, accumulated as the namespace's ``sum`` does."""
    return _sum(diagonal(x, offset=offset), axis=-1, dtype=dtype)
