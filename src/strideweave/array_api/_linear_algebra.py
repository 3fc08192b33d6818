"""The standard's linear-algebra functions of the main namespace: 0-d results where the standard has them."""

from __future__ import annotations

from .. import ops as _ops
from ..ops._args import tensor as _check
from ._helpers import to_0d as _to_0d

__all__ = ["matmul", "matrix_transpose", "tensordot"]


def matmul(x1, x2, /):
    """Matrix product (Array API rules)."""
    out = _ops.matmul(x1, x2)  # both are Tensors past this point; ranks read from the layouts' slots
    if len(x1._layout._shape_modes) == 1 and len(x2._layout._shape_modes) == 1 and out.shape == (1,):
        return _to_0d(out)
    return out


def tensordot(x1, x2, /, *, axes=2):
    """Contract ``axes`` of ``x1`` with ``axes`` of ``x2``."""
    out = _ops.tensordot(x1, x2, modes=axes)
    expect = x1.ndim + x2.ndim - 2 * (axes if isinstance(axes, int) else len(axes[0]))
    return _to_0d(out) if expect == 0 else out


def matrix_transpose(x, /):
    """Swap the last two axes (a view)."""
    x = _check(x, "matrix_transpose")
    if x.ndim < 2:
        raise ValueError(f"matrix_transpose needs at least 2 axes, got shape {x.shape}")
    order = list(range(x.ndim))
    order[-1], order[-2] = order[-2], order[-1]
    return _ops.permute(x, tuple(order))
