"""allocate / from_array / replace / dtype mapping / transfer on every carrier."""

from __future__ import annotations

import numpy as np
import pytest

from strideweave.carriers import Carrier, NumpyCarrier, transfer
from strideweave.dtypes import STORED_DTYPES, DType
from strideweave.layout import Layout, Shape

DTYPES = [DType.Bool, DType.Int8, DType.Int16, DType.Int32, DType.UInt8,
          DType.Float16, DType.Float32]  # 64-bit types: see test_64bit_dtypes


@pytest.mark.parametrize("dtype", DTYPES, ids=repr)
def test_allocate_zeros_exact_class(backend, dtype):
    kind = backend.kind
    if not hasattr(kind.namespace, dtype.name):  # array_api_strict has no float16
        with pytest.raises(TypeError, match=dtype.name):
            kind.allocate(5, dtype)
        return
    c = kind.allocate(5, dtype)
    assert type(c) is kind.cls
    assert c.namespace is kind.namespace and c.device == kind.device
    assert c.dtype == dtype and c.size == 5 and c.version == 0
    np.testing.assert_array_equal(backend.to_np(c.array), np.zeros(5))
    assert c.sw_dtype_of(c.native_dtype()) == dtype
    assert c.sw_dtype_of(c.array.dtype) == dtype
    like = kind.cls.allocate(3, DType.Float32, like=c)
    assert type(like) is kind.cls and like.namespace is c.namespace and like.device == c.device


def test_64bit_dtypes(backend):
    if backend.name.endswith("jax"):
        import jax
        if not jax.config.jax_enable_x64:
            # As jax.numpy does: the 32-bit type, stored and reported, with JAX's warning.
            for wide, narrow in ((DType.Float64, DType.Float32), (DType.Int64, DType.Int32)):
                with pytest.warns(UserWarning, match="jax_enable_x64"):
                    c = backend.kind.allocate(2, wide)
                assert c.dtype == narrow and c.sw_dtype_of(c.array.dtype) == narrow
            return
    for dtype in (DType.Float64, DType.Int64):
        c = backend.kind.allocate(2, dtype)
        assert c.dtype == dtype and c.sw_dtype_of(c.array.dtype) == dtype


def test_from_array_wraps_without_copy(backend):
    native = backend.native(np.arange(4, dtype=np.float32))
    c = backend.kind.cls.from_array(native)
    assert c.array is native or (backend.name == "torch" and c.array.data_ptr() == native.data_ptr())
    assert c.dtype == DType.Float32 and c.size == 4 and type(c) is backend.kind.cls


def test_from_array_rejects_bad_input(backend):
    cls = backend.kind.cls
    with pytest.raises(TypeError, match="1-D"):
        cls.from_array(backend.native(np.zeros((2, 2), dtype=np.float32)))
    with pytest.raises(TypeError, match="list"):
        cls.from_array([1.0, 2.0])


def test_allocate_errors(backend):
    cls = backend.kind.cls
    with pytest.raises(ValueError, match="-1"):
        cls.allocate(-1, DType.Float32)
    with pytest.raises(TypeError, match="SimpleDType"):
        cls.allocate(2, DType.Floating)
    with pytest.raises(TypeError):
        cls.allocate(2, DType.Float32, like=object())


def test_replace_shares_with_every_holder(backend):
    c = backend.carrier(np.zeros(4, dtype=np.float32))
    alias = c  # every Tensor holds the carrier object itself
    c.replace(backend.native(np.arange(4, dtype=np.float32)))
    np.testing.assert_array_equal(backend.to_np(alias.gather(Layout(Shape(4)), 0)), [0, 1, 2, 3])


@pytest.mark.parametrize("target", ["numpy", "torch", "jax", "array_api_strict"])
def test_transfer_between_every_pair(backend, target):
    pytest.importorskip(target)
    values = np.arange(5, dtype=np.float32)
    native = backend.native(values)
    moved = transfer(native, target)
    from strideweave.carriers import resolve
    kind = resolve(target)
    assert kind.cls._namespace_of(moved) is kind.namespace
    np.testing.assert_array_equal(kind.cls.to_numpy(moved), values)
    c = backend.carrier(values)
    moved_c = transfer(c, target)
    assert type(moved_c) is kind.cls and moved_c.dtype == DType.Float32
    np.testing.assert_array_equal(kind.cls.to_numpy(moved_c.array), values)
    if type(c) is kind.cls and c.namespace is kind.namespace:
        assert moved_c is c


def test_foreign_values_are_transferred(backend):
    c = backend.carrier(np.zeros(3, dtype=np.float32))
    c.scatter(Layout(Shape(3)), 0, np.array([1, 2, 3], dtype=np.float64))
    np.testing.assert_array_equal(backend.to_np(c.array), [1, 2, 3])
    assert backend.to_np(c.array).dtype == np.float32


def test_to_device_same_device_is_identity(backend):
    c = backend.carrier(np.zeros(3, dtype=np.float32))
    assert c.to_device(c.device) is c


def test_kind_and_repr(backend):
    c = backend.carrier(np.zeros(3, dtype=np.float32))
    assert c.kind == backend.kind
    assert type(c).__name__ in repr(c) and "DType.Float32" in repr(c)


def test_attributes_are_read_only():
    c = NumpyCarrier.allocate(2, DType.Float32)
    for name in ("version", "array", "dtype", "size", "device", "namespace"):
        with pytest.raises(AttributeError):
            setattr(c, name, None)
    with pytest.raises(AttributeError):
        c.other = 1  # __slots__


def test_carrier_is_abstract():
    with pytest.raises(TypeError, match="abstract"):
        Carrier.allocate(2, DType.Float32)
    with pytest.raises(TypeError, match="abstract"):
        Carrier(np.zeros(2))


def test_numpy_native_dtypes_round_trip():
    c = NumpyCarrier.allocate(1, DType.Float32)
    for d in STORED_DTYPES:
        assert c.native_dtype(d) == np.dtype(d.name)
        assert c.sw_dtype_of(np.dtype(d.name)) is d
    with pytest.raises(TypeError, match="no StrideWeave dtype"):
        c.sw_dtype_of(np.dtype("datetime64[s]"))


@pytest.mark.cuda
def test_torch_cuda_device():
    pytest.importorskip("torch")
    from strideweave.carriers import TorchCarrier, resolve
    kind = resolve("torch", device="cuda")
    c = kind.allocate(8, DType.Float32)
    assert c.device.type == "cuda" and c.array.device == c.device
    layout = Layout(Shape([2, 2]), (1, 1))
    c.scatter_add(layout, 0, 1.0)
    c.scatter_add(Layout(Shape([4, 2]), (1, 0)), 4, 1.0)
    np.testing.assert_array_equal(TorchCarrier.to_numpy(c.array), [1, 2, 1, 0, 2, 2, 2, 2])
    assert c.gather(layout, 0).device == c.device
    host = c.to_device("cpu")
    assert host.device.type == "cpu" and type(host) is TorchCarrier
