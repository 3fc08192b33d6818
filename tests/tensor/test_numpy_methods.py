"""Tensor methods have NumPy's meaning (C-order reshape, ``axis=``, 0-d full reductions), checked against NumPy."""

import numpy as np
import pytest

import strideweave as sw
from strideweave.testing import available_carriers

CARRIERS = available_carriers()
VALUES = np.array([[1.5, -2.0, 3.25], [4.0, 0.5, -6.0]], np.float32)


@pytest.fixture(params=CARRIERS)
def carrier(request):
    return request.param


def _inputs(carrier):
    """The same values stored row-major, and as a transposed view of column-major storage."""
    row_major = sw.tensor(VALUES, carrier=carrier)
    strided = sw.tensor(np.ascontiguousarray(VALUES.T), carrier=carrier).T
    assert strided.layout != row_major.layout and strided.tolist() == VALUES.tolist()
    return [row_major, strided]


def _same(got, expected):
    assert isinstance(got, sw.Tensor), f"expected a Tensor, got {type(got).__name__}"
    expected = np.asarray(expected)
    assert got.shape == expected.shape
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-6, atol=1e-6)


# ----- shape ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("args", [(3, 2), ((3, 2),), ([3, 2],), (-1,), (6,), (1, 6), (2, 1, 3), ((-1, 2),)])
def test_reshape_reads_in_c_order(carrier, args):
    for t in _inputs(carrier):
        _same(t.reshape(*args), VALUES.reshape(*args))
        _same(t.reshape(*args, order="F"), VALUES.reshape(*args, order="F"))


def test_reshape_matches_numpy_on_a_numpy_users_example(carrier):
    t = sw.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], carrier=carrier)
    assert t.reshape((3, 2)).tolist() == [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]
    # the layout-native top-level function stays colexicographic
    assert sw.reshape(t, (3, 2)).tolist() == np.array(t.tolist()).reshape(3, 2, order="F").tolist()


def test_reshape_to_and_from_0d(carrier):
    one = sw.tensor([2.5], carrier=carrier)
    assert one.reshape(()).shape == () and one.reshape(()).item() == 2.5
    assert one.reshape(()).reshape(1, 1).shape == (1, 1)


def test_reshape_rejects_bad_shapes(carrier):
    t = sw.tensor(VALUES, carrier=carrier)
    with pytest.raises(ValueError, match="reshape"):
        t.reshape(4, 2)
    with pytest.raises(ValueError, match="-1"):
        t.reshape(-1, -1)
    with pytest.raises(TypeError, match=r"sw\.reshape"):
        t.reshape(sw.Shape([2, [3, 1]]))
    with pytest.raises(ValueError, match="order"):
        t.reshape(3, 2, order="A")
    with pytest.raises(TypeError, match="ints"):
        t.reshape("six")


def test_flatten_ravel_squeeze(carrier):
    for t in _inputs(carrier):
        _same(t.flatten(), VALUES.flatten())
        _same(t.flatten("F"), VALUES.flatten("F"))
        _same(t.ravel(), VALUES.ravel())
        flat = t.flatten()
        flat[0] = 100.0  # flatten copies, as NumPy's does
        assert t[0, 0].item() == VALUES[0, 0]
    column = sw.tensor(VALUES.reshape(1, 6, 1), carrier=carrier)
    _same(column.squeeze(), VALUES.reshape(1, 6, 1).squeeze())
    _same(column.squeeze(axis=0), VALUES.reshape(1, 6, 1).squeeze(axis=0))
    _same(column.squeeze((0, 2)), VALUES.reshape(1, 6, 1).squeeze((0, 2)))
    with pytest.raises(ValueError, match="extent"):
        column.squeeze(axis=1)


def test_transpose_and_permute(carrier):
    cube = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    t = sw.tensor(cube, carrier=carrier)
    _same(t.transpose(), cube.transpose())
    _same(t.transpose(None), cube.transpose())
    _same(t.transpose(1, 0, 2), cube.transpose(1, 0, 2))
    _same(t.transpose((2, 0, 1)), cube.transpose((2, 0, 1)))
    _same(t.transpose([2, 0, 1]), cube.transpose([2, 0, 1]))
    _same(t.permute(2, 0, 1), cube.transpose(2, 0, 1))
    _same(t.permute((1, 2, 0)), cube.transpose((1, 2, 0)))
    _same(t.T, cube.transpose())  # the Array API's T is unchanged
    with pytest.raises(TypeError, match="order"):
        t.permute()
    with pytest.raises(ValueError, match="permutation"):
        t.transpose(0, 0, 1)


# ----- reductions ----------------------------------------------------------------------------------------

AXES = [None, 0, 1, -1, (0, 1)]


@pytest.mark.parametrize("name", ["sum", "mean", "max", "min", "prod", "std", "var"])
@pytest.mark.parametrize("keepdims", [False, True])
def test_reductions_match_numpy(carrier, name, keepdims):
    for t in _inputs(carrier):
        for axis in AXES:
            got = getattr(t, name)(axis=axis, keepdims=keepdims)
            _same(got, getattr(VALUES, name)(axis=axis, keepdims=keepdims))
            assert got.dtype == sw.DType.Float32
        assert getattr(t, name)().shape == ()  # a full reduction is 0-d, as in NumPy
        _same(getattr(t, name)(0), getattr(VALUES, name)(0))  # axis is the first positional argument


@pytest.mark.parametrize("name", ["argmax", "argmin"])
def test_arg_reductions_match_numpy(carrier, name):
    for t in _inputs(carrier):
        for axis in (None, 0, 1, -1):
            got = getattr(t, name)(axis=axis)
            assert got.dtype.kind == "int"
            _same(got, getattr(VALUES, name)(axis=axis))
            _same(getattr(t, name)(axis=axis, keepdims=True), getattr(VALUES, name)(axis=axis, keepdims=True))


@pytest.mark.parametrize("name", ["any", "all"])
def test_logical_reductions_match_numpy(carrier, name):
    mask = VALUES > 0
    t = sw.tensor(mask, carrier=carrier)
    for axis in AXES:
        for keepdims in (False, True):
            got = getattr(t, name)(axis=axis, keepdims=keepdims)
            assert got.dtype == sw.DType.Bool
            _same(got, getattr(mask, name)(axis=axis, keepdims=keepdims))


def test_std_and_var_take_ddof_or_correction(carrier):
    t = sw.tensor(VALUES, carrier=carrier)
    for name in ("std", "var"):
        expected = getattr(VALUES, name)(axis=0, ddof=1)
        _same(getattr(t, name)(axis=0, ddof=1), expected)
        _same(getattr(t, name)(axis=0, correction=1), expected)
        with pytest.raises(ValueError, match="not both"):
            getattr(t, name)(ddof=1, correction=1)


def test_reductions_take_a_dtype(carrier):
    t = sw.tensor(np.array([[1, 2, 3], [4, 5, 6]], np.int32), carrier=carrier)
    assert t.sum(dtype=np.float32).dtype == sw.DType.Float32
    _same(t.sum(dtype=np.float32), np.float32(21))
    _same(sw.tensor(VALUES, carrier=carrier).mean(axis=1, dtype=sw.DType.Float32), VALUES.mean(axis=1))


def test_reductions_refuse_out(carrier):
    t = sw.tensor(VALUES, carrier=carrier)
    with pytest.raises(TypeError, match="out="):
        t.sum(out=np.empty(()))


def test_cumsum_matches_numpy(carrier):
    for t in _inputs(carrier):
        _same(t.cumsum(), VALUES.cumsum())  # None: over the C-order flattened values
        _same(t.cumsum(axis=0), VALUES.cumsum(axis=0))
        _same(t.cumsum(1), VALUES.cumsum(1))


# ----- gradients through the methods ---------------------------------------------------------------------

def test_method_gradients_match_torch(carrier):
    torch = pytest.importorskip("torch")
    w0 = np.linspace(-1.0, 1.0, 6, dtype=np.float32).reshape(3, 2)

    def program(x, w, lib):
        y = x.reshape(3, 2) * w
        z = y.transpose(1, 0) if lib == "sw" else y.permute(1, 0)
        if lib == "sw":
            return z.max(axis=1).sum() + z.mean(axis=0).prod() + x.std(axis=1, ddof=1).sum() + x.cumsum(1).var()
        return (z.max(dim=1).values.sum() + z.mean(dim=0).prod() + x.std(dim=1, correction=1).sum()
                + x.cumsum(1).var(correction=0))

    x = sw.tensor(VALUES, carrier=carrier)
    loss = program(x, sw.tensor(w0, carrier=carrier), "sw")
    assert loss.shape == ()
    loss.backward()  # a 0-d Float32 result needs no gradient argument
    tx = torch.tensor(VALUES, requires_grad=True)
    expected = program(tx, torch.tensor(w0), "torch")
    expected.backward()
    np.testing.assert_allclose(loss.item(), expected.item(), rtol=1e-5)
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-4, atol=1e-5)


# ----- copies, dtypes, formatting ------------------------------------------------------------------------

def test_clone_is_a_differentiable_copy(carrier):
    x = sw.tensor(VALUES, carrier=carrier)
    c = x.clone()
    _same(c, VALUES)
    c[0, 0] = 9.0
    assert x[0, 0].item() == VALUES[0, 0]  # fresh storage
    (x.clone() * 3.0).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.full(VALUES.shape, 3.0, np.float32))


@pytest.mark.parametrize(("dtype", "numpy_dtype"), [(sw.DType.Int32, np.int32), (np.int32, np.int32),
                                                  ("int32", np.int32), (np.float64, np.float64), (bool, np.bool_)])
def test_astype_takes_strideweave_and_numpy_dtypes(carrier, dtype, numpy_dtype):
    if carrier == "jax" and numpy_dtype is np.float64:
        numpy_dtype = np.float32  # JAX without x64 mode stores float64 in 32 bits, as jax.numpy does
        with pytest.warns(UserWarning, match="truncated to dtype float32"):
            got = sw.tensor(VALUES, carrier=carrier).astype(dtype)
    else:
        got = sw.tensor(VALUES, carrier=carrier).astype(dtype)
    assert got.numpy().dtype == numpy_dtype
    _same(got, VALUES.astype(numpy_dtype))


def test_astype_rejects_unknown_dtypes(carrier):
    with pytest.raises(TypeError, match="dtype"):
        sw.tensor(VALUES, carrier=carrier).astype("not a dtype")


def test_format_like_numpy(carrier):
    t = sw.tensor(VALUES, carrier=carrier)
    loss = t.sum()
    assert f"{loss:.3f}" == f"{VALUES.sum():.3f}"
    assert f"{t[0, 1]:+.2e}" == f"{VALUES[0, 1]:+.2e}"
    assert f"{t.reshape(6)[2:3]:.1f}" == f"{VALUES.reshape(6)[2]:.1f}"  # a one-element 1-D Tensor
    assert f"{t}" == str(t)
    with pytest.raises(TypeError, match="one-element"):
        f"{t:.3f}"
