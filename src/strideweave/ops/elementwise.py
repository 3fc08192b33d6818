"""Elementwise operations with their vector-Jacobian products, side by side.

Every operation reads its operands as rev arrays, broadcasts them over
top-level modes, and writes a fresh canonical result. Backward receives the
result's cotangent, forms each operand's gradient in the result's rev space,
sums it back over broadcast modes and hands it to ``Primitive.cotangents``.
"""

from __future__ import annotations

from typing import Any

from ..dtypes import DType
from ..layout import Layout
from ..tensor import Tensor
from ._support import (Primitive, as_array_like, broadcast_modes, exact_buffer, expand, flat_gradient,
                       gradient_values, operand, place, scalar_operand, times, unbroadcast, wrap)

__all__ = [
    "add", "subtract", "multiply", "divide", "power", "maximum", "minimum",
    "negative", "exp", "log", "sqrt", "sin", "cos", "tanh", "abs",
    "less", "less_equal", "greater", "greater_equal", "equal", "not_equal",
]

_canonical = Layout.canonical


# ----- Binary operations ------------------------------------------------------------------------

class _Binary(Primitive):
    """``compute(xp, a, b)`` forward, ``vjp(xp, g, a, b, out)`` -> (grad_a, grad_b) in result space.

    A Python scalar operand stays a scalar; ``saved`` then records it and
    its position, since only Tensors are saved inputs.
    """

    __slots__ = ()
    keeps_result = False
    #: whether the gradient for a Tensor operand paired with a scalar needs that Tensor's values
    scalar_vjp_reads_tensor = True

    def forward(self, a: Any, b: Any, *, options=None) -> Tensor:
        if isinstance(a, Tensor):
            a_modes = a._layout._shape_modes
            if isinstance(b, Tensor):
                kind = place((a, b), options)
                b_modes = b._layout._shape_modes
                xp = kind.namespace
                if a_modes == b_modes:
                    modes = a_modes
                    av, bv = exact_buffer(a, kind), exact_buffer(b, kind)
                    if av is None or bv is None:
                        av, bv = operand(a, kind), operand(b, kind)
                else:
                    modes = broadcast_modes(a_modes, b_modes)
                    av = expand(operand(a, kind), a_modes, modes, xp)
                    bv = expand(operand(b, kind), b_modes, modes, xp)
            else:
                kind = place((a,), options)
                xp = kind[1]
                modes, av = a_modes, exact_buffer(a, kind)
                if av is None:
                    av = operand(a, kind)
                bv = b if b.__class__ is float and a._dtype.kind == "float" \
                    else scalar_operand(b, a._dtype, type(self).__name__)
                self.saved = (bv, 1)
        elif isinstance(b, Tensor):
            kind = place((b,), options)
            xp = kind[1]
            modes, bv = b._layout._shape_modes, exact_buffer(b, kind)
            if bv is None:
                bv = operand(b, kind)
            av = a if a.__class__ is float and b._dtype.kind == "float" \
                else scalar_operand(a, b._dtype, type(self).__name__)
            self.saved = (av, 0)
        else:
            raise TypeError(f"{type(self).__name__} needs at least one Tensor operand, got {a!r} and {b!r}")
        self.place = kind
        out = self.compute(xp, av, bv)
        if self.keeps_result:
            self.saved = (self.saved, out)
        return wrap(out, _canonical(modes), kind)

    supports_batched = True

    def backward(self, gradient: Tensor) -> tuple:
        kind = self.place
        xp = kind.namespace
        saved, out = self.saved if self.keeps_result else (self.saved, None)
        inputs = self._inputs
        flat = [exact_buffer(t, kind) for t in inputs]
        if all(f is not None for f in flat) and gradient._layout is self._result_layout \
                and (saved is not None or inputs[0]._layout._shape_modes == inputs[1]._layout._shape_modes):
            # Forward ran on the flat buffers (equal shapes or a scalar): stay flat.
            return self._flat_backward(xp, flat_gradient(gradient, kind), flat, saved, out)
        if out is not None and out.ndim == 1 and self._result_layout.rank > 1:
            out = xp.reshape(out, self._result_layout.rev_leaf_shape)
        g, batch = gradient_values(self, gradient)
        modes = self._result_layout._shape_modes
        if saved is None:
            a, b = inputs
            av = expand(operand(a, kind), a._layout._shape_modes, modes, xp)
            bv = expand(operand(b, kind), b._layout._shape_modes, modes, xp)
            if self.wanted is None:
                ga, gb = self.vjp(xp, g, av, bv, out)
            else:
                ga = self.vjp_first(xp, g, av, bv, out) if self.wanted[0] else None
                gb = self.vjp_second(xp, g, av, bv, out) if self.wanted[1] else None
            return self.cotangents((None if ga is None else unbroadcast(ga, a._layout._shape_modes, modes, xp, batch),
                                    None if gb is None else unbroadcast(gb, b._layout._shape_modes, modes, xp, batch)),
                                   batch)
        scalar, scalar_position = saved
        tensor_values = operand(inputs[0], kind) if self.scalar_vjp_reads_tensor else None
        if scalar_position == 1:
            return self.cotangents((self.vjp_first(xp, g, tensor_values, scalar, out),), batch)
        return self.cotangents((self.vjp_second(xp, g, scalar, tensor_values, out),), batch)

    def _flat_backward(self, xp, g, flat, saved, out) -> tuple:
        wanted = self.wanted
        if saved is None:
            av, bv = flat
            ga = self.vjp_first(xp, g, av, bv, out) if wanted is None or wanted[0] else None
            gb = self.vjp_second(xp, g, av, bv, out) if wanted is None or wanted[1] else None
            return self.cotangents((ga, gb))
        scalar, scalar_position = saved
        if scalar_position == 1:
            return self.cotangents((self.vjp_first(xp, g, flat[0], scalar, out),))
        return self.cotangents((self.vjp_second(xp, g, scalar, flat[0], out),))

    # Scalar pairings need one side only; the defaults take it from ``vjp``.
    def vjp_first(self, xp, g, a, b, out):
        return self.vjp(xp, g, a, b, out)[0]

    def vjp_second(self, xp, g, a, b, out):
        return self.vjp(xp, g, a, b, out)[1]


class Add(_Binary):
    __slots__ = ()
    scalar_vjp_reads_tensor = False

    def compute(self, xp, a, b):
        return a + b

    def vjp(self, xp, g, a, b, out):
        return g, g

    def vjp_first(self, xp, g, a, b, out):
        return g

    vjp_second = vjp_first


class Subtract(_Binary):
    __slots__ = ()
    scalar_vjp_reads_tensor = False

    def compute(self, xp, a, b):
        return a - b

    def vjp(self, xp, g, a, b, out):
        return g, -g

    def vjp_first(self, xp, g, a, b, out):
        return g

    def vjp_second(self, xp, g, a, b, out):
        return -g


class Multiply(_Binary):
    __slots__ = ()
    scalar_vjp_reads_tensor = False

    def compute(self, xp, a, b):
        return a * b

    def vjp(self, xp, g, a, b, out):
        return times(g, b, xp), times(g, a, xp)

    def vjp_first(self, xp, g, a, b, out):
        return times(g, b, xp)

    def vjp_second(self, xp, g, a, b, out):
        return times(g, a, xp)


class Divide(_Binary):
    __slots__ = ()

    def compute(self, xp, a, b):
        return a / b

    def vjp(self, xp, g, a, b, out):
        grad_a = g / b
        return grad_a, -grad_a * a / b

    def vjp_first(self, xp, g, a, b, out):
        return g / b


class Power(_Binary):
    __slots__ = ()
    keeps_result = True

    def compute(self, xp, a, b):
        return a ** b

    def vjp(self, xp, g, a, b, out):
        grad_a = g * b * a ** (b - 1)
        if isinstance(a, (int, float)):
            # d/db a**b = a**b log a; zero for a non-positive base, as torch does at a == 0.
            import math

            grad_b = g * out * math.log(a) if a > 0 else g * 0
        else:
            positive = a > 0
            grad_b = xp.where(positive, g * out * xp.log(xp.where(positive, a, xp.ones_like(a))),
                              xp.zeros_like(out))
        return grad_a, grad_b


class Maximum(_Binary):
    __slots__ = ()

    def compute(self, xp, a, b):
        return xp.maximum(a, as_array_like(b, a, xp)) if not isinstance(a, (int, float)) \
            else xp.maximum(as_array_like(a, b, xp), b)

    def vjp(self, xp, g, a, b, out):
        return _select_vjp(xp, g, a, b, lambda x, y: x > y)


class Minimum(_Binary):
    __slots__ = ()

    def compute(self, xp, a, b):
        return xp.minimum(a, as_array_like(b, a, xp)) if not isinstance(a, (int, float)) \
            else xp.minimum(as_array_like(a, b, xp), b)

    def vjp(self, xp, g, a, b, out):
        return _select_vjp(xp, g, a, b, lambda x, y: x < y)


def _select_vjp(xp, g, a, b, wins):
    """Route the gradient to the selected operand; ties split it evenly, as torch does."""
    a_wins = wins(a, b)
    tie = a == b
    zero = g * 0
    half = g * 0.5
    grad_a = xp.where(a_wins, g, xp.where(tie, half, zero))
    grad_b = xp.where(a_wins, zero, xp.where(tie, half, g))
    return grad_a, grad_b


def add(a, b, *, options=None) -> Tensor:
    """Elementwise ``a + b`` with broadcasting over top-level modes."""
    return Add()(a, b, options=options)


def subtract(a, b, *, options=None) -> Tensor:
    """Elementwise ``a - b``."""
    return Subtract()(a, b, options=options)


def multiply(a, b, *, options=None) -> Tensor:
    """Elementwise ``a * b``."""
    return Multiply()(a, b, options=options)


def divide(a, b, *, options=None) -> Tensor:
    """Elementwise ``a / b`` (floating-point operands)."""
    return Divide()(a, b, options=options)


def power(a, b, *, options=None) -> Tensor:
    """Elementwise ``a ** b``; the exponent's gradient is zero where the base is not positive."""
    return Power()(a, b, options=options)


def maximum(a, b, *, options=None) -> Tensor:
    """Elementwise maximum; at ties each operand receives half the gradient."""
    return Maximum()(a, b, options=options)


def minimum(a, b, *, options=None) -> Tensor:
    """Elementwise minimum; at ties each operand receives half the gradient."""
    return Minimum()(a, b, options=options)


# ----- Unary operations ----------------------------------------------------------------------------

class _Unary(Primitive):
    """``compute(xp, x)`` forward, ``vjp(xp, g, x, out)`` backward; ``out`` kept only if needed."""

    __slots__ = ()
    keeps_result = False
    needs_input = True

    def forward(self, x: Any, *, options=None) -> Tensor:
        if not isinstance(x, Tensor):
            raise TypeError(f"{type(self).__name__} expects a Tensor, got {type(x).__name__}: {x!r}")
        kind = place((x,), options)
        self.place = kind
        values = exact_buffer(x, kind)
        out = self.compute(kind.namespace, operand(x, kind) if values is None else values)
        if self.keeps_result:
            self.saved = out
        return wrap(out, _canonical(x._layout._shape_modes), kind)

    supports_batched = True

    def backward(self, gradient: Tensor) -> tuple:
        kind = self.place
        x = self._inputs[0]
        flat = exact_buffer(x, kind)
        if flat is not None and gradient._layout is self._result_layout:
            # Forward ran on the flat buffer: stay flat (``saved`` is flat too).
            g = flat_gradient(gradient, kind)
            return self.cotangents((self.vjp(kind.namespace, g, flat if self.needs_input else None, self.saved),))
        values = None
        if self.needs_input:
            values = operand(x, kind)
        g, batch = gradient_values(self, gradient)
        saved = self.saved
        if flat is not None and saved is not None:
            saved = kind.namespace.reshape(saved, x._layout.rev_leaf_shape)
        return self.cotangents((self.vjp(kind.namespace, g, values, saved),), batch)


class Negative(_Unary):
    __slots__ = ()
    needs_input = False

    def compute(self, xp, x):
        return -x

    def vjp(self, xp, g, x, out):
        return -g


class Exp(_Unary):
    __slots__ = ()
    keeps_result = True
    needs_input = False

    def compute(self, xp, x):
        return xp.exp(x)

    def vjp(self, xp, g, x, out):
        return times(g, out, xp)


class Log(_Unary):
    __slots__ = ()

    def compute(self, xp, x):
        return xp.log(x)

    def vjp(self, xp, g, x, out):
        return g / x


class Sqrt(_Unary):
    __slots__ = ()
    keeps_result = True
    needs_input = False

    def compute(self, xp, x):
        return xp.sqrt(x)

    def vjp(self, xp, g, x, out):
        return g / (2 * out)


class Sin(_Unary):
    __slots__ = ()

    def compute(self, xp, x):
        return xp.sin(x)

    def vjp(self, xp, g, x, out):
        return times(g, xp.cos(x), xp)


class Cos(_Unary):
    __slots__ = ()

    def compute(self, xp, x):
        return xp.cos(x)

    def vjp(self, xp, g, x, out):
        return -g * xp.sin(x)


class Tanh(_Unary):
    __slots__ = ()
    keeps_result = True
    needs_input = False

    def compute(self, xp, x):
        return xp.tanh(x)

    def vjp(self, xp, g, x, out):
        return times(g, 1 - out * out, xp)


class Abs(_Unary):
    __slots__ = ()

    def compute(self, xp, x):
        return xp.abs(x)

    def vjp(self, xp, g, x, out):
        return times(g, xp.sign(x), xp)


def negative(x, *, options=None) -> Tensor:
    """Elementwise ``-x``."""
    return Negative()(x, options=options)


def exp(x, *, options=None) -> Tensor:
    """Elementwise exponential."""
    return Exp()(x, options=options)


def log(x, *, options=None) -> Tensor:
    """Elementwise natural logarithm."""
    return Log()(x, options=options)


def sqrt(x, *, options=None) -> Tensor:
    """Elementwise square root."""
    return Sqrt()(x, options=options)


def sin(x, *, options=None) -> Tensor:
    """Elementwise sine."""
    return Sin()(x, options=options)


def cos(x, *, options=None) -> Tensor:
    """Elementwise cosine."""
    return Cos()(x, options=options)


def tanh(x, *, options=None) -> Tensor:
    """Elementwise hyperbolic tangent."""
    return Tanh()(x, options=options)


def abs(x, *, options=None) -> Tensor:  # noqa: A001 (Array API name)
    """Elementwise absolute value; the gradient at zero is zero."""
    return Abs()(x, options=options)


# ----- Comparisons (never differentiable: Bool results record no node) ---------------------------

class _Compare(_Binary):
    __slots__ = ()
    function = ""

    def compute(self, xp, a, b):
        if isinstance(a, (int, float)):
            a = as_array_like(a, b, xp)
        elif isinstance(b, (int, float)):
            b = as_array_like(b, a, xp)
        return getattr(xp, self.function)(a, b)

    def backward(self, gradient: Tensor) -> tuple:
        return (None,) * len(self._inputs)


def _comparison(name: str, doc: str):
    op_class = type(name.title().replace("_", ""), (_Compare,), {"__slots__": (), "function": name})

    def compare(a, b, *, options=None) -> Tensor:
        return op_class()(a, b, options=options)

    compare.__name__ = compare.__qualname__ = name
    compare.__doc__ = f"Elementwise ``{doc}`` as a Bool Tensor (not differentiable)."
    return compare


less = _comparison("less", "a < b")
less_equal = _comparison("less_equal", "a <= b")
greater = _comparison("greater", "a > b")
greater_equal = _comparison("greater_equal", "a >= b")
equal = _comparison("equal", "a == b")
not_equal = _comparison("not_equal", "a != b")
