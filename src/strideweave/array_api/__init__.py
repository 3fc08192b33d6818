"""``strideweave.array_api``: the Array API standard (2024.12) over differentiable StrideWeave Tensors.

Its array object is ``sw.Tensor``. Where ``strideweave`` itself keeps its
layout-native semantics (``modes=``, colexicographic ``reshape``, full
reductions of shape ``(1)``), this namespace follows the standard: ``axis=``,
C-order ``reshape``, 0-d results, ``keepdims``, ``correction``. Every
function whose result depends differentiably on a Float32 input is recorded
by the autograd engine. The default carrier is ``sw.get_default_carrier()``
(set it with ``STRIDEWEAVE_CARRIER``); ``device=`` takes a carrier name, a
carrier's native device or ``x.device``.

The namespace is split by concept, as array-api-strict's is: ``_creation``,
``_data_types``, ``_elementwise``, ``_manipulation``, ``_linear_algebra``,
``_statistical`` hold what the standard asks beyond the op library; every
other function is the op library's own, which already takes the standard's
signature.
"""

import math as _math
import typing as _typing

from ..ops.arrays import (
    argmax,
    argmin,
    argsort,
    count_nonzero,
    cumulative_prod,
    cumulative_sum,
    diff,
    flip,
    moveaxis,
    nonzero,
    repeat,
    roll,
    searchsorted,
    sort,
    squeeze,
    take,
    take_along_axis,
    tile,
    tril,
    triu,
    vecdot,
)

# The elementwise functions are the op library's, already the standard's (complex operands included): one
# per row of its table, under the namespace's name (``NAMESPACE``), entered below
# (``globals().update``: the names are computed).
from ..ops.elementwise import NAMESPACE as _ELEMENTWISE
from ..ops.sets import unique_all, unique_counts, unique_inverse, unique_values
from . import fft, linalg, special  # the extensions are attributes of the namespace

# What the standard asks beyond the op library, by concept.
from ._creation import (
    arange,
    asarray,
    empty,
    empty_like,
    eye,
    from_dlpack,
    full,
    full_like,
    linspace,
    meshgrid,
    ones,
    ones_like,
    to_device,
    zeros,
    zeros_like,
)
from ._data_types import (
    astype,
    bool,
    can_cast,
    complex64,
    complex128,
    finfo,
    float32,
    float64,
    iinfo,
    int8,
    int16,
    int32,
    int64,
    isdtype,
    result_type,
    uint8,
    uint16,
    uint32,
    uint64,
)
from ._devices import Info as _Info
from ._devices import default_int
from ._einsum import einsum
from ._elementwise import clip, conj, imag, real, where
from ._linear_algebra import matmul, matrix_transpose, tensordot
from ._manipulation import (
    broadcast_arrays,
    broadcast_to,
    concat,
    expand_dims,
    inferred_shape,
    permute_dims,
    reshape,
    stack,
    unstack,
)

# beyond the standard: what xarray calls on xp (and NumPy's ddof= in std / var, out=None in any / all)
from ._numpy_extras import all, any, cumprod, cumsum, gradient, isin, lib, pad, quantile, std, transpose, var
from ._statistical import max, mean, min, prod, sum

__array_api_version__ = "2024.12"

e, pi, inf, nan = _math.e, _math.pi, _math.inf, _math.nan
newaxis = None

_INFO = _Info()

globals().update(_ELEMENTWISE)

if _typing.TYPE_CHECKING:
    from collections.abc import Callable as _Callable
    from typing import Any as _Any

    # A type checker cannot follow globals().update: the elementwise names it does not see are functions.
    def __getattr__(name: str) -> _Callable[..., _Any]: ...


def __array_namespace_info__() -> _Info:
    """The inspection object of the standard: devices, dtypes, capabilities."""
    return _INFO


#: every public name of the namespace: the elementwise table's, and the rest spelled out (the standard and
#: tests/array_api pin them)
__all__ = sorted([
    *_ELEMENTWISE,
    "all",
    "any",
    "arange",
    "argmax",
    "argmin",
    "argsort",
    "asarray",
    "astype",
    "bool",
    "broadcast_arrays",
    "broadcast_to",
    "can_cast",
    "clip",
    "complex64",
    "complex128",
    "concat",
    "conj",
    "count_nonzero",
    "cumprod",
    "cumsum",
    "cumulative_prod",
    "cumulative_sum",
    "default_int",
    "diff",
    "e",
    "einsum",
    "empty",
    "empty_like",
    "expand_dims",
    "eye",
    "fft",
    "finfo",
    "flip",
    "float32",
    "float64",
    "from_dlpack",
    "full",
    "full_like",
    "gradient",
    "iinfo",
    "imag",
    "inf",
    "inferred_shape",
    "int8",
    "int16",
    "int32",
    "int64",
    "isdtype",
    "isin",
    "lib",
    "linalg",
    "linspace",
    "matmul",
    "matrix_transpose",
    "max",
    "mean",
    "meshgrid",
    "min",
    "moveaxis",
    "nan",
    "newaxis",
    "nonzero",
    "ones",
    "ones_like",
    "pad",
    "permute_dims",
    "pi",
    "prod",
    "quantile",
    "real",
    "repeat",
    "reshape",
    "result_type",
    "roll",
    "searchsorted",
    "sort",
    "special",
    "squeeze",
    "stack",
    "std",
    "sum",
    "take",
    "take_along_axis",
    "tensordot",
    "tile",
    "to_device",
    "transpose",
    "tril",
    "triu",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "unique_all",
    "unique_counts",
    "unique_inverse",
    "unique_values",
    "unstack",
    "var",
    "vecdot",
    "where",
    "zeros",
    "zeros_like",
])
