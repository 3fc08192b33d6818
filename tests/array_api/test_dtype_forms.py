"""The standard's full dtype set (uint16 / uint32 / uint64) and dtypes given as NumPy or torch give them."""

import pickle
import warnings

import numpy as np
import pytest

import strideweave as sw
import strideweave.array_api as xp
from strideweave.dtypes import DType, as_dtype, result_type

UNSIGNED = [(xp.uint16, DType.UInt16), (xp.uint32, DType.UInt32), (xp.uint64, DType.UInt64)]


@pytest.mark.parametrize(("dtype", "descriptor"), UNSIGNED, ids=lambda d: getattr(d, "name", ""))
def test_wide_unsigned_dtypes_are_stored_on_every_carrier(carrier, dtype, descriptor):
    assert dtype is descriptor
    info = xp.__array_namespace_info__()
    listed = info.dtypes(device=carrier, kind="unsigned integer")
    big = int(np.iinfo(dtype.name).max)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # JAX without x64: uint64 is stored as uint32, with JAX's warning
        x = xp.asarray([0, 7, min(big, 4_000_000_000)], dtype=dtype, device=carrier)
    if dtype.name in listed:
        assert x.dtype is dtype
        assert x.numpy().dtype == np.dtype(dtype.name) and x.numpy().tolist()[2] == min(big, 4_000_000_000)
    else:  # JAX without x64 stores uint64 in 32 bits, as jax.numpy does
        assert carrier == "jax" and dtype is xp.uint64 and x.dtype is xp.uint32
    assert (x == 7).numpy().tolist() == [False, True, False]
    assert xp.astype(x, xp.float32).numpy().tolist()[:2] == [0.0, 7.0]
    assert x[1:].shape == (2,)


def test_torch_names_the_unsigned_operations_it_lacks():
    pytest.importorskip("torch")
    x = xp.asarray([1, 2], dtype=xp.uint32, device="torch")
    with pytest.raises(NotImplementedError, match="UInt32"):
        x + x
    assert xp.sum(x).numpy().tolist() == 3  # accumulated in the default integer dtype (as PyTorch)


def test_info_lists_every_standard_dtype():
    names = set(xp.__array_namespace_info__().dtypes(device="numpy"))
    assert {"uint16", "uint32", "uint64", "int8", "bool", "float32", "complex128"} <= names
    assert set(xp.__array_namespace_info__().dtypes(kind="unsigned integer")) == {"uint8", "uint16", "uint32",
                                                                                  "uint64"}


def test_unsigned_promotion_follows_the_standard():
    assert result_type(xp.uint16, xp.int8) is xp.int32
    assert result_type(xp.uint32, xp.int32) is xp.int64
    assert result_type(xp.uint16, xp.uint64) is xp.uint64
    with pytest.raises(TypeError, match="no integer dtype holds"):
        result_type(xp.uint64, xp.int64)


@pytest.mark.parametrize("given", [np.float32, np.dtype("float32"), "float32", "f4", "torch.float32"])
def test_dtypes_given_the_numpy_or_torch_way(carrier, given):
    if given == "torch.float32":
        given = pytest.importorskip("torch").float32
    a = np.arange(3.0)
    assert sw.tensor(a, dtype=given).dtype is xp.float32
    assert xp.asarray(a, dtype=given, device=carrier).dtype is xp.float32
    assert xp.zeros(2, dtype=given, device=carrier).dtype is xp.float32
    assert xp.astype(xp.asarray([1, 2], device=carrier), given).dtype is xp.float32
    assert xp.asarray([1, 2], device=carrier).astype(given).dtype is xp.float32
    assert xp.result_type(xp.asarray([1], dtype=xp.int8, device=carrier), given) is xp.float32
    assert xp.can_cast(xp.int8, given) and xp.isdtype(given, "real floating")
    assert xp.finfo(given).bits == 32


def test_unknown_dtypes_are_refused_by_name():
    with pytest.raises(TypeError, match=r"tensor: dtype must be a dtype.*'floaty'"):
        sw.tensor([1.0], dtype="floaty")
    with pytest.raises(TypeError, match=r"astype: dtype .*M8\[s\]"):
        xp.astype(xp.ones(2), np.dtype("datetime64[s]"))
    with pytest.raises(TypeError, match="object"):
        xp.asarray([1.0], dtype=object)


def test_simple_dtypes_answer_numpy_dtype_questions():
    f = DType.Float32
    assert xp.float32 is f
    assert f == np.float32 and f == np.dtype("float32") and f == "float32" and np.dtype("float32") == f
    assert f != np.float64 and f != "int8" and f != None  # noqa: E711
    assert hash(f) == hash(np.dtype("float32")) and {np.dtype("float32"): 1}[f] == 1
    assert np.dtype(f) == np.dtype("float32") and np.issubdtype(f, np.floating)
    assert (f.kind, f.itemsize, f.name, f.type, f.char) == ("f", 4, "float32", np.float32, "f")
    # NumPy's substring test on the kind code, and StrideWeave's own kind names, both hold
    assert f.kind in "cfO" and f.kind == "float" and f.kind in ("float", "complex")
    assert "float" == f.kind  # noqa: SIM300 - the reflected comparison is what is tested
    assert f.kind != "int" and {"float": 1}[f.kind] == 1
    assert not (f.kind != "f") and not (f.kind != "float")  # noqa: SIM202 - `!=` is what is tested, not `==`
    assert [d.kind for d in (xp.bool, xp.int8, xp.uint16, xp.complex64)] == ["b", "i", "u", "c"]
    assert pickle.loads(pickle.dumps(xp.uint32)) is xp.uint32
    assert as_dtype(float) is xp.float64 and as_dtype(bool) is xp.bool


def test_torch_dtypes_compare_equal():
    torch = pytest.importorskip("torch")
    assert xp.float32 == torch.float32 and xp.uint16 == torch.uint16 and xp.int64 != torch.int32
    assert as_dtype(torch.complex64) is xp.complex64
