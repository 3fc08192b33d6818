"""StrideWeave: backend-neutral reverse-mode autograd over the Python Array API.

Tensors are views, through CuTe-style hierarchical layouts, into flat storage
buffers ("carriers") that wrap NumPy, PyTorch, JAX, array-api-strict or any
namespace array-api-compat accepts. One layout algebra and one autograd
engine sit on top of all of them.
"""

from . import ops
from .autograd.functional import grad
from .carriers import (
    ArrayAPICarrier,
    Carrier,
    DaskCarrier,
    JaxCarrier,
    NumpyCarrier,
    TorchCarrier,
    get_default_carrier,
    set_default_carrier,
)
from .dtypes import CompoundDType, DType, DTypeCategory, SimpleDType
from .errors import (
    CarrierMismatchError,
    Float32RuleError,
    GraphReleasedError,
    ImplicitExportError,
    InPlaceModificationError,
    LeafWriteError,
    MissingBackendError,
    StrideWeaveError,
)
from .layout import Layout, Shape, Stride
from .operation import ExecutionOptions, Operation, is_grad_enabled, no_grad, set_grad_enabled
from .ops import ARRAY_API_EXTRAS as _ARRAY_API_EXTRAS
from .ops import (
    abs,
    add,
    astype,
    broadcast_to,
    clip,
    concat,
    copy,
    cos,
    detach,
    divide,
    equal,
    exp,
    from_dlpack,
    greater,
    greater_equal,
    less,
    less_equal,
    log,
    matmul,
    max,
    maximum,
    mean,
    min,
    minimum,
    multiply,
    negative,
    not_equal,
    permute,
    power,
    prod,
    reshape,
    sin,
    sqrt,
    stack,
    subtract,
    sum,
    tanh,
    tensordot,
    transpose,
    view,
    where,
)
from .tensors import Tensor, arange, full, ones, tensor, zeros
from .tensors.compute import compute

# The standard's other functions are public under their own names; tests/test_public_api.py pins the list.
globals().update({_name: getattr(ops, _name) for _name in _ARRAY_API_EXTRAS})

from importlib.metadata import PackageNotFoundError as _PackageNotFoundError
from importlib.metadata import version as _version

from . import (  # faces over everything above; load no backend
    _methods,  # attaches every operator and method to Tensor
    array_api,  # the standard's namespace, over the op library
    interop,
    random,
    testing,
    viz,
)

# tensordot with NumPy's axes= too, and einsum: what opt_einsum calls through the module name (not in __all__)
from ._module_functions import einsum, tensordot  # noqa: F811  (replaces ops' tensordot at module level)

try:
    __version__ = _version("strideweave")
except _PackageNotFoundError:  # a source tree on sys.path without an installed distribution
    __version__ = "0+unknown"

__all__ = [
    # layouts
    "Shape", "Stride", "Layout",
    # dtypes
    "DType", "SimpleDType", "DTypeCategory", "CompoundDType",
    # carriers
    "Carrier", "NumpyCarrier", "TorchCarrier", "JaxCarrier", "ArrayAPICarrier", "DaskCarrier",
    "set_default_carrier", "get_default_carrier", "compute",
    # tensors
    "Tensor", "tensor", "zeros", "ones", "full", "arange", "from_dlpack", "random",
    # operations
    "Operation", "ExecutionOptions",
    "add", "subtract", "multiply", "divide", "negative", "power", "exp", "log", "sqrt", "sin", "cos", "tanh",
    "abs", "maximum", "minimum", "where", "clip", "sum", "mean", "max", "min", "prod", "matmul", "tensordot",
    "concat", "stack", "astype", "copy", "detach", "view", "permute", "transpose", "reshape", "broadcast_to",
    "less", "less_equal", "greater", "greater_equal", "equal", "not_equal",
    *_ARRAY_API_EXTRAS,
    # autograd
    "grad", "is_grad_enabled", "set_grad_enabled", "no_grad",
    # errors
    "StrideWeaveError", "InPlaceModificationError", "GraphReleasedError", "LeafWriteError", "Float32RuleError",
    "CarrierMismatchError", "ImplicitExportError", "MissingBackendError",
    # tools
    "testing", "viz", "interop", "array_api", "__version__",
]
