"""Complex operands: forward-only evaluation through the carrier's own Array API namespace.

Only Float32 is differentiable (spec), and the op library's rules cover real
dtypes; complex values still need the standard's elementwise functions, so
they run on the native arrays and come back as a new (non-differentiable) Tensor.
"""

from __future__ import annotations

import functools
from typing import Any, Callable

from ..ops._natural import wrap_natural
from ..tensor import Tensor

__all__ = ["complex_forward"]


def _is_complex(value: Any) -> bool:
    return isinstance(value, complex) or (isinstance(value, Tensor) and value.dtype.kind == "complex")


class _ComplexForward:
    """``complex_forward(name, *args)`` runs ``xp.<name>``; ``.wrap(name, fn)`` routes complex calls there."""

    def __call__(self, name: str, *args: Any, **kwargs: Any) -> Tensor:
        tensors = [a for a in args if isinstance(a, Tensor)]
        kind = tensors[0]._carriers[0].kind
        natives = [a.to_array() if isinstance(a, Tensor) else a for a in args]
        return wrap_natural(getattr(kind.namespace, name)(*natives, **kwargs), kind)

    def wrap(self, name: str, fn: Callable) -> Callable:
        @functools.wraps(fn)
        def routed(*args, **kwargs):
            if any(_is_complex(a) for a in args) and any(isinstance(a, Tensor) for a in args):
                return self(name, *args, **kwargs)
            return fn(*args, **kwargs)
        return routed


complex_forward = _ComplexForward()
