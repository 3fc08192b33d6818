"""The public surface is pinned: every name docs/api.md and the spec promise, and nothing by accident."""

import inspect
from pathlib import Path

import numpy as np
import pytest

import strideweave as sw
import strideweave.array_api as xp
from strideweave.array_api._native_operands import _UFUNCS
from strideweave.ops import elementwise

ARRAY_API_DOC = (Path(__file__).parents[1] / "docs" / "array-api.md").read_text()

PUBLIC = {
    "Shape", "Stride", "Layout",
    "DType", "SimpleDType", "DTypeCategory", "CompoundDType",
    "Carrier", "NumpyCarrier", "TorchCarrier", "JaxCarrier", "ArrayAPICarrier", "DaskCarrier",
    "set_default_carrier", "get_default_carrier", "compute",
    "Tensor", "tensor", "zeros", "ones", "full", "arange", "from_dlpack", "random",
    "Operation", "ExecutionOptions",
    "add", "subtract", "multiply", "divide", "negative", "power", "exp", "log", "sqrt", "sin", "cos", "tanh",
    "abs", "maximum", "minimum", "where", "clip", "sum", "mean", "max", "min", "prod", "matmul", "tensordot",
    "concat", "stack", "astype", "copy", "detach", "view", "permute", "transpose", "reshape", "broadcast_to",
    "less", "less_equal", "greater", "greater_equal", "equal", "not_equal",
    "grad", "is_grad_enabled", "set_grad_enabled", "no_grad",
    "testing", "viz", "interop", "array_api", "__version__",
    "StrideWeaveError", "InPlaceModificationError", "GraphReleasedError", "LeafWriteError", "Float32RuleError",
    "CarrierMismatchError", "ImplicitExportError", "MissingBackendError",
    # the Array API's other functions, under the standard's names
    "acos", "acosh", "asin", "asinh", "atan", "atan2", "atanh", "bitwise_and", "bitwise_invert",
    "bitwise_left_shift", "bitwise_or", "bitwise_right_shift", "bitwise_xor", "ceil", "copysign", "cosh",
    "expm1", "floor", "floor_divide", "hypot", "isfinite", "isinf", "isnan", "log1p", "log2", "log10",
    "logaddexp", "logical_and", "logical_not", "logical_or", "logical_xor", "nextafter", "positive", "pow",
    "reciprocal", "remainder", "round", "sign", "signbit", "sinh", "square", "tan", "trunc",
    "cumulative_sum", "cumulative_prod", "sort", "argsort", "argmax", "argmin", "searchsorted", "nonzero",
    "count_nonzero", "unique_all", "unique_counts", "unique_inverse", "unique_values", "take",
    "take_along_axis", "flip", "roll", "repeat", "tile", "squeeze", "expand_dims", "moveaxis", "tril", "triu",
    "diff", "std", "var", "vecdot",
    "cholesky", "cross", "det", "diagonal", "eigh", "eigvalsh", "inv", "matrix_norm", "matrix_power",
    "matrix_rank", "outer", "pinv", "qr", "slogdet", "solve", "svd", "svdvals", "trace", "vector_norm",
}


def test_all_is_pinned():
    assert set(sw.__all__) == PUBLIC
    assert len(sw.__all__) == len(PUBLIC)
    for name in PUBLIC:
        assert hasattr(sw, name), name


@pytest.mark.parametrize(("entry", "parameters"), [
    (sw.Tensor.backward, ["self", "gradient", "retain_graph"]),
    (sw.Tensor.backwards_traversal, ["gradient", "operation", "retain_graph"]),
    (sw.grad, ["output", "inputs", "cotangents", "batched", "retain_graph"]),
    (sw.Tensor.retain_grad, ["self", "retain"]),
    (sw.set_grad_enabled, ["enabled"]),
])
def test_autograd_entry_points_take_exactly_the_specified_parameters(entry, parameters):
    assert list(inspect.signature(entry).parameters) == parameters


def test_testing_tools_are_public():
    for name in ("gradcheck", "assert_carriers_agree", "numerical_gradients", "analytic_gradients",
                 "available_carriers", "on_carrier"):
        assert callable(getattr(sw.testing, name)), name


ROWS = [*elementwise.UNARY_RULES, *elementwise.BINARY_RULES]


@pytest.mark.parametrize("name", ROWS)
def test_every_elementwise_row_is_exported_where_the_recipe_says(name):
    # CONTRIBUTING, "An elementwise function": the row is the only edit; these are the exports derived from it.
    function = elementwise.FUNCTIONS[name]
    assert function.__name__ == name and function.__doc__, name
    assert getattr(sw.ops, name) is function and name in sw.ops.__all__
    (spelled,) = [n for n, f in elementwise.NAMESPACE.items() if f is function]  # the namespace's name
    assert getattr(xp, spelled) is function and spelled in xp.__all__
    if name in elementwise.BEYOND_STANDARD:  # NumPy's function: the op library and the namespace, not the top level
        assert name not in sw.__all__ and not hasattr(sw, name)
        assert f"`{spelled}`" in ARRAY_API_DOC, f"docs/array-api.md does not name {spelled}"
    else:
        assert getattr(sw, spelled) is function and spelled in sw.__all__
        assert getattr(sw, name) is function and name in sw.__all__
    ufunc = getattr(np, spelled, None)
    if isinstance(ufunc, np.ufunc):  # np.<ufunc>(t) runs the row
        assert getattr(xp, _UFUNCS[ufunc.__name__]) is function


def test_a_beyond_standard_row_runs_through_its_numpy_ufunc():
    x = xp.asarray([0.5, 2.0])
    for name in elementwise.BEYOND_STANDARD:
        ufunc = getattr(np, name, None)
        if isinstance(ufunc, np.ufunc):
            np.testing.assert_array_equal(ufunc(x).numpy(), getattr(xp, name)(x).numpy())
