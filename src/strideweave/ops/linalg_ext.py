"""The Array API ``linalg`` extension with VJPs (batched over leading axes, as the standard says).

Rules follow the matrix-calculus results PyTorch uses (``FunctionsManual.cpp``):
solve / inv / det through the inverse, cholesky through two triangular
solves, eigh and svd through the spectral formulas (distinct eigen / singular
values), qr for tall or square inputs. Several outputs (slogdet, eigh, svd,
qr) come from one recorded node (``_natural.packed_op``); an output nobody
uses contributes a zero cotangent. Norms built from other differentiable
functions (matrix_norm, pinv, matrix_power) are composed, so they need no
rule of their own.
"""

from __future__ import annotations

import math
import operator
from collections import namedtuple
from typing import Any

from ..carriers import one_call, transfer
from ..carriers.dask_namespace import standard_namespace, standard_rule
from ..carriers.jax_carrier import is_tracer
from ..tensors.broadcasting import sum_to as _sum_to
from ..tensors.tensor import Tensor
from ..tensors.values import kind_of
from ._args import axes as _axes
from ._args import tensor as _tensor
from ._natural import natural_op, packed_op, unpack
from .arrays import _c_reshape, _forward_only, _run
from .elementwise import abs as abs_
from .linalg import matmul
from .manipulation import astype
from .reduction import max as max_
from .reduction import min as min_
from .reduction import sum as sum_

__all__ = [
    "cholesky", "cross", "det", "diagonal", "eigh", "eigvalsh", "inv", "matrix_norm", "matrix_power", "matrix_rank",
    "outer", "pinv", "qr", "slogdet", "solve", "svd", "svdvals", "trace", "vector_norm",
]

EighResult = namedtuple("EighResult", ["eigenvalues", "eigenvectors"])
QRResult = namedtuple("QRResult", ["Q", "R"])
SlogdetResult = namedtuple("SlogdetResult", ["sign", "logabsdet"])
SVDResult = namedtuple("SVDResult", ["U", "S", "Vh"])


def _mT(xp, a):
    return xp.matrix_transpose(a)


def _device(a):
    return getattr(a, "device", None)


_NUMERIC = ("int", "uint", "float", "complex")
#: Real and complex floating dtypes; complex inputs are computed forward only (only Float32 is differentiable).
_FLOATING = ("float", "complex")


def _square(x: Tensor, name: str) -> Tensor:
    x = _matrices(x, name)
    shape = tuple(x._layout.mode_sizes)
    if len(shape) < 2 or shape[-1] != shape[-2]:
        raise ValueError(f"{name} expects a stack of square matrices (..., M, M), got shape {shape}")
    return x


def _of_kinds(x: Any, name: str, kinds: tuple = _FLOATING) -> Tensor:
    """``x`` as a Tensor whose dtype is one of the ``kinds`` (TypeError naming ``name`` otherwise)."""
    x = _tensor(x, name)
    if x._dtype.kind not in kinds:
        expected = "a floating-point Tensor (real or complex)" if kinds == _FLOATING else "a numeric Tensor"
        raise TypeError(f"{name} expects {expected}, got dtype {x._dtype!r}")
    return x


def _matrices(x: Tensor, name: str, kinds: tuple | None = _FLOATING) -> Tensor:
    """``x`` as a Tensor holding a stack of matrices of one of the dtype ``kinds`` (None: any)."""
    x = _tensor(x, name) if kinds is None else _of_kinds(x, name, kinds)
    if len(x._layout.mode_sizes) < 2:
        raise ValueError(f"{name} expects a stack of matrices (..., M, N), got shape {tuple(x._layout.mode_sizes)}")
    return x


# ----- inverse, solve, determinants ---------------------------------------------------------------

def _inv_forward(xp, a):
    out = xp.linalg.inv(a)
    return out, out


def _inv_vjp(xp, g, inverse):
    t = _mT(xp, inverse)
    return (-(t @ g @ t),)


_Inv = natural_op("inv", _inv_forward, _inv_vjp, reads_inputs=False)


def inv(x, /, *, options=None) -> Tensor:
    """Inverse of each square matrix; VJP ``-A^-T g A^-T``."""
    return _run(_Inv, (_square(x, "inv"),), options)


def _solve_forward(xp, a, b):
    out = xp.linalg.solve(a, b)
    return out, (a, out)


def _solve_vjp(xp, g, kept, *, vector, a_shape, b_shape):
    a, x = kept
    at = _mT(xp, a)
    if vector:
        gb = xp.linalg.solve(at, g[..., None])[..., 0]
        ga = -(gb[..., :, None] * x[..., None, :])
    else:
        gb = xp.linalg.solve(at, g)
        ga = -(gb @ _mT(xp, x))
    return _sum_to(xp, ga, a_shape), _sum_to(xp, gb, b_shape)


_Solve = natural_op("solve", lambda xp, a, b, **shapes: _solve_forward(xp, a, b), _solve_vjp, reads_inputs=False)


def solve(x1, x2, /, *, options=None) -> Tensor:
    """Solve ``x1 @ x = x2`` (``x2`` a stack of matrices, or one vector when 1-D); VJPs through ``x1^-T``."""
    x1 = _square(x1, "solve")
    x2 = _of_kinds(x2, "solve (x2)")
    s1, s2 = tuple(x1._layout.mode_sizes), tuple(x2._layout.mode_sizes)
    vector = len(s2) == 1
    if s2[-1 if vector else -2] != s1[-1]:
        raise ValueError(f"solve: x2 of shape {s2} does not fit the {s1[-1]}x{s1[-1]} matrices of x1 {s1}")
    return _run(_Solve, (x1, x2), options, vector=vector, a_shape=s1, b_shape=s2)


def _det_forward(xp, a):
    d = xp.linalg.det(a)
    return d, (d, a)


def _others_product(xp, s):
    """For each i, the product of ``s[..., j]`` over j != i, without dividing (exact at zeros)."""
    ones = xp.ones_like(s[..., :1])
    before = xp.cumulative_prod(xp.concat([ones, s[..., :-1]], axis=-1), axis=-1)
    after = xp.flip(xp.cumulative_prod(xp.concat([ones, xp.flip(s, axis=-1)[..., :-1]], axis=-1), axis=-1), axis=-1)
    return before * after


def _cofactors(xp, a):
    """The cofactor matrix of each matrix, through its SVD: defined for singular matrices too."""
    u, s, vh = xp.linalg.svd(a, full_matrices=False)
    # A = U S Vh, so cof(A) = det(U) det(Vh) U diag(products of the other singular values) Vh.
    sign = xp.linalg.det(u) * xp.linalg.det(vh)
    return sign[..., None, None] * ((u * _others_product(xp, s)[..., None, :]) @ vh)


def _det_vjp(xp, g, kept):
    # torch's rule: g det(A) A^-T, by one solve against A^T; the cofactor matrix (exact where A is
    # singular, torch's subgradient there) only for the matrices whose determinant is 0.
    d, a = kept
    scaled = g * d
    n = a.shape[-1]
    eye = xp.eye(n, dtype=a.dtype, device=getattr(a, "device", None))
    singular = d == 0
    if not is_tracer(d) and not bool(xp.any(singular)):  # traced: the general rule, which holds either way
        return (xp.linalg.solve(_mT(xp, a), scaled[..., None, None] * eye),)
    mask = singular[..., None, None]
    invertible = xp.where(mask, eye, a)  # an identity in place of each singular matrix, for the solve
    scaled = xp.where(singular, xp.zeros_like(scaled), scaled)
    by_solve = xp.linalg.solve(_mT(xp, invertible), scaled[..., None, None] * eye)
    return (xp.where(mask, g[..., None, None] * _cofactors(xp, a), by_solve),)


_Det = natural_op("det", _det_forward, _det_vjp, reads_inputs=False)


def det(x, /, *, options=None) -> Tensor:
    """Determinant of each square matrix; VJP ``g det(A) A^-T`` by a solve, the cofactor matrix where singular."""
    return _run(_Det, (_square(x, "det"),), options)


def _slogdet_forward(xp, a):
    return xp.linalg.slogdet(a)


def _slogdet_vjp(xp, gs, outs, a):
    return (gs[1][..., None, None] * _mT(xp, xp.linalg.inv(a)),)


_Slogdet = packed_op("slogdet", _slogdet_forward, _slogdet_vjp, reads_inputs=True)


def _packed(op_class, tensors, options, **params):
    if any(t._dtype.kind == "complex" for t in tensors):
        # Never differentiable, so no node carries the outputs; packing them into one buffer
        # would also make the real ones (singular values, log-determinants) complex.
        return _forward_only(lambda xp, *arrays: tuple(op_class.outputs_rule(xp, *arrays, **params)), *tensors,
                             options=options, name=op_class.__name__.lower())
    op = op_class()
    packed = op(*tensors, params=params, options=options)
    return unpack(packed, op.saved[1][0])


def slogdet(x, /, *, options=None) -> SlogdetResult:
    """Sign and log-absolute determinant; only ``logabsdet`` is differentiable (VJP ``g A^-T``)."""
    return SlogdetResult(*_packed(_Slogdet, (_square(x, "slogdet"),), options))


# ----- factorisations -----------------------------------------------------------------------------

def _cholesky_forward(xp, a, *, upper):
    low = xp.linalg.cholesky(a)
    if not upper:
        return low, low
    high = _mT(xp, low)
    return (xp.conj(high) if xp.isdtype(a.dtype, "complex floating") else high), low  # U = L^H


def _cholesky_vjp(xp, g, low, *, upper):
    if upper:
        g = _mT(xp, g)
    lt = _mT(xp, low)
    phi = xp.tril(lt @ g)
    n = phi.shape[-1]
    phi = phi - 0.5 * phi * xp.eye(n, dtype=phi.dtype, device=_device(phi))
    # L^-T phi L^-1 by two solves against L^T, then the symmetric part.
    left = xp.linalg.solve(lt, phi)
    grad = _mT(xp, xp.linalg.solve(lt, _mT(xp, left)))
    return (0.5 * (grad + _mT(xp, grad)),)


_Cholesky = natural_op("cholesky", _cholesky_forward, _cholesky_vjp, reads_inputs=False)


def cholesky(x, /, *, upper=False, options=None) -> Tensor:
    """Cholesky factor of each symmetric positive-definite matrix (lower, or upper with ``upper=True``)."""
    return _run(_Cholesky, (_square(x, "cholesky"),), options, upper=bool(upper))


def _eigh_forward(xp, a):
    return xp.linalg.eigh(a)


def _eigh_vjp(xp, gs, outs):
    gw, gv = gs
    w, v = outs
    vt = _mT(xp, v)
    # skew(V^T gV)_ij / (w_j - w_i) off the diagonal, gw on it (distinct eigenvalues). The skew part
    # makes the gradient symmetric, as torch's is: only that part acts on a symmetric input.
    diff = w[..., None, :] - w[..., :, None]
    n = w.shape[-1]
    eye = xp.eye(n, dtype=w.dtype, device=_device(w))
    vtgv = vt @ gv
    inner = 0.5 * (vtgv - _mT(xp, vtgv)) / (diff + eye) * (1 - eye) + gw[..., None, :] * eye
    return (v @ inner @ vt,)


_Eigh = packed_op("eigh", _eigh_forward, _eigh_vjp)


def eigh(x, /, *, options=None) -> EighResult:
    """Eigenvalues (ascending) and eigenvectors of symmetric matrices; VJPs need distinct eigenvalues."""
    return EighResult(*_packed(_Eigh, (_square(x, "eigh"),), options))


def _eigvalsh_forward(xp, a):
    w, v = xp.linalg.eigh(a)
    return w, v


def _eigvalsh_vjp(xp, g, v):
    return ((v * g[..., None, :]) @ _mT(xp, v),)


_Eigvalsh = natural_op("eigvalsh", _eigvalsh_forward, _eigvalsh_vjp, reads_inputs=False)


def eigvalsh(x, /, *, options=None) -> Tensor:
    """Eigenvalues of symmetric matrices, ascending; VJP ``V diag(g) V^T``."""
    return _run(_Eigvalsh, (_square(x, "eigvalsh"),), options)


def _svd_forward(xp, a, *, full_matrices):
    return xp.linalg.svd(a, full_matrices=full_matrices)


def _svd_grad(xp, gu, gs, gvh, u, s, vh):
    """The reduced-SVD VJP (torch's ``svd_backward``, real case); ``gu`` / ``gvh`` may be None."""
    m, n, k = u.shape[-2], vh.shape[-1], s.shape[-1]
    eye = xp.eye(k, dtype=s.dtype, device=_device(s))
    if gu is None and gvh is None:
        return (u * gs[..., None, :]) @ vh
    v = _mT(xp, vh)
    s2 = s * s
    e = s2[..., None, :] - s2[..., :, None] + eye          # E_ij = s_j^2 - s_i^2, 1 on the diagonal
    inner = gs[..., None, :] * eye
    skew_u = 0 if gu is None else _mT(xp, u) @ gu
    skew_v = 0 if gvh is None else vh @ _mT(xp, gvh)  # V^T gV with gV = gVh^T
    if gu is not None:
        skew_u = skew_u - _mT(xp, skew_u)
        inner = inner + skew_u * s[..., None, :] / e * (1 - eye)
    if gvh is not None:
        skew_v = skew_v - _mT(xp, skew_v)
        inner = inner + s[..., :, None] * skew_v / e * (1 - eye)
    grad = u @ inner @ vh
    if gu is not None and m > k:
        gu_sinv = gu / s[..., None, :]
        grad = grad + (gu_sinv - u @ (_mT(xp, u) @ gu_sinv)) @ vh
    if gvh is not None and n > k:
        gv_sinv = _mT(xp, gvh) / s[..., None, :]
        grad = grad + u @ _mT(xp, gv_sinv - v @ (vh @ gv_sinv))
    return grad


def _svd_vjp(xp, gs, outs, *, full_matrices):
    gu, gsv, gvh = gs
    u, s, vh = outs
    k = s.shape[-1]
    if full_matrices and (u.shape[-1] != k or vh.shape[-2] != k):
        # The extra singular vectors are not unique: like torch, differentiate only through the reduced ones.
        # Traced cotangents cannot be checked: the extra vectors' part is dropped unseen.
        if not is_tracer(gu) and (bool(xp.any(gu[..., k:] != 0)) or bool(xp.any(gvh[..., k:, :] != 0))):
            raise ValueError("svd: the gradient through the extra singular vectors of full_matrices=True is not "
                             "defined; call svd(x, full_matrices=False)")
        u, gu, vh, gvh = u[..., :k], gu[..., :k], vh[..., :k, :], gvh[..., :k, :]
    return (_svd_grad(xp, gu, gsv, gvh, u, s, vh),)


_SVD = packed_op("svd", _svd_forward, _svd_vjp)


def svd(x, /, *, full_matrices=True, options=None) -> SVDResult:
    """Singular value decomposition ``U diag(S) Vh``; VJPs need distinct non-zero singular values."""
    return SVDResult(*_packed(_SVD, (_matrices(x, "svd"),), options, full_matrices=bool(full_matrices)))


def _svdvals_forward(xp, a):
    u, s, vh = xp.linalg.svd(a, full_matrices=False)
    return s, (u, vh)


def _svdvals_vjp(xp, g, kept):
    u, vh = kept
    return ((u * g[..., None, :]) @ vh,)


_Svdvals = natural_op("svdvals", _svdvals_forward, _svdvals_vjp, reads_inputs=False)


def svdvals(x, /, *, options=None) -> Tensor:
    """Singular values, descending; VJP ``U diag(g) Vh``."""
    return _run(_Svdvals, (_matrices(x, "svdvals"),), options)


def _qr_forward(xp, a, *, mode):
    return xp.linalg.qr(a, mode=mode)


def _qr_vjp(xp, gs, outs, *, mode):
    gq, gr = gs
    q, r = outs
    m, n = q.shape[-2], r.shape[-1]
    if m < n or q.shape[-1] != n:
        raise NotImplementedError(f"qr: the VJP covers tall or square inputs in reduced form; got a {m}x{n} "
                                  f"input with mode={mode!r}")
    # gA = (gQ + Q copyltu(M)) R^-T with M = R gR^T - gQ^T Q (torch's linalg_qr_backward, m >= n).
    prod = r @ _mT(xp, gr) - _mT(xp, gq) @ q
    low = xp.tril(prod, k=-1)
    copyltu = low + _mT(xp, low) + prod * xp.eye(n, dtype=prod.dtype, device=_device(prod))
    rhs = gq + q @ copyltu
    return (_mT(xp, xp.linalg.solve(r, _mT(xp, rhs))),)


_QR = packed_op("qr", _qr_forward, _qr_vjp)


def qr(x, /, *, mode="reduced", options=None) -> QRResult:
    """QR decomposition (``mode``: 'reduced' or 'complete'); VJPs for tall or square inputs."""
    if mode not in ("reduced", "complete"):
        raise ValueError(f"qr: mode must be 'reduced' or 'complete', got {mode!r}")
    return QRResult(*_packed(_QR, (_matrices(x, "qr"),), options, mode=mode))


# ----- norms --------------------------------------------------------------------------------------

def _vector_norm_forward(xp, a, *, axes, keepdims, ord):
    if a.ndim == 0:
        # As a one-element vector: array-api-compat's torch norm cannot take a 0-d input with an infinite ord.
        out = xp.reshape(xp.linalg.vector_norm(xp.reshape(a, (1,)), ord=ord), ())
        return out, (a, out)
    out = xp.linalg.vector_norm(a, axis=axes, keepdims=True, ord=ord)
    shape = out.shape if keepdims else tuple(n for i, n in enumerate(a.shape) if i not in axes)
    return xp.reshape(out, shape), (a, out)


def _vector_norm_vjp(xp, g, kept, *, axes, keepdims, ord):
    a, norm = kept
    g = xp.reshape(g, norm.shape)
    sign = xp.sign(a)
    if ord == 0:
        return (xp.zeros_like(a),)
    if math.isinf(ord):
        # Like max / min: the elements attaining the norm (or NaN) share the gradient evenly.
        magnitude = xp.abs(a)
        hits = xp.astype((magnitude == norm) | xp.isnan(magnitude), a.dtype)
        return (g * sign * hits / xp.sum(hits, axis=axes, keepdims=True),)
    if ord < 1:
        # torch's rule: a zero element gets no gradient (not 0 * inf), the rest sign(a) |a|^(p-1) ||a||^(1-p).
        zero = a == 0
        scaled = sign * xp.where(zero, xp.zeros_like(a), xp.abs(xp.where(zero, xp.ones_like(a), a)) ** (ord - 1))
        return (scaled * g * norm ** (1 - ord),)
    safe = xp.where(norm == 0, xp.ones_like(norm), norm)
    # d ||a||_p / d a = sign(a) |a|^(p-1) / ||a||^(p-1); zero where the norm is zero (torch's convention).
    scale = xp.where(norm == 0, xp.zeros_like(norm), g / safe ** (ord - 1))
    return (sign * xp.abs(a) ** (ord - 1) * scale,)


_VectorNorm = natural_op("vector_norm", _vector_norm_forward, _vector_norm_vjp, reads_inputs=False)


def vector_norm(x, /, *, axis=None, keepdims=False, ord=2, options=None) -> Tensor:
    """The ``ord``-norm over ``axis`` (None: all elements); at a zero norm the gradient is zero."""
    x = _of_kinds(x, "vector_norm")
    if isinstance(ord, bool) or not isinstance(ord, (int, float)):
        raise TypeError(f"vector_norm: ord must be a number, got {ord!r}")
    axes = _axes(axis, len(x._layout.mode_sizes), "vector_norm")
    return _run(_VectorNorm, (x,), options, axes=axes, keepdims=bool(keepdims), ord=float(ord))


def matrix_norm(x, /, *, keepdims=False, ord="fro", options=None) -> Tensor:
    """Matrix norm over the last two axes: 'fro', 'nuc', 1, -1, 2, -2, inf, -inf (composed, so differentiable)."""
    x = _matrices(x, "matrix_norm")
    shape = tuple(x._layout.mode_sizes)
    last, row = len(shape) - 1, len(shape) - 2
    out_shape = shape[:-2] + ((1, 1) if keepdims else ())
    if ord == "fro":
        return vector_norm(x, axis=(-2, -1), keepdims=keepdims, ord=2, options=options)
    if ord in ("nuc", 2, -2):
        s = svdvals(x, options=options)
        reduce = {"nuc": sum_, 2: max_, -2: min_}[ord]
        return _c_reshape(reduce(s, modes=(last - 1,), keepdims=True), out_shape, options)
    if ord in (1, -1, math.inf, -math.inf):
        sums = sum_(abs_(x), modes=(row if ord in (1, -1) else last,), keepdims=True)
        reduce = max_ if ord > 0 else min_
        return _c_reshape(reduce(sums, modes=(last if ord in (1, -1) else row,), keepdims=True), out_shape, options)
    raise ValueError(f"matrix_norm: ord must be 'fro', 'nuc', 1, -1, 2, -2, inf or -inf, got {ord!r}")


# ----- products, diagonals, powers -------------------------------------------------------------------

_Outer = natural_op("outer", lambda xp, a, b: (a[:, None] * b[None, :], None),
                    lambda xp, g, kept, a, b: (g @ b, _mT(xp, g) @ a))


def outer(x1, x2, /, *, options=None) -> Tensor:
    """Outer product of two vectors."""
    x1, x2 = _tensor(x1, "outer"), _tensor(x2, "outer")
    for x in (x1, x2):
        if len(x._layout.mode_sizes) != 1:
            raise ValueError(f"outer expects 1-D Tensors, got shape {tuple(x._layout.mode_sizes)}")
    return _run(_Outer, (x1, x2), options)


def _diagonal_mask(xp, rows, cols, offset, dtype, device):
    return xp.eye(rows, cols, k=offset, dtype=dtype, device=device)


def _trace_forward(xp, a, *, offset):
    return xp.linalg.trace(a, offset=offset), a.shape


def _trace_vjp(xp, g, shape, *, offset):
    return (g[..., None, None] * _diagonal_mask(xp, shape[-2], shape[-1], offset, g.dtype, _device(g)),)


_Trace = natural_op("trace", _trace_forward, _trace_vjp, reads_inputs=False)


def trace(x, /, *, offset=0, dtype=None, options=None) -> Tensor:
    """Sum along diagonal ``offset`` of the last two axes."""
    x = _matrices(x, "trace", _NUMERIC)
    if dtype is not None and dtype is not x._dtype:
        x = astype(x, dtype, options=options)
    return _run(_Trace, (x,), options, offset=operator.index(offset))


def _diagonal_forward(xp, a, *, offset):
    return xp.linalg.diagonal(a, offset=offset), a.shape


def _diagonal_vjp(xp, g, shape, *, offset):
    rows, cols = shape[-2], shape[-1]
    extent = rows if offset >= 0 else cols
    pad = xp.zeros((*g.shape[:-1], extent - g.shape[-1]), dtype=g.dtype, device=_device(g))
    full = xp.concat([g, pad], axis=-1)
    mask = _diagonal_mask(xp, rows, cols, offset, g.dtype, _device(g))
    # Element (i, j) of the diagonal is diagonal entry i (offset >= 0) or j (offset < 0), counted from 0.
    return (mask * (full[..., :, None] if offset >= 0 else full[..., None, :]),)


_Diagonal = natural_op("diagonal", _diagonal_forward, _diagonal_vjp, reads_inputs=False)


def diagonal(x, /, *, offset=0, options=None) -> Tensor:
    """Diagonal ``offset`` of the last two axes (a copy)."""
    return _run(_Diagonal, (_matrices(x, "diagonal", None),), options, offset=operator.index(offset))


def _cross_vjp(xp, g, kept, a, b, *, axis):
    return (_sum_to(xp, xp.linalg.cross(b, g, axis=axis), a.shape),
            _sum_to(xp, xp.linalg.cross(g, a, axis=axis), b.shape))


_Cross = natural_op("cross", lambda xp, a, b, *, axis: (xp.linalg.cross(a, b, axis=axis), None), _cross_vjp)


def cross(x1, x2, /, *, axis=-1, options=None) -> Tensor:
    """Cross product of 3-vectors along ``axis`` (negative, of the broadcast shape)."""
    x1, x2 = _tensor(x1, "cross"), _tensor(x2, "cross")
    s1, s2 = tuple(x1._layout.mode_sizes), tuple(x2._layout.mode_sizes)
    index = operator.index(axis)
    if not -min(len(s1), len(s2)) <= index < 0 or s1[index] != 3 or s2[index] != 3:
        raise ValueError(f"cross: axis {axis!r} must be a negative axis of extent 3 in both shapes {s1} and {s2}")
    return _run(_Cross, (x1, x2), options, axis=index)


_Eye = natural_op("identity", lambda xp, a: (xp.broadcast_to(xp.eye(a.shape[-1], dtype=a.dtype,
                                                                     device=_device(a)), a.shape), None),
                  lambda xp, g, kept: (xp.zeros_like(g),), reads_inputs=False)


@one_call
def matrix_power(x, n, /, *, options=None) -> Tensor:
    """``x`` raised to the integer power ``n`` (negative: of the inverse), by repeated squaring."""
    x = _square(x, "matrix_power")
    n = operator.index(n)
    if n == 0:
        return _run(_Eye, (x,), options)
    base = inv(x, options=options) if n < 0 else x
    result, n = None, abs(n)
    while n:
        if n & 1:
            result = base if result is None else matmul(result, base, options=options)
        n >>= 1
        if n:
            base = matmul(base, base, options=options)
    return result  # type: ignore[return-value]  # n > 0 here: the loop set it


def _cutoff(xp, a, s, rtol):
    """Singular values at or below this are dropped: ``rtol`` (default: max(M, N) * eps) times the largest."""
    if rtol is None:
        rtol = max(a.shape[-2:]) * float(xp.finfo(a.dtype).eps)
    elif not isinstance(rtol, float):
        rtol = rtol[..., None]  # one per matrix of the stack
    return rtol * xp.max(s, axis=-1, keepdims=True)


def _rtol(rtol, x: Tensor, name: str):
    """``rtol`` as a float, or as a native array on ``x``'s carrier (one value per matrix, broadcast)."""
    if rtol is None:
        return None
    if isinstance(rtol, Tensor):
        # A copy: pinv's backward reads it again, after writes into rtol that no node of the graph counts.
        kind = kind_of(x._carriers[0])
        return kind.namespace.asarray(transfer(rtol._read_array(), kind), copy=True)
    if isinstance(rtol, bool) or not isinstance(rtol, (int, float)):
        raise TypeError(f"{name}: rtol must be a float, an array or None, got {rtol!r}")
    return float(rtol)


def _pinv_forward(xp, a, *, rtol):
    u, s, vh = xp.linalg.svd(a, full_matrices=False)
    cutoff = _cutoff(xp, a, s, rtol)
    keep = s > cutoff
    s_inv = xp.where(keep, 1 / xp.where(keep, s, xp.ones_like(s)), xp.zeros_like(s))
    v, u_h = _mT(xp, vh), _mT(xp, u)
    if xp.isdtype(a.dtype, "complex floating"):
        v, u_h = xp.conj(v), xp.conj(u_h)  # V S^+ U^H: conjugate transposes
        s_inv = xp.astype(s_inv, a.dtype)
    return (v * s_inv[..., None, :]) @ u_h, None


def _pinv_vjp(xp, g, kept, a, *, rtol):
    # The pseudo-inverse's derivative (Golub & Pereyra) for inputs of constant rank.
    p = _pinv_forward(xp, a, rtol=rtol)[0]
    pt, gt = _mT(xp, p), g
    m, n = a.shape[-2], a.shape[-1]
    eye_m = xp.eye(m, dtype=a.dtype, device=_device(a))
    eye_n = xp.eye(n, dtype=a.dtype, device=_device(a))
    return (-(pt @ gt @ pt) + (eye_m - a @ p) @ _mT(xp, gt) @ p @ pt + pt @ p @ _mT(xp, gt) @ (eye_n - p @ a),)


_Pinv = natural_op("pinv", _pinv_forward, _pinv_vjp)


def pinv(x, /, *, rtol=None, options=None) -> Tensor:
    """Moore-Penrose pseudo-inverse (singular values below ``rtol * max`` dropped)."""
    x = _matrices(x, "pinv")
    return _run(_Pinv, (x,), options, rtol=_rtol(rtol, x, "pinv"))


def matrix_rank(x, /, *, rtol=None, options=None) -> Tensor:
    """Number of singular values above ``rtol * max`` (not differentiable)."""
    x = _matrices(x, "matrix_rank")
    tolerance = _rtol(rtol, x, "matrix_rank")

    def rank(xp, a):
        xp = standard_namespace(xp)
        s = xp.linalg.svdvals(a)
        return xp.count_nonzero(s > _cutoff(xp, a, s, tolerance), axis=-1)

    return _forward_only(rank, x, options=options)


# ----- Dask ------------------------------------------------------------------------------------------

# Rules called with a namespace whose ``linalg`` and ``eye`` follow the standard (Dask's do not:
# carriers/dask_namespace.py); other namespaces pass through unchanged.
for _op in (_Inv, _Solve, _Det, _Slogdet, _Cholesky, _Eigh, _Eigvalsh, _SVD, _Svdvals, _QR, _Pinv, _Cross,
            _Trace, _Diagonal, _Eye):
    _op.forward_rule = staticmethod(standard_rule(_op.forward_rule))
    _op.vjp_rule = staticmethod(standard_rule(_op.vjp_rule))
    if "outputs_rule" in vars(_op):
        _op.outputs_rule = staticmethod(standard_rule(_op.outputs_rule))
