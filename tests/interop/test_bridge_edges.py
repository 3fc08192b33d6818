"""The bridges at their edges: float64 and integer arguments (the Float32 rule), writes into the caller's
arrays, and arrays passed by keyword. Each case is exact against torch / JAX autograd in float64 or
refused with a named error before any gradient or argument changes."""

import numpy as np
import pytest

import strideweave as sw
import strideweave.array_api as xp

torch = pytest.importorskip("torch")
jax = pytest.importorskip("jax")
jnp = jax.numpy


def _mse(m, y):
    return xp.mean((y - m) ** 2)


def _mse_in_float32(m, y):
    return xp.mean((xp.astype(y, xp.float32) - m) ** 2)


def _round_trip(m, y):  # a Float32 result reached through float64: no gradient can flow
    return xp.astype(xp.mean((y - m) ** 2), xp.float32)


def _torch_reference(fn_torch, m_values, y_values):
    """The gradient torch float64 autograd gives ``m`` for ``fn_torch(m, y) + sum(m ** 2)``."""
    m = torch.tensor(m_values, dtype=torch.float64, requires_grad=True)
    (fn_torch(m, torch.tensor(y_values, dtype=torch.float64)) + (m ** 2).sum()).backward()
    return m.grad.numpy()


M, Y = np.array([1.0, 0.5, -0.25], np.float32), np.arange(3.0)


# ----- the Float32 rule through torch_function -----

@pytest.mark.parametrize("fn", [_mse, _round_trip])
def test_torch_function_refuses_a_cotangent_through_float64_as_strideweave_does(fn):
    m = torch.tensor(M, requires_grad=True)
    out = sw.interop.torch_function(fn)(m, torch.tensor(Y))
    with pytest.raises(sw.Float32RuleError, match="only Float32 is differentiable"):
        (out + (m ** 2).sum()).backward()
    assert m.grad is None  # nothing partial was written
    # plain StrideWeave refuses the same program the same way
    leaf = sw.tensor(M)
    with pytest.raises(sw.Float32RuleError):
        (fn(leaf, sw.tensor(Y)) + xp.sum(leaf ** 2)).backward()


def test_torch_function_with_float64_cast_to_float32_inside_is_exact():
    m = torch.tensor(M, requires_grad=True)
    (sw.interop.torch_function(_mse_in_float32)(m, torch.tensor(Y)) + (m ** 2).sum()).backward()
    want = _torch_reference(lambda m, y: ((y - m) ** 2).mean(), M, Y)
    np.testing.assert_allclose(m.grad.numpy(), want, rtol=1e-6)


def test_torch_function_float64_output_is_refused_only_when_backward_reaches_it():
    def fn(m, y):
        return xp.sum(m * m), xp.mean((y - m) ** 2), y * 2.0
    m = torch.tensor(M, requires_grad=True)
    loss, lossy, constant = sw.interop.torch_function(fn)(m, torch.tensor(Y))
    assert lossy.requires_grad and lossy.dtype == torch.float64
    assert not constant.requires_grad  # computed from no Float32 value: a true zero gradient
    (loss + constant.sum()).backward(retain_graph=True)
    np.testing.assert_allclose(m.grad.numpy(), 2 * M, rtol=1e-6)
    m.grad = None
    with pytest.raises(sw.Float32RuleError, match="output 1"):
        (loss + lossy).backward()
    assert m.grad is None


def test_torch_function_integer_argument_is_a_constant():
    def fn(m, k):
        return xp.sum(m * xp.astype(k, xp.float32))
    m = torch.tensor(M, requires_grad=True)
    k = torch.tensor([3, -1, 2])
    sw.interop.torch_function(fn)(m, k).backward()
    want = torch.tensor(M, dtype=torch.float64, requires_grad=True)
    (want * k.double()).sum().backward()
    np.testing.assert_allclose(m.grad.numpy(), want.grad.numpy(), rtol=1e-6)


# ----- the Float32 rule through jax_function -----

def _jax_grad_of(fn, jit):
    def loss(m, y):
        return fn(m, y) + jnp.sum(m ** 2)
    grad = jax.grad(loss)
    return jax.jit(grad) if jit else grad


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
@pytest.mark.parametrize("fn", [_mse, _round_trip])
def test_jax_function_refuses_a_cotangent_through_float64(fn, jit):
    with jax.enable_x64(True):
        bridged = sw.interop.jax_function(fn)
        m, y = jnp.asarray(M), jnp.asarray(Y)
        # Staged under jit, the engine's own refusal is raised while JAX traces the backward pass.
        with pytest.raises(sw.Float32RuleError, match="only Float32 is differentiable"):
            _jax_grad_of(bridged, jit)(m, y)


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
def test_jax_function_with_float64_cast_to_float32_inside_is_exact(jit):
    with jax.enable_x64(True):
        got = _jax_grad_of(sw.interop.jax_function(_mse_in_float32), jit)(jnp.asarray(M), jnp.asarray(Y))
        want = _jax_grad_of(lambda m, y: jnp.mean((y - m) ** 2), False)(jnp.asarray(M, jnp.float64), jnp.asarray(Y))
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6)


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
def test_jax_function_float64_output_without_float32_origin_has_a_zero_gradient(jit):
    def fn(m, y):
        return xp.sum(m * m), y * 2.0

    def loss(m, y):
        a, b = sw.interop.jax_function(fn)(m, y)
        return a + jnp.sum(b)
    with jax.enable_x64(True):
        grad = jax.jit(jax.grad(loss)) if jit else jax.grad(loss)
        got = grad(jnp.asarray(M), jnp.asarray(Y))
    np.testing.assert_allclose(np.asarray(got), 2 * M, rtol=1e-6)


# ----- writes into the caller's arrays -----

def _write_first(u):
    u[0] = 5.0
    return xp.sum(u * u)


def _add_through_view(u):
    v = u[1:]
    v += 1.0
    return xp.sum(u * u)


@pytest.mark.parametrize("fn", [_write_first, _add_through_view])
def test_torch_function_refuses_a_write_into_a_tensor_that_requires_grad_as_torch_does(fn):
    u = torch.tensor(M, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        fn(u)  # torch's own refusal of the same program
    with pytest.raises(sw.LeafWriteError, match=r"fn wrote into argument 0, a torch tensor that requires grad"):
        sw.interop.torch_function(fn)(u)
    np.testing.assert_array_equal(u.detach().numpy(), M)  # the caller's tensor is unchanged
    assert u.grad is None
    with pytest.raises(sw.LeafWriteError, match="keyword argument 'u'"):
        sw.interop.torch_function(fn)(u=u)
    np.testing.assert_array_equal(u.detach().numpy(), M)


def test_torch_function_writes_where_torch_allows_them():
    def fn(u, v):
        v[0] = 5.0  # v does not require grad: torch writes it too
        return xp.sum(u * v)
    u, v = torch.tensor(M, requires_grad=True), torch.tensor(M)
    sw.interop.torch_function(fn)(u, v).backward()
    u_ref, v_ref = torch.tensor(M, dtype=torch.float64, requires_grad=True), torch.tensor(M, dtype=torch.float64)
    v_ref[0] = 5.0
    (u_ref * v_ref).sum().backward()
    np.testing.assert_allclose(v.numpy(), v_ref.numpy())
    np.testing.assert_allclose(u.grad.numpy(), u_ref.grad.numpy(), rtol=1e-6)
    with torch.no_grad():  # an update, as torch allows under no_grad
        sw.interop.torch_function(_write_first)(u)
    assert float(u.detach()[0]) == 5.0


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
def test_jax_function_refuses_a_write_into_its_arguments(jit):
    grad = jax.grad(sw.interop.jax_function(_write_first))
    grad = jax.jit(grad) if jit else grad
    with pytest.raises(sw.LeafWriteError, match=r"fn wrote into argument 0; JAX arrays are immutable"):
        grad(jnp.asarray(M))


# ----- arrays passed by keyword -----

def _scaled(a, *, b, power=2):
    return xp.sum(a * b ** power)


def test_torch_function_differentiates_keyword_tensors():
    a, b = torch.tensor(M, requires_grad=True), torch.tensor(M[::-1].copy(), requires_grad=True)
    sw.interop.torch_function(_scaled)(a, b=b, power=3).backward()
    a_ref = torch.tensor(M, dtype=torch.float64, requires_grad=True)
    b_ref = torch.tensor(M[::-1].copy(), dtype=torch.float64, requires_grad=True)
    (a_ref * b_ref ** 3).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), a_ref.grad.numpy(), rtol=1e-6)
    np.testing.assert_allclose(b.grad.numpy(), b_ref.grad.numpy(), rtol=1e-6)
    with pytest.raises(ValueError, match=r"keyword argument 'b' requires grad but has dtype torch\.float64"):
        sw.interop.torch_function(_scaled)(a, b=b_ref)


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
def test_jax_function_differentiates_keyword_arrays(jit):
    bridged = sw.interop.jax_function(_scaled)

    def loss(a, b):
        return bridged(a, b=b, power=3)
    grad = jax.grad(loss, (0, 1))
    got = (jax.jit(grad) if jit else grad)(jnp.asarray(M), jnp.asarray(M[::-1].copy()))
    with jax.enable_x64(True):
        want = jax.grad(lambda a, b: jnp.sum(a * b ** 3), (0, 1))(jnp.asarray(M, jnp.float64),
                                                                 jnp.asarray(M[::-1].copy(), jnp.float64))
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-6)
