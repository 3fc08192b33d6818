"""strideweave.testing itself: carriers, finite differences, gradcheck and agreement reports and failures."""

import numpy as np
import pytest
from ops_cases import CARRIERS, canonical, make

import strideweave as sw
from strideweave import testing

F32 = sw.DType.Float32


class DoubleWithWrongGradient(sw.Operation):
    """y = 2 x, but backward claims 3 g (a deliberately wrong rule)."""

    def forward(self, x, *, options=None):
        return sw.multiply(x, 2.0)

    def backward(self, gradient):
        return (sw.multiply(gradient, 3.0),)


def test_available_carriers():
    names = testing.available_carriers()
    assert names[0] == "numpy"
    assert set(names) <= {"numpy", "torch", "jax", "array_api_strict"}
    assert names == CARRIERS


@pytest.mark.parametrize("target", CARRIERS)
def test_on_carrier_copies_whole_buffer_layout_and_offset(target):
    x = make("holes", seed=1)
    y = testing.on_carrier(x, target)
    assert y.layout == x.layout and y.offset == x.offset and y.dtype == x.dtype
    assert y.carrier.size == x.carrier.size
    assert y.carrier is not x.carrier
    np.testing.assert_array_equal(y.numpy(), x.numpy())
    np.testing.assert_array_equal(testing.on_carrier(y, "numpy").carrier.array, x.carrier.array)
    assert y.autograd_ctx is None and y.grad is None


def test_on_carrier_accepts_class_and_module():
    x = make("broadcast", seed=2)
    assert type(testing.on_carrier(x, sw.NumpyCarrier).carrier) is sw.NumpyCarrier
    assert type(testing.on_carrier(x, np).carrier) is sw.NumpyCarrier
    if "torch" in CARRIERS:
        import torch

        assert type(testing.on_carrier(x, torch).carrier) is sw.TorchCarrier
    with pytest.raises(TypeError):
        testing.on_carrier([1.0, 2.0], "numpy")


def test_numerical_gradients_per_slot_for_broadcast_input():
    # x stores 3 slots viewed as (4, 3) with stride 0 on mode 0: each slot appears 4 times.
    x = sw.Tensor.from_storage([1.0, 2.0, 3.0], sw.Layout(sw.Shape([4, 3]), sw.Stride([0, 1])), F32)
    (g,) = testing.numerical_gradients(lambda t: sw.sum(t * t), [x])
    assert g.shape == (4, 3)
    np.testing.assert_allclose(g, np.tile([8.0, 16.0, 24.0], (4, 1)), rtol=1e-9)
    (a,) = testing.analytic_gradients(lambda t: sw.sum(t * t), [x])
    np.testing.assert_allclose(a, g, rtol=1e-6)


def test_numerical_gradients_with_cotangent_and_passthrough():
    x = canonical((2, 3), seed=3)
    cond = x > 0.0
    cot = np.arange(6.0).reshape(2, 3)
    gcond, gx = testing.numerical_gradients(lambda c, t: sw.where(c, t * t, 0.0), [cond, x], cot)
    assert gcond is None  # Bool input: not differentiable
    xs = x.numpy().astype(np.float64)
    np.testing.assert_allclose(gx, np.where(xs > 0, 2 * xs, 0) * cot, rtol=1e-6, atol=1e-9)


def test_cotangent_none_requires_scalar():
    with pytest.raises(ValueError, match="cotangent"):
        testing.numerical_gradients(lambda t: t * 2.0, [canonical((2,))])
    with pytest.raises(ValueError, match="cotangent"):
        testing.gradcheck(lambda t: t * 2.0, [canonical((2,))])


def test_bad_arguments():
    x = canonical((2,))
    with pytest.raises(TypeError):
        testing.gradcheck(lambda t: t, x)
    with pytest.raises(TypeError):
        testing.numerical_gradients(lambda t: 3.0, [x])
    with pytest.raises(ValueError, match="eps"):
        testing.numerical_gradients(lambda t: sw.sum(t), [x], eps=0.0)
    with pytest.raises(ValueError, match="shape"):
        testing.gradcheck(lambda t: t * 2.0, [x], np.ones((3,)))


def test_gradcheck_report():
    x = make("transposed", seed=4)
    report = testing.gradcheck(lambda t: sw.sum(sw.sin(t)), [x])
    assert set(report.max_abs_error) == set(CARRIERS)
    assert all(v < 1e-3 for v in report.max_abs_error.values())
    worst = report.worst["numpy"]
    assert worst.input_index == 0 and len(worst.coordinate) == 2
    np.testing.assert_allclose(report.numeric[0], np.cos(x.numpy().astype(np.float64)), rtol=1e-6)
    only = testing.gradcheck(lambda t: sw.sum(sw.sin(t)), [x], carriers=["numpy"])
    assert list(only.max_abs_error) == ["numpy"]


def test_gradcheck_names_carrier_input_element_and_values():
    x = canonical((2, 2), seed=5)
    y = canonical((2,), seed=6)
    with pytest.raises(AssertionError) as info:
        testing.gradcheck(lambda a, b: sw.sum(DoubleWithWrongGradient()(a)) + sw.sum(b), [y, x], carriers=["numpy"])
    message = str(info.value)
    assert "'numpy'" in message and "input 0" in message
    assert "analytic 3 " in message and "numeric 2 " in message
    assert "element (" in message


def test_analytic_gradients_none_for_unreachable_and_carrier_move():
    x = canonical((3,), seed=7)
    z = canonical((3,), seed=8)
    for target in CARRIERS:
        gx, gz, k = testing.analytic_gradients(lambda a, b, c: sw.sum(a * c), [x, z, 2.0], carrier=target)
        assert gz is None and k is None
        np.testing.assert_allclose(gx, np.full(3, 2.0))


def test_assert_carriers_agree():
    x = make("nested_broadcast", seed=9)
    w = canonical((3, 1), seed=10)
    report = testing.assert_carriers_agree(lambda a, b: sw.sum(sw.tanh(a) * sw.exp(b), modes=(1,)), [x, w],
                                           np.ones(3))
    assert set(report.max_abs_error) == set(CARRIERS)
    assert report.reference == "numpy"


class NumpyOnlyGlitch(sw.Operation):
    """Identity whose forward adds 1 on every carrier except numpy (to provoke a disagreement)."""

    def forward(self, x, *, options=None):
        return sw.multiply(x, 1.0) if type(x.carrier) is sw.NumpyCarrier else sw.add(x, 1.0)

    def backward(self, gradient):
        return (gradient,)


def test_assert_carriers_agree_reports_the_disagreement():
    if len(CARRIERS) < 2:
        pytest.skip("one carrier available")
    x = canonical((2,), seed=11)
    with pytest.raises(AssertionError) as info:
        testing.assert_carriers_agree(lambda t: sw.sum(NumpyOnlyGlitch()(t)), [x])
    message = str(info.value)
    assert repr(CARRIERS[1]) in message and "the output" in message
