"""The standard's array-object surface, attached to ``sw.Tensor`` in one place.

``tensor.py`` keeps the storage-level object; this module adds what the
Array API asks of an array (``__array_namespace__``, ``mT``, ``to_device``,
every operator dunder, reflected and in-place, standard indexing), the way
JAX's ``array_methods`` attaches methods after its op library exists.
"""

from __future__ import annotations

import operator

import numpy as np

from .. import ops as _ops
from ..tensor import Tensor, refuse_implicit_export
from . import _indexing, _native_operands, _numpy_methods, _writes

__all__ = ["attach"]


def _namespace(self, /, *, api_version=None):
    if api_version is not None and api_version not in ("2021.12", "2022.12", "2023.12", "2024.12"):
        raise ValueError(f"unsupported Array API version {api_version!r}; this namespace implements 2024.12")
    import strideweave.array_api as xp

    return xp


def _binary(name: str, reflected: bool = False):
    fn = getattr(_ops, name)
    what = f"{_SYMBOLS.get(name, _COMPARISON_SYMBOLS.get(name, name))!r}"

    # Tensors and floats, the operators' hot path, go straight to the op; a native array
    # becomes a constant on the Tensor's carrier or is refused (``_native_operands``).
    if not reflected:
        def method(self, other):
            if other.__class__ is float or isinstance(other, Tensor):
                return fn(self, other)
            return fn(self, _native_operands.constant(self, other, what))
    else:
        def method(self, other):
            if other.__class__ is float or isinstance(other, Tensor):
                return fn(other, self)
            return fn(_native_operands.constant(self, other, what), self)
    method.__name__ = name
    return method


_SYMBOLS = {"add": "+", "subtract": "-", "multiply": "*", "divide": "/", "floor_divide": "//", "remainder": "%",
            "pow": "**", "matmul": "@", "bitwise_and": "&", "bitwise_or": "|", "bitwise_xor": "^",
            "bitwise_left_shift": "<<", "bitwise_right_shift": ">>"}
_DUNDERS = {"add": "add", "sub": "subtract", "mul": "multiply", "truediv": "divide", "floordiv": "floor_divide",
            "mod": "remainder", "pow": "pow", "matmul": "matmul", "and": "bitwise_and", "or": "bitwise_or",
            "xor": "bitwise_xor", "lshift": "bitwise_left_shift", "rshift": "bitwise_right_shift"}


def _matmul(self, other):
    from . import matmul

    other = _native_operands.constant(self, other, "'@'")
    return matmul(self, other) if isinstance(other, Tensor) else NotImplemented


def _rmatmul(self, other):
    from . import matmul

    other = _native_operands.constant(self, other, "'@'")
    return matmul(other, self) if isinstance(other, Tensor) else NotImplemented


def _scalar(self, kind: type, name: str):
    if self.size != 1 or self._layout.rank != 0 and name != "__bool__":
        if self.size != 1:
            raise TypeError(f"{name} needs a Tensor with one element, this one has shape {self.shape}")
    return kind(self.item())


def _index(self):
    if self.dtype.kind not in ("int", "uint"):
        raise TypeError(f"__index__ needs an integer Tensor, this one is {self.dtype!r}")
    return operator.index(_scalar(self, int, "__index__"))


def _mT(self):
    from . import matrix_transpose

    return matrix_transpose(self)


def _to_device(self, device, /, *, stream=None):
    from . import to_device

    return to_device(self, device, stream=stream)


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


def _attach_native() -> None:
    for name in _UNARY_METHODS:
        setattr(Tensor, name, _unary_method(name))
    for short, name in _COMPARISONS.items():
        setattr(Tensor, f"__{short}__", _binary(name))
    Tensor.__neg__ = lambda self: _ops.negative(self)
    Tensor.__abs__ = lambda self: _ops.abs(self)
    Tensor.matmul = lambda self, other: _ops.matmul(self, other)
    Tensor.clip = lambda self, min=None, max=None: _ops.clip(self, min, max)  # noqa: A002
    Tensor.maximum = lambda self, other: _ops.maximum(self, other)
    Tensor.minimum = lambda self, other: _ops.minimum(self, other)
    Tensor.view = lambda self, layout: _ops.view(self, layout)
    Tensor.broadcast_to = lambda self, shape: _ops.broadcast_to(self, shape)
    Tensor.T = property(lambda self: _ops.transpose(self))


def attach() -> None:
    """Add the operators, the method forms and the standard's array-object surface to ``Tensor``."""
    import strideweave.array_api as xp

    _attach_native()
    _numpy_methods.attach(xp)
    _native_operands.attach(xp)
    for short, name in _DUNDERS.items():
        setattr(Tensor, f"__{short}__", _binary(name))
        setattr(Tensor, f"__r{short}__", _binary(name, reflected=True))
        setattr(Tensor, f"__i{short}__", _writes.inplace_operator(name, _SYMBOLS.get(name, name) + "="))
    Tensor.__matmul__ = _matmul
    Tensor.__rmatmul__ = _rmatmul
    Tensor.__invert__ = lambda self: _ops.bitwise_invert(self)
    Tensor.__pos__ = lambda self: _ops.positive(self)
    Tensor.__array_namespace__ = _namespace
    _writes.attach_writes()
    Tensor.__getitem__ = _indexing.getitem
    Tensor.__setitem__ = _indexing.setitem
    Tensor.__index__ = _index
    Tensor.__complex__ = lambda self: _scalar(self, complex, "__complex__")
    Tensor.__float__ = lambda self: _scalar(self, float, "__float__")
    Tensor.__int__ = lambda self: _scalar(self, int, "__int__")
    Tensor.__bool__ = lambda self: _scalar(self, bool, "__bool__")
    Tensor.mT = property(_mT)
    Tensor.to_device = _to_device
    Tensor.ndim = property(lambda self: self._layout.rank)
    Tensor.__dlpack__ = _dlpack


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
