"""The backends' own autodiff on the same math: torch.autograd and jax.vjp.

A case's native reference is ``ref(xp, *arrays)`` written against the Array
API (``xp`` is ``array_api_compat.torch`` or ``jax.numpy``), taking the
logical input arrays (one axis per top-level mode, nested modes flattened
colexicographically, exactly what ``Tensor.to_array()`` gives).

To compare like with like for every layout variant, the native function is
differentiated with respect to the *storage* buffer: the logical array is
gathered from storage with the layout's slot map, so a broadcast-aliased
input's storage gradient sums over its aliases exactly as StrideWeave's
does. The storage gradient is then read back at every logical position.
Storage is zero-padded to a length shared by all layout variants of a case,
so JAX compiles each primitive once per case rather than once per variant.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cache

import numpy as np

from .inputs import PreparedInput

__all__ = ["NATIVE_CHECKS", "native_vjp", "reshape_colex", "stop_gradient"]

#: carrier name -> the check name of its backend's own autodiff
NATIVE_CHECKS = {"torch": "torch.autograd", "jax": "jax.vjp"}


def reshape_colex(xp, x, shape: tuple):
    """Reshape with StrideWeave's (colexicographic, first-axis-fastest) element order."""
    rev = xp.permute_dims(x, tuple(reversed(range(x.ndim))))
    out = xp.reshape(rev, tuple(reversed(shape)))
    return xp.permute_dims(out, tuple(reversed(range(len(shape)))))


def native_vjp(backend: str, ref: Callable, inputs: Sequence[PreparedInput],
               cotangents: Sequence[np.ndarray]) -> list[np.ndarray]:
    """Per input, the stacked VJPs (one per cotangent) of ``ref`` computed by ``backend``.

    Returns float64 arrays of shape ``(K, *logical_shape)``.
    """
    if backend == "torch":
        return _torch_vjp(ref, inputs, cotangents)
    if backend == "jax":
        return _jax_vjp(ref, inputs, cotangents)
    raise ValueError(f"no native autodiff for carrier {backend!r}; expected one of {sorted(NATIVE_CHECKS)}")


def _torch_vjp(ref, inputs, cotangents):
    import array_api_compat.torch as xp
    import torch

    storages = [torch.tensor(p.padded_storage(), requires_grad=True) for p in inputs]
    index = [torch.as_tensor(p.index) for p in inputs]
    out = ref(xp, *[s[i] for s, i in zip(storages, index)])
    rows = [[] for _ in inputs]
    for k, cot in enumerate(cotangents):
        c = torch.as_tensor(np.asarray(cot, dtype=np.float32)).reshape(out.shape)
        grads = torch.autograd.grad(out, storages, c, retain_graph=k + 1 < len(cotangents), allow_unused=True)
        for row, g, i, s in zip(rows, grads, index, storages):
            g = torch.zeros_like(s) if g is None else g
            row.append(g[i].detach().numpy().astype(np.float64))
    return [np.stack(r) for r in rows]


@cache
def _jax_pullback(ref: Callable):
    """``jit(storages, index, cotangents) -> per-input stacked VJPs`` for one reference.

    The index arrays are arguments, not constants, and storages are padded to
    a variant-independent length, so every layout variant of a case reuses
    one compilation.
    """
    import jax
    import jax.numpy as jnp

    def pull(storages, index, cots):
        def fn(*s):
            return ref(jnp, *[si[i] for si, i in zip(s, index)])

        out, vjp = jax.vjp(fn, *storages)
        grads = jax.vmap(lambda c: vjp(c.reshape(out.shape)))(cots)
        return [g[:, i] for g, i in zip(grads, index)]

    return jax.jit(pull)


def _jax_vjp(ref, inputs, cotangents):
    import jax.numpy as jnp

    grads = _jax_pullback(ref)([jnp.asarray(p.padded_storage()) for p in inputs],
                               [jnp.asarray(p.index) for p in inputs],
                               jnp.asarray(np.stack(cotangents).astype(np.float32)))
    return [np.asarray(g, dtype=np.float64) for g in grads]

def stop_gradient(xp, x):
    """The backend's own detach (``Tensor.detach`` / ``jax.lax.stop_gradient``), for references."""
    if hasattr(x, "detach"):
        return x.detach()
    import jax

    return jax.lax.stop_gradient(x)
