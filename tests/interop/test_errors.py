"""Bad input to the bridges: a clear TypeError / ValueError naming the argument, nothing half-recorded."""

import numpy as np
import pytest

import strideweave as sw
from strideweave.interop._common import cotangent_from_native

torch = pytest.importorskip("torch")
jax = pytest.importorskip("jax")
jnp = jax.numpy


def test_fn_must_be_callable():
    for bridge in (sw.interop.torch_function, sw.interop.jax_function, sw.interop.from_torch, sw.interop.from_jax):
        with pytest.raises(TypeError, match="fn must be callable, got int"):
            bridge(3)


def test_torch_function_fn_returning_a_non_tensor():
    def bad(x):
        return 1.5

    x = torch.ones(3, requires_grad=True)
    with pytest.raises(TypeError, match=r"torch_function\(.*bad\): fn must return a strideweave Tensor.*float"):
        sw.interop.torch_function(bad)(x)
    with pytest.raises(TypeError, match="sequence holding a ndarray"):
        sw.interop.torch_function(lambda t: (sw.exp(t), np.ones(2)))(x)
    assert x.grad is None
    out = sw.interop.torch_function(sw.exp)(x)  # the bridge is still usable
    out.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.exp(np.ones(3)), rtol=1e-6)


def test_torch_function_refuses_a_non_float32_input_that_requires_grad():
    x = torch.ones(3, dtype=torch.float64, requires_grad=True)
    with pytest.raises(ValueError, match=r"argument 1 requires grad but has dtype torch\.float64.*float32"):
        sw.interop.torch_function(lambda a, b: a)(torch.ones(3), x)
    assert x.grad is None
    out = sw.interop.torch_function(lambda a: a * 2.0)(x.detach())  # float64 without grad is fine
    assert out.dtype == torch.float64


def test_jax_function_fn_returning_a_non_tensor():
    f = sw.interop.jax_function(lambda x: x.numpy())
    with pytest.raises(TypeError, match=r"jax_function.*must return a strideweave Tensor.*ndarray"):
        f(jnp.ones(3))
    with pytest.raises(TypeError, match="must return a strideweave Tensor"):
        jax.jit(f)(jnp.ones(3))
    with pytest.raises(TypeError, match="expected at least one JAX array argument"):
        f(1.0)


def test_jax_function_refuses_to_differentiate_a_non_float32_array():
    f = sw.interop.jax_function(lambda x: sw.astype(x, sw.DType.Float32) * 2.0)
    x = jnp.ones(3, jnp.float16)
    assert f(x).dtype == jnp.float32   # the forward pass is fine
    with pytest.raises(ValueError, match=r"argument 0 is being differentiated but has dtype float16.*float32"):
        jax.grad(lambda x: jnp.sum(f(x)))(x)
    with pytest.raises(ValueError, match=r"argument 0 is being differentiated but has dtype float16.*float32"):
        jax.jit(jax.grad(lambda x: jnp.sum(f(x))))(x)
    # Only the differentiated arguments must be float32.
    g = sw.interop.jax_function(lambda a, h: a * sw.astype(h, sw.DType.Float32))
    for run in (jax.grad(lambda a, h: jnp.sum(g(a, h))), jax.jit(jax.grad(lambda a, h: jnp.sum(g(a, h))))):
        np.testing.assert_allclose(run(jnp.ones(3), x * 2), [2.0, 2.0, 2.0])


@pytest.mark.parametrize("library", ["torch", "jax"])
def test_native_fn_returning_a_non_array_records_nothing(library):
    bridge = sw.interop.from_torch if library == "torch" else sw.interop.from_jax
    x = sw.tensor([1.0, 2.0])
    native = "torch.Tensor" if library == "torch" else "JAX array"
    with pytest.raises(TypeError, match=f"from_{library}.*must return a {native}"):
        bridge(lambda a: (a * 2, "oops"))(x)
    with pytest.raises(TypeError, match="expected at least one strideweave Tensor argument"):
        bridge(lambda a: a)(np.ones(2, np.float32))
    with pytest.raises(TypeError, match="options must be an ExecutionOptions"):
        bridge(lambda a: a)(x, options="numpy")
    assert x.autograd_ctx is None and x.grad is None


@pytest.mark.parametrize("library", ["torch", "jax"])
def test_wrong_cotangent_shape_for_a_native_operation(library):
    xp = torch if library == "torch" else jnp
    bridge = sw.interop.from_torch if library == "torch" else sw.interop.from_jax
    x = sw.tensor([[1.0, 2.0, 3.0]])
    y = bridge(lambda a: xp.sin(a))(x)
    with pytest.raises(ValueError):
        y.backward(sw.ones((3,)))
    assert x.grad is None
    y.backward(sw.ones((1, 3), layout=y.layout))
    np.testing.assert_allclose(x.grad.numpy(), np.cos([[1.0, 2.0, 3.0]]), rtol=1e-6)


def test_cotangent_of_the_wrong_shape_or_dtype_names_both():
    target = sw.tensor(np.ones((2, 3), np.float32))
    with pytest.raises(ValueError, match=r"output 0: cotangent has shape \(3, 2\), expected \(2, 3\)"):
        cotangent_from_native(target, np.ones((3, 2), np.float32), "output 0")
    with pytest.raises(TypeError, match=r"cotangent has dtype DType\.Int32, expected Float32"):
        cotangent_from_native(target, np.ones((2, 3), np.int32), "output 0")


def test_cotangent_takes_the_output_layout_nested_modes_included():
    nested = sw.Tensor.from_storage(np.arange(12, dtype=np.float32), sw.Layout(sw.Shape([2, [3, 2]])))
    values = np.arange(12, dtype=np.float32).reshape(2, 6)
    ct = cotangent_from_native(nested, values, "out")
    assert ct.layout == nested.layout
    np.testing.assert_array_equal(ct.to_array(), values)
    row_major = sw.tensor(np.ones((2, 3), np.float32))
    wrapped = cotangent_from_native(row_major, np.full((2, 3), 2.0, np.float32), "out")
    assert wrapped.layout == row_major.layout
