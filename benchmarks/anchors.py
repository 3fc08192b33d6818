"""What a user would pick instead of StrideWeave, one builder per (workload, anchor).

Each builder does its setup (data on the backend, ``jit`` objects) outside the
timed region and returns ``step()``: one full forward + backward that only
returns once every requested gradient exists (``block_until_ready`` for JAX,
``cuda.synchronize`` for CUDA).  ``numpy`` is hand-written forward + gradient:
the floor, no graph at all.
"""
from __future__ import annotations

import numpy as np

from benchmarks import backends as B

# ------------------------------------------------------------------ W1 / W2 chains


def chain_torch(x0, steps, scale, shift):
    torch = B.torch()
    x = torch.from_numpy(x0.copy()).requires_grad_(True)

    def step():
        x.grad = None
        y = x
        for _ in range(steps):
            y = y * scale + shift if shift is not None else y * scale
        y.sum().backward()
        return x.grad
    return step


def _chain_fn(np_like, steps, scale, shift):
    def f(x):
        y = x
        for _ in range(steps):
            y = y * scale + shift if shift is not None else y * scale
        return np_like.sum(y)
    return f


def chain_jax(x0, steps, scale, shift, jit=False):
    jax, jnp = B.jax(), B.jnp()
    x = jnp.asarray(x0)
    g = jax.grad(_chain_fn(jnp, steps, scale, shift))
    if jit:
        g = jax.jit(g)

    def step():
        return g(x).block_until_ready()
    return step


def chain_hips(x0, steps, scale, shift):
    ag, anp = B.hips()
    g = ag.grad(_chain_fn(anp, steps, scale, shift))
    x = x0.copy()

    def step():
        return g(x)
    return step


def chain_numpy(x0, steps, scale, shift):
    x = x0.copy()
    a = np.float32(scale)
    b = None if shift is None else np.float32(shift)

    def step():
        y = x
        for _ in range(steps):
            y = y * a + b if b is not None else y * a
        y.sum()
        g = np.ones_like(x)
        for _ in range(steps):          # d(y*a + b)/dy = a
            g = g * a
        return g
    return step


# ------------------------------------------------------------------ W3 sum(exp(x) * x)


def expx_torch(x0, device="cpu"):
    torch = B.torch()
    x = torch.from_numpy(x0.copy()).to(device).requires_grad_(True)

    def step():
        x.grad = None
        (torch.exp(x) * x).sum().backward()
        B.torch_sync(device)
        return x.grad
    return step


def expx_jax(x0, jit=False):
    jax, jnp = B.jax(), B.jnp()
    x = jnp.asarray(x0)
    g = jax.grad(lambda v: jnp.sum(jnp.exp(v) * v))
    if jit:
        g = jax.jit(g)

    def step():
        return g(x).block_until_ready()
    return step


def expx_hips(x0):
    ag, anp = B.hips()
    g = ag.grad(lambda v: anp.sum(anp.exp(v) * v))
    x = x0.copy()

    def step():
        return g(x)
    return step


def expx_numpy(x0):
    x = x0.copy()

    def step():
        e = np.exp(x)
        (e * x).sum()
        return e * (x + np.float32(1))
    return step


# ------------------------------------------------------------------ W4 sum(A * w), grad w


def bcast_torch(A0, w0, device="cpu"):
    torch = B.torch()
    A = torch.from_numpy(A0.copy()).to(device)
    w = torch.from_numpy(w0.copy()).to(device).requires_grad_(True)

    def step():
        w.grad = None
        (A * w).sum().backward()
        B.torch_sync(device)
        return w.grad
    return step


def bcast_jax(A0, w0, jit=False):
    jax, jnp = B.jax(), B.jnp()
    A, w = jnp.asarray(A0), jnp.asarray(w0)
    g = jax.grad(lambda a, v: jnp.sum(a * v), argnums=1)
    if jit:
        g = jax.jit(g)

    def step():
        return g(A, w).block_until_ready()
    return step


def bcast_hips(A0, w0):
    ag, anp = B.hips()
    g = ag.grad(lambda a, v: anp.sum(a * v), 1)
    A, w = A0.copy(), w0.copy()

    def step():
        return g(A, w)
    return step


def bcast_numpy(A0, w0):
    A, w = A0.copy(), w0.copy()

    def step():
        (A * w).sum()
        return A.sum(axis=0, keepdims=True)
    return step


# ------------------------------------------------------------------ W5 MLP


def mlp_torch(x0, W10, b10, W20, x_grad=False):
    """``x_grad=True``: x requires grad as well, as every Float32 leaf does in StrideWeave (like for like)."""
    torch = B.torch()
    x = torch.from_numpy(x0.copy()).requires_grad_(x_grad)
    params = [torch.from_numpy(p.copy()).requires_grad_(True) for p in (W10, b10, W20)]
    W1, b1, W2 = params
    cleared = [*params, x] if x_grad else params

    def step():
        for p in cleared:
            p.grad = None
        (torch.tanh(x @ W1.T + b1) @ W2.T).sum().backward()
        return W1.grad, b1.grad, W2.grad
    return step


def _mlp_fn(np_like):
    def f(params, x):
        W1, b1, W2 = params
        return np_like.sum(np_like.dot(np_like.tanh(np_like.dot(x, W1.T) + b1), W2.T))
    return f


def mlp_jax(x0, W10, b10, W20, jit=False):
    jax, jnp = B.jax(), B.jnp()
    x = jnp.asarray(x0)
    params = tuple(jnp.asarray(p) for p in (W10, b10, W20))
    g = jax.grad(_mlp_fn(jnp))
    if jit:
        g = jax.jit(g)

    def step():
        return jax.block_until_ready(g(params, x))
    return step


def mlp_hips(x0, W10, b10, W20):
    ag, anp = B.hips()
    g = ag.grad(_mlp_fn(anp))
    x = x0.copy()
    params = (W10.copy(), b10.copy(), W20.copy())

    def step():
        return g(params, x)
    return step


def mlp_numpy(x0, W10, b10, W20):
    x, W1, b1, W2 = x0.copy(), W10.copy(), b10.copy(), W20.copy()

    def step():
        a = np.tanh(x @ W1.T + b1)
        (a @ W2.T).sum()
        go = np.ones((x.shape[0], W2.shape[0]), np.float32)
        gW2 = go.T @ a
        gh = (go @ W2) * (np.float32(1) - a * a)
        return gh.T @ x, gh.sum(axis=0), gW2
    return step


# ------------------------------------------------------------------ W6 Jacobian of tanh(W x)


def jac_torch(W0, x0):
    torch = B.torch()
    W = torch.from_numpy(W0.copy())
    x = torch.from_numpy(x0.copy()).requires_grad_(True)
    eye = torch.eye(W0.shape[0])

    def step():
        out = torch.tanh(W @ x)
        (J,) = torch.autograd.grad(out, x, eye, is_grads_batched=True)
        return J
    return step


def jac_jax(W0, x0, jit=False):
    jax, jnp = B.jax(), B.jnp()
    W, x = jnp.asarray(W0), jnp.asarray(x0)
    J = jax.jacrev(lambda v: jnp.tanh(W @ v))
    if jit:
        J = jax.jit(J)

    def step():
        return J(x).block_until_ready()
    return step


def jac_numpy(W0, x0):
    W, x = W0.copy(), x0.copy()

    def step():
        y = np.tanh(W @ x)
        return (np.float32(1) - y * y)[:, None] * W
    return step


# ------------------------------------------------------------------ W7 raw jax on views


def view_expx_jax_raw(storage, view):
    """Hand-written jnp forward + gradient; the view is built inside the step."""
    jnp = B.jnp()

    def step():
        X = view(storage)
        e = jnp.exp(X)
        s = jnp.sum(e * X)
        g = e * (X + 1.0)
        s.block_until_ready()
        return g.block_until_ready()
    return step


def view_expx_jax_grad(storage, view, jit=False):
    jax, jnp = B.jax(), B.jnp()
    g = jax.grad(lambda v: jnp.sum(jnp.exp(v) * v))
    if jit:
        g = jax.jit(g)

    def step():
        return g(view(storage)).block_until_ready()
    return step


def view_bcast_jax_raw(storage, view, w0):
    jnp = B.jnp()
    w = jnp.asarray(w0)

    def step():
        A = view(storage)
        s = jnp.sum(A * w)
        gw = jnp.sum(A, axis=0, keepdims=True)
        s.block_until_ready()
        return gw.block_until_ready()
    return step


def view_bcast_jax_grad(storage, view, w0, jit=False):
    jax, jnp = B.jax(), B.jnp()
    w = jnp.asarray(w0)
    g = jax.grad(lambda a, v: jnp.sum(a * v), argnums=1)
    if jit:
        g = jax.jit(g)

    def step():
        return g(view(storage), w).block_until_ready()
    return step
