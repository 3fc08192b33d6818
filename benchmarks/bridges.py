"""Interop rows: a small StrideWeave function inside torch and inside ``jax.jit``, against the same function native.

The function is one MLP layer, ``tanh(h @ w + b)`` (h 32 x 32, w 32 x 64,
b 64), so the figures are the bridges' per-call cost: wrapping the native
arrays, running StrideWeave's engine, handing results back. Under
``jax.jit`` StrideWeave is traced into the compiled program (docs/interop.md),
so the jitted rows compare the XLA programs StrideWeave and ``jax.numpy``
stage: the layer, and a 3-layer MLP training step (``jax_mlp_*``).
"""
from __future__ import annotations

import itertools

import numpy as np

from benchmarks import backends as B


def layer_data():
    rng = np.random.default_rng(20240611)
    return (rng.standard_normal((32, 32)).astype(np.float32),
            (rng.standard_normal((32, 64)) / 8).astype(np.float32),
            (rng.standard_normal(64) / 8).astype(np.float32))


def _torch_inputs(h0, w0, b0):
    torch = B.torch()
    return (torch.from_numpy(h0.copy()), torch.from_numpy(w0.copy()).requires_grad_(True),
            torch.from_numpy(b0.copy()).requires_grad_(True))


def torch_function_step(h0, w0, b0):
    """``sw.interop.torch_function`` layer in a torch program: forward + ``backward`` in torch."""
    sw = B.sw()
    layer = sw.interop.torch_function(lambda h, w, b: sw.tanh(h @ w + b))
    h, w, b = _torch_inputs(h0, w0, b0)

    def step():
        w.grad = b.grad = None
        layer(h, w, b).sum().backward()
        return w.grad, b.grad
    return step


def torch_step(h0, w0, b0):
    torch = B.torch()
    h, w, b = _torch_inputs(h0, w0, b0)

    def step():
        w.grad = b.grad = None
        torch.tanh(h @ w + b).sum().backward()
        return w.grad, b.grad
    return step


def _jit_value_and_grad(block, h0, w0, b0):
    jax, jnp = B.jax(), B.jnp()
    h, w, b = (jnp.asarray(v) for v in (h0, w0, b0))
    g = jax.jit(jax.value_and_grad(lambda h, w, b: jnp.sum(block(h, w, b) ** 2), argnums=(1, 2)))

    def step():
        return jax.block_until_ready(g(h, w, b))
    return step


def jax_function_step(h0, w0, b0):
    """``jax.jit(jax.value_and_grad(loss))`` where the layer goes through ``sw.interop.jax_function``."""
    sw = B.sw()
    return _jit_value_and_grad(sw.interop.jax_function(lambda h, w, b: sw.tanh(h @ w + b)), h0, w0, b0)


def jax_step(h0, w0, b0):
    jnp = B.jnp()
    return _jit_value_and_grad(lambda h, w, b: jnp.tanh(h @ w + b), h0, w0, b0)


def mlp_data():
    """A 3-layer MLP's batch and parameters: x 128 x 64, layers 64 -> 128 -> 128 -> 10, targets 128 x 10."""
    rng = np.random.default_rng(20240612)
    sizes = [64, 128, 128, 10]
    params = []
    for fan_in, fan_out in itertools.pairwise(sizes):
        params.append((rng.standard_normal((fan_in, fan_out)) / np.sqrt(fan_in)).astype(np.float32))
        params.append(np.zeros(fan_out, np.float32))
    x = rng.standard_normal((128, 64)).astype(np.float32)
    y = rng.standard_normal((128, 10)).astype(np.float32)
    return x, y, params


def _mlp(tanh, x, params):
    w1, b1, w2, b2, w3, b3 = params
    h = tanh(x @ w1 + b1)
    h = tanh(h @ w2 + b2)
    return h @ w3 + b3


def _jit_mlp_step(mlp, x0, y0, params0):
    """``jax.jit`` of one SGD step, ``value_and_grad`` of the mean squared error of ``mlp(x, params)``."""
    jax, jnp = B.jax(), B.jnp()
    x, y = jnp.asarray(x0), jnp.asarray(y0)
    params = [jnp.asarray(p) for p in params0]

    @jax.jit
    def update(params, x, y):
        loss, grads = jax.value_and_grad(lambda p: jnp.mean((mlp(x, *p) - y) ** 2))(params)
        return loss, [p - 0.01 * g for p, g in zip(params, grads)]

    def step():
        return jax.block_until_ready(update(params, x, y))
    return step


def jax_mlp_function_step(x0, y0, params0):
    """The MLP's forward written with StrideWeave and wrapped by ``sw.interop.jax_function``; loss and SGD in jnp."""
    sw = B.sw()
    forward = sw.interop.jax_function(lambda x, *p: _mlp(sw.tanh, x, p))
    return _jit_mlp_step(forward, x0, y0, params0)


def jax_mlp_staged_step(x0, y0, params0):
    """The whole step in StrideWeave (forward, loss, ``backward``, ``.grad``), jitted by ``jax.jit``."""
    jax, jnp, sw = B.jax(), B.jnp(), B.sw()
    x, y = jnp.asarray(x0), jnp.asarray(y0)
    params = [jnp.asarray(p) for p in params0]

    @jax.jit
    def update(params, x, y):
        tensors = [sw.tensor(p) for p in params]
        loss = ((_mlp(sw.tanh, sw.tensor(x), tensors) - sw.tensor(y)) ** 2).mean()
        loss.backward()
        return loss.to_array(), [p - 0.01 * t.grad.to_array() for p, t in zip(params, tensors)]

    def step():
        return jax.block_until_ready(update(params, x, y))
    return step


def jax_mlp_step(x0, y0, params0):
    jnp = B.jnp()
    return _jit_mlp_step(lambda x, *p: _mlp(jnp.tanh, x, p), x0, y0, params0)
