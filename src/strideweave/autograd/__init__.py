"""Reverse mode: the cotangent protocol, gradient buffers, the traversal engine and functional ``grad``.

Grad mode belongs to recording (``strideweave.operation``); it is re-exported here.
"""

from ..operation import is_grad_enabled, no_grad, set_grad_enabled
from .functional import grad

__all__ = ["grad", "is_grad_enabled", "no_grad", "set_grad_enabled"]
