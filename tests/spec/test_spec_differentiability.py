"""Requirement: Gradient participation follows the logical dtype."""

import warnings

import numpy as np
import pytest
from _spec_support import F32, arr, vec

import strideweave as sw

OTHER_DTYPES = ["Float64", "Float16", "Int8", "Int16", "Int32", "Int64", "UInt8", "Bool"]


def _maybe(dtype_name, carrier):
    """A Tensor of ``dtype_name`` on ``carrier``, or None when that carrier cannot store it."""
    dtype = getattr(sw.DType, dtype_name)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # JAX without x64 narrows a 64-bit request, as jax.numpy does
            t = sw.zeros(sw.Shape(3), dtype=dtype, carrier=carrier)
    except (TypeError, ValueError):
        return None
    return t if t.dtype is dtype else None


def _int_and_bool(carrier):
    return [sw.tensor([1, 2, 3], carrier=carrier), sw.tensor([True, False, True], carrier=carrier)]


def test_report_differentiability_from_the_logical_dtype(carrier):
    x = vec([1.0, 2.0, 3.0], carrier)
    assert x.dtype is F32
    assert x.is_differentiable() is True
    built = 0
    for name in OTHER_DTYPES:
        t = _maybe(name, carrier)
        if t is None:
            continue
        built += 1
        assert t.dtype is getattr(sw.DType, name)
        assert t.is_differentiable() is False, name
    assert built >= 4  # Int32, Bool, Int8/16, UInt8 exist on every carrier
    ints, bools = _int_and_bool(carrier)
    assert ints.dtype is sw.DType.Int32 and ints.is_differentiable() is False
    assert bools.dtype is sw.DType.Bool and bools.is_differentiable() is False


def test_compound_tensor_is_not_differentiable(carrier):
    dtype = sw.CompoundDType([("re", sw.DType.Float32), ("im", sw.DType.Float32)])
    re, im = vec([1.0, 2.0], carrier), vec([3.0, 4.0], carrier)
    t = sw.Tensor([re.carrier, im.carrier], re.layout, 0, dtype)
    assert t.is_differentiable() is False
    with pytest.raises(RuntimeError):
        _ = t.grad
    with pytest.raises(RuntimeError):
        t.retain_grad()


def test_differentiability_depends_on_the_dtype_alone(carrier):
    # Same values, layouts with holes / broadcast / offsets: only the dtype matters.
    x = sw.Tensor.from_storage([1.0, 2.0, 3.0, 4.0], sw.Layout(sw.Shape([2, 2]), sw.Stride([0, 2])),
                               offset=1, carrier=carrier)
    assert x.is_differentiable() is True
    assert sw.astype(x, sw.DType.Int32).is_differentiable() is False
    assert sw.astype(sw.tensor([1, 2], carrier=carrier), sw.DType.Float32).is_differentiable() is True


@pytest.mark.parametrize("kind", ["int32", "bool"])
def test_reject_gradient_apis_on_a_non_differentiable_tensor(carrier, kind):
    t = _int_and_bool(carrier)[0 if kind == "int32" else 1]
    cot = sw.tensor([1, 1, 1], carrier=carrier)
    node = sw.add(vec([1.0, 2.0, 3.0], carrier), 1.0).autograd_ctx
    assert node is not None
    with pytest.raises(RuntimeError):
        _ = t.grad
    with pytest.raises(RuntimeError):
        t.retain_grad()
    with pytest.raises(RuntimeError):
        t.retain_grad(False)
    with pytest.raises(RuntimeError):
        t.backward()
    with pytest.raises(RuntimeError):
        t.backward(cot)
    with pytest.raises(RuntimeError):
        t.backward(vec([1.0, 1.0, 1.0], carrier))
    with pytest.raises(RuntimeError):
        t.autograd_ctx = node
    with pytest.raises(RuntimeError):
        t.grad = vec([1.0, 1.0, 1.0], carrier)
    # no gradient is recorded for that Tensor (white box: the read itself is refused)
    assert t.autograd_ctx is None
    assert t._grad is None
    assert t.retains_grad is False


@pytest.mark.parametrize("kind", ["int32", "bool", "float32"])
def test_assigning_none_to_grad_and_autograd_ctx_succeeds_for_every_tensor(carrier, kind):
    t = {"int32": sw.tensor([1, 2], carrier=carrier), "bool": sw.tensor([True, False], carrier=carrier),
         "float32": vec([1.0, 2.0], carrier)}[kind]
    t.grad = None
    t.autograd_ctx = None
    assert t.autograd_ctx is None


def test_grad_and_autograd_ctx_start_as_none(carrier):
    x = vec([1.0, 2.0], carrier)
    assert x.grad is None and x.autograd_ctx is None
    y = x * 3.0
    assert y.grad is None and y.autograd_ctx is not None
    x.grad = vec([5.0, 6.0], carrier)
    np.testing.assert_array_equal(arr(x.grad), [5.0, 6.0])
    x.grad = None
    assert x.grad is None
