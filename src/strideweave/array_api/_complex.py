"""Complex operands: forward-only evaluation through the carrier's own Array API namespace.

Only Float32 is differentiable (spec), and the op library's rules cover real
dtypes; complex values still need the standard's elementwise functions, so
they run on the native arrays and come back as a new (non-differentiable) Tensor.
"""

from __future__ import annotations

import functools
from typing import Any, Callable

from ..ops._natural import complex_forward as _forward, is_complex_operand as _is_complex
from ..tensors.tensor import Tensor

__all__ = ["complex_forward"]


class _ComplexForward:
    """``complex_forward(name, *args)`` runs ``xp.<name>``; ``.wrap(name, fn)`` routes complex calls there."""

    def __call__(self, name: str, *args: Any, **kwargs: Any) -> Tensor:
        return _forward(name, *args, **kwargs)

    def wrap(self, name: str, fn: Callable) -> Callable:
        @functools.wraps(fn)
        def routed(*args, **kwargs):
            if any(_is_complex(a) for a in args) and any(isinstance(a, Tensor) for a in args):
                return self(name, *args, **kwargs)
            return fn(*args, **kwargs)
        return routed


complex_forward = _ComplexForward()
