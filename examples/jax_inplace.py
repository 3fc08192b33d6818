"""Library code with in-place writes, differentiated under ``jax.jit`` through StrideWeave.

``smooth`` is written as array code usually is for NumPy: it copies its
input and then writes into the copy (``y[1:] += ...``, ``y[0] = ...``,
``y *= y``). ``jax.numpy`` cannot run it (JAX arrays are immutable). Run on
StrideWeave Tensors over JAX's traced arrays, every write is a functional
update and is recorded, so ``jax.jit(jax.value_and_grad(...))`` compiles it
into one XLA program, with no host callback.
"""

import jax
import jax.numpy as jnp
import numpy as np

import strideweave as sw
import strideweave.array_api as swxp


def smooth(x, xp):
    """A library function: sum of squares of a smoothed copy of ``x`` (any Array API namespace ``xp``)."""
    y = xp.asarray(x, copy=True)
    y[1:] += 0.5 * x[:-1]
    y[0] = 0.0
    y *= y
    return xp.sum(y)


x = jnp.asarray(np.random.default_rng(0).standard_normal((6, 2)).astype(np.float32))
try:
    smooth(x, jnp)
except TypeError as err:
    print("jax.numpy:", str(err).splitlines()[0][:60], "...")

loss = sw.interop.jax_function(lambda t: smooth(t, swxp))
step = jax.jit(jax.value_and_grad(loss))
value, grad = step(x)
print("loss", round(float(value), 4), "gradient", grad.shape)

# The same step written with JAX's functional updates, for comparison.
def reference(x):
    y = x.at[1:].add(0.5 * x[:-1]).at[0].set(0.0)
    return jnp.sum(y * y)

want_value, want_grad = jax.value_and_grad(reference)(x)
assert np.allclose(grad, want_grad, rtol=1e-4, atol=1e-5)
assert np.isclose(value, want_value, rtol=1e-5)
assert "callback" not in str(jax.make_jaxpr(step)(x))
print("matches jax.grad of the functional form; one XLA program, no callback")

# StrideWeave's own backward, traced the same way: .grad of a Tensor over the traced array.
@jax.jit
def gradient(x):
    t = sw.tensor(x)
    smooth(t, swxp).backward()
    return t.grad.to_array()

assert np.allclose(gradient(x), want_grad, rtol=1e-4, atol=1e-5)
print("x.grad under jax.jit:", gradient(x).shape)
