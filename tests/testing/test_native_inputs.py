"""gradcheck and assert_carriers_agree take native arrays: they reach fn as Tensors."""

import numpy as np
import pytest

import strideweave as sw
from strideweave import testing

CARRIERS = testing.available_carriers()


@pytest.mark.parametrize("carrier", CARRIERS)
def test_gradcheck_wraps_a_numpy_input(carrier):
    seen = []

    def fn(t):
        seen.append(type(t))
        return sw.sum(sw.abs(t) * t)

    report = testing.gradcheck(fn, [np.array([0.5, -1.5, 2.0], dtype=np.float32)], carriers=[carrier])
    assert set(seen) == {sw.Tensor}
    np.testing.assert_allclose(report.numeric[0], [1.0, 3.0, 4.0], rtol=1e-6)


def test_a_float64_array_is_checked_as_float32_and_an_integer_one_is_a_constant():
    x = testing.as_input(np.array([1.0, 2.0]))
    k = testing.as_input(np.array([2, 3]))
    assert x.dtype == sw.DType.Float32 and x.autograd_ctx is None
    assert k.dtype in (sw.DType.Int32, sw.DType.Int64) and not k.is_differentiable()
    assert testing.as_input(1.5) == 1.5
    report = testing.gradcheck(lambda a, b: sw.sum(a * b), [np.array([1.0, 2.0]), np.array([2, 3], dtype=np.int32)])
    np.testing.assert_allclose(report.numeric[0], [2.0, 3.0], rtol=1e-6)
    assert report.numeric[1] is None


@pytest.mark.parametrize("library", ["torch", "jax"])
def test_native_arrays_of_other_libraries_keep_their_carrier(library):
    pytest.importorskip(library)
    if library == "torch":
        import torch
        native, carrier = torch.tensor([0.5, -1.5]), sw.TorchCarrier
    else:
        import jax.numpy as jnp
        native, carrier = jnp.asarray([0.5, -1.5]), sw.JaxCarrier
    assert type(testing.as_input(native).carrier) is carrier
    testing.gradcheck(lambda t: sw.sum(sw.exp(t)), [native])
    testing.assert_carriers_agree(lambda t: sw.sum(sw.exp(t)), [native])
