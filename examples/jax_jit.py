"""A StrideWeave function inside a jit-compiled JAX training step.

``sw.interop.jax_function`` gives a StrideWeave function a ``jax.custom_vjp``:
``jax.grad`` and ``jax.value_and_grad`` differentiate it, and under
``jax.jit`` (and ``jax.vmap``) it is traced, with its StrideWeave backward,
into the compiled program. Plain SGD, no optax.
"""

import jax
import jax.numpy as jnp
import numpy as np

import strideweave as sw


@sw.interop.jax_function
def residual_block(h, w):
    """h + tanh(h @ w), written once with StrideWeave."""
    return h + sw.tanh(h @ w)


def loss(params, x, y):
    h = jnp.tanh(x @ params["inp"])
    h = residual_block(h, params["w"])
    return jnp.mean((h @ params["out"] - y) ** 2)


@jax.jit
def step(params, x, y):
    value, grads = jax.value_and_grad(loss)(params, x, y)
    return value, jax.tree_util.tree_map(lambda p, g: p - 0.1 * g, params, grads)


rng = np.random.default_rng(0)
x = jnp.asarray(rng.standard_normal((64, 3)).astype(np.float32))
y = jnp.sin(x @ jnp.asarray([[1.0], [-2.0], [0.5]]))
params = {"inp": jnp.asarray(0.5 * rng.standard_normal((3, 16)).astype(np.float32)),
          "w": jnp.asarray(0.2 * rng.standard_normal((16, 16)).astype(np.float32)),
          "out": jnp.asarray(0.3 * rng.standard_normal((16, 1)).astype(np.float32))}
losses = []
for _ in range(60):
    value, params = step(params, x, y)
    losses.append(float(value))
print(f"loss {losses[0]:.4f} -> {losses[-1]:.4f} in {len(losses)} jit-compiled steps")
assert losses[-1] < 0.5 * losses[0]

# Per-example gradients: jax.vmap batches the traced StrideWeave operations.
h = jnp.tanh(x[:4] @ params["inp"])[:, None, :]               # 4 examples, each (1, 16)
per_example = jax.jit(jax.vmap(jax.grad(lambda h, w: jnp.sum(residual_block(h, w)), argnums=1), (0, None)))
print("per-example gradients of w:", per_example(h, params["w"]).shape)

# The other direction: a JAX function as a StrideWeave operation, on any carrier.
log_softmax = sw.interop.from_jax(jax.nn.log_softmax)
z = sw.tensor([[1.0, 2.0, 3.0]], carrier="torch")
pick = sw.tensor([[1.0, 0.0, 0.0]], carrier="torch")
g = sw.grad(sw.sum(log_softmax(z) * pick), [z], sw.ones((1,), carrier="torch"))
print("d log_softmax(z)[0] / dz on", type(g[0].carrier).__name__, np.round(g[0].numpy(), 4).tolist())
