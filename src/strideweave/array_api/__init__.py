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

# The op library's functions, already the standard's (complex operands included).
from ..ops.elementwise import (abs, acos, acosh, add, asin, asinh, atan, atan2, atanh, bitwise_and, bitwise_invert,
                               bitwise_left_shift, bitwise_or, bitwise_right_shift, bitwise_xor, ceil, copysign,
                               cos, cosh, divide, equal, exp, expm1, floor, floor_divide, greater, greater_equal,
                               hypot, isfinite, isinf, isnan, less, less_equal, log, log1p, log2, log10, logaddexp,
                               logical_and, logical_not, logical_or, logical_xor, maximum, minimum, multiply,
                               negative, nextafter, not_equal, positive, pow, reciprocal, remainder, round, sign,
                               signbit, sin, sinh, sqrt, square, subtract, tan, tanh, trunc)
from ..ops.arrays import (argmax, argmin, argsort, count_nonzero, cumulative_prod, cumulative_sum, diff, flip,
                          moveaxis, nonzero, repeat, roll, searchsorted, sort, squeeze, take, take_along_axis, tile,
                          tril, triu, vecdot)
from ..ops.sets import unique_all, unique_counts, unique_inverse, unique_values

# What the standard asks beyond the op library, by concept.
from ._creation import (arange, asarray, empty, empty_like, eye, from_dlpack, full, full_like, linspace, meshgrid,
                        ones, ones_like, to_device, zeros, zeros_like)
from ._data_types import (astype, bool, can_cast, complex64, complex128, finfo, float32, float64, iinfo, int8,
                          int16, int32, int64, isdtype, result_type, uint8, uint16, uint32, uint64)
from ._devices import Info as _Info, default_int
from ._einsum import einsum
# beyond the standard: what xarray calls on xp (and NumPy's ddof= in std / var)
from ._numpy_extras import gradient, isin, lib, pad, quantile, std, transpose, var
from ._elementwise import clip, conj, imag, real, where
from ._linear_algebra import matmul, matrix_transpose, tensordot
from ._manipulation import (broadcast_arrays, broadcast_to, concat, expand_dims, inferred_shape, permute_dims,
                            reshape, stack, unstack)
from ._statistical import all, any, max, mean, min, prod, sum
from . import fft, linalg, special  # the extensions are attributes of the namespace

__array_api_version__ = "2024.12"

e, pi, inf, nan = _math.e, _math.pi, _math.inf, _math.nan
newaxis = None

_INFO = _Info()


def _bind_compositions() -> None:
    """The functions composed of this namespace's own (einsum, the NaN reductions, NumPy's extras) use it."""
    import sys

    from . import _einsum, _nan_reductions, _numpy_extras
    for module in (_einsum, _nan_reductions, _numpy_extras):
        module.bind(sys.modules[__name__])


_bind_compositions()


def __array_namespace_info__() -> _Info:
    """The inspection object of the standard: devices, dtypes, capabilities."""
    return _INFO


#: every public name of the namespace, spelled out (the standard and tests/array_api pin them)
__all__ = [
    "abs", "acos", "acosh", "add", "all", "any", "arange", "argmax", "argmin", "argsort", "asarray", "asin",
    "asinh", "astype", "atan", "atan2", "atanh", "bitwise_and", "bitwise_invert", "bitwise_left_shift",
    "bitwise_or", "bitwise_right_shift", "bitwise_xor", "bool", "broadcast_arrays", "broadcast_to", "can_cast",
    "ceil", "clip", "complex128", "complex64", "concat", "conj", "copysign", "cos", "cosh", "count_nonzero",
    "cumulative_prod", "cumulative_sum", "default_int", "diff", "divide", "e", "einsum", "empty", "empty_like",
    "equal", "exp", "expand_dims", "expm1", "eye", "fft", "finfo", "flip", "float32", "float64", "floor",
    "floor_divide", "from_dlpack", "full", "full_like", "gradient", "greater", "greater_equal", "hypot", "iinfo",
    "imag", "inf", "inferred_shape", "int16", "int32", "int64", "int8", "isdtype", "isfinite", "isin", "isinf",
    "isnan", "less", "less_equal", "lib", "linalg", "linspace", "log", "log10", "log1p", "log2", "logaddexp",
    "logical_and", "logical_not", "logical_or", "logical_xor", "matmul", "matrix_transpose", "max", "maximum",
    "mean", "meshgrid", "min", "minimum", "moveaxis", "multiply", "nan", "negative", "newaxis", "nextafter",
    "nonzero", "not_equal", "ones", "ones_like", "pad", "permute_dims", "pi", "positive", "pow", "prod", "quantile",
    "real", "reciprocal", "remainder", "repeat", "reshape", "result_type", "roll", "round", "searchsorted", "sign",
    "signbit", "sin", "sinh", "sort", "special", "sqrt", "square", "squeeze", "stack", "std", "subtract", "sum",
    "take", "take_along_axis", "tan", "tanh", "tensordot", "tile", "to_device", "transpose", "tril", "triu",
    "trunc", "uint16", "uint32", "uint64", "uint8", "unique_all", "unique_counts", "unique_inverse",
    "unique_values", "unstack", "var", "vecdot", "where", "zeros", "zeros_like",
]
