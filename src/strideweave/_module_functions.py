"""What opt_einsum reaches through the module name ``strideweave``.

opt_einsum (which xarray's ``xr.dot`` and ``weighted`` use) names a backend
after its arrays' top-level module, so for Tensors it calls
``strideweave.tensordot(a, b, axes=...)``, ``strideweave.transpose(a, axes)``
and ``strideweave.einsum(subscripts, *operands)``. ``transpose`` already has
NumPy's meaning; ``tensordot`` keeps its layout-native ``modes=`` form and
takes NumPy's ``axes=`` to mean NumPy's function (the namespace's, 0-d full
contraction included); ``einsum`` is the namespace's.
"""

from __future__ import annotations

from collections.abc import Sequence

from .array_api import einsum
from .array_api import tensordot as _xp_tensordot
from .ops import tensordot as _sw_tensordot
from .tensors.tensor import Tensor

__all__ = ["einsum", "tensordot"]


def tensordot(a: Tensor, b: Tensor, modes: int | Sequence[Sequence[int]] = 2, *, axes=None, options=None) -> Tensor:
    """Contract top-level ``modes`` of ``a`` and ``b`` (layout-native); ``axes=``: NumPy's ``tensordot``.

    With ``axes=`` (NumPy's keyword, as opt_einsum calls it) the result is
    the namespace's ``xp.tensordot(a, b, axes=axes)``: a full contraction is
    0-d, as in NumPy.
    """
    if axes is not None:
        if options is not None:
            raise TypeError("tensordot: options= goes with the layout-native modes= form, not with axes=")
        return _xp_tensordot(a, b, axes=axes)
    return _sw_tensordot(a, b, modes, options=options)
