"""The operation library: every function here is differentiable where its dtype allows."""

from .elementwise import (abs, add, cos, divide, equal, exp, greater, greater_equal, less, less_equal, log,
                          maximum, minimum, multiply, negative, not_equal, power, sin, sqrt, subtract, tanh)
from .linalg import matmul, tensordot
from .manipulation import astype, clip, concat, copy, detach, stack, where
from .reduction import max, mean, min, prod, sum
from .views import broadcast_to, getitem, permute, reshape, transpose, view

__all__ = [
    "add", "subtract", "multiply", "divide", "negative", "power", "exp", "log", "sqrt", "sin", "cos", "tanh",
    "abs", "maximum", "minimum", "less", "less_equal", "greater", "greater_equal", "equal", "not_equal",
    "where", "clip", "sum", "mean", "max", "min", "prod", "matmul", "tensordot", "concat", "stack", "astype",
    "copy", "detach", "view", "permute", "transpose", "reshape", "broadcast_to", "getitem",
]
