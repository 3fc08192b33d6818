"""Every Tensor operator and method, attached to ``sw.Tensor`` in one place.

``tensors/tensor.py`` keeps the storage-level object, which imports nothing
above its floor. This module adds what needs the floors above it: autograd
(``backward``), the op library's method forms, recorded writes (``fill_``,
``copy_``, ``add_``), copies, Dask evaluation, and what the Array API asks of
an array (``__array_namespace__``, ``mT``, ``to_device``, every operator
dunder, reflected and in-place, standard indexing), the way JAX's
``array_methods`` attaches methods after its namespace exists. It runs once,
when ``strideweave`` is imported.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from . import array_api as xp
from . import ops as _ops
from ._numpy_methods import METHODS as _NUMPY_METHODS
from .array_api import _indexing, _native_operands, _writes
from .array_api._manipulation import inferred_shape
from .autograd.engine import backward, backwards_traversal
from .dtypes import DType, SimpleDType
from .layout import Layout, Shape, Stride
from .layout.order import row_major
from .ops._elementwise import scalar_operator
from .ops._lined_up import with_lined_up
from .ops.linalg import Matmul
from .tensors import copies
from .tensors.compute import compute
from .tensors.creation import from_storage, from_subtensors
from .tensors.tensor import Tensor, refuse_implicit_export

# The class these functions are attached to, untyped: its body declares their signatures for
# type checkers (under TYPE_CHECKING), and a checker refuses assignment to a declared method.
_Tensor: Any = Tensor
_flat_product = Matmul.flat_product

__all__ = ["attach"]

_FLOAT32 = DType.Float32


def _copy(self: Tensor) -> Tensor:
    """``copy.copy(t)``: ``xp.asarray(t, copy=True)``, a recorded copy where ``t`` is differentiable and
    grad mode is on, else a leaf in fresh storage of the same carrier class and device."""
    if self._blocks is not None:
        return copies.fresh_copy(self)
    return _ops.copy(self)


def _namespace(self, /, *, api_version=None):
    if api_version is not None and api_version not in ("2021.12", "2022.12", "2023.12", "2024.12"):
        raise ValueError(f"unsupported Array API version {api_version!r}; this namespace implements 2024.12")
    return xp


def _binary(name: str, reflected: bool = False):
    fn = getattr(_ops, name)
    what = f"{_SYMBOLS.get(name, _COMPARISON_SYMBOLS.get(name, name))!r}"

    # Tensors and floats go straight to the op; a native array becomes a constant on the Tensor's
    # carrier or is refused (``_native_operands``). The reflected form (``2 - t``) puts the Tensor
    # second: a swap. The hot paths (a float beside a Float32 Tensor, two Float32 Tensors dense in one
    # layout: ``with_scalar``, ``with_tensor``) are written into the operator itself (``scalar_operator``),
    # which hands everything else to ``method``.
    run = (lambda self, other: fn(other, self)) if reflected else fn
    op_class = getattr(fn, "op_class", None)

    def method(self, other):
        if other.__class__ is float or isinstance(other, Tensor):
            if other.__class__ is Tensor and op_class is not None and self.__class__ is Tensor \
                    and self._dtype is _FLOAT32 and other._dtype is _FLOAT32:
                # Two Float32 Tensors of different shapes (one shape is the operator's own hot path): the
                # broadcast whose buffers line up is recorded in one step.
                result = with_lined_up(op_class, other, self) if reflected else with_lined_up(op_class, self, other)
                if result is not None:
                    return result
            return run(self, other)
        return run(self, _native_operands.constant(self, other, what))
    method.__name__ = name
    if op_class is None:
        return method
    return scalar_operator(op_class, name, reflected, method)


_SYMBOLS = {"add": "+", "subtract": "-", "multiply": "*", "divide": "/", "floor_divide": "//", "remainder": "%",
            "pow": "**", "matmul": "@", "bitwise_and": "&", "bitwise_or": "|", "bitwise_xor": "^",
            "bitwise_left_shift": "<<", "bitwise_right_shift": ">>"}
_DUNDERS = {"add": "add", "sub": "subtract", "mul": "multiply", "truediv": "divide", "floordiv": "floor_divide",
            "mod": "remainder", "pow": "pow", "matmul": "matmul", "and": "bitwise_and", "or": "bitwise_or",
            "xor": "bitwise_xor", "lshift": "bitwise_left_shift", "rshift": "bitwise_right_shift"}


def _matmul(self, other):
    if other.__class__ is Tensor and self.__class__ is Tensor and self._dtype is _FLOAT32 \
            and other._dtype is _FLOAT32:
        result = _flat_product(self, other)  # two dense matrices: ``xp.matmul``'s first step, without its calls
        if result is not None:
            return result
    if other.__class__ is not Tensor:
        other = _native_operands.constant(self, other, "'@'")
    return xp.matmul(self, other) if isinstance(other, Tensor) else NotImplemented


def _rmatmul(self, other):
    if other.__class__ is not Tensor:
        other = _native_operands.constant(self, other, "'@'")
    return xp.matmul(other, self) if isinstance(other, Tensor) else NotImplemented


def _scalar(self, kind: type, name: str):
    if self.size != 1:
        raise TypeError(f"{name} needs a Tensor with one element, this one has shape {self.shape}")
    return kind(self.item())


def _index(self):
    if self.dtype.kind not in ("int", "uint"):
        raise TypeError(f"__index__ needs an integer Tensor, this one is {self.dtype!r}")
    return operator.index(_scalar(self, int, "__index__"))


def _mT(self):
    return xp.matrix_transpose(self)


def _to_device(self, device, /, *, stream=None):
    return xp.to_device(self, device, stream=stream)


def _backward(self, gradient: Tensor | None = None, retain_graph: bool = False) -> None:
    """Propagate ``gradient`` (default: unit cotangent for a scalar) through the graph."""
    backward(self, gradient, retain_graph)


def _backwards_traversal(gradient: Tensor, operation, retain_graph: bool = False) -> None:
    """Propagate ``gradient`` from the autograd node ``operation`` (None: no graph)."""
    backwards_traversal(gradient, operation, retain_graph)


def _from_storage(cls, storage: Any, layout: Layout, dtype: SimpleDType | None = None, *, offset: int = 0,
                  carrier: Any = None, device: Any = None) -> Tensor:
    """View a flat sequence or 1-D native array through ``layout`` as is (stride 0, holes and all)."""
    return from_storage(storage, layout, dtype, offset=offset, carrier=carrier, device=device)


def _from_subtensors(cls, blocks: Sequence[Tensor], mode: int = 0) -> Tensor:
    """A multi-subtensor Tensor whose top-level ``mode`` concatenates ``blocks`` (no copy)."""
    return from_subtensors(blocks, mode)


def _compute(self) -> Tensor:
    """This Tensor evaluated: lazy (Dask) storage computed into NumPy carriers (see ``sw.compute``)."""
    return compute(self)[0]


# Method forms whose meaning is the same in NumPy, torch and StrideWeave; those that differ
# (reductions, reshape, transpose) take NumPy's meaning in ``_numpy_methods``.
_UNARY_METHODS = ("exp", "log", "sqrt", "sin", "cos", "tanh", "abs", "copy", "detach")
_COMPARISONS = {"lt": "less", "le": "less_equal", "gt": "greater", "ge": "greater_equal", "eq": "equal",
                "ne": "not_equal"}
_COMPARISON_SYMBOLS = {"less": "<", "less_equal": "<=", "greater": ">", "greater_equal": ">=", "equal": "==",
                       "not_equal": "!="}


def _unary_method(name: str):
    def method(self):
        return getattr(_ops, name)(self)
    method.__name__ = name
    method.__doc__ = f"``sw.{name}(self)``."
    return method


def _is_dtype(value: Any) -> bool:
    """Whether ``value`` names a dtype the NumPy or torch way (``np.float32``, ``"int32"``, ``torch.int32``)."""
    if isinstance(value, (SimpleDType, np.dtype)) or type(value).__module__.startswith("torch"):
        return True
    if isinstance(value, (str, type)):
        try:
            np.dtype(value)
        except TypeError:
            return False
        return True
    return False


def view(self, *shape):
    """A view of this Tensor's storage: ``t.view(layout)``, or ``t.view(3, 2)`` in C order as torch's ``view``.

    ``t.view(layout)`` reads the storage from ``t.offset`` through any
    ``sw.Layout`` (``sw.view``). ``t.view(3, 2)`` or ``t.view((3, 2))`` (one
    ``-1`` inferred) is torch's ``view``: the values in C order under a new
    shape, always sharing ``t``'s storage (a write through either is seen by
    both) and differentiable; ``ValueError`` when ``t``'s layout cannot be read
    that way without a copy, where ``t.reshape(3, 2)`` copies. A dtype
    (NumPy's and torch's bit reinterpretation) is refused: ``t.astype(dtype)``
    converts values.
    """
    if len(shape) == 1 and isinstance(shape[0], Layout):
        return _ops.view(self, shape[0])
    if not shape:
        raise TypeError("Tensor.view needs a Layout or a shape: t.view(layout), t.view(3, 2) or t.view((3, 2))")
    if len(shape) == 1 and _is_dtype(shape[0]):
        raise TypeError(f"Tensor.view({shape[0]!r}): StrideWeave does not reinterpret a Tensor's bits as another "
                        f"dtype; t.astype(dtype) converts the values")
    if len(shape) == 1 and isinstance(shape[0], Shape):
        raise TypeError(f"Tensor.view takes a Layout or ints in C order, got {shape[0]!r}: for a hierarchical "
                        f"shape pass a layout, t.view(sw.Layout(shape, stride))")
    try:
        target = tuple(operator.index(n) for n in (shape[0] if len(shape) == 1 and not isinstance(
            shape[0], (int, np.integer)) else shape))
    except TypeError:
        raise TypeError(f"Tensor.view takes a Layout or a shape (ints, or one tuple of ints), got "
                        f"{', '.join(repr(n) for n in shape)}") from None
    target = inferred_shape(self, target, "Tensor.view", "a Tensor")
    if target == ():
        return xp.reshape(self, ())
    layout = _c_order_view(self, target)
    if layout is None:
        order = " (column-major: StrideWeave's canonical order, first mode fastest)" \
            if self._layout.is_canonical() and self.ndim > 1 else ""
        raise ValueError(f"Tensor.view: a Tensor of shape {self.shape} stored through layout {self._layout}{order} "
                         f"cannot be read in C order as shape {target} without a copy, as torch's view refuses a "
                         f"tensor whose strides do not allow it; t.reshape{target} gives these values (a view where "
                         f"the layout allows, else a copy), sw.reshape(t, {target}) a colexicographic view")
    return _ops.view(self, layout)


def _c_order_view(t: Tensor, target: tuple) -> Layout | None:
    """The layout reading ``t``'s storage in C order as ``target``, or None where no layout can.

    torch's rule (``computeStride``): runs of ``t``'s leaves that continue one
    another contiguously merge, and each target extent must fill such a run
    exactly, so a view exists exactly where torch's ``view`` gives one.
    """
    if t._blocks is not None:
        return None
    if t._layout.size == 0:
        return row_major(target)
    # C order over the top-level modes, each nested mode read colexicographically (as to_array
    # flattens it): leaves slowest first.
    layout = t._layout
    extents: list[int] = []
    strides: list[int] = []
    for k in range(layout.rank):
        mode = layout[k]
        extents += mode.leaf_shape[::-1]
        strides += mode.leaf_stride[::-1]
    out = [0] * len(target)
    if not extents:  # a 0-d Tensor: every target extent is 1
        return Layout(Shape(target), Stride(tuple(out)))
    view_d = len(target) - 1
    base = strides[-1]
    tensor_numel = view_numel = 1
    for d in range(len(extents) - 1, -1, -1):
        tensor_numel *= extents[d]
        if d == 0 or (extents[d - 1] != 1 and strides[d - 1] != tensor_numel * base):
            while view_d >= 0 and (view_numel < tensor_numel or target[view_d] == 1):
                out[view_d] = view_numel * base
                view_numel *= target[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if d > 0:
                base = strides[d - 1]
                tensor_numel = view_numel = 1
    if view_d != -1:
        return None
    return Layout(Shape(target), Stride(tuple(out)))


def _dlpack(self, *, stream=None, max_version=None, dl_device=None, copy=None):
    """DLPack export of the values (one axis per top-level mode); a graph Tensor must be detached first."""
    refuse_implicit_export(self, "t.__dlpack__()")
    native = self.to_array()
    if isinstance(native, np.ndarray) and not native.flags.writeable:
        native = np.array(native)  # broadcast views are read-only; DLPack cannot flag that
    kwargs = {k: v for k, v in (("stream", stream), ("max_version", max_version), ("dl_device", dl_device),
                                ("copy", copy)) if v is not None}
    try:
        return native.__dlpack__(**kwargs)
    except BufferError:
        # JAX exports no DLPack version below (0, 5); values on the CPU can leave through
        # NumPy's exporter instead, as a copy (which a caller who forbade copies does not get).
        if copy is False or isinstance(native, np.ndarray) or native.__dlpack_device__()[0] != 1:
            raise
        return np.array(native).__dlpack__(**kwargs)



def _table() -> tuple[dict[str, Any], ...]:
    """name -> what ``Tensor`` gets under it, in groups: every method, operator and property, one row each."""
    binary = {f"__{short}__": _binary(name) for short, name in _DUNDERS.items() if name != "matmul"}
    reflected = {f"__r{short}__": _binary(name, reflected=True) for short, name in _DUNDERS.items()
                 if name != "matmul"}
    in_place = {f"__i{short}__": _writes.inplace_operator(name, _SYMBOLS[name] + "=")
                for short, name in _DUNDERS.items()}
    comparisons = {f"__{short}__": _binary(name) for short, name in _COMPARISONS.items()}
    own = {
        # What the Tensor's own floor cannot say: autograd, construction, evaluation, recorded writes.
        "backward": _backward,
        "backwards_traversal": staticmethod(_backwards_traversal),
        "from_storage": classmethod(_from_storage),
        "from_subtensors": classmethod(_from_subtensors),
        "compute": _compute,
        "fill_": _writes.fill_,
        "copy_": _writes.copy_,
        "add_": _writes.add_,
        # Copies as torch makes them: detached, in fresh storage on the same carrier class and device;
        # copy.copy and copy.deepcopy refuse a Tensor with history, pickle stores its values.
        "__reduce_ex__": lambda self, protocol: copies.reduce(self),
        "__copy__": _copy,
        "__deepcopy__": lambda self, memo: copies.deep_copy(self, _copy(self), memo),
        # Method forms of the op library.
        **{name: _unary_method(name) for name in _UNARY_METHODS},
        "matmul": lambda self, other: _ops.matmul(self, other),
        "clip": lambda self, min=None, max=None: _ops.clip(self, min, max),  # noqa: A002
        "maximum": lambda self, other: _ops.maximum(self, other),
        "minimum": lambda self, other: _ops.minimum(self, other),
        "view": view,
        "broadcast_to": lambda self, shape: _ops.broadcast_to(self, shape),
        "T": property(lambda self: _ops.transpose(self)),
    }
    standard = {
        # The standard's array object beyond the generated operators: indexing, conversions, devices, exchange.
        # ``@`` is the namespace's matmul (0-d for two vectors), and a foreign operand defers to its own type.
        "__matmul__": _matmul,
        "__rmatmul__": _rmatmul,
        "__neg__": lambda self: _ops.negative(self),
        "__pos__": lambda self: _ops.positive(self),
        "__abs__": lambda self: _ops.abs(self),
        "__invert__": lambda self: _ops.bitwise_invert(self),
        "__getitem__": _indexing.getitem,
        "__setitem__": _indexing.setitem,
        "__index__": _index,
        "__complex__": lambda self: _scalar(self, complex, "__complex__"),
        "__float__": lambda self: _scalar(self, float, "__float__"),
        "__int__": lambda self: _scalar(self, int, "__int__"),
        "__bool__": lambda self: _scalar(self, bool, "__bool__"),
        "__array_namespace__": _namespace,
        "mT": property(_mT),
        "to_device": _to_device,
        "__dlpack__": _dlpack,
        # NumPy's protocols: a ufunc or function on a Tensor runs the recorded operation or is refused.
        "__array_ufunc__": _native_operands.array_ufunc,
        "__array_function__": _native_operands.array_function,
    }
    # Reductions, reshape, transpose: NumPy's meaning (``_numpy_methods``).
    return own, _NUMPY_METHODS, binary, reflected, in_place, comparisons, standard


def attach() -> None:
    """Give ``Tensor`` every row of the table; a name in two rows is a mistake, refused here."""
    seen: set[str] = set()
    for group in _table():
        for name, value in group.items():
            if name in seen:
                raise RuntimeError(f"Tensor.{name} stands in the method table twice")
            seen.add(name)
            setattr(_Tensor, name, value)


attach()
