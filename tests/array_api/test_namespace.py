"""strideweave.array_api: the array-object surface, indexing, 0-d, promotion, devices and errors on every carrier."""

import subprocess
import sys

import array_api_compat
import numpy as np
import pytest

import strideweave as sw
import strideweave.array_api as xp


def values(t):
    return np.asarray(t.numpy())


def test_namespace_is_found_through_array_api_compat(carrier):
    x = xp.asarray([1.0, 2.0], device=carrier)
    assert isinstance(x, sw.Tensor)
    assert x.__array_namespace__() is xp
    assert array_api_compat.array_namespace(x) is xp
    assert xp.__array_api_version__ == "2024.12"
    assert xp.float32 is sw.DType.Float32 and xp.int64 is sw.DType.Int64 and xp.bool is sw.DType.Bool


def test_zero_d_arrays_and_scalar_conversion(carrier):
    x = xp.asarray(2.5, device=carrier)
    assert x.shape == () and x.ndim == 0 and x.size == 1 and x.layout == sw.Layout((), ())
    assert float(x) == 2.5 and bool(x) and int(xp.asarray(7, device=carrier)) == 7
    assert np.asarray(x.to_array()).shape == () and x.item() == 2.5
    assert [1, 2, 3][xp.asarray(1, device=carrier)] == 2  # __index__
    with pytest.raises(TypeError, match="integer"):
        [1][x]
    full = xp.sum(xp.ones((2, 3), device=carrier))
    assert full.shape == () and float(full) == 6.0
    with pytest.raises(TypeError, match="one element"):
        float(xp.ones(3, device=carrier))


def test_backward_from_a_zero_d_result_needs_no_gradient(carrier):
    x = xp.asarray([[1.0, 2.0], [3.0, 4.0]], device=carrier)
    loss = xp.sum(x * x)
    assert loss.shape == ()
    loss.backward()
    np.testing.assert_allclose(values(x.grad), 2 * np.array([[1.0, 2.0], [3.0, 4.0]]))


def test_reshape_is_c_order_and_reductions_take_axis(carrier):
    x = xp.reshape(xp.arange(6, device=carrier), (2, 3))
    assert values(x).tolist() == [[0, 1, 2], [3, 4, 5]]
    assert values(xp.reshape(x, (-1,))).tolist() == list(range(6))
    assert values(xp.sum(x, axis=1)).tolist() == [3, 12]
    assert xp.sum(x, axis=(0, 1), keepdims=True).shape == (1, 1)
    assert values(xp.max(x, axis=-1)).tolist() == [2, 5]
    assert xp.mean(xp.astype(x, xp.float32)).shape == ()
    with pytest.raises(ValueError, match="size 6"):
        xp.reshape(x, (4, 2))
    with pytest.raises(IndexError, match="axis 2"):
        xp.sum(x, axis=2)


def test_unsigned_sums_widen_to_the_unsigned_type_of_the_default_integers_width(carrier):
    x = xp.asarray(np.array([200, 100, 7], dtype=np.uint8), device=carrier)
    total = xp.sum(x)
    default = xp.__array_namespace_info__().default_dtypes(device=carrier)["integral"]
    assert total.dtype is {32: xp.uint32, 64: xp.uint64}[default.bits]  # the standard's rule (uint64 beside int64)
    assert int(total) == 307                   # no wraparound at 256
    assert int(xp.prod(xp.asarray(np.array([20, 20], dtype=np.uint8), device=carrier))) == 400
    running = xp.cumulative_sum(x)
    assert running.dtype is total.dtype and values(running).tolist() == [200, 300, 307]
    wrapped = xp.sum(x, dtype=xp.uint8)        # asked for uint8: it wraps, as NumPy's uint8 accumulation does
    assert wrapped.dtype is xp.uint8 and int(wrapped) == 307 % 256


def test_info_lists_only_dtypes_the_carrier_can_store(carrier):
    info = xp.__array_namespace_info__()
    listed = info.dtypes(device=carrier)
    assert "float32" in listed and "bool" in listed
    for name, dtype in listed.items():
        assert xp.zeros(2, dtype=dtype, device=carrier).dtype is dtype, name
    for name, dtype in info.default_dtypes(device=carrier).items():
        assert dtype in listed.values(), name
    assert set(info.dtypes(device=carrier, kind="real floating")) <= set(listed)


def test_full_takes_its_dtype_from_the_fill_value(carrier):
    assert xp.full((), 0j, device=carrier).dtype is xp.complex64
    assert xp.full((2,), True, device=carrier).dtype is xp.bool
    assert xp.full((2,), 1.5, device=carrier).dtype is xp.float32


@pytest.mark.parametrize("key", [
    (1, 2), (slice(None, None, -1),), (Ellipsis, 0), (None, slice(None), 1), (slice(None, None, -2), slice(1, None)),
    (-1,), (slice(3, 0, -1), Ellipsis),
])
def test_indexing_matches_numpy(carrier, key):
    ref = np.arange(12, dtype=np.float32).reshape(3, 4)
    x = xp.asarray(ref, device=carrier)
    got = x[key]
    assert got.shape == ref[key].shape
    np.testing.assert_array_equal(values(got), ref[key])


def test_mask_and_integer_array_indexing_differentiate(carrier):
    ref = np.arange(6, dtype=np.float32).reshape(2, 3)
    x = xp.asarray(ref, device=carrier)
    mask = x > 1.5
    picked = x[mask]
    np.testing.assert_array_equal(values(picked), ref[ref > 1.5])
    rows = x[xp.asarray([1, 1, 0], device=carrier)]
    np.testing.assert_array_equal(values(rows), ref[[1, 1, 0]])
    xp.sum(picked * picked).backward()
    np.testing.assert_allclose(values(x.grad), np.where(ref > 1.5, 2 * ref, 0))
    y = xp.asarray(ref, device=carrier)
    xp.sum(y[xp.asarray([1, 1, 0], device=carrier)]).backward()  # repeated rows accumulate
    np.testing.assert_allclose(values(y.grad), [[1, 1, 1], [2, 2, 2]])
    z = xp.asarray(ref, device=carrier)
    xp.sum(z[::-1, ::-2] * 3.0).backward()
    np.testing.assert_allclose(values(z.grad), [[3, 0, 3], [3, 0, 3]])


def test_indexing_errors(carrier):
    x = xp.ones((2, 3), device=carrier)
    with pytest.raises(IndexError, match="shape"):
        x[2]
    with pytest.raises(IndexError, match="shape"):
        x[0, 0, 0]
    with pytest.raises(IndexError, match="single ellipsis"):
        x[..., ...]
    with pytest.raises(IndexError, match="unsupported index"):
        x["a"]


def test_setitem_writes_through_and_bumps_the_version(carrier):
    x = xp.zeros((2, 3), device=carrier)
    before = x.carrier.version
    x[0, 1] = 5.0
    x[x > 4] = 2.0
    x[1] = xp.asarray([1.0, 2.0, 3.0], device=carrier)
    assert values(x).tolist() == [[0, 2, 0], [1, 2, 3]]
    assert x.carrier.version > before
    with pytest.raises(ValueError, match="shape"):
        x[0] = xp.ones(4, device=carrier)


def test_operators_reflected_and_promotion(carrier):
    f = xp.asarray([1.0, 2.0], device=carrier)
    i = xp.asarray([1, 2], dtype=xp.int32, device=carrier)
    assert values(2 - f).tolist() == [1, 0] and values(2 / f).tolist() == [2, 1]
    assert values(7 // i).tolist() == [7, 3] and values(7 % i).tolist() == [0, 1]
    assert values(i & 3).tolist() == [1, 2] and values(~i).tolist() == [-2, -3] and values(i << 1).tolist() == [2, 4]
    assert (f + i).dtype is xp.float32  # int with float: the float dtype (one rule for every carrier)
    assert (i + 1).dtype is xp.int32 and (f * 2).dtype is xp.float32
    assert xp.result_type(xp.int8, xp.uint8) is xp.int16
    assert values(f @ f).shape == () and float(f @ f) == 5.0
    assert xp.asarray([[1.0, 2.0]], device=carrier).mT.shape == (2, 1)


def test_inplace_dunders(carrier):
    w = xp.asarray([1.0, 2.0], device=carrier)
    version = w.carrier.version
    w -= 0.5
    w *= 2
    assert values(w).tolist() == [1.0, 3.0] and w.carrier.version == version + 2 and w.is_leaf
    i = xp.asarray([1, 2], dtype=xp.int32, device=carrier)
    with pytest.raises(TypeError, match="dtype"):
        i += 0.5
    with pytest.raises(ValueError, match="shape"):
        w += xp.ones((2, 2), device=carrier)
    h = w * 1.0
    h += 1  # recorded, as torch records it: multiply does not read its result
    assert not h.is_leaf and values(h).tolist() == [2.0, 4.0]
    xp.sum(h * h).backward()
    assert values(w.grad).tolist() == [4.0, 8.0]
    e = xp.exp(w)
    e += 1  # recorded; exp's backward reads the result it overwrote, so backward refuses it
    assert not e.is_leaf
    w.grad = None
    with pytest.raises(RuntimeError, match="in-place modification"):
        xp.sum(e).backward()
    assert w.grad is None


def test_inplace_on_a_saved_tensor_is_named_at_backward(carrier):
    w = xp.asarray([1.0, 2.0], device=carrier)
    loss = xp.sum(w * w)
    w += 1.0
    with pytest.raises(RuntimeError, match="version"):
        loss.backward()


def test_devices(carrier):
    x = xp.ones(3, device=carrier)
    y = xp.asarray([1.0, 2.0], device=x.device if carrier != "numpy" else "numpy")
    assert type(y.carrier) is type(x.carrier)
    assert type(xp.zeros_like(x).carrier) is type(x.carrier)
    moved = x.to_device("numpy")
    assert type(moved.carrier) is sw.NumpyCarrier and values(moved).tolist() == [1, 1, 1]
    with pytest.raises(ValueError, match="unknown device"):
        xp.ones(2, device="tpu9")
    info = xp.__array_namespace_info__()
    assert info.capabilities()["boolean indexing"] and "float32" in info.dtypes()
    assert set(info.dtypes(kind="integral")) == {"int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                                                 "uint64"}


def test_bad_input_names_the_value(carrier):
    with pytest.raises(TypeError, match=r"dtype.*'floaty'"):
        xp.zeros(2, dtype="floaty", device=carrier)
    with pytest.raises(TypeError, match="shape"):
        xp.ones((2, -1), device=carrier)
    with pytest.raises(TypeError, match="expects a Tensor"):
        xp.sum([1.0, 2.0])
    with pytest.raises(ValueError, match="indexing"):
        xp.meshgrid(xp.ones(2, device=carrier), indexing="zz")


def test_environment_selects_the_default_carrier():
    code = "import strideweave.array_api as xp; print(type(xp.ones(2).carrier).__name__)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**__import__("os").environ, "STRIDEWEAVE_CARRIER": "array_api_strict"})
    assert out.stdout.strip() == "ArrayAPICarrier"


def test_an_unknown_environment_carrier_is_named():
    code = "import strideweave as sw; sw.zeros(2)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={**__import__("os").environ, "STRIDEWEAVE_CARRIER": "tpu"})
    assert out.returncode != 0 and "STRIDEWEAVE_CARRIER='tpu'" in out.stderr and "numpy" in out.stderr


def test_fft_runs_forward_on_the_carrier(carrier):
    x = xp.asarray([1.0, 2.0, 3.0, 4.0], device=carrier)
    if carrier == "array_api_strict":
        x = xp.astype(x, xp.complex64)  # array_api_strict's fft takes complex input only
    out = xp.fft.fft(x)
    np.testing.assert_allclose(values(out), np.fft.fft([1.0, 2.0, 3.0, 4.0]), rtol=1e-5)
    assert type(out.carrier) is type(x.carrier) and out.dtype is xp.complex64


@pytest.mark.parametrize("max_version", [None, (0, 0), (1, 0)])
def test_dunder_dlpack_exports_for_every_requested_version(carrier, max_version):
    x = xp.asarray([0.0, 1.0, 2.0], device=carrier)
    kwargs = {} if max_version is None else {"max_version": max_version}
    capsule = x.__dlpack__(**kwargs)          # JAX exports no version below (0, 5) itself
    assert type(capsule).__name__ == "PyCapsule"
    assert values(xp.from_dlpack(x)).tolist() == [0.0, 1.0, 2.0]


def test_concat_takes_negative_axes_and_refuses_out_of_range_ones(carrier):
    a = xp.asarray([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], device=carrier)
    b = xp.asarray([[7.0, 8.0, 9.0], [10.0, 11.0, 12.0]], device=carrier)
    np.testing.assert_array_equal(values(xp.concat([a, b], axis=-1)),
                                  np.concatenate([values(a), values(b)], axis=-1))
    np.testing.assert_array_equal(values(xp.concat([a, b], axis=-2)), np.concatenate([values(a), values(b)]))
    for axis in (2, 5, -3):  # NumPy raises here; an axis taken modulo the rank would join along another one
        with pytest.raises(IndexError, match=f"concat: axis {axis} is out of range for an array with 2 axes"):
            xp.concat([a, b], axis=axis)


def test_permute_dims_refuses_axes_out_of_range(carrier):
    x = xp.reshape(xp.arange(24.0, device=carrier), (2, 3, 4))
    assert xp.permute_dims(x, (-1, 0, -2)).shape == (4, 2, 3)
    np.testing.assert_array_equal(values(xp.permute_dims(x, (2, 0, 1))), np.transpose(values(x), (2, 0, 1)))
    for axes in ((0, 4, 2), (0, 1, -4), (0, 0, 1), (0, 1)):  # taken modulo 3, (0, 4, 2) would pass as (0, 1, 2)
        with pytest.raises(ValueError, match=r"permute_dims: axes .* are not a permutation of 3 axes"):
            xp.permute_dims(x, axes)
