"""Backward rules whose cost grows as torch's: gradients equal torch float64 autograd on every carrier.

``cumulative_prod`` through zeros (torch's O(n) rule per lane), ``det`` by
solve with the cofactor form only at singular matrices, ``broadcast_to`` and
``concat`` backward; ``isin`` and ``einsum`` forward and gradients.
"""

import numpy as np
import pytest

import strideweave as sw
import strideweave.array_api as swxp
from strideweave import testing

torch = pytest.importorskip("torch")
pytest.importorskip("array_api_compat")

CARRIERS = testing.available_carriers(lazy=True)
WITH_LINALG = [c for c in CARRIERS if c != "dask"]  # dask.array has no linalg.det


def namespace(x):
    from array_api_compat import array_namespace

    return array_namespace(x)


def compare(fn, inputs, carriers=CARRIERS, **kwargs):
    report = testing.compare_with_native(fn, inputs, carriers=carriers, references=("torch",), **kwargs)
    assert report.passed, str(report)


ZERO_ROWS = {
    "first": [0.0, 1.3, -0.7, 2.1, 0.5],
    "middle": [0.8, -1.1, 0.0, 1.7, 0.6],
    "last": [1.2, 0.9, -1.4, 0.7, 0.0],
    "several": [0.0, 1.5, 0.0, -0.8, 0.0],
    "none": [0.4, -1.2, 1.9, 0.7, -0.3],
}


@pytest.mark.parametrize("include_initial", [False, True])
@pytest.mark.parametrize("where", list(ZERO_ROWS))
def test_cumulative_prod_through_zeros_1d(where, include_initial):
    def fn(x):
        return namespace(x).cumulative_prod(x, include_initial=include_initial)

    compare(fn, [np.array(ZERO_ROWS[where])])


@pytest.mark.parametrize("include_initial", [False, True])
@pytest.mark.parametrize("axis", [0, 1])
def test_cumulative_prod_through_zeros_2d(axis, include_initial):
    rows = np.array(list(ZERO_ROWS.values()))          # a zero first, in the middle, last, several, none
    x = rows if axis == 1 else rows.T.copy()

    def fn(x):
        return namespace(x).cumulative_prod(x, axis=axis, include_initial=include_initial)

    compare(fn, [x])


def _det(x):
    return namespace(x).linalg.det(x)


def test_det_backward_by_solve_on_a_stack():
    rng = np.random.default_rng(37)
    compare(_det, [rng.standard_normal((3, 4, 4)) + 2 * np.eye(4)], carriers=WITH_LINALG)


def test_det_backward_mixes_solve_and_cofactors_per_matrix():
    # The singular matrix gets its cofactor matrix (the reference's gradient of the Laplace expansion
    # is the same there; torch.linalg.det gives 0 at exactly singular inputs), the others the solve.
    singular = np.array([[1.0, 2.0], [2.0, 4.0]])
    invertible = np.array([[2.0, 1.0], [1.0, 3.0]])
    x = swxp.asarray(np.stack([singular, invertible]), dtype=swxp.float32)
    swxp.sum(swxp.linalg.det(x) * swxp.asarray([1.5, -0.5], dtype=swxp.float32)).backward()
    cofactor = np.array([[4.0, -2.0], [-2.0, 1.0]])
    want = np.stack([1.5 * cofactor, -0.5 * np.linalg.det(invertible) * np.linalg.inv(invertible).T])
    np.testing.assert_allclose(x.grad.to_array(), want, rtol=1e-5, atol=1e-6)


ISIN_CASES = {
    "floats": (np.array([[0.5, 2.0, np.nan], [3.0, -1.0, 2.0]]), np.array([2.0, 7.0, -1.0, 2.0, np.nan])),
    "ints": (np.array([4, 1, 9, 1, 0], dtype=np.int64), np.array([1, 0, 3], dtype=np.int64)),
    "mixed": (np.array([1, 2, 3], dtype=np.int64), np.array([2.0, 3.5])),
    "below_and_above": (np.array([-5.0, 10.0, 1.0]), np.array([1.0, 2.0])),
    "only_nan_tests": (np.array([-np.inf, 1.0, np.nan]), np.array([np.nan, np.nan])),
    "empty_tests": (np.array([1.0, 2.0]), np.array([], dtype=np.float64)),
    "bools": (np.array([True, False, True]), np.array([False])),
}


@pytest.mark.parametrize("carrier", CARRIERS)
@pytest.mark.parametrize("case", list(ISIN_CASES))
def test_isin_matches_numpy(case, carrier):
    values, tests = ISIN_CASES[case]
    x = sw.tensor(values, carrier=carrier)
    for invert in (False, True):
        got = swxp.isin(x, tests, invert=invert).to_array()
        np.testing.assert_array_equal(np.asarray(got), np.isin(values, tests, invert=invert))


EINSUMS = {
    "matmul": ("ij,jk->ik", [(3, 4), (4, 5)]),
    "chain": ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)]),
    "batched": ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    "shared_kept": ("ij,ij,j->i", [(3, 4), (3, 4), (4,)]),
    "outer_and_sum": ("i,j,k->", [(2,), (3,), (4,)]),
    "lonely_label": ("ijk,k->i", [(2, 3, 4), (4,)]),
    "broadcast_ellipsis": ("...ij,...jk->...ik", [(2, 3, 4), (1, 4, 5)]),
    "diagonal": ("ii->i", [(4, 4)]),
    "trace": ("ii", [(4, 4)]),
    "diagonal_of_3d": ("iij->ij", [(3, 3, 2)]),
    "diagonal_then_product": ("iij,jk->ik", [(3, 3, 2), (2, 4)]),
    "transposed_diagonal": ("jii->ij", [(2, 3, 3)]),
}


@pytest.mark.parametrize("name", list(EINSUMS))
def test_einsum_gradients_equal_torch(name):
    subscripts, shapes = EINSUMS[name]
    rng = np.random.default_rng(3)

    def fn(*xs):
        return namespace(xs[0]).einsum(subscripts, *xs)

    compare(fn, [rng.standard_normal(s) for s in shapes])


@pytest.mark.parametrize("subscripts", ["ii->i", "iij->ij"])
def test_einsum_diagonal_is_a_strided_view(subscripts):
    x = swxp.asarray(np.arange(18.0).reshape(3, 3, 2)[..., 0] if subscripts == "ii->i" else
                     np.arange(18.0).reshape(3, 3, 2), dtype=swxp.float32)
    d = swxp.einsum(subscripts, x)
    assert d._carriers[0] is x._carriers[0]
    np.testing.assert_array_equal(d.to_array(), np.einsum(subscripts, x.to_array()))


def test_einsum_never_forms_the_full_product():
    import tracemalloc

    m = 160
    a = swxp.asarray(np.random.default_rng(1).standard_normal((m, m)), dtype=swxp.float32)
    b = swxp.asarray(np.random.default_rng(2).standard_normal((m, m)), dtype=swxp.float32)
    swxp.einsum("ij,jk->ik", a, b)  # loads every code path before measuring
    tracemalloc.start()
    out = swxp.einsum("ij,jk->ik", a, b)
    swxp.sum(out).backward()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 16 * m * m * 8, f"peak {peak} bytes; the m^3 product alone is {m ** 3 * 4}"
    np.testing.assert_allclose(out.to_array(), a.to_array() @ b.to_array(), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("name", ["chain", "shared_kept", "outer_and_sum", "diagonal_then_product"])
def test_einsum_greedy_order_without_opt_einsum(name, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "opt_einsum", None)  # ``import opt_einsum`` raises ImportError
    subscripts, shapes = EINSUMS[name]
    rng = np.random.default_rng(4)
    arrays = [rng.standard_normal(s) for s in shapes]
    xs = [swxp.asarray(a, dtype=swxp.float32) for a in arrays]
    out = swxp.einsum(subscripts, *xs)
    swxp.sum(out).backward()
    np.testing.assert_allclose(out.to_array(), np.einsum(subscripts, *arrays), rtol=1e-4, atol=1e-5)
    ts = [torch.tensor(a, requires_grad=True) for a in arrays]
    torch.einsum(subscripts, *ts).sum().backward()
    for x, t in zip(xs, ts):
        np.testing.assert_allclose(x.grad.to_array(), t.grad.numpy(), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize(("shape", "target"), [((4, 1), (3, 4, 5)), ((5,), (2, 3, 5)), ((1, 1), (2, 2)),
                                               ((2, 1, 3), (2, 4, 3))])
def test_broadcast_to_gradient_equals_torch(shape, target):
    def fn(x):
        xp = namespace(x)
        return xp.sin(xp.broadcast_to(x, target)) * 1.5

    compare(fn, [np.random.default_rng(5).standard_normal(shape)])


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_concat_gradient_equals_torch(axis):
    rng = np.random.default_rng(6)
    shapes = {0: [(2, 3), (4, 3), (1, 3)], 1: [(3, 2), (3, 4), (3, 1)], -1: [(3, 2), (3, 4), (3, 1)]}[axis]

    def fn(a, b, c):
        xp = namespace(a)
        return xp.concat([a, b * b, c], axis=axis)

    compare(fn, [rng.standard_normal(s) for s in shapes])


def test_concat_of_a_transposed_and_a_c_ordered_operand():
    a = swxp.asarray(np.arange(6.0).reshape(3, 2), dtype=swxp.float32)
    b = swxp.permute_dims(swxp.asarray(np.arange(9.0).reshape(3, 3), dtype=swxp.float32), (1, 0))
    out = swxp.concat([a, b], axis=1)
    np.testing.assert_array_equal(out.to_array(), np.concatenate([a.to_array(), b.to_array()], axis=1))
    swxp.sum(out * swxp.asarray(np.arange(15.0).reshape(3, 5), dtype=swxp.float32)).backward()
    np.testing.assert_array_equal(a.grad.to_array(), np.arange(15.0).reshape(3, 5)[:, :2])
