"""Cases for the Array API functions beyond the original op set: elementwise math, axis functions, linalg.

Each ``fn`` calls the StrideWeave function under the standard's name and
signature; each ``ref`` is the same call on the Array API namespace ``xp``
(run by torch.autograd and jax.vjp). Inputs stay inside each function's
domain and away from kinks; spectral cases use only quantities that do not
depend on the sign of eigen- or singular vectors, which backends choose
differently.
"""

from __future__ import annotations

import numpy as np

import strideweave as sw

from ..catalogue import MATMUL, SENSITIVE, SMOOTH, Case
from ..inputs import InputSpec as In

__all__ = ["CASES"]

X = In((3, 4), nested=(3, (2, 2)))
POS = In((3, 4), low=0.5, high=2.0, nested=(3, (2, 2)))
UNIT = In((3, 4), low=-0.8, high=0.8, nested=(3, (2, 2)))
AWAY = In((3, 4), low=0.2, high=1.0, signed=True, nested=(3, (2, 2)))
SQUARE = In((3, 3), low=-0.5, high=0.5)
TALL = In((4, 3))
FEW = ("canonical", "holes")  # strided with holes covers transposed reads too

_TAKE = np.array([3, 0, 3, 1])
_ALONG = np.array([[0, 0], [1, 3], [2, 2]])


# The rules read operands through the same shared base, so two layout variants cover them.
def _unary(name, fn, ref, spec=X, tol=SMOOTH, **kw):
    return Case(f"xp_{name}", "elementwise", fn, (spec,), tol, ref=ref, variants=FEW, **kw)


def _binary(name, fn, ref, a=X, b=X, tol=SMOOTH, **kw):
    return Case(f"xp_{name}", "elementwise", fn, (a, b), tol, ref=ref, variants=FEW, **kw)


ELEMENTWISE = [
    _unary("expm1", sw.expm1, lambda xp, x: xp.expm1(x)),
    _unary("log1p", sw.log1p, lambda xp, x: xp.log1p(x), POS),
    _unary("log2", sw.log2, lambda xp, x: xp.log2(x), POS),
    _unary("log10", sw.log10, lambda xp, x: xp.log10(x), POS),
    _unary("square", sw.square, lambda xp, x: xp.square(x)),
    _unary("reciprocal", sw.reciprocal, lambda xp, x: 1.0 / x, AWAY),
    _unary("tan", sw.tan, lambda xp, x: xp.tan(x), UNIT),
    _unary("asin", sw.asin, lambda xp, x: xp.asin(x), UNIT),
    _unary("acos", sw.acos, lambda xp, x: xp.acos(x), UNIT),
    _unary("atan", sw.atan, lambda xp, x: xp.atan(x)),
    _unary("sinh", sw.sinh, lambda xp, x: xp.sinh(x)),
    _unary("cosh", sw.cosh, lambda xp, x: xp.cosh(x)),
    _unary("asinh", sw.asinh, lambda xp, x: xp.asinh(x)),
    _unary("acosh", lambda x: sw.acosh(x + 1.0), lambda xp, x: xp.acosh(x + 1.0), POS),
    _unary("atanh", sw.atanh, lambda xp, x: xp.atanh(x), UNIT),
    _unary("rounding", lambda x: sw.floor(x * 3.0) * x + sw.ceil(x) + sw.round(x * 2.0) * sw.trunc(x * 3.0) * x
           + sw.sign(x) * x, lambda xp, x: xp.floor(x * 3.0) * x + xp.ceil(x) + xp.round(x * 2.0)
           * xp.trunc(x * 3.0) * x + xp.sign(x) * x, AWAY, note="piecewise-constant factors have zero gradient"),
    _binary("atan2", sw.atan2, lambda xp, a, b: xp.atan2(a, b), b=AWAY),
    _binary("hypot", sw.hypot, lambda xp, a, b: xp.hypot(a, b), a=AWAY),
    _binary("logaddexp", sw.logaddexp, lambda xp, a, b: xp.logaddexp(a, b)),
    _binary("copysign", sw.copysign, lambda xp, a, b: xp.copysign(a, b), a=AWAY, b=AWAY),
    _binary("remainder", lambda a, b: sw.remainder(a, b + 2.0), lambda xp, a, b: xp.remainder(a, b + 2.0)),
    _binary("pow", sw.pow, lambda xp, a, b: xp.pow(a, b), a=POS),
]


AXIS = [  # natural-axes rules see nested modes merged: canonical, transposed, holes and nested variants
    Case("xp_cumulative_sum", "reduction", lambda x: sw.cumulative_sum(x, axis=1, include_initial=True), (X,),
         SMOOTH, ref=lambda xp, x: xp.cumulative_sum(x, axis=1, include_initial=True)),
    Case("xp_cumulative_prod", "reduction", lambda x: sw.cumulative_prod(x, axis=0), (AWAY,), SMOOTH,
         ref=lambda xp, x: xp.cumulative_prod(x, axis=0)),
    Case("xp_sort", "manipulation", lambda x: sw.sort(x, axis=1, descending=True), (X,), SMOOTH,
         ref=lambda xp, x: xp.flip(xp.sort(x, axis=1), axis=1)),
    Case("xp_take", "manipulation", lambda x: sw.take(x, sw.tensor(_TAKE.tolist(), sw.DType.Int32), axis=1), (X,),
         SMOOTH, ref=lambda xp, x: xp.take(x, xp.asarray(_TAKE), axis=1), note="index 3 twice: contributions add"),
    Case("xp_take_along_axis", "manipulation",
         lambda x: sw.take_along_axis(x, sw.tensor(_ALONG.tolist(), sw.DType.Int32), axis=1), (X,), SMOOTH,
         ref=lambda xp, x: xp.take_along_axis(x, xp.asarray(_ALONG), axis=1)),
    Case("xp_flip_roll", "manipulation", lambda x: sw.flip(x, axis=0) * sw.roll(x, (1, -1), axis=(0, 1)), (X,),
         SMOOTH, ref=lambda xp, x: xp.flip(x, axis=0) * xp.roll(x, (1, -1), axis=(0, 1))),
    Case("xp_repeat_tile", "manipulation", lambda x: sw.sum(sw.repeat(x, 2, axis=1) * sw.tile(x, (1, 2))),
         (X,), SMOOTH, ref=lambda xp, x: xp.sum(xp.repeat(x, 2, axis=1) * xp.tile(x, (1, 2)))),
    Case("xp_shape_functions", "manipulation",
         lambda x: sw.moveaxis(sw.expand_dims(sw.squeeze(sw.expand_dims(x, axis=0), axis=0), axis=2), 0, 2),
         (X,), SMOOTH, ref=lambda xp, x: xp.moveaxis(xp.expand_dims(x, axis=2), 0, 2)),
    Case("xp_tril_triu", "manipulation", lambda x: sw.tril(x, k=1) + sw.triu(x) * x, (X,), SMOOTH,
         ref=lambda xp, x: xp.tril(x, k=1) + xp.triu(x) * x, variants=FEW,
         note="results of axis functions have flat modes, so they do not combine with a nested operand"),
    Case("xp_diff", "manipulation", lambda x: sw.diff(x, axis=1, n=2), (X,), SMOOTH,
         ref=lambda xp, x: (x[:, 2:] - x[:, 1:-1]) - (x[:, 1:-1] - x[:, :-2])),
    Case("xp_var_std", "reduction", lambda x: sw.var(x, axis=1, correction=1) + sw.std(x, axis=0)[:3],
         (X,), SMOOTH, ref=lambda xp, x: xp.var(x, axis=1, correction=1) + xp.std(x, axis=0)[:3],
         variants=(*FEW, "nested"), note="not broadcast: a constant column has std 0, where its gradient is NaN"),
    Case("xp_vecdot", "linalg", lambda a, b: sw.vecdot(a, b), (X, In((4,))), MATMUL,
         ref=lambda xp, a, b: xp.vecdot(a, b), note="b (4,) broadcasts against a (3, 4)"),
]


_SHIFT = np.diag([1.0, 2.0, 3.0]).astype(np.float32)  # distinct eigenvalues, positive definite


def _const(values, like):
    """A constant on ``like``'s own carrier (operands of one operation share a carrier)."""
    return sw.tensor(values.tolist(), carrier=like.carrier.kind)


def _spd(a):
    return a @ sw.permute(a, (1, 0)) + _const(_SHIFT, a)


def _spd_xp(xp, a):
    return a @ xp.matrix_transpose(a) + xp.asarray(_SHIFT)


def _well_conditioned(a):
    return a + _const(_SHIFT + np.eye(3, dtype=np.float32), a)


def _well_conditioned_xp(xp, a):
    return a + xp.asarray(_SHIFT + np.eye(3, dtype=np.float32))


def _linalg(name, fn, ref, inputs=(SQUARE,), tol=MATMUL, **kw):
    return Case(f"xp_{name}", "linalg", fn, inputs, tol, ref=ref, variants=FEW, **kw)


LINALG = [
    _linalg("inv", lambda a: sw.inv(_well_conditioned(a)), lambda xp, a: xp.linalg.inv(_well_conditioned_xp(xp, a))),
    _linalg("solve", lambda a, b: sw.solve(_well_conditioned(a), b),
            lambda xp, a, b: xp.linalg.solve(_well_conditioned_xp(xp, a), b), (SQUARE, In((3, 2)))),
    _linalg("det", lambda a: sw.det(_well_conditioned(a)), lambda xp, a: xp.linalg.det(_well_conditioned_xp(xp, a))),
    _linalg("slogdet", lambda a: sw.slogdet(_well_conditioned(a)).logabsdet,
            lambda xp, a: xp.linalg.slogdet(_well_conditioned_xp(xp, a))[1]),
    _linalg("cholesky", lambda a: sw.cholesky(_spd(a)), lambda xp, a: xp.linalg.cholesky(_spd_xp(xp, a)),
            tol=SENSITIVE),
    _linalg("eigh", lambda a: (lambda r: r.eigenvalues + sw.sum(r.eigenvectors * r.eigenvectors * 2.0, modes=(0,)))(
        sw.eigh(_spd(a))), lambda xp, a: (lambda r: r[0] + xp.sum(r[1] * r[1] * 2.0, axis=0))(
        xp.linalg.eigh(_spd_xp(xp, a))), tol=SENSITIVE, note="eigenvectors enter squared (sign-free)"),
    _linalg("eigvalsh", lambda a: sw.eigvalsh(_spd(a)), lambda xp, a: xp.linalg.eigvalsh(_spd_xp(xp, a))),
    _linalg("svd", lambda a: (lambda r: r.S * sw.sum(r.U * r.U * r.S, modes=(0,)))(sw.svd(a, full_matrices=False)),
            lambda xp, a: (lambda r: r[1] * xp.sum(r[0] * r[0] * r[1], axis=0))(
                xp.linalg.svd(a, full_matrices=False)), (TALL,), tol=SENSITIVE,
            note="singular vectors enter squared (sign-free)"),
    _linalg("svdvals", sw.svdvals, lambda xp, a: xp.linalg.svdvals(a), (TALL,)),
    _linalg("qr", lambda a: (lambda r: r.R * r.R)(sw.qr(a)), lambda xp, a: (lambda r: r[1] * r[1])(xp.linalg.qr(a)),
            (TALL,), tol=SENSITIVE, note="R enters squared (sign-free)"),
    _linalg("vector_norm", lambda a: sw.vector_norm(a, axis=1, ord=3),
            lambda xp, a: xp.linalg.vector_norm(a, axis=1, ord=3), (TALL,)),
    _linalg("matrix_norm", lambda a: sw.matrix_norm(a) + sw.matrix_norm(a, ord="nuc") + sw.matrix_norm(a, ord=1),
            lambda xp, a: xp.linalg.matrix_norm(a) + xp.linalg.matrix_norm(a, ord="nuc")
            + xp.linalg.matrix_norm(a, ord=1), (TALL,)),
    _linalg("outer_trace_diagonal", lambda a, v: sw.trace(sw.outer(v, v) * a) + sw.sum(sw.diagonal(a, offset=1)),
            lambda xp, a, v: xp.linalg.trace(xp.linalg.outer(v, v) * a) + xp.sum(xp.linalg.diagonal(a, offset=1)),
            (SQUARE, In((3,)))),
    _linalg("cross", lambda a, b: sw.cross(a, b), lambda xp, a, b: xp.linalg.cross(a, b), (In((2, 3)), In((3,)))),
    _linalg("matrix_power", lambda a: sw.matrix_power(_well_conditioned(a), -2),
            lambda xp, a: xp.linalg.matrix_power(_well_conditioned_xp(xp, a), -2), tol=SENSITIVE),
    _linalg("pinv", sw.pinv, lambda xp, a: xp.linalg.pinv(a), (TALL,), tol=SENSITIVE),
]

CASES: list[Case] = ELEMENTWISE + AXIS + LINALG
