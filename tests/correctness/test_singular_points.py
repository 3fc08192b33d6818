"""Singular points: every rule gives torch's value and subgradient there, on every carrier.

Each row is one Array API program, the inputs that put it on a singular
point (a zero spread, a zero norm, a base-0 power, ties, bounds, ``-inf``
entries, zeros in products, domain edges), and optionally the torch program
when the standard's spelling is not torch's. The same program runs on
``strideweave.array_api`` (Float32) and on torch float64 through
``array_api_compat``; forward values and the gradient for a fixed,
non-uniform cotangent are compared, NaN equal to NaN and inf equal to inf
(with its sign). docs/array-api-differentiation.md lists the rows' points
and the gradients they pin.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

import strideweave as sw
import strideweave.array_api as swxp

torch = pytest.importorskip("torch")
txp = pytest.importorskip("array_api_compat.torch")

inf, nan = math.inf, math.nan


@dataclass(frozen=True)
class Row:
    name: str
    program: Callable            # program(xp, *inputs), run on both namespaces
    inputs: tuple                # float lists are differentiable inputs; anything else is passed as is
    reference: Callable | None   # reference(torch, *inputs) where torch's spelling differs
    tolerance: float

    def __str__(self) -> str:
        return self.name


def row(name: str, program: Callable, *inputs: Any, reference: Callable | None = None,
        tolerance: float = 2e-6) -> Row:
    return Row(name, program, inputs, reference, tolerance)


def _std_of_mean(xp, x):
    return xp.std(xp.mean(x, keepdims=True) * xp.ones_like(x))


def _shifted_logsumexp(xp, x):
    top = xp.max(x, axis=-1, keepdims=True)
    return top + xp.log(xp.sum(xp.exp(x - top), axis=-1, keepdims=True))


def _log_softmax(xp, x):
    return x - _shifted_logsumexp(xp, x)


def _softplus(xp, x):
    return xp.logaddexp(x, xp.zeros_like(x))


def _det(xp, x):
    return xp.linalg.det(x)


def _det_by_expansion(t, a):
    """det as its Laplace expansion, whose torch gradient is the cofactor matrix at every input.

    ``torch.linalg.det`` gives a zero gradient at exactly singular matrices (pytorch issues 80761 and
    104675), where the determinant, a polynomial, has the cofactor matrix as its gradient.
    """
    n = a.shape[-1]
    if n == 1:
        return a[..., 0, 0]
    total = 0
    for j in range(n):
        minor = t.cat([a[..., 1:, :j], a[..., 1:, j + 1:]], dim=-1)
        total = total + (-1) ** j * a[..., 0, j] * _det_by_expansion(t, minor)
    return total


CONST = [[2.0, 2.0, 2.0], [1.0, 4.0, -3.0]]
SINGULAR = [[1.0, 2.0], [2.0, 4.0]]
RANK_ONE_3 = [[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]]

ROWS = [
    # ----- std / var: zero spread, one element, correction, axis, keepdims
    row("std zero spread", lambda xp, x: xp.std(x), [2.0, 2.0, 2.0]),
    row("std of a keepdims mean", _std_of_mean, [1.0, 2.0, 3.0]),
    row("std zero spread correction=1", lambda xp, x: xp.std(x, correction=1), [2.0, 2.0, 2.0]),
    row("std one element", lambda xp, x: xp.std(x), [3.0]),
    row("std one element correction=1", lambda xp, x: xp.std(x, correction=1), [3.0]),
    row("std correction past the count", lambda xp, x: xp.std(x, correction=2), [3.0]),
    row("std axis=1 one row constant", lambda xp, x: xp.std(x, axis=1), CONST),
    row("std axis=1 keepdims correction=1", lambda xp, x: xp.std(x, axis=1, keepdims=True, correction=1), CONST),
    row("std axis=0 one element per slice", lambda xp, x: xp.std(x, axis=0), [[1.0, 2.0, 3.0]]),
    row("std axis=0 correction=1 one element", lambda xp, x: xp.std(x, axis=0, correction=1), [[1.0, 2.0, 3.0]]),
    row("var correction past the count", lambda xp, x: xp.var(x, correction=3), [1.0, 3.0]),
    row("var zero spread", lambda xp, x: xp.var(x), [2.0, 2.0, 2.0]),
    row("var one element correction=1", lambda xp, x: xp.var(x, correction=1), [3.0]),
    row("var axis=1 keepdims", lambda xp, x: xp.var(x, axis=1, keepdims=True), CONST),
    row("var axis=0 correction=1 one element", lambda xp, x: xp.var(x, axis=0, correction=1), [[1.0, 2.0, 3.0]]),
    # ----- norms at zero
    *[row(f"vector_norm ord={o} at zero", lambda xp, x, o=o: xp.linalg.vector_norm(x, ord=o), [0.0, 0.0, 0.0])
      for o in (2, 1, inf, -inf, 0, 3, 0.5)],
    *[row(f"vector_norm ord={o} with a zero entry", lambda xp, x, o=o: xp.linalg.vector_norm(x, ord=o),
          [0.0, -3.0, 4.0]) for o in (2, 1, inf, -inf, 0, 3, 0.5, -1)],
    row("vector_norm axis=1 one row zero", lambda xp, x: xp.linalg.vector_norm(x, axis=1), [[0.0, 0.0], [3.0, 4.0]]),
    row("vector_norm ord=inf ties", lambda xp, x: xp.linalg.vector_norm(x, ord=inf), [-2.0, 2.0, 1.0]),
    *[row(f"matrix_norm ord={o} at zero", lambda xp, x, o=o: xp.linalg.matrix_norm(x, ord=o),
          [[0.0, 0.0], [0.0, 0.0]]) for o in ("fro", 1, -1, inf, -inf)],
    row("matrix_norm ord=1 tied columns", lambda xp, x: xp.linalg.matrix_norm(x, ord=1), [[1.0, -2.0], [2.0, 1.0]]),
    # ----- roots and powers at 0
    row("sqrt at 0", lambda xp, x: xp.sqrt(x), [0.0, 4.0]),
    *[row(f"x ** {p} at 0", lambda xp, x, p=p: x ** p, [0.0, 2.0]) for p in (0.0, 0.5, 1.0, 2.0, -1.0, 3)],
    row("pow(x, 0.0) at 0", lambda xp, x: xp.pow(x, 0.0), [0.0, 2.0]),
    row("pow base 0 exponents", lambda xp, a, b: xp.pow(a, b), [0.0, 0.0, 0.0, 0.0, 0.0],
        [0.0, 0.5, 1.0, 2.0, -1.0]),
    row("pow negative bases", lambda xp, a, b: xp.pow(a, b), [-2.0, -2.0, -2.0, -1.0], [2.0, 3.0, 0.0, 0.5]),
    row("scalar base ** x", lambda xp, b: 2.0 ** b, [0.0, -1.0]),
    row("scalar base 0 ** x", lambda xp, b: 0.0 ** b, [0.0, 1.0, 2.0, -1.0]),
    row("square at 0", lambda xp, x: xp.square(x), [0.0, -1.0]),
    row("reciprocal at 0", lambda xp, x: xp.reciprocal(x), [0.0, -0.0, 2.0]),
    # ----- two-argument functions at the origin
    row("hypot(0, 0)", lambda xp, a, b: xp.hypot(a, b), [0.0, 3.0], [0.0, 4.0]),
    row("atan2(0, 0)", lambda xp, a, b: xp.atan2(a, b), [0.0, 0.0, 1.0], [0.0, -1.0, 0.0]),
    row("copysign at zeros", lambda xp, a, b: xp.copysign(a, b), [0.0, -2.0, 3.0, 0.0], [1.0, 0.0, -1.0, -0.0]),
    row("remainder at zero divisor", lambda xp, a, b: xp.remainder(a, b), [1.0, 0.0, -3.0], [0.0, 2.0, 2.0]),
    # torch has no derivative for floor_divide; StrideWeave's is zero, as for every piecewise-constant function.
    row("floor_divide", lambda xp, a, b: xp.floor_divide(a, b), [1.0, 5.0, -3.0], [0.0, 2.0, 2.0],
        reference=lambda t, a, b: torch.floor_divide(a.detach(), b.detach())),
    row("divide by zero", lambda xp, a, b: xp.divide(a, b), [1.0, 0.0, -1.0, 2.0], [0.0, 0.0, 0.0, -0.0]),
    row("divide by scalar zero", lambda xp, a: a / 0.0, [1.0, 0.0]),
    row("multiply inf by zero", lambda xp, a, b: a * b, [inf, 0.0], [0.0, -inf]),
    # ----- sign and magnitude, piecewise constant
    row("abs at 0", lambda xp, x: xp.abs(x), [0.0, -0.0, -2.0, 3.0]),
    row("sign", lambda xp, x: xp.sign(x), [0.0, -2.0, 3.0]),
    *[row(name, lambda xp, x, name=name: getattr(xp, name)(x), [0.5, -1.5, 2.0, -0.0])
      for name in ("floor", "ceil", "round", "trunc")],
    # ----- ties
    row("max ties", lambda xp, x: xp.max(x), [1.0, 3.0, 3.0, 2.0]),
    row("min ties", lambda xp, x: xp.min(x), [1.0, 3.0, 1.0, 1.0]),
    row("max ties axis=1", lambda xp, x: xp.max(x, axis=1), [[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]]),
    row("min ties axis=0 keepdims", lambda xp, x: xp.min(x, axis=0, keepdims=True), [[1.0, 3.0], [1.0, 2.0]]),
    row("max all -inf", lambda xp, x: xp.max(x), [-inf, -inf]),
    row("maximum ties", lambda xp, a, b: xp.maximum(a, b), [1.0, 2.0, 3.0], [1.0, 1.0, 4.0]),
    row("minimum ties", lambda xp, a, b: xp.minimum(a, b), [1.0, 2.0, 3.0], [1.0, 1.0, 4.0]),
    row("maximum with a scalar tie", lambda xp, a: xp.maximum(a, 1.0), [1.0, 0.0, 2.0],
        reference=lambda t, a: torch.maximum(a, torch.tensor(1.0, dtype=a.dtype))),
    row("maximum with NaN", lambda xp, a, b: xp.maximum(a, b), [nan, 1.0, nan], [1.0, nan, nan]),
    row("minimum with NaN", lambda xp, a, b: xp.minimum(a, b), [nan, 1.0], [1.0, nan]),
    row("sort ties", lambda xp, x: xp.sort(x), [2.0, 1.0, 2.0, 1.0]),
    row("sort ties descending", lambda xp, x: xp.sort(x, descending=True), [2.0, 1.0, 2.0, 1.0]),
    row("sort ties axis=0", lambda xp, x: xp.sort(x, axis=0), [[1.0, 2.0], [1.0, 0.0], [1.0, 2.0]]),
    row("take_along_axis of argsort ties", lambda xp, x: xp.take_along_axis(x, xp.argsort(x), axis=-1),
        [3.0, 1.0, 3.0, 1.0]),
    # ----- clip at its bounds
    row("clip at both bounds", lambda xp, x: xp.clip(x, 0.0, 1.0), [0.0, 1.0, -1.0, 2.0, 0.5]),
    row("clip tensor bounds at ties", lambda xp, x, lo, hi: xp.clip(x, lo, hi),
        [0.0, 1.0, -1.0, 2.0, 0.5], [0.0, 0.0, 0.0, 0.0, 0.0], [1.0, 1.0, 1.0, 1.0, 1.0]),
    row("clip min above max", lambda xp, x, lo, hi: xp.clip(x, lo, hi), [0.0, 2.0, 3.0, 1.5],
        [2.0, 2.0, 2.0, 2.0], [1.0, 1.0, 1.0, 1.0]),
    row("clip min only at bound", lambda xp, x, lo: xp.clip(x, lo), [0.0, 1.0, -1.0], [0.0, 0.0, 0.0],
        reference=lambda t, x, lo: torch.clamp(x, min=lo)),
    # ----- -inf in log-sum-exp forms
    row("logaddexp with -inf", lambda xp, a, b: xp.logaddexp(a, b), [-inf, -inf, 0.0, inf], [-inf, 0.0, -inf, inf]),
    row("logsumexp with -inf", _shifted_logsumexp, [[-inf, 0.0, 1.0], [-inf, -inf, -inf]]),
    row("log_softmax with -inf", _log_softmax, [[-inf, 0.0, 1.0], [-inf, -inf, -inf]]),
    row("softplus at overflow", _softplus, [1000.0, -1000.0, 0.0]),
    # ----- products through zeros
    row("cumulative_prod one zero", lambda xp, x: xp.cumulative_prod(x), [2.0, 0.0, 3.0, 4.0]),
    row("cumulative_prod two zeros", lambda xp, x: xp.cumulative_prod(x), [2.0, 0.0, 3.0, 0.0, 5.0]),
    row("cumulative_prod axis=1 zeros", lambda xp, x: xp.cumulative_prod(x, axis=1),
        [[0.0, 2.0, 3.0], [1.0, 2.0, 0.0]]),
    row("cumulative_prod include_initial zero", lambda xp, x: xp.cumulative_prod(x, include_initial=True),
        [2.0, 0.0, 3.0], reference=lambda t, x: torch.cat([torch.ones(1, dtype=x.dtype), torch.cumprod(x, 0)])),
    row("prod one zero", lambda xp, x: xp.prod(x), [2.0, 0.0, 3.0]),
    row("prod two zeros", lambda xp, x: xp.prod(x), [2.0, 0.0, 3.0, 0.0]),
    row("prod axis=1 zeros", lambda xp, x: xp.prod(x, axis=1), [[0.0, 2.0, 3.0], [0.0, 0.0, 1.0], [1.0, 2.0, 3.0]]),
    # ----- logarithms and exponentials at their edges
    row("log at 0", lambda xp, x: xp.log(x), [0.0, -1.0, 1.0]),
    row("log1p at -1", lambda xp, x: xp.log1p(x), [-1.0, -2.0, 0.0]),
    row("log2 at 0", lambda xp, x: xp.log2(x), [0.0, 1.0]),
    row("log10 at 0", lambda xp, x: xp.log10(x), [0.0, 1.0]),
    row("exp overflow", lambda xp, x: xp.exp(x), [1000.0, -1000.0, 0.0]),
    row("expm1 overflow", lambda xp, x: xp.expm1(x), [1000.0, -1000.0, 0.0]),
    row("exp2 overflow", lambda xp, x: xp.exp2(x), [1100.0, -1100.0, 0.0]),
    # ----- inverse trigonometric and hyperbolic at their edges
    row("asin at +-1", lambda xp, x: xp.asin(x), [1.0, -1.0, 0.0]),
    row("acos at +-1", lambda xp, x: xp.acos(x), [1.0, -1.0, 0.0]),
    row("atanh at +-1", lambda xp, x: xp.atanh(x), [1.0, -1.0, 0.0]),
    row("acosh at 1", lambda xp, x: xp.acosh(x), [1.0, 2.0]),
    row("sinh / cosh at +-1", lambda xp, x: xp.sinh(x) + xp.cosh(x), [1.0, -1.0, 0.0]),
    row("tanh / atan at overflow", lambda xp, x: xp.tanh(x) + xp.atan(x), [1000.0, -1000.0]),
    # ----- where keeps NaN out of the unselected branch only
    row("where over a log at 0", lambda xp, x: xp.where(x > 0, xp.log(x), xp.zeros_like(x)), [0.0, 1.0]),
    row("where over a NaN branch", lambda xp, x: xp.where(x > 0, x, xp.sqrt(-x - 1)), [1.0, 2.0]),
    row("where of the safe-log idiom", lambda xp, x: xp.log(xp.where(x > 0, x, xp.ones_like(x))), [0.0, 2.0]),
    # ----- linear algebra at singular inputs
    # (the reference is the Laplace expansion: see _det_by_expansion)
    row("det of a singular matrix", _det, SINGULAR, reference=_det_by_expansion, tolerance=1e-5),
    row("det of the zero matrix", _det, [[0.0, 0.0], [0.0, 0.0]], reference=_det_by_expansion),
    row("det of a rank-2 3x3", _det, RANK_ONE_3, reference=_det_by_expansion, tolerance=1e-5),
    row("det of a stack, one singular", _det, [SINGULAR, [[2.0, 1.0], [1.0, 3.0]]], reference=_det_by_expansion,
        tolerance=1e-5),
    row("det of an invertible 3x3", _det, [[2.0, 1.0, 0.0], [1.0, 3.0, 1.0], [0.0, 1.0, 4.0]], tolerance=1e-5),
    row("pinv of a rank-deficient matrix", lambda xp, x: xp.linalg.pinv(x), SINGULAR, tolerance=1e-5),
    row("svdvals with a zero singular value", lambda xp, x: xp.linalg.svdvals(x), [[3.0, 0.0], [0.0, 0.0]]),
    *[row(f"matrix_norm ord={o} rank-deficient", lambda xp, x, o=o: xp.linalg.matrix_norm(x, ord=o),
          [[3.0, 0.0], [0.0, 0.0]]) for o in (2, -2, "nuc")],
    row("max with NaN", lambda xp, x: xp.max(x), [1.0, nan, 2.0]),
    row("matrix_power 0 of a singular matrix", lambda xp, x: xp.linalg.matrix_power(x, 0), SINGULAR),
    row("vecdot with zeros", lambda xp, a, b: xp.vecdot(a, b), [0.0, 0.0], [1.0, 2.0]),
    # ----- special functions at their edges
    row("logit at 0 and 1", lambda xp, x: xp.special.logit(x), [0.0, 1.0, 0.5],
        reference=lambda t, x: torch.special.logit(x)),
    row("xlogy at x = 0", lambda xp, a, b: xp.special.xlogy(a, b), [0.0, 0.0, 0.0, 0.0, 1.0],
        [0.0, 1.0, -1.0, 2.0, 0.0],
        reference=lambda t, a, b: torch.special.xlogy(a, b)),
    row("xlog1py at x = 0", lambda xp, a, b: xp.special.xlog1py(a, b), [0.0, 0.0, 0.0, 1.0], [-1.0, 1.0, -2.0, -1.0],
        reference=lambda t, a, b: torch.special.xlog1py(a, b)),
    row("entr at 0", lambda xp, x: xp.special.entr(x), [0.0, 1.0, -1.0],
        reference=lambda t, x: torch.special.entr(x)),
    row("expit at overflow", lambda xp, x: xp.special.expit(x), [1000.0, -1000.0, 0.0],
        reference=lambda t, x: torch.special.expit(x)),
    row("ndtri at 0 and 1", lambda xp, x: xp.special.ndtri(x), [0.0, 1.0, 0.5],
        reference=lambda t, x: torch.special.ndtri(x)),
    row("gammaln at poles", lambda xp, x: xp.special.gammaln(x), [0.0, -1.0, 1.0],
        reference=lambda t, x: torch.special.gammaln(x)),
    row("digamma at 0", lambda xp, x: xp.special.digamma(x), [0.0, 1.0],
        reference=lambda t, x: torch.special.digamma(x)),
    # (at -40 the Float32 rule loses 1e-5 to the cancellation in exp(-x**2 / 2 - log_ndtr(x)))
    row("log_ndtr far out", lambda xp, x: xp.special.log_ndtr(x), [-40.0, 40.0, 0.0],
        reference=lambda t, x: torch.special.log_ndtr(x), tolerance=5e-5),
    row("erf at overflow", lambda xp, x: xp.special.erf(x), [1000.0, 0.0], reference=lambda t, x: torch.special.erf(x)),
]


def _cotangent(shape: tuple) -> np.ndarray:
    """A fixed non-uniform cotangent, exact in Float32: ties and splits show in the gradient."""
    size = int(np.prod(shape, dtype=np.int64))
    return (np.arange(size, dtype=np.float64) * 0.5 + 1.0).reshape(shape)


def _torch_run(entry: Row):
    args = [torch.tensor(v, dtype=torch.float64, requires_grad=True) if isinstance(v, list) else v
            for v in entry.inputs]
    program = entry.reference or entry.program
    out = program(torch if entry.reference else txp, *args)
    wrt = [a for a in args if isinstance(a, torch.Tensor) and a.requires_grad]
    cot = torch.tensor(_cotangent(tuple(out.shape)))
    if out.requires_grad:
        grads = torch.autograd.grad(out, wrt, cot, allow_unused=True)
    else:
        grads = [None] * len(wrt)
    grads = [np.zeros(tuple(a.shape)) if g is None else g.detach().numpy() for a, g in zip(wrt, grads)]
    return out.detach().numpy(), grads


def _strideweave_run(entry: Row, carrier: str):
    args = [swxp.asarray(np.asarray(v, dtype=np.float32), device=carrier) if isinstance(v, list) else v
            for v in entry.inputs]
    out = entry.program(swxp, *args)
    wrt = [a for a in args if isinstance(a, sw.Tensor)]
    cot = swxp.asarray(_cotangent(tuple(out.shape)).astype(np.float32), device=carrier)
    # The cotangent enters through a weighted sum: sw.grad wants a cotangent of the result's own layout.
    loss = swxp.sum(out * cot)
    grads = sw.grad(loss, wrt, swxp.asarray(1.0, device=carrier)) if not loss.is_leaf else [None] * len(wrt)
    grads = [np.zeros(tuple(a.shape)) if g is None else np.asarray(g.numpy(), dtype=np.float64)
             for a, g in zip(wrt, grads)]
    return np.asarray(out.numpy(), dtype=np.float64), grads


def _assert_same(label: str, actual, expected, tolerance: float) -> None:
    actual, expected = np.asarray(actual, dtype=np.float64), np.asarray(expected, dtype=np.float64)
    assert actual.shape == expected.shape, f"{label}: shape {actual.shape}, torch {expected.shape}"
    nan_a, nan_e = np.isnan(actual), np.isnan(expected)
    inf_a, inf_e = np.isinf(actual), np.isinf(expected)
    message = f"{label}: got {actual.tolist()}, torch gives {expected.tolist()}"
    assert np.array_equal(nan_a, nan_e), message
    assert np.array_equal(inf_a, inf_e) and np.array_equal(actual[inf_a], expected[inf_e]), message
    finite = ~(nan_e | inf_e)
    np.testing.assert_allclose(actual[finite], expected[finite], rtol=tolerance, atol=tolerance, err_msg=message)


@pytest.mark.filterwarnings("ignore:.*degrees of freedom is <= 0")  # torch's, for the rows past the count
@pytest.mark.parametrize("entry", ROWS, ids=str)
def test_singular_point_matches_torch(entry: Row, carrier: str):
    with np.errstate(all="ignore"):
        expected, expected_grads = _torch_run(entry)
        actual, grads = _strideweave_run(entry, carrier)
    _assert_same(f"{entry.name} (value)", actual, expected, entry.tolerance)
    for index, (grad, expected_grad) in enumerate(zip(grads, expected_grads)):
        _assert_same(f"{entry.name} (gradient of input {index})", grad, expected_grad, entry.tolerance)


def test_the_table_covers_every_issue_point():
    # The points the contract names (docs/api.md section 8) each have a row.
    names = " ".join(entry.name for entry in ROWS)
    for point in ("std", "var", "vector_norm", "matrix_norm", "sqrt", "pow", "hypot", "atan2", "abs", "max", "min",
                  "maximum", "minimum", "sort", "argsort", "clip", "logaddexp", "logsumexp", "log_softmax",
                  "cumulative_prod", "prod", "det"):
        assert point in names, point
