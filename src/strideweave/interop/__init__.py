"""Interop with native autograd: StrideWeave functions inside torch and JAX programs, and the reverse.

- :func:`torch_function` / :func:`jax_function`: a StrideWeave function
  becomes a function on torch tensors / JAX arrays that ``torch.autograd`` /
  ``jax.grad`` (also under ``jax.jit`` and ``jax.vmap``) differentiate.
- :func:`from_torch` / :func:`from_jax`: a native differentiable function
  becomes a StrideWeave operation that joins any StrideWeave graph.

Importing this module imports neither torch nor JAX; each bridge loads its
library when it is first called.
"""

from .jax_bridge import from_jax, jax_function
from .torch_bridge import from_torch, torch_function

__all__ = ["from_jax", "from_torch", "jax_function", "torch_function"]

for _public in (torch_function, jax_function, from_torch, from_jax):
    _public.__module__ = __name__  # documented and shown as sw.interop.<name>
del _public
