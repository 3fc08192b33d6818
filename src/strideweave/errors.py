"""StrideWeave's exception classes.

Each class subclasses the built-in type that the specification or the API
contract names for its failure, so ``pytest.raises(RuntimeError)`` and
``except TypeError`` keep holding, while a caller can catch one failure by
its own name (``except sw.InPlaceModificationError``). All of them also
derive from ``StrideWeaveError``, to catch anything StrideWeave refuses.
"""

from __future__ import annotations

__all__ = [
    "CarrierMismatchError",
    "Float32RuleError",
    "GraphReleasedError",
    "ImplicitExportError",
    "InPlaceModificationError",
    "LeafWriteError",
    "MissingBackendError",
    "StrideWeaveError",
]


class StrideWeaveError(Exception):
    """Base of every exception StrideWeave raises on its own account."""


class InPlaceModificationError(StrideWeaveError, RuntimeError):
    """A Tensor a node saved for backward was written after the node recorded it (spec: version check)."""


class GraphReleasedError(StrideWeaveError, RuntimeError):
    """A traversal reached a node whose saved state an earlier traversal released (pass retain_graph=True)."""


class LeafWriteError(StrideWeaveError, RuntimeError):
    """A Float32 Tensor written in place into a leaf with grad mode on (use no_grad, or write into a copy)."""


class Float32RuleError(StrideWeaveError, RuntimeError):
    """A gradient was asked of, or through, a value that cannot carry one: only Float32 is differentiable."""


class CarrierMismatchError(StrideWeaveError, TypeError):
    """Operands live on different carriers or devices and no rule says where the operation runs."""


class ImplicitExportError(StrideWeaveError, TypeError):
    """An implicit export (``np.asarray``, DLPack) of a Tensor that has an autograd node; call ``detach()``."""


class MissingBackendError(StrideWeaveError, ImportError):
    """An optional backend is not installed; the message names the extra to install."""
