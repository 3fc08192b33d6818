"""The linalg extension (ops/linalg_ext.py): VJPs against float64 central differences on every carrier.

Symmetric inputs are formed inside the function (``a @ a.T``) so that
central differences perturb a symmetric matrix, which is what eigh and
cholesky read. Inputs keep eigen- and singular values distinct and matrices
well conditioned, where the spectral VJPs are defined.
"""

import math

import numpy as np
import pytest
from ops_cases import check

import strideweave as sw

RNG = np.random.default_rng(31)


def t(shape, shift=0.0):
    values = RNG.uniform(-1.0, 1.0, shape)
    if shift:
        values = values + shift * np.eye(shape[-1])
    return sw.tensor(values.astype(np.float32))


def sym(a):
    return a @ sw.permute(a, (1, 0))


A = t((3, 3), shift=3.0)
BATCH = t((2, 3, 3), shift=3.0)
TALL, WIDE = t((4, 3)), t((3, 4))

CASES = {
    "inv": (lambda a: sw.inv(a), [BATCH]),
    "solve": (lambda a, b: sw.solve(a, b), [BATCH, t((3, 2))]),
    "solve_vector": (lambda a, b: sw.solve(a, b), [A, t((3,))]),
    "det": (lambda a: sw.det(a), [A]),
    "slogdet": (lambda a: sw.slogdet(a).logabsdet, [BATCH]),
    "cholesky": (lambda a: sw.cholesky(sym(a)), [A]),
    "cholesky_upper": (lambda a: sw.cholesky(sym(a), upper=True), [A]),
    "eigh": (lambda a: (lambda r: r.eigenvectors * r.eigenvectors * r.eigenvalues)(sw.eigh(sym(a))), [A]),
    "eigvalsh": (lambda a: sw.eigvalsh(sym(a)), [A]),
    # squares only: singular vectors are defined up to sign, and backends choose signs differently
    "svd_tall": (lambda a: (lambda r: r.U * r.U * r.S + 0.5 * sw.sum(r.Vh * r.Vh * r.S))(
        sw.svd(a, full_matrices=False)), [TALL]),
    "svd_wide": (lambda a: (lambda r: r.Vh * r.Vh + sw.sum(r.U * r.U * r.S))(sw.svd(a, full_matrices=False)), [WIDE]),
    "svd_full_square": (lambda a: (lambda r: r.U * r.U + r.Vh * r.Vh * r.S)(sw.svd(a)), [A]),
    "svdvals": (lambda a: sw.svdvals(a), [TALL]),
    "qr": (lambda a: (lambda r: r.Q * r.Q * 2.0 + sw.sum(r.R * r.R))(sw.qr(a)), [TALL]),
    "vector_norm": (lambda a: sw.vector_norm(a, axis=1), [TALL]),
    "vector_norm_3": (lambda a: sw.vector_norm(a, ord=3, axis=(0, 1), keepdims=True), [TALL]),
    "vector_norm_inf": (lambda a: sw.vector_norm(a, ord=math.inf, axis=0), [TALL]),
    "matrix_norm_fro": (lambda a: sw.matrix_norm(a), [TALL]),
    "matrix_norm_nuc": (lambda a: sw.matrix_norm(a, ord="nuc"), [TALL]),
    "matrix_norm_2": (lambda a: sw.matrix_norm(a, ord=2, keepdims=True), [WIDE]),
    "matrix_norm_1": (lambda a: sw.matrix_norm(a, ord=1), [TALL]),
    "matrix_norm_inf": (lambda a: sw.matrix_norm(a, ord=-math.inf), [TALL]),
    "outer": (lambda a, b: sw.outer(a, b), [t((3,)), t((4,))]),
    "trace": (lambda a: sw.trace(a, offset=1), [TALL]),
    "diagonal": (lambda a: sw.diagonal(a, offset=-1), [TALL]),
    "cross": (lambda a, b: sw.cross(a, b), [t((2, 3)), t((3,))]),
    "matrix_power": (lambda a: sw.matrix_power(a, 3), [A]),
    "matrix_power_negative": (lambda a: sw.matrix_power(a, -2), [A]),
    "pinv": (lambda a: sw.pinv(a), [WIDE]),
}


@pytest.mark.parametrize("name", list(CASES))
def test_gradcheck(name):
    fn, inputs = CASES[name]
    check(fn, inputs)


def test_forward_matches_numpy():
    a, m = A.numpy(), TALL.numpy()
    np.testing.assert_allclose(sw.det(A).numpy(), np.linalg.det(a), rtol=1e-5)
    np.testing.assert_allclose(sw.pinv(TALL).numpy(), np.linalg.pinv(m), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(sw.matrix_norm(TALL, ord="nuc").numpy(), np.linalg.norm(m, "nuc"), rtol=1e-5)
    np.testing.assert_allclose(sw.matrix_norm(TALL, ord=1).numpy(), np.linalg.norm(m, 1), rtol=1e-6)
    np.testing.assert_allclose(sw.matrix_power(A, -2).numpy(), np.linalg.matrix_power(a, -2), rtol=1e-4)
    assert sw.matrix_norm(TALL).layout.rank == 0 and sw.det(A).layout.rank == 0
    assert int(sw.matrix_rank(TALL).numpy()) == 3
    np.testing.assert_array_equal(sw.matrix_power(A, 0).numpy(), np.eye(3))


def test_unused_outputs_contribute_nothing():
    x = t((3, 3), shift=3.0)
    sw.sum(sw.slogdet(x).logabsdet).backward()
    np.testing.assert_allclose(x.grad.numpy(), np.linalg.inv(x.numpy()).T, rtol=1e-5)


def test_full_matrices_svd_refuses_the_extra_vectors():
    x = t((4, 3))
    sw.sum(sw.svd(x).S).backward()  # singular values alone are fine
    with pytest.raises(ValueError, match="full_matrices=False"):
        sw.sum(sw.svd(x).U).backward()


@pytest.mark.parametrize(("call", "error", "message"), [
    (lambda: sw.inv(TALL), ValueError, r"square matrices \(\.\.\., M, M\), got shape \(4, 3\)"),
    (lambda: sw.solve(A, t((4,))), ValueError, "x2 of shape \\(4,\\) does not fit"),
    (lambda: sw.det(sw.tensor([[1, 2], [3, 4]])), TypeError, "det expects a floating-point Tensor"),
    (lambda: sw.qr(TALL, mode="r"), ValueError, "mode must be 'reduced' or 'complete'"),
    (lambda: sw.matrix_norm(TALL, ord=3), ValueError, "ord must be 'fro'"),
    (lambda: sw.cross(t((2,)), t((2,))), ValueError, "extent 3"),
    (lambda: sw.outer(TALL, t((3,))), ValueError, "outer expects 1-D Tensors"),
])
def test_bad_input(call, error, message):
    with pytest.raises(error, match=message):
        call()
