"""Interop rows: a small StrideWeave function inside torch and inside ``jax.jit``, against the same function native.

The function is one MLP layer, ``tanh(h @ w + b)`` (h 32 x 32, w 32 x 64,
b 64), so the figures are the bridges' per-call cost: wrapping the native
arrays, running StrideWeave's engine, handing results back; under ``jax.jit``
also the ``pure_callback`` round trips (forward, and backward, which runs the
function again: docs/interop.md).
"""
from __future__ import annotations

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
