"""Elementwise operations with their vector-Jacobian products, side by side.

Every operation reads its operands as rev arrays, broadcasts them over
top-level modes, and writes a fresh result in the memory order of its dense
operands (canonical when they disagree): operands sharing one dense layout
are combined as flat buffers. Backward receives the
result's cotangent, forms each operand's gradient in the result's rev space,
sums it back over broadcast modes and hands it to ``Primitive.cotangents``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._marks import unit_alias
from ..dtypes import DType, result_type
from ..layout import Layout
from ..autograd.cotangents import Ones
from ..tensors.tensor import Tensor, flat_values
from ._blockwise import run_blockwise
from ..tensors.broadcasting import broadcast_modes, expand, unbroadcast
from ._natural import COMPLEX_ELEMENTWISE, complex_forward, is_complex_operand as _complex
from ._primitive import Primitive
from ..autograd.cotangents import InStorageOrder, gradient_values, times
from ..tensors.values import (MixedBlocks, as_array_like, cast_values, dense_carrier, flat_operand, from_storage, operand, place, reshaped, single_place, wrap)
from ._storage import flat_capable, flat_gradient, lines_up, result_layout, storage_cotangent, storage_operand
from ..dtypes import scalar_operand
from ..layout.order import storage_shape


_canonical = Layout.canonical
_FLOAT32 = DType.Float32


# ----- Binary operations ------------------------------------------------------------------------

class _Left:
    """A binary operation's scalar first argument (``2.0 - x``), as its node saves it."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value


class _Binary(Primitive):
    """``compute(xp, a, b)`` forward, ``vjp(xp, g, a, b, out)`` -> (grad_a, grad_b) in result space.

    A Python scalar operand stays a scalar, since only Tensors are saved
    inputs: ``saved`` holds it as is when it was the second argument (the
    common ``x * 2.0``: no tuple per node) and wrapped in ``_Left`` when it
    was the first.
    """

    __slots__ = ()
    composite = False
    keeps_result = False
    #: whether the gradient for a Tensor operand paired with a scalar needs that Tensor's values
    scalar_vjp_reads_tensor = True

    def forward(self, a: Any, b: Any, *, options=None) -> Tensor:
        common = None
        if isinstance(a, Tensor):
            if isinstance(b, Tensor):
                kind, layout, av, bv = self._operands(a, b, options)
                if a._dtype is not b._dtype:
                    common = result_type(a._dtype, b._dtype)
            else:
                kind, layout, av = self._tensor_operand(a, options)
                if b.__class__ is float and a._dtype.kind == "float":
                    bv = b  # the common case, decided without the table
                else:
                    bv, common = scalar_operand(b, a._dtype, type(self).__name__), _common_dtype(a, b)
                self.saved = bv
        elif isinstance(b, Tensor):
            kind, layout, bv = self._tensor_operand(b, options)
            if a.__class__ is float and b._dtype.kind == "float":
                av = a
            else:
                av, common = scalar_operand(a, b._dtype, type(self).__name__), _common_dtype(a, b)
            self.saved = _Left(av)
        else:
            raise TypeError(f"{type(self).__name__} needs at least one Tensor operand, got {a!r} and {b!r}")
        if common is not None:
            self.flat = False  # backward reads the operands promoted, in rev space
            av, bv = cast_values(av, common, kind), cast_values(bv, common, kind)
        out = self.compute(kind[1], av, bv)
        if self.keeps_result:
            self.saved = (self.saved, out)
        return wrap(out, layout, kind)

    @classmethod
    def with_scalar(cls, tensor: Tensor, scalar: float, position: int) -> Tensor | None:
        """Hot path for a dense Float32 Tensor and a float (``position``: the scalar's argument index).

        None when ``tensor`` is not dense on its carrier; the caller then takes the general path.
        """
        flat = flat_operand(tensor)
        if flat is None:
            return None
        values, kind = flat
        out = cls.compute(kind[1], values, scalar) if position else cls.compute(kind[1], scalar, values)
        saved = scalar if position else _Left(scalar)
        return cls.record_flat((tensor,), out, tensor._layout, kind, (saved, out) if cls.keeps_result else saved,
                               values)

    def _operands(self, a: Tensor, b: Tensor, options) -> tuple:
        """Where two Tensor operands meet, the result layout, and both lined up with it."""
        kind = place((a, b), options)
        self.place = kind
        a_modes, b_modes = a._layout._shape_modes, b._layout._shape_modes
        if a_modes == b_modes:
            layout = a._layout
            if (b._layout is layout or b._layout == layout) and dense_carrier(a, kind) is not None \
                    and dense_carrier(b, kind) is not None:
                self.flat = True
                return kind, layout, a._carriers[0]._array, b._carriers[0]._array
            layout = result_layout(a_modes, (a, b))
        else:
            layout = result_layout(broadcast_modes(a_modes, b_modes), (a, b))
        # Operands whose buffers line up with the result (a broadcast row, say) run backward on raw
        # buffers too, where arrays reshape for free (forward undoes this for mixed dtypes).
        self.flat = flat_capable((a, b), kind) and lines_up(a, layout) and lines_up(b, layout)
        return kind, layout, storage_operand(a, layout, kind), storage_operand(b, layout, kind)

    def _tensor_operand(self, tensor: Tensor, options) -> tuple:
        """The one Tensor operand beside a scalar: its flat buffer when dense, else its rev array."""
        kind, values = single_place(tensor, options)
        self.place = kind
        if values is None:
            return kind, _canonical(tensor._layout._shape_modes), operand(tensor, kind)
        self.flat = True
        return kind, tensor._layout, values

    supports_batched = True

    def ones_for(self, dtype: Any) -> Ones | None:
        # Besides flat buffers, two operands in the dense result's storage order take them.
        ones = Primitive.ones_for(self, dtype)
        if ones is not None or not self.takes_ones:
            return ones
        inputs = self._inputs
        saved = self.saved[0] if self.keeps_result else self.saved
        result = self._result_layout
        if saved is None and inputs[0]._dtype is inputs[1]._dtype and result.is_compact():
            return Ones(storage_shape(result), dtype)
        return None

    def backward(self, gradient: Tensor) -> tuple:
        kind = self.place
        inputs = self._inputs
        result = self._result_layout
        if gradient.__class__ is Ones:  # offered by ``ones_for``: the storage-order case
            return self._storage_backward(gradient, self.saved[1] if self.keeps_result else None)
        if len(inputs) == 2 and inputs[0]._dtype is not inputs[1]._dtype:
            # Mixed dtypes: a recorded node's result is Float32, so both read as Float32.
            return self._promoted_backward(gradient, [cast_values(operand(t, kind), _FLOAT32, kind) for t in inputs])
        if self.flat and gradient._layout is result:
            # Forward ran on the flat buffers (one dense layout, or a scalar): stay flat, in storage order.
            return self.cotangents(self.backward_flat(flat_gradient(gradient, kind))[0])
        saved, out = self.saved if self.keeps_result else (self.saved, None)
        if saved is None and gradient._layout is result and result.is_compact():
            return self._storage_backward(gradient, out)
        return self._promoted_backward(gradient, None)

    def backward_flat(self, g: Any) -> tuple[tuple, tuple]:
        xp = self.place[1]
        saved = self.saved
        out = None
        if self.keeps_result:
            saved, out = saved
        inputs = self._inputs
        if saved is None:
            wanted = self.wanted
            av, bv = flat_values(inputs[0]), flat_values(inputs[1])
            size = g.shape[0]
            if av.shape[0] != size or bv.shape[0] != size:
                return self._lined_up_flat(g, out)
            ga = self.vjp_first(xp, g, av, bv, out) if wanted is None or wanted[0] else None
            gb = self.vjp_second(xp, g, av, bv, out) if wanted is None or wanted[1] else None
            return (ga, gb), (_allocated(ga, g, av, bv, out), gb is not ga and _allocated(gb, g, av, bv, out))
        values = flat_values(inputs[0]) if self.scalar_vjp_reads_tensor else None
        if saved.__class__ is _Left:
            grad = self.vjp_second(xp, g, saved.value, values, out)
        else:
            grad = self.vjp_first(xp, g, values, saved, out)
        # By the rule contract a VJP result is new or one of its array arguments.
        return (grad,), (grad is not None and grad is not g and grad is not values and grad is not out,)

    def _lined_up_flat(self, g: Any, out: Any) -> tuple[tuple, tuple]:
        """``backward_flat`` where an operand broadcasts: each gradient summed to its own buffer's order."""
        kind = self.place
        result = self._result_layout
        g = unit_alias(g, reshaped(g, storage_shape(result), kind))
        # Both operands line up with the result (forward checked), so each gradient is in its own
        # storage order: flat already, or ``InStorageOrder`` N-D.
        grads, fresh = self._in_storage_order(g, out)
        flats, owned = [], []
        for values, made in zip(grads, fresh):
            if values is None:
                flats.append(None)
                owned.append(False)
                continue
            shaped = values.values if values.__class__ is InStorageOrder else values
            flat = reshaped(shaped, (-1,), kind)
            flats.append(flat)
            # A reshape that had to copy (a broadcast view of saved values, say) made a new buffer.
            owned.append(made or (flat is not shaped and kind[0]._copied(shaped, flat)))
        return tuple(flats), tuple(owned)

    def _in_storage_order(self, g: Any, out: Any) -> tuple[tuple, tuple]:
        """Each operand's gradient from ``g`` (the cotangent in the dense result's storage shape), as
        ``storage_cotangent`` returns it, and for each whether it is a sum made here."""
        kind = self.place
        xp = kind.namespace
        result = self._result_layout
        a, b = self._inputs
        av, bv = storage_operand(a, result, kind), storage_operand(b, result, kind)
        if out is not None and out.ndim != g.ndim:
            out = reshaped(out, storage_shape(result), kind)
        wanted = self.wanted
        ga = self.vjp_first(xp, g, av, bv, out) if wanted is None or wanted[0] else None
        gb = self.vjp_second(xp, g, av, bv, out) if wanted is None or wanted[1] else None
        # Only a sum made for one operand counts as fresh here: with broadcast operands a VJP
        # may hand back a broadcast view of saved values (``times`` with a unit cotangent).
        ca, fresh_a = storage_cotangent(ga, a, result, xp)
        cb, fresh_b = storage_cotangent(gb, b, result, xp)
        return (ca, cb), (fresh_a, fresh_b)

    def _storage_backward(self, gradient: Tensor, out: Any) -> tuple:
        """Backward in the dense result's storage order, as forward ran: no transposes on the way."""
        g = gradient if gradient.__class__ is Ones else storage_operand(gradient, self._result_layout, self.place)
        grads, fresh = self._in_storage_order(g, out)
        return self.cotangents(grads, fresh=fresh)

    def _promoted_backward(self, gradient: Tensor, values: list | None) -> tuple:
        """Backward in the result's rev space; ``values``: the saved operands' rev arrays, when already read."""
        kind = self.place
        xp = kind.namespace
        saved, out = self.saved if self.keeps_result else (self.saved, None)
        inputs = self._inputs
        if out is not None:
            out = from_storage(out, self._result_layout, xp)
        g, batch = gradient_values(self, gradient)
        modes = self._result_layout._shape_modes
        if saved is None:
            a, b = inputs
            av, bv = values or (operand(a, kind), operand(b, kind))
            av = expand(av, a._layout._shape_modes, modes, xp)
            bv = expand(bv, b._layout._shape_modes, modes, xp)
            if self.wanted is None:
                ga, gb = self.vjp(xp, g, av, bv, out)
            else:
                ga = self.vjp_first(xp, g, av, bv, out) if self.wanted[0] else None
                gb = self.vjp_second(xp, g, av, bv, out) if self.wanted[1] else None
            return self.cotangents((None if ga is None else unbroadcast(ga, a._layout._shape_modes, modes, xp, batch),
                                    None if gb is None else unbroadcast(gb, b._layout._shape_modes, modes, xp, batch)),
                                   batch)
        tensor_values = operand(inputs[0], kind) if self.scalar_vjp_reads_tensor else None
        if saved.__class__ is _Left:
            return self.cotangents((self.vjp_second(xp, g, saved.value, tensor_values, out),), batch)
        return self.cotangents((self.vjp_first(xp, g, tensor_values, saved, out),), batch)

    # Scalar pairings need one side only; the defaults take it from ``vjp``.
    def vjp_first(self, xp, g, a, b, out):
        return self.vjp(xp, g, a, b, out)[0]

    def vjp_second(self, xp, g, a, b, out):
        return self.vjp(xp, g, a, b, out)[1]


def _allocated(grad: Any, *arguments: Any) -> bool:
    """Whether a VJP allocated ``grad``: by the rule contract it is either new or one of its arguments."""
    if grad is None:
        return False
    for argument in arguments:
        if grad is argument:
            return False
    return True


def _common_dtype(a: Any, b: Any):
    """The dtype both operands are computed in, when one of them must be cast (else None).

    One rule on every carrier (``dtypes.result_type``), never the backend's own.
    """
    a_tensor, b_tensor = isinstance(a, Tensor), isinstance(b, Tensor)
    if a_tensor and b_tensor:
        return None if a._dtype is b._dtype else result_type(a._dtype, b._dtype)
    tensor, scalar = (a, b) if a_tensor else (b, a)
    if scalar.__class__ is float and tensor._dtype.kind == "float":
        return None  # the common case, decided without the table
    common = result_type(tensor._dtype, scalar)
    return None if common is tensor._dtype else common


# ----- Unary operations ----------------------------------------------------------------------------

class _Unary(Primitive):
    """``compute(xp, x)`` forward, ``vjp(xp, g, x, out)`` backward; ``out`` kept only if needed."""

    __slots__ = ()
    composite = False
    keeps_result = False
    needs_input = True

    def forward(self, x: Any, *, options=None) -> Tensor:
        if not isinstance(x, Tensor):
            raise TypeError(f"{type(self).__name__} expects a Tensor, got {type(x).__name__}: {x!r}")
        kind, values = single_place(x, options)
        self.place = kind
        self.flat = values is not None
        out = self.compute(kind.namespace, operand(x, kind) if values is None else values)
        if self.keeps_result:
            self.saved = out
        return wrap(out, _canonical(x._layout._shape_modes) if values is None else x._layout, kind)

    @classmethod
    def on_flat(cls, x: Tensor) -> Tensor | None:
        """Hot path for a dense Float32 Tensor; None when it is not dense on its carrier."""
        flat = flat_operand(x)
        if flat is None:
            return None
        values, kind = flat
        out = cls.compute(kind[1], values)
        return cls.record_flat((x,), out, x._layout, kind, out if cls.keeps_result else None, values)

    supports_batched = True

    def backward_flat(self, g: Any) -> tuple[tuple, tuple]:
        values = flat_values(self._inputs[0]) if self.needs_input else None
        grad = self.vjp(self.place[1], g, values, self.saved)
        return (grad,), (_allocated(grad, g, values, self.saved),)

    def backward(self, gradient: Tensor) -> tuple:
        kind = self.place
        x = self._inputs[0]
        if self.flat and gradient._layout is self._result_layout:
            # Forward ran on the flat buffer: stay flat (``saved`` is flat too).
            return self.cotangents(self.backward_flat(flat_gradient(gradient, kind))[0])
        values = None
        if self.needs_input:
            values = operand(x, kind)
        g, batch = gradient_values(self, gradient)
        saved = self.saved
        if self.flat and saved is not None:
            saved = from_storage(saved, x._layout, kind.namespace)
        return self.cotangents((self.vjp(kind.namespace, g, values, saved),), batch)


# ----- Rules: one line per operation ---------------------------------------------------------------
#
# A unary rule is ``forward(xp, x)`` and ``vjp(xp, g, x, out)``; ``reads``
# says which of ``x`` and ``out`` the VJP needs, so nothing else is kept. A
# binary rule is ``forward(xp, a, b)`` and one VJP per operand,
# ``vjp(xp, g, a, b, out)``, each giving that operand's gradient in the
# result's space (the base sums it back over broadcast modes). ``None`` as a
# VJP means "no gradient" (non-differentiable); ``_zero`` is the zero
# gradient of a piecewise-constant function, as torch defines it. ``dtypes``
# is the Array API category an operand must belong to. On flat buffers a
# VJP returns either a new array or one of its arguments itself (``times``
# too), never a view of one: the engine owns every new array and may add
# into it in place.

_LN2 = math.log(2.0)
_LN10 = math.log(10.0)

_KINDS = {
    "floating": ("float",),
    "numeric": ("int", "uint", "float"),
    "integer": ("int", "uint"),
    "integer or boolean": ("int", "uint", "bool"),
    "boolean": ("bool",),
    "any": ("int", "uint", "float", "bool"),
}


def scaling(vjp):
    """Mark ``vjp`` as one that uses its cotangent only as ``times(g, factor, xp)``.

    A node whose VJPs are all marked takes the unfilled unit cotangent
    (``Primitive.takes_ones``), which supports nothing but ``times``.
    """
    vjp.only_scales = True
    return vjp


def _zero(xp, g, *rest):
    return xp.zeros_like(g)


def _fn(name):
    """``xp.<name>`` over two operands, a Python scalar made a 0-d array of the other's dtype."""
    def call(xp, a, b):
        if isinstance(a, (int, float)):
            a = as_array_like(a, b, xp)
        elif isinstance(b, (int, float)):
            b = as_array_like(b, a, xp)
        return getattr(xp, name)(a, b)
    return call


def _rounding(name):
    """floor / ceil / round / trunc: integers pass through unchanged (as the standard says)."""
    def call(xp, x):
        return getattr(xp, name)(x) if xp.isdtype(x.dtype, "real floating") else x * 1
    return call


def _pow_vjp_b(xp, g, a, b, out):
    # d/db a**b = a**b log a; zero for a non-positive base, as torch does at a == 0. a**b is
    # computed again rather than read from the result, so a write into the result (``y *= x``
    # after ``y = x ** 2``, as scipy.stats does) leaves the node exact.
    power = a ** b
    if isinstance(a, (int, float)):
        return g * power * math.log(a) if a > 0 else g * 0
    positive = a > 0
    return xp.where(positive, g * power * xp.log(xp.where(positive, a, xp.ones_like(a))), xp.zeros_like(g))


def _select(wins, first):
    """maximum / minimum: the winner takes the gradient, ties split it evenly (torch)."""
    def vjp(xp, g, a, b, out):
        a_wins = wins(a, b) if first else wins(b, a)
        return xp.where(a_wins, g, xp.where(a == b, g * 0.5, g * 0))
    return vjp


def _copysign_vjp(xp, g, a, b, out):
    # out / a is the sign flip (+-1); torch defines the gradient as zero where a == 0.
    return g * xp.where(a == 0, xp.zeros_like(out), out / xp.where(a == 0, xp.ones_like(a), a))


#: name: (forward, vjp, reads, dtypes, doc)
UNARY_RULES = {
    "negative": (lambda xp, x: -x, lambda xp, g, x, y: -g, "", "numeric", "-x"),
    "positive": (lambda xp, x: x * 1, lambda xp, g, x, y: g, "", "numeric", "+x (a copy)"),
    "abs": (lambda xp, x: xp.abs(x), scaling(lambda xp, g, x, y: times(g, xp.sign(x), xp)), "x", "numeric",
            "absolute value; the gradient at zero is zero"),
    "exp": (lambda xp, x: xp.exp(x), scaling(lambda xp, g, x, y: times(g, y, xp)), "out", None, "exponential"),
    "expm1": (lambda xp, x: xp.expm1(x), lambda xp, g, x, y: g * (y + 1), "out", "floating", "exp(x) - 1"),
    "log": (lambda xp, x: xp.log(x), lambda xp, g, x, y: g / x, "x", None, "natural logarithm"),
    "log1p": (lambda xp, x: xp.log1p(x), lambda xp, g, x, y: g / (x + 1), "x", "floating", "log(1 + x)"),
    "log2": (lambda xp, x: xp.log2(x), lambda xp, g, x, y: g / (x * _LN2), "x", "floating", "base-2 logarithm"),
    "log10": (lambda xp, x: xp.log10(x), lambda xp, g, x, y: g / (x * _LN10), "x", "floating",
              "base-10 logarithm"),
    "sqrt": (lambda xp, x: xp.sqrt(x), lambda xp, g, x, y: g / (2 * y), "out", None, "square root"),
    "square": (lambda xp, x: x * x, lambda xp, g, x, y: g * (2 * x), "x", "numeric", "x * x"),
    "reciprocal": (lambda xp, x: 1 / x, lambda xp, g, x, y: -g * (y * y), "out", "floating", "1 / x"),
    "sin": (lambda xp, x: xp.sin(x), scaling(lambda xp, g, x, y: times(g, xp.cos(x), xp)), "x", None, "sine"),
    "cos": (lambda xp, x: xp.cos(x), lambda xp, g, x, y: -g * xp.sin(x), "x", None, "cosine"),
    "tan": (lambda xp, x: xp.tan(x), lambda xp, g, x, y: g * (1 + y * y), "out", "floating", "tangent"),
    "asin": (lambda xp, x: xp.asin(x), lambda xp, g, x, y: g / xp.sqrt(1 - x * x), "x", "floating", "arcsine"),
    "acos": (lambda xp, x: xp.acos(x), lambda xp, g, x, y: -g / xp.sqrt(1 - x * x), "x", "floating",
             "arccosine"),
    "atan": (lambda xp, x: xp.atan(x), lambda xp, g, x, y: g / (1 + x * x), "x", "floating", "arctangent"),
    "sinh": (lambda xp, x: xp.sinh(x), lambda xp, g, x, y: g * xp.cosh(x), "x", "floating", "hyperbolic sine"),
    "cosh": (lambda xp, x: xp.cosh(x), lambda xp, g, x, y: g * xp.sinh(x), "x", "floating", "hyperbolic cosine"),
    "tanh": (lambda xp, x: xp.tanh(x), scaling(lambda xp, g, x, y: times(g, 1 - y * y, xp)), "out", None,
             "hyperbolic tangent"),
    "asinh": (lambda xp, x: xp.asinh(x), lambda xp, g, x, y: g / xp.sqrt(x * x + 1), "x", "floating",
              "inverse hyperbolic sine"),
    "acosh": (lambda xp, x: xp.acosh(x), lambda xp, g, x, y: g / xp.sqrt(x * x - 1), "x", "floating",
              "inverse hyperbolic cosine"),
    "atanh": (lambda xp, x: xp.atanh(x), lambda xp, g, x, y: g / (1 - x * x), "x", "floating",
              "inverse hyperbolic tangent"),
    "sign": (lambda xp, x: xp.sign(x), _zero, "", "numeric", "sign (-1, 0, 1); zero gradient"),
    "floor": (_rounding("floor"), _zero, "", "numeric", "round down; zero gradient"),
    "ceil": (_rounding("ceil"), _zero, "", "numeric", "round up; zero gradient"),
    "round": (_rounding("round"), _zero, "", "numeric", "round half to even; zero gradient"),
    "trunc": (_rounding("trunc"), _zero, "", "numeric", "round toward zero; zero gradient"),
    "isnan": (lambda xp, x: xp.isnan(x), None, "", "numeric", "NaN test (Bool, not differentiable)"),
    "isinf": (lambda xp, x: xp.isinf(x), None, "", "numeric", "infinity test (Bool, not differentiable)"),
    "isfinite": (lambda xp, x: xp.isfinite(x), None, "", "numeric", "finiteness test (Bool, not differentiable)"),
    "signbit": (lambda xp, x: xp.signbit(x), None, "", "floating", "sign-bit test (Bool, not differentiable)"),
    "logical_not": (lambda xp, x: xp.logical_not(x), None, "", "boolean", "logical NOT"),
    "bitwise_invert": (lambda xp, x: xp.bitwise_invert(x), None, "", "integer or boolean", "bitwise NOT"),
}

#: name: (forward, vjp for a, vjp for b, vjps read the Tensor's values with a scalar partner, keeps out, dtypes, doc)
BINARY_RULES = {
    "add": (lambda xp, a, b: a + b, lambda xp, g, a, b, y: g, lambda xp, g, a, b, y: g, False, False, None,
            "a + b"),
    "subtract": (lambda xp, a, b: a - b, lambda xp, g, a, b, y: g, lambda xp, g, a, b, y: -g, False, False, None,
                 "a - b"),
    "multiply": (lambda xp, a, b: a * b, scaling(lambda xp, g, a, b, y: times(g, b, xp)),
                 scaling(lambda xp, g, a, b, y: times(g, a, xp)), False, False, None, "a * b"),
    "divide": (lambda xp, a, b: a / b, lambda xp, g, a, b, y: g / b, lambda xp, g, a, b, y: -g * a / (b * b),
               True, False, None, "a / b (floating-point operands)"),
    "power": (lambda xp, a, b: a ** b, lambda xp, g, a, b, y: g * b * a ** (b - 1), _pow_vjp_b, True, False, None,
              "a ** b; the exponent's gradient is zero where the base is not positive"),
    "maximum": (lambda xp, a, b: _fn("maximum")(xp, a, b), _select(lambda x, y: x > y, True),
                _select(lambda x, y: x > y, False), True, False, None,
                "maximum; at ties each operand receives half the gradient"),
    "minimum": (lambda xp, a, b: _fn("minimum")(xp, a, b), _select(lambda x, y: x < y, True),
                _select(lambda x, y: x < y, False), True, False, None,
                "minimum; at ties each operand receives half the gradient"),
    "atan2": (_fn("atan2"), lambda xp, g, a, b, y: g * b / (a * a + b * b),
              lambda xp, g, a, b, y: -g * a / (a * a + b * b), True, False, "floating",
              "the angle of the point (b, a), in radians"),
    "hypot": (_fn("hypot"), lambda xp, g, a, b, y: g * a / y, lambda xp, g, a, b, y: g * b / y, True, True,
              "floating", "sqrt(a**2 + b**2) without overflow"),
    "logaddexp": (_fn("logaddexp"), lambda xp, g, a, b, y: g * xp.exp(a - y),
                  lambda xp, g, a, b, y: g * xp.exp(b - y), True, True, "floating", "log(exp(a) + exp(b))"),
    "copysign": (_fn("copysign"), _copysign_vjp, _zero, True, True, "floating",
                 "|a| with the sign of b; no gradient to b"),
    "remainder": (_fn("remainder"), lambda xp, g, a, b, y: g, lambda xp, g, a, b, y: -g * xp.floor(a / b), True,
                  False, "numeric", "a - b * floor(a / b), the sign of b"),
    "floor_divide": (_fn("floor_divide"), _zero, _zero, False, False, "numeric", "floor(a / b); zero gradient"),
    "nextafter": (_fn("nextafter"), None, None, False, False, "floating",
                  "the next representable value after a toward b (not differentiable)"),
    "logical_and": (_fn("logical_and"), None, None, False, False, "boolean", "logical AND"),
    "logical_or": (_fn("logical_or"), None, None, False, False, "boolean", "logical OR"),
    "logical_xor": (_fn("logical_xor"), None, None, False, False, "boolean", "logical XOR"),
    "bitwise_and": (_fn("bitwise_and"), None, None, False, False, "integer or boolean", "bitwise AND"),
    "bitwise_or": (_fn("bitwise_or"), None, None, False, False, "integer or boolean", "bitwise OR"),
    "bitwise_xor": (_fn("bitwise_xor"), None, None, False, False, "integer or boolean", "bitwise XOR"),
    "bitwise_left_shift": (_fn("bitwise_left_shift"), None, None, False, False, "integer", "a << b"),
    "bitwise_right_shift": (_fn("bitwise_right_shift"), None, None, False, False, "integer", "a >> b"),
    "less": (_fn("less"), None, None, False, False, None, "a < b"),
    "less_equal": (_fn("less_equal"), None, None, False, False, None, "a <= b"),
    "greater": (_fn("greater"), None, None, False, False, None, "a > b"),
    "greater_equal": (_fn("greater_equal"), None, None, False, False, None, "a >= b"),
    "equal": (_fn("equal"), None, None, False, False, None, "a == b"),
    "not_equal": (_fn("not_equal"), None, None, False, False, None, "a != b"),
}


def _no_gradient(self, gradient):
    return (None,) * len(self._inputs)


def _no_gradient_flat(self, g):
    return (None,) * len(self._inputs), (False,) * len(self._inputs)


#: op names the standard spells differently
_NAMESPACE_NAMES = {"power": "pow"}


def _class_name(name: str) -> str:
    return "".join(part.title() for part in name.split("_"))


def _check_dtype(name: str, category: str | None, *operands) -> None:
    if category is None:
        return
    for value in operands:
        if isinstance(value, Tensor) and value._dtype.kind not in _KINDS[category]:
            raise TypeError(f"{name} expects {category} operands, got a Tensor of dtype {value._dtype!r}")


def _unary(name, forward, vjp, reads, dtypes, doc):
    attrs = {"__slots__": (), "compute": staticmethod(forward), "keeps_result": "out" in reads,
             "reads_result": "out" in reads,
             "needs_input": "x" in reads}
    if vjp is None:
        attrs["backward"], attrs["backward_flat"] = _no_gradient, _no_gradient_flat
    else:
        attrs["vjp"] = staticmethod(vjp)
        attrs["takes_ones"] = getattr(vjp, "only_scales", False)
    op_class = type(_class_name(name), (_Unary,), attrs)

    float_operand = dtypes is None or "float" in _KINDS[dtypes]
    complex_defined = name in COMPLEX_ELEMENTWISE

    def unary(x, *, options=None) -> Tensor:
        if options is None and float_operand and isinstance(x, Tensor) and x._dtype is _FLOAT32:
            result = op_class.on_flat(x)
            if result is not None:
                return result
        if complex_defined and _complex(x):
            return complex_forward(name, x)
        _check_dtype(name, dtypes, x)
        try:
            return op_class()(x, options=options)
        except MixedBlocks:
            return run_blockwise(op_class(), (x,), {})

    unary.__name__ = unary.__qualname__ = name
    unary.__doc__ = f"Elementwise {doc}" + ("." if vjp is not None or "differentiable" in doc
                                            else " (not differentiable).")
    return op_class, unary


def _binary(name, forward, vjp_a, vjp_b, reads_tensor, keeps_result, dtypes, doc):
    def both(self, xp, g, a, b, out):
        return (None if vjp_a is None else vjp_a(xp, g, a, b, out),
                None if vjp_b is None else vjp_b(xp, g, a, b, out))

    attrs = {"__slots__": (), "compute": staticmethod(forward), "keeps_result": keeps_result,
             "reads_result": keeps_result,
             "scalar_vjp_reads_tensor": reads_tensor, "vjp": both,
             "vjp_first": staticmethod(vjp_a or (lambda *args: None)),
             "vjp_second": staticmethod(vjp_b or (lambda *args: None))}
    if vjp_a is None and vjp_b is None:
        attrs["backward"], attrs["backward_flat"] = _no_gradient, _no_gradient_flat
    else:
        attrs["takes_ones"] = all(getattr(vjp, "only_scales", vjp is None) for vjp in (vjp_a, vjp_b))
    op_class = type(_class_name(name), (_Binary,), attrs)

    float_operands = dtypes is None or "float" in _KINDS[dtypes]
    namespace_name = _NAMESPACE_NAMES.get(name, name)
    complex_defined = namespace_name in COMPLEX_ELEMENTWISE

    def binary(a, b, *, options=None) -> Tensor:
        if options is None and float_operands:
            if b.__class__ is float and isinstance(a, Tensor) and a._dtype is _FLOAT32:
                result = op_class.with_scalar(a, b, 1)
                if result is not None:
                    return result
            elif a.__class__ is float and isinstance(b, Tensor) and b._dtype is _FLOAT32:
                result = op_class.with_scalar(b, a, 0)
                if result is not None:
                    return result
        if complex_defined and (_complex(a) or _complex(b)):
            return complex_forward(namespace_name, a, b)
        if dtypes is not None:
            _check_dtype(name, dtypes, a, b)
        try:
            return op_class()(a, b, options=options)
        except MixedBlocks:  # blocks of a multi-subtensor operand on several carriers
            return run_blockwise(op_class(), (a, b), {})

    binary.__name__ = binary.__qualname__ = name
    binary.__doc__ = f"Elementwise {doc}, broadcasting over top-level modes" + \
        ("." if vjp_a is not None or vjp_b is not None else " (not differentiable).")
    return op_class, binary


# ----- Rules that reach a domain boundary ---------------------------------------------------------
#
# These VJPs divide by their input, or take a root or a logarithm of it: at a
# domain boundary (log and sqrt at 0, a division by zero, a base 0 power) the
# gradient is inf or NaN, in torch and JAX as here, but NumPy also warns.
# Only they pay for the errstate (about half a microsecond a call); the hot
# rules (add, multiply, exp, tanh) do not. atan and asinh square their input,
# which overflows to inf (a zero gradient) for |x| beyond 1.8e19.

def quiet(vjp):
    """``vjp`` with NumPy's floating-point warnings off: its inf and NaN gradients stay, silently."""
    def call(*args):
        with np.errstate(all="ignore"):
            return vjp(*args)
    if hasattr(vjp, "only_scales"):
        call.only_scales = vjp.only_scales
    return call


for _name in ("log", "log1p", "log2", "log10", "sqrt", "reciprocal", "asin", "acos", "atan", "asinh", "acosh",
              "atanh"):
    _forward, _vjp, *_rest = UNARY_RULES[_name]
    UNARY_RULES[_name] = (_forward, quiet(_vjp), *_rest)
for _name in ("divide", "power", "atan2", "hypot", "remainder"):
    _forward, _vjp, _vjp_b, *_rest = BINARY_RULES[_name]
    BINARY_RULES[_name] = (_forward, quiet(_vjp), quiet(_vjp_b), *_rest)
del _name, _forward, _vjp, _vjp_b, _rest


RULES: dict[str, type] = {}
for _name, _rule in UNARY_RULES.items():
    RULES[_name], globals()[_name] = _unary(_name, *_rule)
for _name, _rule in BINARY_RULES.items():
    RULES[_name], globals()[_name] = _binary(_name, *_rule)
del _name, _rule

#: the standard's spelling of ``power``
pow = power  # noqa: A001, F821 (defined by the table above)

__all__ = [*UNARY_RULES, *BINARY_RULES, "pow"]
