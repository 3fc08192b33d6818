"""``xp.special``: differentiable special functions, where SciPy looks for them.

With ``SCIPY_ARRAY_API=1``, ``scipy.special.erf(x)`` on an array of a
namespace SciPy does not know takes ``xp.special.erf`` when the namespace
has one, and otherwise computes on NumPy (which a Tensor with history
refuses). These functions compute with the carrier's own special functions
(``torch.special``, ``jax.scipy.special``, ``scipy.special`` for NumPy and
for any other namespace on the host) and record their VJPs, so SciPy code
built on them differentiates on every carrier.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..ops._natural import natural_op
from ..ops.arrays import _run
from ..tensors.broadcasting import sum_to
from ..tensors.tensor import Tensor, to_numpy
from ._creation import asarray

__all__ = [
    "betainc",
    "betaincc",
    "binom",
    "digamma",
    "entr",
    "erf",
    "erfc",
    "expit",
    "gammaln",
    "log_ndtr",
    "logit",
    "ndtr",
    "ndtri",
    "psi",
    "xlog1py",
    "xlogy",
]

_SQRT_2PI = math.sqrt(2 * math.pi)
_TWO_OVER_SQRT_PI = 2 / math.sqrt(math.pi)


def _native(xp: Any, name: str):
    """``name`` from the special functions of ``xp``'s own library, or SciPy's on the host."""
    module = getattr(xp, "__name__", "")
    function = None
    if "torch" in module:
        import torch

        function = getattr(torch.special, name, None)
    elif "jax" in module:
        import jax.scipy.special as jsp

        function = getattr(jsp, name, None)
    if function is not None:
        if name == "digamma" and "jax" in module:
            return _digamma_at_zero(function)
        return function
    import scipy.special as ssp

    function = getattr(ssp, name)
    if "numpy" in module:
        return function

    def on_host(*arrays, **kwargs):
        host = [to_numpy(a) if hasattr(a, "dtype") else a for a in arrays]
        like = next(a for a in arrays if hasattr(a, "dtype"))
        return xp.asarray(function(*host, **kwargs), dtype=like.dtype, device=like.device)
    return on_host


def _digamma_at_zero(digamma):
    """JAX's digamma is NaN at 0, where SciPy's and torch's are -inf: take theirs (gammaln's gradient too)."""
    def call(a):
        import jax.numpy as jnp

        return jnp.where(a == 0, -jnp.inf, digamma(a))
    return call


#: B_2k of the asymptotic series psi_1(x) ~ 1/x + 1/(2 x^2) + sum_k B_2k / x^(2k+1), k = 1..7
_TRIGAMMA_SERIES = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6)
#: shifts before the series: at x >= 10 its first omitted term is below 1e-16 of the value
_TRIGAMMA_SHIFT = 10


def _trigamma(xp: Any, a: Any) -> Any:
    """polygamma(1, a), digamma's derivative, from the standard's own functions (torch's and JAX's are native).

    SciPy's ``polygamma(1, .)`` costs 20-50x torch's (it evaluates ``psi`` and the
    Hurwitz zeta); this is torch's method: the recurrence psi_1(x) = psi_1(x + 1)
    + 1 / x^2 up to x >= 10, the asymptotic series there, and the reflection
    psi_1(x) = pi^2 / sin^2(pi x) - psi_1(1 - x) for negative x (+inf at the poles).
    """
    native = _native_polygamma(xp)
    if native is not None:
        return native(1, a)
    wide = xp.astype(a, xp.float64) if a.dtype == xp.float32 else a
    with np.errstate(all="ignore"):  # the poles give inf, as SciPy's and torch's, without a warning
        negative = wide < 0
        x = xp.where(negative, 1 - wide, wide)
        total = xp.zeros_like(x)
        for _ in range(_TRIGAMMA_SHIFT):
            total = total + 1 / (x * x)
            x = x + 1
        inverse = 1 / x
        square = inverse * inverse
        series = xp.zeros_like(x)
        for coefficient in reversed(_TRIGAMMA_SERIES):
            series = (series + coefficient) * square
        total = total + inverse * (1 + inverse / 2 + series)
        # sin^2 has period 1: the distance to the nearest integer (exact) keeps pi * x's rounding out
        sine = xp.sin(math.pi * xp.where(negative, wide - xp.round(wide), 0.5))
        reflected = math.pi ** 2 / (sine * sine) - total
        reflected = xp.where(xp.floor(wide) == wide, math.inf, reflected)  # the negative integers
        return xp.astype(xp.where(negative, reflected, total), a.dtype)


def _native_polygamma(xp: Any):
    module = getattr(xp, "__name__", "")
    return _native(xp, "polygamma") if "torch" in module or "jax" in module else None


def _unary(name: str, derivative, *, keeps_result: bool = False):
    """A recorded special function of one array; ``derivative(xp, x, y)`` is dy/dx."""
    def forward(xp, a):
        out = xp.astype(_native(xp, name)(a), a.dtype)
        return out, (out if keeps_result else None)

    def vjp(xp, g, kept, a):
        return (g * derivative(xp, a, kept),)

    op_class = natural_op(name, forward, vjp)
    op_class.reads_result = keeps_result

    def function(x, /):
        return _run(op_class, (_tensor(x),), None)
    function.__name__ = function.__qualname__ = name
    function.__doc__ = f"``scipy.special.{name}`` elementwise, with its VJP recorded."
    return function


def _tensor(x: Any, like: Tensor | None = None) -> Tensor:
    if isinstance(x, Tensor):
        return x
    return asarray(x) if like is None else asarray(x, dtype=like.dtype, device=like.device)


erf = _unary("erf", lambda xp, a, y: _TWO_OVER_SQRT_PI * xp.exp(-a * a))
erfc = _unary("erfc", lambda xp, a, y: -_TWO_OVER_SQRT_PI * xp.exp(-a * a))
expit = _unary("expit", lambda xp, a, y: y * (1 - y), keeps_result=True)
logit = _unary("logit", lambda xp, a, y: 1 / (a * (1 - a)))
ndtr = _unary("ndtr", lambda xp, a, y: xp.exp(-a * a / 2) / _SQRT_2PI)
log_ndtr = _unary("log_ndtr", lambda xp, a, y: xp.exp(-a * a / 2 - y) / _SQRT_2PI, keeps_result=True)
ndtri = _unary("ndtri", lambda xp, a, y: _SQRT_2PI * xp.exp(y * y / 2), keeps_result=True)
entr = _unary("entr", lambda xp, a, y: -(xp.log(a) + 1))
gammaln = _unary("gammaln", lambda xp, a, y: _native(xp, "digamma")(a))
digamma = _unary("digamma", lambda xp, a, y: _trigamma(xp, a))
psi = digamma


def _binary(name: str, d_first, d_second):
    """A recorded special function of two arrays (broadcast as SciPy's ufuncs broadcast them)."""
    def forward(xp, a, b):
        a, b = xp.broadcast_arrays(a, b)
        return xp.astype(_native(xp, name)(a, b), a.dtype), None

    def vjp(xp, g, kept, a, b):
        shape = tuple(g.shape)
        full_a, full_b = xp.broadcast_to(a, shape), xp.broadcast_to(b, shape)
        with np.errstate(divide="ignore", invalid="ignore"):  # poles give inf or NaN, as in torch
            return (sum_to(xp, g * d_first(xp, full_a, full_b), tuple(a.shape)),
                    sum_to(xp, g * d_second(xp, full_a, full_b), tuple(b.shape)))

    op_class = natural_op(name, forward, vjp)
    op_class.reads_result = False

    def function(x, y, /):
        like = x if isinstance(x, Tensor) else y if isinstance(y, Tensor) else None
        return _run(op_class, (_tensor(x, like), _tensor(y, like)), None)
    function.__name__ = function.__qualname__ = name
    function.__doc__ = f"``scipy.special.{name}`` elementwise, with its VJP recorded."
    return function


def _log_unless_zero(log):
    """d/dx of x log(y) (or x log1p(y)) as torch: log(y), but zero where x == 0 and the log is undefined."""
    def derivative(xp, a, b):
        value = getattr(xp, log)(b)
        return xp.where((a == 0) & (b <= (0 if log == "log" else -1)), xp.zeros_like(value), value)
    return derivative


xlogy = _binary("xlogy", _log_unless_zero("log"), lambda xp, a, b: a / b)
xlog1py = _binary("xlog1py", _log_unless_zero("log1p"), lambda xp, a, b: a / (1 + b))


def _zero_where(xp, condition, values):
    return xp.where(condition, xp.zeros_like(values), values)


def _binom_derivative(upper, lower):
    """d binom(n, k) = binom(n, k) (psi(upper(n, k)) - psi(lower(n, k))), zero where binom is (psi's poles)."""
    def derivative(xp, n, k):
        value = _native(xp, "binom")(n, k)
        psi = _native(xp, "digamma")
        return _zero_where(xp, value == 0, value * (psi(upper(n, k)) - psi(lower(n, k))))
    return derivative


binom = _binary("binom", _binom_derivative(lambda n, k: n + 1, lambda n, k: n - k + 1),
                _binom_derivative(lambda n, k: n - k + 1, lambda n, k: k + 1))


def _incomplete_beta(name: str, sign: float):
    """``betainc`` / ``betaincc`` with the gradient for ``x``; a gradient for ``a`` or ``b`` raises."""
    def forward(xp, x, *shape_args, a, b):
        args = iter(shape_args)
        a = next(args) if a is None else xp.asarray(a, dtype=x.dtype, device=x.device)
        b = next(args) if b is None else xp.asarray(b, dtype=x.dtype, device=x.device)
        return xp.astype(_native(xp, name)(a, b, x), x.dtype), (a, b)

    def vjp(xp, g, kept, x, *shape_args, a, b):
        if shape_args:
            raise NotImplementedError(f"{name}: the gradient with respect to a or b is not implemented "
                                      f"(only x's); pass them as constants or detach them")
        log_beta = math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)
        return (sign * g * xp.exp((a - 1) * xp.log(x) + (b - 1) * xp.log1p(-x) - log_beta),)

    op_class = natural_op(name, forward, vjp)
    op_class.reads_result = False

    def function(a, b, x, /):
        like = next((v for v in (x, a, b) if isinstance(v, Tensor)), None)
        x = _tensor(x, like)
        shape_args = tuple(_tensor(v, x) for v in (a, b) if isinstance(v, Tensor) or hasattr(v, "shape"))
        constants = {label: None if isinstance(v, Tensor) or hasattr(v, "shape") else float(v)
                     for label, v in (("a", a), ("b", b))}
        return _run(op_class, (x, *shape_args), None, **constants)
    function.__name__ = function.__qualname__ = name
    function.__doc__ = (f"``scipy.special.{name}(a, b, x)``, differentiable in ``x``; differentiating through "
                        "an array ``a`` or ``b`` raises NotImplementedError rather than cut the gradient.")
    return function


betainc = _incomplete_beta("betainc", 1.0)
betaincc = _incomplete_beta("betaincc", -1.0)
