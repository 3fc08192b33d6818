"""sw.interop.jax_function: StrideWeave functions under jax.grad, jax.jit and jax.vmap."""

import numpy as np
import pytest
from _programs import inputs, sw_program, xp_program

import strideweave as sw

jax = pytest.importorskip("jax")
jnp = jax.numpy
jax_function = sw.interop.jax_function


def _args(seed):
    return [jnp.asarray(a) for a in inputs(seed)]


def _loss(f, outputs):
    """A scalar of every output, weighted so each output's cotangent differs."""
    def loss(*args):
        out = f(*args)
        out = out if outputs == 2 else (out,)
        return sum(jnp.sum(o * jnp.cos(jnp.arange(o.size, dtype=jnp.float32).reshape(o.shape) + k))
                   for k, o in enumerate(out))
    return loss


@pytest.mark.parametrize(("seed", "outputs"), [(0, 1), (1, 2), (2, 1), (3, 2)])
def test_random_programs_match_jax_grad_eagerly_and_under_jit(seed, outputs):
    args = _args(seed)
    bridged, native = jax_function(sw_program(seed, outputs)), xp_program(seed, outputs)
    got, want = bridged(*args), native(*args)
    for g, w in zip(*((got, want) if outputs == 2 else ((got,), (want,)))):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
    argnums = (0, 1, 2, 3)
    want = jax.grad(_loss(native, outputs), argnums)(*args)
    for run in (jax.grad(_loss(bridged, outputs), argnums), jax.jit(jax.grad(_loss(bridged, outputs), argnums))):
        for g, w in zip(run(*args), want):
            np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)


def test_value_and_grad_and_vmap_compose():
    f = jax_function(lambda a, w: sw.sum(sw.tanh(a @ w), modes=(1,)))
    ref = lambda a, w: jnp.sum(jnp.tanh(a @ w), axis=1)  # noqa: E731
    rng = np.random.default_rng(3)
    a = jnp.asarray(rng.standard_normal((5, 3, 4)).astype(np.float32))
    w = jnp.asarray(rng.standard_normal((4, 2)).astype(np.float32))
    np.testing.assert_allclose(jax.vmap(f, (0, None))(a, w), jax.vmap(ref, (0, None))(a, w), rtol=1e-5, atol=1e-6)
    loss = lambda g: lambda a, w: jnp.sum(g(a, w) ** 2)  # noqa: E731
    value, grads = jax.jit(jax.value_and_grad(loss(f), (0, 1)))(a[0], w)
    want_value, want_grads = jax.value_and_grad(loss(ref), (0, 1))(a[0], w)
    assert value == pytest.approx(float(want_value), rel=1e-5)
    for g, h in zip(grads, want_grads):
        np.testing.assert_allclose(g, h, rtol=1e-4, atol=1e-5)
    per_example = jax.jit(jax.vmap(jax.grad(loss(f), 1), (0, None)))(a, w)
    np.testing.assert_allclose(per_example, jax.vmap(jax.grad(loss(ref), 1), (0, None))(a, w), rtol=1e-4, atol=1e-5)


def test_check_grads_at_float32_tolerances():
    from jax.test_util import check_grads

    f = jax_function(lambda a, b: sw.exp(0.5 * a) * sw.sin(b) + a * b)
    rng = np.random.default_rng(4)
    a, b = (jnp.asarray(rng.standard_normal((3, 4)).astype(np.float32)) for _ in range(2))
    check_grads(f, (a, b), order=1, modes=("rev",), eps=1e-2, atol=2e-2, rtol=2e-2)
    check_grads(jax.jit(f), (a, b), order=1, modes=("rev",), eps=1e-2, atol=2e-2, rtol=2e-2)


def test_under_jit_fn_is_traced_once_on_jax_carriers_and_out_shape_is_checked():
    calls = []

    def f(x):
        calls.append(type(x.carrier).__name__)
        return sw.sum(x * x, modes=(0,))

    declared = jax_function(f, out_shape=lambda x: jax.ShapeDtypeStruct(x.shape[1:], jnp.float32))
    x = jnp.ones((3, 2), jnp.float32)
    np.testing.assert_allclose(jax.jit(declared)(x), [3.0, 3.0])
    assert calls == ["JaxCarrier"]                   # traced once: no trial run, no host call
    calls.clear()
    np.testing.assert_allclose(jax.jit(jax_function(f))(x), [3.0, 3.0])
    assert calls == ["JaxCarrier"]
    calls.clear()
    jax_function(f)(x)
    assert calls == ["JaxCarrier"]                   # eagerly: the same
    wrong = jax_function(f, out_shape=jax.ShapeDtypeStruct((3,), jnp.float32))
    with pytest.raises(ValueError, match=r"output 0 has shape \(2,\), but shape \(3,\) was declared"):
        jax.jit(wrong)(x)


def _step(f):
    return jax.jit(jax.value_and_grad(lambda a, w: jnp.sum(f(a, w) ** 2), (0, 1)))


def test_a_jitted_step_is_one_program_without_callbacks_and_vmap_has_no_loop():
    f = jax_function(lambda a, w: sw.tanh(a @ w))
    ref = lambda a, w: jnp.tanh(a @ w)  # noqa: E731
    a, w = jnp.ones((4, 3)) * 0.3, 0.1 * jnp.arange(6.0).reshape(3, 2)
    text = str(jax.make_jaxpr(_step(f))(a, w))
    assert "callback" not in text
    value, grads = _step(f)(a, w)
    want_value, want_grads = _step(ref)(a, w)
    assert float(value) == pytest.approx(float(want_value), rel=1e-5)
    for g, h in zip(grads, want_grads):
        np.testing.assert_allclose(g, h, rtol=1e-4, atol=1e-5)
    per_example = jax.vmap(jax.grad(lambda a, w: jnp.sum(f(a, w) ** 2), 1), (0, None))
    text = str(jax.make_jaxpr(per_example)(a[:, None, :], w))
    assert "callback" not in text and "while" not in text and "scan" not in text


def test_fn_that_reads_values_runs_on_the_host_through_a_callback():
    def f(a, w):
        scale = float(sw.max(a).numpy()[0])      # a value read: cannot be staged
        return sw.tanh(a @ w) * scale

    def ref(a, w):
        return jnp.tanh(a @ w) * jax.lax.stop_gradient(jnp.max(a))

    a = jnp.asarray(np.random.default_rng(5).standard_normal((4, 3)).astype(np.float32))
    w = 0.1 * jnp.arange(6.0, dtype=jnp.float32).reshape(3, 2)
    bridged = jax_function(f)
    assert "callback" in str(jax.make_jaxpr(_step(bridged))(a, w))
    value, grads = _step(bridged)(a, w)
    want_value, want_grads = _step(ref)(a, w)
    assert float(value) == pytest.approx(float(want_value), rel=1e-5)
    for g, h in zip(grads, want_grads):
        np.testing.assert_allclose(g, h, rtol=1e-4, atol=1e-5)


def test_an_error_inside_the_host_callback_reaches_the_caller_with_its_message():
    def f(a):
        scale = float(sw.max(a).numpy()[0])      # a value read: runs on the host
        out = sw.exp(a * scale)                  # exp saves its result for backward
        out += 1.0                               # ...which this write overwrites
        return out

    a = jnp.asarray(np.linspace(-1.0, 1.0, 6, dtype=np.float32))
    loss = jax.jit(jax.grad(lambda a: jnp.sum(jax_function(f)(a))))
    with pytest.raises(Exception, match="in-place modification detected") as caught:
        loss(a)
    assert "CpuCallback" in str(caught.value)   # JAX's own error type carries StrideWeave's message

    def staged(a):                               # the same write, no value read: raised with its own type
        out = sw.exp(a * 2.0)
        out += 1.0
        return out

    with pytest.raises(sw.InPlaceModificationError):
        jax.jit(jax.grad(lambda a: jnp.sum(jax_function(staged)(a))))(a)


def test_non_array_arguments_and_integer_arrays_pass_through():
    def f(x, k, scale, *, shift):
        return x * sw.astype(k, sw.DType.Float32) * scale + shift

    x = jnp.asarray([1.0, 2.0, 3.0])
    k = jnp.asarray([1, 2, 3], dtype=jnp.int32)
    g = jax.jit(jax.grad(lambda x, k: jnp.sum(jax_function(f)(x, k, 2.0, shift=1.0))))(x, k)
    np.testing.assert_allclose(g, [2.0, 4.0, 6.0])
    g = jax.grad(lambda x, k: jnp.sum(jax_function(f)(x, k, 2.0, shift=1.0)))(x, k)
    np.testing.assert_allclose(g, [2.0, 4.0, 6.0])


@pytest.mark.parametrize("transform", ["grad_of_grad", "hessian", "jit_hessian"])
def test_higher_order_differentiation_is_refused_by_name(transform):
    f = jax_function(lambda x: sw.sum(x * x * x))
    loss = lambda x: jnp.sum(f(x))  # noqa: E731
    run = {"grad_of_grad": jax.grad(lambda x: jnp.sum(jax.grad(loss)(x))), "hessian": jax.hessian(loss),
           "jit_hessian": jax.jit(jax.hessian(loss))}[transform]
    with pytest.raises(RuntimeError, match=r"jax_function\(.*<lambda>\): StrideWeave gradients are first order"):
        run(jnp.ones(3))
    np.testing.assert_allclose(jax.grad(loss)(jnp.ones(3)), [3.0, 3.0, 3.0])  # first order still works
