"""DType descriptors, categories, compound records and promotion."""

from __future__ import annotations

import pytest

from strideweave.dtypes import (
    SIMPLE_DTYPES,
    CompoundDType,
    DType,
    DTypeCategory,
    SimpleDType,
    dtype_from_name,
    python_scalar_dtype,
    result_type,
)


def test_simple_dtypes_attributes():
    assert DType.Float32 == SimpleDType("float32", "float", 32)
    assert DType.Float32.itemsize == 4 and DType.Float64.bits == 64 and DType.Bool.itemsize == 1
    assert {d.kind for d in SIMPLE_DTYPES} == {"bool", "int", "uint", "float"}
    assert repr(DType.Float32) == "DType.Float32" and repr(DType.UInt8) == "DType.UInt8"
    assert repr(DType.Floating) == "DType.Floating"
    assert hash(DType.Int8) == hash(SimpleDType("int8", "int", 8))
    with pytest.raises(AttributeError):
        DType.Float32.name = "x"
    with pytest.raises(ValueError, match="'quaternion'"):
        SimpleDType("q128", "quaternion", 128)
    assert DType.Complex64.kind == "complex" and DType.Complex64 not in SIMPLE_DTYPES  # stored, forward only
    with pytest.raises(TypeError):
        DType()


@pytest.mark.parametrize(("category", "members"), [
    (DType.Floating, {"float16", "float32", "float64"}),
    (DType.Integral, {"int8", "int16", "int32", "int64", "uint8"}),
    (DType.Numeric, {"float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8"}),
    (DType.Any, {d.name for d in SIMPLE_DTYPES}),
])
def test_categories(category, members):
    assert isinstance(category, DTypeCategory)
    assert {d.name for d in SIMPLE_DTYPES if d in category} == members
    assert all(category.contains(d) == (d.name in members) for d in SIMPLE_DTYPES)
    assert "float32" not in category  # only descriptors are members


def test_compound_dtype():
    c = CompoundDType([("re", DType.Float32), ("im", DType.Float32)])
    assert c.names == ("re", "im") and c.field("im") == DType.Float32 and len(c) == 2
    assert c == CompoundDType((("re", DType.Float32), ("im", DType.Float32)))
    assert hash(c) == hash(CompoundDType([("re", DType.Float32), ("im", DType.Float32)]))
    assert c in DType.Any and c not in DType.Numeric
    assert "CompoundDType" in repr(c) and "'re'" in repr(c)
    with pytest.raises(AttributeError):
        c.fields = ()
    with pytest.raises(KeyError, match="'zz'"):
        c.field("zz")


@pytest.mark.parametrize(("fields", "exc", "match"), [
    ([], ValueError, "empty"),
    ([("a", DType.Float32), ("a", DType.Int8)], ValueError, "'a'"),
    ([("a", "float32")], TypeError, "'float32'"),
    ([(3, DType.Float32)], TypeError, "3"),
    ([("", DType.Float32)], TypeError, "''"),
    ([("a", DType.Floating)], TypeError, "Floating"),
    (["a"], TypeError, "'a'"),
    (5, TypeError, "5"),
])
def test_compound_dtype_validation(fields, exc, match):
    with pytest.raises(exc, match=match):
        CompoundDType(fields)


@pytest.mark.parametrize(("a", "b", "want"), [
    (DType.Float32, DType.Float32, DType.Float32),
    (DType.Float16, DType.Float32, DType.Float32),
    (DType.Float64, DType.Float32, DType.Float64),
    (DType.Int8, DType.Int32, DType.Int32),
    (DType.UInt8, DType.Int8, DType.Int16),
    (DType.UInt8, DType.Int16, DType.Int16),
    (DType.Int64, DType.UInt8, DType.Int64),
    (DType.Bool, DType.Bool, DType.Bool),
    (DType.Float32, 2.0, DType.Float32),
    (1, DType.Float16, DType.Float16),
    (DType.Int8, 100, DType.Int8),
    (DType.Bool, True, DType.Bool),
    # Mixed kinds: the rule JAX and PyTorch share.
    (DType.Bool, DType.Float32, DType.Float32),
    (DType.Int32, DType.Float32, DType.Float32),
    (DType.Int64, DType.Float16, DType.Float16),
    (DType.Bool, DType.UInt8, DType.UInt8),
    # Weak scalars: never widen, but lift to the default dtype of a higher kind.
    (DType.Int32, 1.5, DType.Float32),
    (DType.Float32, True, DType.Float32),
    (DType.Bool, 3, DType.Int32),
])
def test_result_type(a, b, want):
    assert result_type(a, b) == want
    assert result_type(b, a) == want


@pytest.mark.parametrize(("a", "b"), [
    (1, 2.0), (DType.Floating, DType.Float32), ("floaty", DType.Float32), (object, DType.Float32),
])
def test_result_type_errors(a, b):
    with pytest.raises(TypeError):
        result_type(a, b)


@pytest.mark.parametrize(("a", "b"), [(DType.Int8, 1000), (DType.UInt8, -1), (DType.Int32, 2 ** 31)])
def test_result_type_out_of_range_scalar(a, b):
    with pytest.raises(OverflowError, match=str(b)):
        result_type(a, b)


def test_python_scalar_dtype():
    assert python_scalar_dtype(1.5) == DType.Float32
    assert python_scalar_dtype(3) == DType.Int32
    assert python_scalar_dtype(True) == DType.Bool
    with pytest.raises(TypeError, match="'x'"):
        python_scalar_dtype("x")


def test_dtype_from_name():
    assert dtype_from_name("uint8") is DType.UInt8
    assert dtype_from_name("complex64") is DType.Complex64
    assert dtype_from_name("uint16") is DType.UInt16
    with pytest.raises(TypeError, match="'uint128'"):
        dtype_from_name("uint128")
