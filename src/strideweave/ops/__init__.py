"""The operation library: every function here is differentiable where its dtype allows."""

# ``arrays``, ``linalg_ext`` and ``elementwise`` are re-exported whole: each one's ``__all__`` is the one list of
# its functions (``elementwise``'s is built from its rule table, so a new row needs no edit here).

import typing as _typing

from . import elementwise as _elementwise
from .arrays import *
from .elementwise import *
from .linalg import matmul, tensordot
from .linalg_ext import *
from .manipulation import astype, clip, concat, copy, detach, stack, where
from .reduction import max, mean, min, prod, sum
from .sets import unique_all, unique_counts, unique_inverse, unique_values
from .views import broadcast_to, from_dlpack, getitem, permute, reshape, transpose, view

if _typing.TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    # A type checker cannot read a computed __all__: the elementwise names it does not see are functions.
    def __getattr__(name: str) -> Callable[..., Any]: ...

#: the contract's core functions (docs/api.md), in its order
_CORE = (
    "add", "subtract", "multiply", "divide", "negative", "power", "exp", "log", "sqrt", "sin", "cos", "tanh",
    "abs", "maximum", "minimum", "less", "less_equal", "greater", "greater_equal", "equal", "not_equal",
    "where", "clip", "sum", "mean", "max", "min", "prod", "matmul", "tensordot", "concat", "stack", "astype",
    "copy", "detach", "view", "permute", "transpose", "reshape", "broadcast_to", "getitem",
)
#: the rest of the Array API's functions, under the standard's names and signatures (also at top level):
#: every standard row of the elementwise table, then the other families'
ARRAY_API_EXTRAS = (
    *(name for name in _elementwise.FUNCTIONS if name not in _CORE and name not in _elementwise.BEYOND_STANDARD),
    "cumulative_sum", "cumulative_prod", "sort", "argsort", "argmax", "argmin", "searchsorted", "nonzero",
    "count_nonzero", "unique_all", "unique_counts", "unique_inverse", "unique_values", "take",
    "take_along_axis", "flip", "roll", "repeat", "tile", "squeeze", "expand_dims", "moveaxis", "tril", "triu",
    "diff", "std", "var", "vecdot",
    # linalg
    "cholesky", "cross", "det", "diagonal", "eigh", "eigvalsh", "inv", "matrix_norm", "matrix_power",
    "matrix_rank", "outer", "pinv", "qr", "slogdet", "solve", "svd", "svdvals", "trace", "vector_norm",
)
#: beyond the standard: the elementwise table's NumPy functions (``ops`` and ``strideweave.array_api`` only)
BEYOND_STANDARD = tuple(_elementwise.BEYOND_STANDARD)

__all__ = [*_CORE, *ARRAY_API_EXTRAS, *BEYOND_STANDARD]
