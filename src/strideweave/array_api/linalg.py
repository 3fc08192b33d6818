"""``strideweave.array_api.linalg``: the standard's linear-algebra extension (differentiable)."""

from __future__ import annotations

from ..ops.linalg_ext import (cholesky, cross, det, diagonal, eigh, eigvalsh, inv, matrix_norm, matrix_power,
                              matrix_rank, outer, pinv, qr, slogdet, solve, svd, svdvals, vector_norm)

__all__ = [
    "cholesky", "cross", "det", "diagonal", "eigh", "eigvalsh", "inv", "matmul", "matrix_norm", "matrix_power",
    "matrix_rank", "matrix_transpose", "outer", "pinv", "qr", "slogdet", "solve", "svd", "svdvals", "tensordot",
    "trace", "vecdot", "vector_norm",
]


def matmul(x1, x2, /):
    """Matrix product (as the main namespace's)."""
    from . import matmul as _matmul

    return _matmul(x1, x2)


def matrix_transpose(x, /):
    """Swap the last two axes."""
    from . import matrix_transpose as _mt

    return _mt(x)


def tensordot(x1, x2, /, *, axes=2):
    """Contract ``axes`` (as the main namespace's)."""
    from . import tensordot as _td

    return _td(x1, x2, axes=axes)


def vecdot(x1, x2, /, *, axis=-1):
    """Dot product along ``axis``."""
    from ..ops.arrays import vecdot as _vd

    return _vd(x1, x2, axis=axis)


def trace(x, /, *, offset=0, dtype=None):
    """Sum along diagonal ``offset`` of the last two axes, accumulated as the namespace's ``sum`` does."""
    from . import sum as _sum

    return _sum(diagonal(x, offset=offset), axis=-1, dtype=dtype)
