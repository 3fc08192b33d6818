"""The Array API's set functions (``unique_*``): integer and value results, computed forward only.

None is differentiable, so each runs the carrier's own function on natural
arrays. Where the library has none (PyTorch: ``unique_all`` at all, and any
unique of complex values), NumPy's runs on the host and the results come back
to the carrier.
"""

from __future__ import annotations

from collections import namedtuple

from ..carriers.jax_carrier import refuse_traced
from ..tensors.tensor import Tensor
from ._args import tensor as _tensor
from .arrays import _forward_only

__all__ = ["unique_all", "unique_counts", "unique_inverse", "unique_values"]

UniqueAll = namedtuple("UniqueAll", ["values", "indices", "inverse_indices", "counts"])
UniqueCounts = namedtuple("UniqueCounts", ["values", "counts"])
UniqueInverse = namedtuple("UniqueInverse", ["values", "inverse_indices"])


def _unique(name: str):
    """``xp.<name>`` of a natural array, or NumPy's on the host where the library has none
    (PyTorch: pytorch/pytorch#36748)."""
    def compute(xp, a):
        refuse_traced(name, a)
        try:
            out = getattr(xp, name)(a)
        except NotImplementedError:
            import numpy as np
            from array_api_compat import device, to_device

            out = getattr(np, name)(np.asarray(to_device(a, "cpu")))
            if isinstance(out, tuple):
                return tuple(xp.asarray(part, device=device(a)) for part in out)
            return xp.asarray(out, device=device(a))
        return tuple(out) if isinstance(out, tuple) else out
    compute.__name__ = name
    return compute


def unique_all(x, /, *, options=None) -> UniqueAll:
    """Unique values, first indices, inverse indices and counts (not differentiable)."""
    return UniqueAll(*_forward_only(_unique("unique_all"), _tensor(x, "unique_all"), options=options))


def unique_counts(x, /, *, options=None) -> UniqueCounts:
    """Unique values and their counts (not differentiable)."""
    return UniqueCounts(*_forward_only(_unique("unique_counts"), _tensor(x, "unique_counts"), options=options))


def unique_inverse(x, /, *, options=None) -> UniqueInverse:
    """Unique values and the indices that rebuild ``x`` from them (not differentiable)."""
    return UniqueInverse(*_forward_only(_unique("unique_inverse"), _tensor(x, "unique_inverse"), options=options))


def unique_values(x, /, *, options=None) -> Tensor:
    """The unique values of ``x``, sorted (not differentiable)."""
    return _forward_only(_unique("unique_values"), _tensor(x, "unique_values"), options=options)
