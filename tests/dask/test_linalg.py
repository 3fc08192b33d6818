"""The standard's linalg on the "dask" carrier: values against NumPy float64, gradients against torch float64.

Every function of ``xp.linalg`` runs on Dask Tensors whose matrices are split
across chunks (and on a stack of matrices), through the same program written
over array-api-compat's torch namespace in float64 with autograd. Outputs
whose sign the factorisation leaves free (eigenvectors, singular vectors)
enter as their squares, which are unique.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")
torch = pytest.importorskip("torch")
xp_torch = pytest.importorskip("array_api_compat.torch")

import strideweave as sw  # noqa: E402
import strideweave.array_api as xp  # noqa: E402

F32 = np.float32
RNG = np.random.default_rng(7)


@pytest.fixture(autouse=True)
def sync():
    with dask.config.set(scheduler="synchronous"):
        yield


def _general(*shape):
    return RNG.standard_normal(shape) + 3 * np.eye(shape[-1])  # well conditioned


def _spd(*shape):
    a = RNG.standard_normal(shape)
    return a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])


def _tall(*shape):
    return RNG.standard_normal(shape)


def _vectors(*shape):
    return RNG.standard_normal(shape)


# name -> (inputs, program over a namespace ``ns``: returns the outputs, differentiable ones first).
CASES = {
    "cholesky": ([_spd(3, 3)], lambda ns, a: (ns.linalg.cholesky(a),)),
    "cholesky_upper": ([_spd(2, 3, 3)], lambda ns, a: (ns.linalg.cholesky(a, upper=True),)),
    "det": ([_general(2, 3, 3)], lambda ns, a: (ns.linalg.det(a),)),
    "slogdet": ([_general(3, 3)], lambda ns, a: ns.linalg.slogdet(a)[::-1]),
    "eigh": ([_spd(2, 3, 3)], lambda ns, a: (ns.linalg.eigh(a)[0], ns.linalg.eigh(a)[1] ** 2)),
    "eigvalsh": ([_spd(3, 3)], lambda ns, a: (ns.linalg.eigvalsh(a),)),
    "inv": ([_general(2, 3, 3)], lambda ns, a: (ns.linalg.inv(a),)),
    "solve_matrix": ([_general(3, 3), _tall(3, 2)], lambda ns, a, b: (ns.linalg.solve(a, b),)),
    "solve_vector": ([_general(3, 3), _vectors(3)], lambda ns, a, b: (ns.linalg.solve(a, b),)),
    "svd": ([_tall(4, 3)], lambda ns, a: tuple(o ** 2 for o in ns.linalg.svd(a, full_matrices=False))),
    "svdvals": ([_tall(2, 4, 3)], lambda ns, a: (ns.linalg.svdvals(a),)),
    "qr": ([_tall(4, 3)], lambda ns, a: tuple(ns.linalg.qr(a))),
    "pinv": ([_tall(4, 3)], lambda ns, a: (ns.linalg.pinv(a),)),
    "matrix_norm_fro": ([_tall(4, 3)], lambda ns, a: (ns.linalg.matrix_norm(a),)),
    "matrix_norm_nuc": ([_tall(4, 3)], lambda ns, a: (ns.linalg.matrix_norm(a, ord="nuc"),)),
    "matrix_norm_2": ([_tall(2, 4, 3)], lambda ns, a: (ns.linalg.matrix_norm(a, ord=2),)),
    "matrix_norm_inf": ([_tall(4, 3)], lambda ns, a: (ns.linalg.matrix_norm(a, ord=math.inf),)),
    "vector_norm": ([_tall(4, 3)], lambda ns, a: (ns.linalg.vector_norm(a, axis=0, ord=3),)),
    "trace": ([_tall(2, 4, 3)], lambda ns, a: (ns.linalg.trace(a, offset=1),)),
    # fewer rows than columns: dask.array.eye builds a broken graph for the gradient's mask
    "trace_wide": ([_tall(3, 1, 3)], lambda ns, a: (ns.linalg.trace(a, offset=2),)),
    "diagonal_wide": ([_tall(2, 3)], lambda ns, a: (ns.linalg.diagonal(a, offset=1),)),
    # a negative offset shorter than the columns: entry j sits in column j
    "trace_below": ([_tall(2, 3, 3)], lambda ns, a: (ns.linalg.trace(a, offset=-1),)),
    "diagonal_below": ([_tall(3, 3)], lambda ns, a: (ns.linalg.diagonal(a, offset=-2),)),
    "diagonal": ([_tall(4, 3)], lambda ns, a: (ns.linalg.diagonal(a, offset=-1),)),
    "cross": ([_vectors(2, 3), _vectors(3)], lambda ns, a, b: (ns.linalg.cross(a, b),)),
    "outer": ([_vectors(4), _vectors(3)], lambda ns, a, b: (ns.linalg.outer(a, b),)),
    "matrix_power": ([_general(3, 3)], lambda ns, a: (ns.linalg.matrix_power(a, -2),)),
    "matmul": ([_tall(2, 4, 3), _tall(3, 2)], lambda ns, a, b: (ns.linalg.matmul(a, b),)),
    "tensordot": ([_tall(4, 3), _tall(3, 2)], lambda ns, a, b: (ns.linalg.tensordot(a, b, axes=1),)),
    "vecdot": ([_tall(4, 3), _tall(4, 3)], lambda ns, a, b: (ns.linalg.vecdot(a, b, axis=-2),)),
    "matrix_transpose": ([_tall(2, 4, 3)], lambda ns, a: (ns.linalg.matrix_transpose(a),)),
}


def _on_dask(host):
    # Chunks of two along every axis: each matrix lies across several chunks.
    return sw.tensor(da.from_array(host.astype(F32), chunks=2))


@pytest.mark.parametrize("name", sorted(CASES))
def test_linalg_on_dask_matches_numpy_and_torch(name):
    inputs, program = CASES[name]
    leaves = [_on_dask(h) for h in inputs]
    outs = program(xp, *leaves)
    refs = [torch.tensor(h.astype(F32).astype(np.float64), requires_grad=True) for h in inputs]
    want = program(xp_torch, *refs)
    weights = [RNG.standard_normal(tuple(w.shape)) for w in want]
    differentiable = [o for o in outs if o.dtype == xp.float32]
    loss = sum(xp.sum(o * _on_dask(w)) for o, w in zip(differentiable, weights))
    loss.backward()
    torch_loss = sum((w_ * torch.from_numpy(w)).sum() for w_, w in zip(want[:len(differentiable)], weights))
    torch_loss.backward()

    computed = sw.compute(*outs, *[leaf.grad for leaf in leaves])
    for got, ref in zip(computed[:len(outs)], want):
        assert got.dtype == (xp.float32 if ref.dtype == torch.float64 else got.dtype)
        np.testing.assert_allclose(got.numpy(), ref.detach().numpy(), rtol=2e-4, atol=2e-5)
    for got, ref in zip(computed[len(outs):], refs):
        np.testing.assert_allclose(got.numpy(), ref.grad.numpy(), rtol=2e-3, atol=2e-4)


def test_cholesky_is_the_lower_factor_and_upper_its_transpose():
    host = _spd(4, 4)
    x = _on_dask(host)
    low = np.linalg.cholesky(host)
    np.testing.assert_allclose(xp.linalg.cholesky(x).numpy(), low, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(xp.linalg.cholesky(x, upper=True).numpy(), low.T, rtol=1e-5, atol=1e-6)


def test_results_keep_numpys_dtype_and_stay_lazy():
    def refuse(*args, **kwargs):
        raise AssertionError("a Dask graph was computed")

    x = _on_dask(_general(3, 3))
    with dask.config.set(scheduler=refuse):
        out = xp.linalg.inv(x)
        assert isinstance(out.carrier, sw.DaskCarrier)
    assert out.dtype == xp.float32  # dask.array.linalg.inv gives float64 for float32


def test_complete_qr_and_full_svd_match_numpy():
    host = _tall(4, 3)
    x = _on_dask(host)
    q, r = xp.linalg.qr(x, mode="complete")
    nq, nr = np.linalg.qr(host.astype(F32), mode="complete")
    np.testing.assert_allclose(q.numpy(), nq, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(r.numpy(), nr, rtol=1e-4, atol=1e-5)
    u, s, vh = xp.linalg.svd(x)
    assert (tuple(u.shape), tuple(s.shape), tuple(vh.shape)) == ((4, 4), (3,), (3, 3))
    np.testing.assert_allclose(s.numpy(), np.linalg.svd(host, compute_uv=False), rtol=1e-5)
    assert int(xp.linalg.matrix_rank(x).numpy()) == 3


def test_a_matrix_in_unequal_chunks_along_its_two_axes():
    # A product's result stored column by column comes back in 2 x 3 chunks: each matrix must be
    # rechunked whole before NumPy's function runs on it (apply_gufunc's own rechunk breaks the graph).
    host = _tall(3, 3)
    x = _on_dask(host)
    spd = x @ x.mT + 1.0 * xp.eye(3, dtype=x.dtype, device=x.device)
    loss = xp.sum(xp.linalg.det(spd) * xp.linalg.cholesky(spd))
    loss.backward()
    t = torch.tensor(host.astype(F32).astype(np.float64), requires_grad=True)
    s = t @ t.mT + torch.eye(3, dtype=torch.float64)
    want = (torch.linalg.det(s) * torch.linalg.cholesky(s)).sum()
    want.backward()
    np.testing.assert_allclose(loss.numpy(), [want.item()], rtol=1e-4)
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-3, atol=1e-4)


@pytest.mark.parametrize("axis", [0, 2])
def test_take_of_one_index_over_one_chunk(axis):
    # dask.array's take of a one-element Dask index over a single chunk reports a wrong shape.
    host = _tall(2, 1, 3)
    x = _on_dask(host)
    out = xp.take(x, xp.asarray([0], device=x.device), axis=axis)
    loss = xp.sum(out * out)
    loss.backward()
    t = torch.tensor(host.astype(F32).astype(np.float64), requires_grad=True)
    want = torch.index_select(t, axis, torch.tensor([0]))
    (want * want).sum().backward()
    np.testing.assert_allclose(out.numpy(), want.detach().numpy(), rtol=1e-6)
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-5)
