"""The elementwise rules: each operation's forward beside its vector-Jacobian products, one row each.

A unary row is ``name = _unary("name", forward(xp, x), vjp=vjp(xp, g, y, x), ...)``;
a binary row is ``_binary("name", forward(xp, a, b), vjp_a=..., vjp_b=..., ...)``
(``forward`` may be an operator's symbol, ``"+"``: the forward is then ``a + b``, and a
Tensor's operator writes it into its recording step, with no call of its own)
with one VJP per operand, ``vjp(xp, g, y, a, b)``, each giving that
operand's gradient in the result's space (the base sums it back over
broadcast modes; ``y`` is the result). That is every rule family's VJP
convention, ``vjp(xp, g, kept, *operands, **params)`` (``docs/architecture.md``),
with the result as what the forward kept. The fields are those of
``UnaryRule`` and ``BinaryRule`` (``ops/_elementwise_rules.py``, the machinery):

* ``vjp=None``: no gradient (not differentiable); ``_zero`` is the zero
  gradient of a piecewise-constant function, as torch defines it.
* ``reads``: what the VJPs read besides ``g`` (``"x"``, ``"out"``; for a
  binary rule ``"own"`` when an operand's VJP reads its own values, not only
  its partner's), so nothing else is kept.
* ``dtypes``: the Array API category an operand must belong to.
* ``linear_in_g``: the VJP is ``g * factor``; the base then skips the product
  for a unit cotangent, so the row still reads as math.
* ``quiet``: the VJP divides by its input or takes a root or a logarithm of
  it, so at a domain boundary (log and sqrt at 0, a division by zero, a base
  0 power) the gradient is inf or NaN, in torch and JAX as here; NumPy would
  also warn. Only these pay for the errstate (about half a microsecond a
  call). atan and asinh square their input, which overflows to inf (a zero
  gradient) for |x| beyond 1.8e19.

On flat buffers a VJP returns either a new array or one of its arguments
itself, never a view of one: the engine owns every new array and may add
into it in place.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from ..tensors.values import as_array_like
from ._elementwise_rules import _NAMESPACE_NAMES, BinaryRule, UnaryRule, binary_op, unary_op

#: name -> rule, in the order of the rows below
UNARY_RULES: dict[str, UnaryRule] = {}
BINARY_RULES: dict[str, BinaryRule] = {}
#: name -> the node class each public function records
RULES: dict[str, type] = {}
#: every public name of the table -> its function: each row's name, and the standard's spelling where it
#: differs (``pow``). Every export is derived from it: ``ops``, the top level and ``strideweave.array_api``
#: (``NAMESPACE``), and NumPy's ufuncs on Tensors (``array_api/_native_operands.py``).
FUNCTIONS: dict[str, Callable] = {}
#: the namespace's name -> function, for every row (the standard's spelling; NumPy's name for the others)
NAMESPACE: dict[str, Callable] = {}
#: rows that are not the standard's: NumPy's name and meaning, exported by ``ops`` and the namespace only
BEYOND_STANDARD: list[str] = []


def _enter(name: str, function: Callable, standard: bool) -> None:
    spelling = _NAMESPACE_NAMES.get(name, name)
    FUNCTIONS[name] = FUNCTIONS[spelling] = NAMESPACE[spelling] = function
    if not standard:
        BEYOND_STANDARD.append(name)


def _unary(name: str, forward, *, standard: bool = True, **fields):
    """Enter one unary rule; returns its public function. ``standard=False``: a NumPy function beyond the
    standard (``docs/array-api.md`` lists it)."""
    rule = UNARY_RULES[name] = UnaryRule(forward, **fields)
    RULES[name], function = unary_op(name, rule)
    _enter(name, function, standard)
    return function


def _binary(name: str, forward, *, standard: bool = True, **fields):
    """Enter one binary rule; returns its public function (``standard`` as for ``_unary``)."""
    if isinstance(forward, str):
        fields["infix"], forward = forward, _INFIX[forward]
    rule = BINARY_RULES[name] = BinaryRule(forward, **fields)
    RULES[name], function = binary_op(name, rule)
    _enter(name, function, standard)
    return function


#: The forward of a row written as an operator's symbol (``_binary``)
_INFIX: dict[str, Callable] = {
    "+": lambda xp, a, b: a + b,
    "-": lambda xp, a, b: a - b,
    "*": lambda xp, a, b: a * b,
    "/": lambda xp, a, b: a / b,
}


# ----- helpers the rows share -------------------------------------------------------------------------

_LN2 = math.log(2.0)
_LN10 = math.log(10.0)


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


def _pow_vjp_a(xp, g, out, a, b):
    # d/da a**b = b a**(b-1), zero wherever b == 0 (torch): at a == 0 the product 0 * inf would be NaN.
    if isinstance(b, (int, float)):
        return xp.zeros_like(g) if b == 0 else g * b * a ** (b - 1)
    return xp.where(b == 0, xp.zeros_like(g), g * b * a ** (b - 1))


def _log_scalar(a: float) -> float:
    return math.log(a) if a > 0 else -math.inf if a == 0 else math.nan


def _pow_vjp_b(xp, g, out, a, b):
    # d/db a**b = a**b log a, as torch: zero where a == 0 and b >= 0 (a limit, not 0 * -inf), -inf where
    # a == 0 and b < 0, NaN for a negative base (log a). a**b is computed again rather than read from
    # the result, so a write into the result (``y *= x`` after ``y = x ** 2``, as scipy.stats does)
    # leaves the node exact.
    power = a ** b
    if isinstance(a, (int, float)):
        gradient = g * power * _log_scalar(a)
        return xp.where(b >= 0, xp.zeros_like(gradient), gradient) if a == 0 else gradient
    gradient = g * power * xp.log(a)
    return xp.where((a == 0) & (b >= 0), xp.zeros_like(gradient), gradient)


def _select(wins, first):
    """maximum / minimum: the loser gets no gradient, ties split it evenly, and a NaN operand passes
    it to both (torch)."""
    def vjp(xp, g, out, a, b):
        a_loses = wins(b, a) if first else wins(a, b)
        return xp.where(a == b, g * 0.5, xp.where(a_loses, xp.zeros_like(g), g))
    return vjp


def _atan2_vjp(sign):
    """atan2's VJPs; at (0, 0) the gradient is zero (torch), not 0 / 0."""
    def vjp(xp, g, out, a, b):
        radius = a * a + b * b
        other = b if sign > 0 else -a
        return xp.where(radius == 0, xp.zeros_like(g), g * other / xp.where(radius == 0, xp.ones_like(radius), radius))
    return vjp


def _copysign_vjp(xp, g, out, a, b):
    # out / a is the sign flip (+-1); torch defines the gradient as zero where a == 0.
    return g * xp.where(a == 0, xp.zeros_like(out), out / xp.where(a == 0, xp.ones_like(a), a))


# ----- unary: sign and magnitude ----------------------------------------------------------------------

negative = _unary("negative", lambda xp, x: -x, vjp=lambda xp, g, y, x: -g, dtypes="numeric", doc="-x")
positive = _unary("positive", lambda xp, x: x * 1, vjp=lambda xp, g, y, x: g, dtypes="numeric", doc="+x (a copy)")
abs = _unary("abs", lambda xp, x: xp.abs(x), vjp=lambda xp, g, y, x: g * xp.sign(x),  # noqa: A001
             reads="x", linear_in_g=True, dtypes="numeric", doc="absolute value; the gradient at zero is zero")

# ----- unary: exponentials and logarithms -------------------------------------------------------------

exp = _unary("exp", lambda xp, x: xp.exp(x), vjp=lambda xp, g, y, x: g * y, reads="out", linear_in_g=True,
             doc="exponential")
exp2 = _unary("exp2", lambda xp, x: 2.0 ** x, vjp=lambda xp, g, y, x: g * (y * _LN2), reads="out", linear_in_g=True,
              dtypes="floating", standard=False, doc="2 ** x (NumPy's and torch's ``exp2``)")
expm1 = _unary("expm1", lambda xp, x: xp.expm1(x), vjp=lambda xp, g, y, x: g * (y + 1), reads="out",
               dtypes="floating", doc="exp(x) - 1")
log = _unary("log", lambda xp, x: xp.log(x), vjp=lambda xp, g, y, x: g / x, reads="x", quiet=True,
             doc="natural logarithm")
log1p = _unary("log1p", lambda xp, x: xp.log1p(x), vjp=lambda xp, g, y, x: g / (x + 1), reads="x", quiet=True,
               dtypes="floating", doc="log(1 + x)")
log2 = _unary("log2", lambda xp, x: xp.log2(x), vjp=lambda xp, g, y, x: g / (x * _LN2), reads="x", quiet=True,
              dtypes="floating", doc="base-2 logarithm")
log10 = _unary("log10", lambda xp, x: xp.log10(x), vjp=lambda xp, g, y, x: g / (x * _LN10), reads="x", quiet=True,
               dtypes="floating", doc="base-10 logarithm")

# ----- unary: powers ----------------------------------------------------------------------------------

sqrt = _unary("sqrt", lambda xp, x: xp.sqrt(x), vjp=lambda xp, g, y, x: g / (2 * y), reads="out", quiet=True,
              doc="square root")
square = _unary("square", lambda xp, x: x * x, vjp=lambda xp, g, y, x: g * (2 * x), reads="x", dtypes="numeric",
                doc="x * x")
reciprocal = _unary("reciprocal", lambda xp, x: 1 / x, vjp=lambda xp, g, y, x: -g * (y * y), reads="out",
                    quiet=True, dtypes="floating", doc="1 / x")

# ----- unary: trigonometric ---------------------------------------------------------------------------

sin = _unary("sin", lambda xp, x: xp.sin(x), vjp=lambda xp, g, y, x: g * xp.cos(x), reads="x", linear_in_g=True,
             doc="sine")
cos = _unary("cos", lambda xp, x: xp.cos(x), vjp=lambda xp, g, y, x: -g * xp.sin(x), reads="x", doc="cosine")
tan = _unary("tan", lambda xp, x: xp.tan(x), vjp=lambda xp, g, y, x: g * (1 + y * y), reads="out",
             dtypes="floating", doc="tangent")
asin = _unary("asin", lambda xp, x: xp.asin(x), vjp=lambda xp, g, y, x: g / xp.sqrt(1 - x * x), reads="x",
              quiet=True, dtypes="floating", doc="arcsine")
acos = _unary("acos", lambda xp, x: xp.acos(x), vjp=lambda xp, g, y, x: -g / xp.sqrt(1 - x * x), reads="x",
              quiet=True, dtypes="floating", doc="arccosine")
atan = _unary("atan", lambda xp, x: xp.atan(x), vjp=lambda xp, g, y, x: g / (1 + x * x), reads="x", quiet=True,
              dtypes="floating", doc="arctangent")

# ----- unary: hyperbolic ------------------------------------------------------------------------------

sinh = _unary("sinh", lambda xp, x: xp.sinh(x), vjp=lambda xp, g, y, x: g * xp.cosh(x), reads="x",
              dtypes="floating", doc="hyperbolic sine")
cosh = _unary("cosh", lambda xp, x: xp.cosh(x), vjp=lambda xp, g, y, x: g * xp.sinh(x), reads="x",
              dtypes="floating", doc="hyperbolic cosine")
tanh = _unary("tanh", lambda xp, x: xp.tanh(x), vjp=lambda xp, g, y, x: g * (1 - y * y), reads="out",
              linear_in_g=True, doc="hyperbolic tangent")
asinh = _unary("asinh", lambda xp, x: xp.asinh(x), vjp=lambda xp, g, y, x: g / xp.sqrt(x * x + 1), reads="x",
               quiet=True, dtypes="floating", doc="inverse hyperbolic sine")
acosh = _unary("acosh", lambda xp, x: xp.acosh(x), vjp=lambda xp, g, y, x: g / xp.sqrt(x * x - 1), reads="x",
               quiet=True, dtypes="floating", doc="inverse hyperbolic cosine")
atanh = _unary("atanh", lambda xp, x: xp.atanh(x), vjp=lambda xp, g, y, x: g / (1 - x * x), reads="x",
               quiet=True, dtypes="floating", doc="inverse hyperbolic tangent")

# ----- unary: piecewise constant (zero gradient) ------------------------------------------------------

sign = _unary("sign", lambda xp, x: xp.sign(x), vjp=_zero, dtypes="numeric", doc="sign (-1, 0, 1); zero gradient")
floor = _unary("floor", _rounding("floor"), vjp=_zero, dtypes="numeric", doc="round down; zero gradient")
ceil = _unary("ceil", _rounding("ceil"), vjp=_zero, dtypes="numeric", doc="round up; zero gradient")
round = _unary("round", _rounding("round"), vjp=_zero, dtypes="numeric",  # noqa: A001
               doc="round half to even; zero gradient")
trunc = _unary("trunc", _rounding("trunc"), vjp=_zero, dtypes="numeric", doc="round toward zero; zero gradient")

# ----- unary: tests and logic (not differentiable) ----------------------------------------------------

isnan = _unary("isnan", lambda xp, x: xp.isnan(x), vjp=None, dtypes="numeric",
               doc="NaN test (Bool, not differentiable)")
isinf = _unary("isinf", lambda xp, x: xp.isinf(x), vjp=None, dtypes="numeric",
               doc="infinity test (Bool, not differentiable)")
isfinite = _unary("isfinite", lambda xp, x: xp.isfinite(x), vjp=None, dtypes="numeric",
                  doc="finiteness test (Bool, not differentiable)")
signbit = _unary("signbit", lambda xp, x: xp.signbit(x), vjp=None, dtypes="floating",
                 doc="sign-bit test (Bool, not differentiable)")
logical_not = _unary("logical_not", lambda xp, x: xp.logical_not(x), vjp=None, dtypes="boolean", doc="logical NOT")
bitwise_invert = _unary("bitwise_invert", lambda xp, x: xp.bitwise_invert(x), vjp=None,
                        dtypes="integer or boolean", doc="bitwise NOT")

# ----- binary: arithmetic -----------------------------------------------------------------------------

add = _binary("add", "+", vjp_a=lambda xp, g, y, a, b: g, vjp_b=lambda xp, g, y, a, b: g,
              reads="g", doc="a + b")
subtract = _binary("subtract", "-", vjp_a=lambda xp, g, y, a, b: g,
                   vjp_b=lambda xp, g, y, a, b: -g, reads="g", doc="a - b")
multiply = _binary("multiply", "*", vjp_a=lambda xp, g, y, a, b: g * b,
                   vjp_b=lambda xp, g, y, a, b: g * a, linear_in_g=True, doc="a * b")
divide = _binary("divide", "/", vjp_a=lambda xp, g, y, a, b: g / b,
                 vjp_b=lambda xp, g, y, a, b: -g * a / (b * b), reads="own", quiet=True,
                 doc="a / b (floating-point operands)")
power = _binary("power", lambda xp, a, b: a ** b, vjp_a=_pow_vjp_a, vjp_b=_pow_vjp_b, reads="own", quiet=True,
                doc="a ** b; at a zero base the exponent's gradient is zero for b >= 0 (as in torch)")
pow = power  # noqa: A001  (the standard's spelling, entered in FUNCTIONS by the row)

# ----- binary: extrema --------------------------------------------------------------------------------

maximum = _binary("maximum", lambda xp, a, b: _fn("maximum")(xp, a, b), vjp_a=_select(lambda x, y: x > y, True),
                  vjp_b=_select(lambda x, y: x > y, False), reads="own",
                  doc="maximum; at ties each operand receives half the gradient")
minimum = _binary("minimum", lambda xp, a, b: _fn("minimum")(xp, a, b), vjp_a=_select(lambda x, y: x < y, True),
                  vjp_b=_select(lambda x, y: x < y, False), reads="own",
                  doc="minimum; at ties each operand receives half the gradient")

# ----- binary: functions of two arguments -------------------------------------------------------------

atan2 = _binary("atan2", _fn("atan2"), vjp_a=_atan2_vjp(1), vjp_b=_atan2_vjp(-1), reads="own", quiet=True,
                dtypes="floating",
                doc="the angle of the point (b, a), in radians")
hypot = _binary("hypot", _fn("hypot"), vjp_a=lambda xp, g, y, a, b: g * a / y,
                vjp_b=lambda xp, g, y, a, b: g * b / y, reads="own out", quiet=True, dtypes="floating",
                doc="sqrt(a**2 + b**2) without overflow")
# torch's formula, from the operands alone: a later write into the result leaves backward exact
logaddexp = _binary("logaddexp", _fn("logaddexp"), vjp_a=lambda xp, g, y, a, b: g / (1 + xp.exp(b - a)),
                    vjp_b=lambda xp, g, y, a, b: g / (1 + xp.exp(a - b)), reads="own", quiet=True,
                    dtypes="floating", doc="log(exp(a) + exp(b))")
copysign = _binary("copysign", _fn("copysign"), vjp_a=_copysign_vjp, vjp_b=_zero, reads="own out",
                   dtypes="floating", doc="|a| with the sign of b; no gradient to b")
_library_remainder = _fn("remainder")


def _remainder(xp, a, b):
    """The library's remainder, whose zeros take the sign of ``b`` as the standard says (torch and JAX give
    -0.0 for -0.0 % 2)."""
    out = _library_remainder(xp, a, b)
    if not xp.isdtype(out.dtype, "real floating"):
        return out
    zero = xp.zeros_like(out)
    signed = xp.full_like(out, math.copysign(0.0, b)) if isinstance(b, (int, float)) else xp.copysign(zero, b)
    return xp.where(out == zero, signed, out)


remainder = _binary("remainder", _remainder, vjp_a=lambda xp, g, y, a, b: g,
                    vjp_b=lambda xp, g, y, a, b: -g * xp.floor(a / b), reads="own", quiet=True, dtypes="numeric",
                    doc="a - b * floor(a / b), the sign of b")
_library_floor_divide = _fn("floor_divide")


def _floor_divide(xp, a, b):
    """The library's floor division, with the standard's values where an operand is infinite: NumPy and
    torch give NaN for inf // 2 and -1.0 for -1 // inf, the standard floor(a / b) (inf and -0.0)."""
    with np.errstate(invalid="ignore"):  # NumPy's warning for inf // 2, whose NaN is replaced below
        out = _library_floor_divide(xp, a, b)
    if not xp.isdtype(out.dtype, "real floating"):
        return out
    flags = [math.isinf(v) if isinstance(v, (int, float)) else xp.isinf(v) for v in (a, b)]
    if any(flag is True for flag in flags):
        return xp.floor(a / b)
    infinite = [flag for flag in flags if flag is not False]
    mask = infinite[0] if len(infinite) == 1 else infinite[0] | infinite[1]
    return xp.where(mask, xp.floor(a / b), out)


floor_divide = _binary("floor_divide", _floor_divide, vjp_a=_zero, vjp_b=_zero, dtypes="numeric",
                       doc="floor(a / b); zero gradient")
nextafter = _binary("nextafter", _fn("nextafter"), vjp_a=None, vjp_b=None, dtypes="floating",
                    doc="the next representable value after a toward b (not differentiable)")

# ----- binary: logical and bitwise (not differentiable) -----------------------------------------------

logical_and = _binary("logical_and", _fn("logical_and"), vjp_a=None, vjp_b=None, dtypes="boolean", doc="logical AND")
logical_or = _binary("logical_or", _fn("logical_or"), vjp_a=None, vjp_b=None, dtypes="boolean", doc="logical OR")
logical_xor = _binary("logical_xor", _fn("logical_xor"), vjp_a=None, vjp_b=None, dtypes="boolean", doc="logical XOR")
bitwise_and = _binary("bitwise_and", _fn("bitwise_and"), vjp_a=None, vjp_b=None, dtypes="integer or boolean",
                      doc="bitwise AND")
bitwise_or = _binary("bitwise_or", _fn("bitwise_or"), vjp_a=None, vjp_b=None, dtypes="integer or boolean",
                     doc="bitwise OR")
bitwise_xor = _binary("bitwise_xor", _fn("bitwise_xor"), vjp_a=None, vjp_b=None, dtypes="integer or boolean",
                      doc="bitwise XOR")
bitwise_left_shift = _binary("bitwise_left_shift", _fn("bitwise_left_shift"), vjp_a=None, vjp_b=None,
                             dtypes="integer", doc="a << b")
bitwise_right_shift = _binary("bitwise_right_shift", _fn("bitwise_right_shift"), vjp_a=None, vjp_b=None,
                              dtypes="integer", doc="a >> b")

# ----- binary: comparisons (not differentiable) -------------------------------------------------------

less = _binary("less", _fn("less"), vjp_a=None, vjp_b=None, doc="a < b")
less_equal = _binary("less_equal", _fn("less_equal"), vjp_a=None, vjp_b=None, doc="a <= b")
greater = _binary("greater", _fn("greater"), vjp_a=None, vjp_b=None, doc="a > b")
greater_equal = _binary("greater_equal", _fn("greater_equal"), vjp_a=None, vjp_b=None, doc="a >= b")
equal = _binary("equal", _fn("equal"), vjp_a=None, vjp_b=None, doc="a == b")
not_equal = _binary("not_equal", _fn("not_equal"), vjp_a=None, vjp_b=None, doc="a != b")

__all__ = list(FUNCTIONS)
