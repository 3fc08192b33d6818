"""Complex operands: forward-only evaluation through the carrier's own Array API namespace.

Only Float32 is differentiable (spec), and the op library's rules are written
for real dtypes; complex values still need the standard's elementwise
functions. The op library's elementwise functions route a complex operand
here (one check per call), and so does the namespace for ``conj``, ``real``
and ``imag``: the native arrays compute, and the result is a new Tensor that
no node differentiates.
"""

from __future__ import annotations

from typing import Any

from ..operation import outside_operation
from ..tensors.tensor import Tensor
from ._natural import own_storage, wrap_natural

__all__ = ["COMPLEX_ELEMENTWISE", "complex_forward", "is_complex_operand"]

#: The standard's elementwise functions defined on complex operands (by their namespace names).
COMPLEX_ELEMENTWISE = frozenset({
    "abs", "acos", "acosh", "add", "asin", "asinh", "atan", "atanh", "cos", "cosh", "divide", "equal", "exp",
    "expm1", "isfinite", "isinf", "isnan", "log", "log1p", "log2", "log10", "multiply", "negative", "not_equal",
    "positive", "pow", "reciprocal", "round", "sign", "sin", "sinh", "sqrt", "square", "subtract", "tan", "tanh"})


def is_complex_operand(value: Any) -> bool:
    """A Python complex, or a Tensor of a complex dtype."""
    return value.__class__ is complex or (isinstance(value, Tensor) and value._dtype.kind == "complex")


def complex_forward(name: str, *args: Any, **kwargs: Any) -> Tensor:
    """``xp.<name>(*args)`` on the native arrays of the first Tensor's carrier, as a new Tensor.

    Complex values are never differentiable (only Float32 is): the carrier's
    own namespace computes them, forward only.
    """
    tensors = [a for a in args if isinstance(a, Tensor)]
    if not tensors:
        raise TypeError(f"{name} expects a Tensor among its operands, got {args!r}")
    kind = tensors[0]._carriers[0].kind
    natives = [a._read_array() if isinstance(a, Tensor) else a for a in args]
    # NumPy's real and imag are views of their operand: the result gets memory of its own.
    out = own_storage(wrap_natural(getattr(kind.namespace, name)(*natives, **kwargs), kind), tuple(tensors))
    return outside_operation(name, args, out)
