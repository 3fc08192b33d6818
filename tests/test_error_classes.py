"""The exception classes: each failure is caught by its own class and by the built-in type the spec names."""

import numpy as np
import pytest

import strideweave as sw
import strideweave.array_api as xp


@pytest.mark.parametrize(("cls", "builtin"), [
    (sw.InPlaceModificationError, RuntimeError), (sw.GraphReleasedError, RuntimeError),
    (sw.LeafWriteError, RuntimeError), (sw.Float32RuleError, RuntimeError),
    (sw.CarrierMismatchError, TypeError), (sw.ImplicitExportError, TypeError),
    (sw.MissingBackendError, ImportError),
])
def test_every_class_is_a_strideweave_error_and_the_builtin_the_spec_names(cls, builtin):
    assert issubclass(cls, sw.StrideWeaveError)
    assert issubclass(cls, builtin)


def test_a_second_traversal_raises_graph_released_naming_retain_graph():
    x = xp.asarray([1.0, 2.0])
    y = xp.sum(x * x)
    y.backward()
    with pytest.raises(sw.GraphReleasedError, match="retain_graph=True"):
        y.backward()


def test_a_write_into_saved_storage_raises_in_place_modification():
    x = xp.asarray([1.0, 2.0])
    h = x * 1.0
    y = xp.sum(h * h)
    h[0] = 5.0
    with pytest.raises(sw.InPlaceModificationError, match="in-place modification"):
        y.backward()
    assert x.grad is None


def test_a_float32_write_into_a_leaf_raises_leaf_write_error():
    x = xp.asarray([1.0, 2.0, 3.0])
    with pytest.raises(sw.LeafWriteError, match="no_grad"):
        x -= xp.mean(x)


def test_a_gradient_of_a_float64_tensor_raises_float32_rule_error():
    x = xp.asarray(np.array([1.0, 2.0]))
    with pytest.raises(sw.Float32RuleError, match="Float32"):
        x.grad  # noqa: B018  (reading .grad is the failure under test)


def test_a_value_that_left_float32_raises_float32_rule_error_at_backward():
    x = xp.asarray([1.0, 2.0])
    y = xp.sum(xp.astype(xp.astype(x, xp.float64) * 2.0, xp.float32))
    with pytest.raises(sw.Float32RuleError):
        y.backward()
    assert x.grad is None


def test_operands_on_two_carriers_raise_carrier_mismatch():
    pytest.importorskip("torch")
    a = xp.asarray([1.0, 2.0], device="numpy")
    b = xp.asarray([1.0, 2.0], device="torch")
    with pytest.raises(sw.CarrierMismatchError, match="different carriers"):
        a + b


def test_implicit_export_of_a_result_raises_implicit_export_error():
    x = xp.asarray([1.0, 2.0])
    with pytest.raises(sw.ImplicitExportError, match="detach"):
        np.asarray(x * 2.0)
