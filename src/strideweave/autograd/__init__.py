"""Reverse-mode differentiation: grad mode, the traversal engine and functional ``grad``."""

from .mode import is_grad_enabled, no_grad, set_grad_enabled

__all__ = ["is_grad_enabled", "set_grad_enabled", "no_grad", "grad"]


def __getattr__(name):
    # ``grad`` needs the operation library, which needs Tensor; load it on first use.
    if name == "grad":
        from .functional import grad

        return grad
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
