"""The operation library: every function here is differentiable where its dtype allows."""

# ``arrays`` and ``linalg_ext`` are re-exported whole: each one's literal ``__all__`` is the one list of its
# functions. ``elementwise`` builds its ``__all__`` from its rule tables, which a type checker cannot read,
# so its names are listed, here and in array_api/__init__.py (a deliberate pair).

from .arrays import *
from .elementwise import (
                          abs,
                          acos,
                          acosh,
                          add,
                          asin,
                          asinh,
                          atan,
                          atan2,
                          atanh,
                          bitwise_and,
                          bitwise_invert,
                          bitwise_left_shift,
                          bitwise_or,
                          bitwise_right_shift,
                          bitwise_xor,
                          ceil,
                          copysign,
                          cos,
                          cosh,
                          divide,
                          equal,
                          exp,
                          expm1,
                          floor,
                          floor_divide,
                          greater,
                          greater_equal,
                          hypot,
                          isfinite,
                          isinf,
                          isnan,
                          less,
                          less_equal,
                          log,
                          log1p,
                          log2,
                          log10,
                          logaddexp,
                          logical_and,
                          logical_not,
                          logical_or,
                          logical_xor,
                          maximum,
                          minimum,
                          multiply,
                          negative,
                          nextafter,
                          not_equal,
                          positive,
                          pow,
                          power,
                          reciprocal,
                          remainder,
                          round,
                          sign,
                          signbit,
                          sin,
                          sinh,
                          sqrt,
                          square,
                          subtract,
                          tan,
                          tanh,
                          trunc,
)
from .linalg import matmul, tensordot
from .linalg_ext import *
from .manipulation import astype, clip, concat, copy, detach, stack, where
from .reduction import max, mean, min, prod, sum
from .sets import unique_all, unique_counts, unique_inverse, unique_values
from .views import broadcast_to, from_dlpack, getitem, permute, reshape, transpose, view

__all__ = [
    "add", "subtract", "multiply", "divide", "negative", "power", "exp", "log", "sqrt", "sin", "cos", "tanh",
    "abs", "maximum", "minimum", "less", "less_equal", "greater", "greater_equal", "equal", "not_equal",
    "where", "clip", "sum", "mean", "max", "min", "prod", "matmul", "tensordot", "concat", "stack", "astype",
    "copy", "detach", "view", "permute", "transpose", "reshape", "broadcast_to", "getitem",
    *(ARRAY_API_EXTRAS := (
        # the rest of the Array API's functions, under the standard's names and signatures (also at top level)
        "acos", "acosh", "asin", "asinh", "atan", "atan2", "atanh", "bitwise_and", "bitwise_invert",
        "bitwise_left_shift", "bitwise_or", "bitwise_right_shift", "bitwise_xor", "ceil", "copysign", "cosh",
        "expm1", "floor", "floor_divide", "hypot", "isfinite", "isinf", "isnan", "log1p", "log2", "log10",
        "logaddexp", "logical_and", "logical_not", "logical_or", "logical_xor", "nextafter", "positive", "pow",
        "reciprocal", "remainder", "round", "sign", "signbit", "sinh", "square", "tan", "trunc",
        "cumulative_sum", "cumulative_prod", "sort", "argsort", "argmax", "argmin", "searchsorted", "nonzero",
        "count_nonzero", "unique_all", "unique_counts", "unique_inverse", "unique_values", "take",
        "take_along_axis", "flip", "roll", "repeat", "tile", "squeeze", "expand_dims", "moveaxis", "tril", "triu",
        "diff", "std", "var", "vecdot",
        # linalg
        "cholesky", "cross", "det", "diagonal", "eigh", "eigvalsh", "inv", "matrix_norm", "matrix_power",
        "matrix_rank", "outer", "pinv", "qr", "slogdet", "solve", "svd", "svdvals", "trace", "vector_norm",
    )),
]
