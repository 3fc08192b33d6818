"""Complex operands (forward only) through operators, scalars, writes and linalg; linalg's dtype rules."""

import numpy as np
import pytest

import strideweave as sw
import strideweave.array_api as xp


def values(t):
    return np.asarray(t.numpy())


def test_operators_on_complex_tensors_and_complex_scalars(carrier):
    z = xp.asarray(np.array([1 + 1j, 2 - 3j], np.complex64), device=carrier)
    np.testing.assert_allclose(values(-z), [-1 - 1j, -2 + 3j])
    np.testing.assert_allclose(values(abs(z)), np.abs([1 + 1j, 2 - 3j]), rtol=1e-6)
    assert abs(z).dtype is xp.float32
    np.testing.assert_allclose(values(z * 1j), [-1 + 1j, 3 + 2j])
    np.testing.assert_allclose(values(2j - z), [-1 + 1j, -2 + 5j])
    real = xp.asarray([1.0, 2.0], device=carrier)
    lifted = real * 1j                     # a complex scalar lifts a real Tensor to complex64
    assert lifted.dtype is xp.complex64
    np.testing.assert_allclose(values(lifted), [1j, 2j])


def test_complex_python_scalars_build_and_write_complex_tensors(carrier):
    assert sw.tensor(0j).dtype is xp.complex64 and xp.asarray(1 + 2j).dtype is xp.complex64
    z = xp.zeros(3, dtype=xp.complex64, device=carrier)
    z[1] = 2 + 1j
    np.testing.assert_array_equal(values(z), [0, 2 + 1j, 0])
    scalar = xp.asarray(1j, device=carrier)
    scalar[()] = 3j
    assert complex(scalar) == 3j
    real = xp.zeros(2, device=carrier)
    with pytest.raises(TypeError, match="complex value"):
        real[0] = 1j
    np.testing.assert_array_equal(values(real), [0, 0])   # nothing was written


def _stack(seed=0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((2, 3, 3)) + 1j * rng.standard_normal((2, 3, 3))).astype(np.complex64)


@pytest.mark.parametrize("name", ["inv", "det", "pinv", "svdvals", "matrix_rank"])
def test_complex_linalg_matches_numpy(carrier, name):
    a = _stack()
    got = getattr(xp.linalg, name)(xp.asarray(a, device=carrier))
    want = np.linalg.svd(a, compute_uv=False) if name == "svdvals" else getattr(np.linalg, name)(a)
    np.testing.assert_allclose(values(got), want, rtol=1e-4, atol=1e-4)


def test_complex_factorisations_keep_real_outputs_real(carrier):
    a = _stack(1)
    x = xp.asarray(a, device=carrier)
    u, s, vh = xp.linalg.svd(x, full_matrices=False)
    assert (u.dtype, s.dtype, vh.dtype) == (xp.complex64, xp.float32, xp.complex64)
    np.testing.assert_allclose(values(u) * values(s)[..., None, :] @ values(vh), a, atol=1e-4)
    sign, logabs = xp.linalg.slogdet(x)
    assert sign.dtype is xp.complex64 and logabs.dtype is xp.float32
    np.testing.assert_allclose(values(logabs), np.linalg.slogdet(a)[1], rtol=1e-4)
    hermitian = a @ np.conj(np.swapaxes(a, -1, -2)) + 3 * np.eye(3, dtype=np.complex64)
    upper = values(xp.linalg.cholesky(xp.asarray(hermitian, device=carrier), upper=True))
    np.testing.assert_allclose(np.conj(np.swapaxes(upper, -1, -2)) @ upper, hermitian, atol=1e-3)


def test_rtol_may_be_an_array_with_one_value_per_matrix(carrier):
    a = np.stack([np.diag([4.0, 2.0, 1.0]), np.diag([4.0, 2.0, 1.0])]).astype(np.float32)
    rtol = xp.asarray(np.array([0.1, 0.4], np.float32), device=carrier)
    assert values(xp.linalg.matrix_rank(xp.asarray(a, device=carrier), rtol=rtol)).tolist() == [3, 2]
    pinv = values(xp.linalg.pinv(xp.asarray(a, device=carrier), rtol=rtol))
    np.testing.assert_allclose(np.diagonal(pinv, axis1=-2, axis2=-1), [[0.25, 0.5, 1.0], [0.25, 0.5, 0.0]])
    elsewhere = xp.asarray(np.array([0.1, 0.4], np.float32), device="numpy")   # moved to x's carrier
    assert values(xp.linalg.matrix_rank(xp.asarray(a, device=carrier), rtol=elsewhere)).tolist() == [3, 2]


def test_trace_and_diagonal_take_any_numeric_dtype(carrier):
    ints = xp.asarray(np.arange(9, dtype=np.int8).reshape(3, 3), device=carrier)
    trace = xp.linalg.trace(ints)
    assert int(trace) == 12 and trace.dtype is xp.__array_namespace_info__().default_dtypes(
        device=carrier)["integral"]                          # integers accumulate like sum
    flags = xp.asarray(np.eye(3, dtype=bool), device=carrier)
    assert values(xp.linalg.diagonal(flags)).tolist() == [True, True, True]
    a = sw.tensor(np.arange(9, dtype=np.float32).reshape(3, 3), carrier=carrier)
    xp.linalg.trace(a, offset=1).backward()                # still differentiable on Float32
    np.testing.assert_array_equal(values(a.grad), np.eye(3, k=1))


def test_vecdot_conjugates_the_first_argument_and_keeps_the_operand_dtype(carrier):
    x1 = xp.asarray(np.array([1 + 2j, 3 - 1j], np.complex64), device=carrier)
    x2 = xp.asarray(np.array([2 - 1j, 1 + 3j], np.complex64), device=carrier)
    assert complex(xp.linalg.vecdot(x1, x2)) == pytest.approx(np.vdot([1 + 2j, 3 - 1j], [2 - 1j, 1 + 3j]))
    small = xp.asarray(np.array([1, 2], np.int8), device=carrier)
    assert xp.vecdot(small, small).dtype is xp.int8


def test_indexing_beside_an_empty_mode_gives_an_empty_view(carrier):
    x = xp.zeros((2, 0, 3), device=carrier)
    assert x[1].shape == (0, 3) and values(x[1]).shape == (0, 3)
    assert xp.tensordot(x[1], xp.zeros((3, 2), device=carrier), axes=1).shape == (0, 2)


def test_unique_all_on_every_carrier_matches_numpy(carrier):
    host = np.array([[3.0, 1.0], [3.0, np.nan], [np.nan, 2.0]], np.float32)
    got = xp.unique_all(xp.asarray(host, device=carrier))
    want = np.unique_all(host)                 # NaNs are distinct, as the standard asks
    for part, expected in zip(got, want):
        np.testing.assert_array_equal(values(part), expected)
    assert got.inverse_indices.shape == host.shape


def test_searchsorted_returns_the_default_index_dtype(carrier):
    x1 = xp.asarray(np.array([1, 2, 3], np.uint8), device=carrier)
    out = xp.searchsorted(x1, xp.asarray(np.array([2, 4], np.uint8), device=carrier), side="right")
    assert values(out).tolist() == [2, 3]
    assert out.dtype is xp.__array_namespace_info__().default_dtypes(device=carrier)["indexing"]


@pytest.mark.parametrize("ord", [2, 1, float("inf"), float("-inf"), 0])
def test_vector_norm_of_a_zero_d_array(carrier, ord):
    norm = xp.linalg.vector_norm(xp.asarray(-3.0, device=carrier), ord=ord)
    assert norm.shape == () and float(norm) == (1.0 if ord == 0 else 3.0)


def test_cumulative_sums_keep_an_explicit_dtype(carrier):
    x = xp.asarray(np.array([200, 100, 3], np.uint8), device=carrier)
    wrapped = xp.cumulative_sum(x, dtype=xp.uint8)          # accumulates in uint8, wrapping around
    assert wrapped.dtype is xp.uint8 and values(wrapped).tolist() == [200, 44, 47]
    product = xp.cumulative_prod(x, dtype=xp.uint8, include_initial=True)
    assert product.dtype is xp.uint8 and values(product).tolist() == [1, 200, 32, 96]


def test_unique_functions_of_complex_values(carrier):
    z = xp.asarray(np.array([1j, 2, 1j], np.complex64), device=carrier)
    counted = xp.unique_counts(z)
    assert dict(zip(values(counted.values).tolist(), values(counted.counts).tolist())) == {1j: 2, 2: 1}
    rebuilt = xp.unique_inverse(z)
    np.testing.assert_array_equal(values(rebuilt.values)[values(rebuilt.inverse_indices)], [1j, 2, 1j])
    assert sorted(values(xp.unique_values(z)).tolist(), key=abs) == [1j, 2]


def test_matmul_and_tensordot_promote_mixed_integer_dtypes(carrier):
    a = xp.asarray(np.arange(6, dtype=np.int16).reshape(2, 3), device=carrier)
    b = xp.asarray(np.arange(3, dtype=np.int8).reshape(3, 1), device=carrier)
    product = a @ b
    assert product.dtype is xp.int16 and values(product).ravel().tolist() == [5, 14]
    assert xp.tensordot(a, b, axes=1).dtype is xp.int16
    w = sw.tensor(np.ones((2, 3), np.float32), carrier=carrier)
    (w @ sw.tensor(np.arange(3, dtype=np.int32).reshape(3, 1), carrier=carrier)).sum().backward()
    np.testing.assert_array_equal(values(w.grad), [[0, 1, 2], [0, 1, 2]])
