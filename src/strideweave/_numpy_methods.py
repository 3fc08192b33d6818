"""Tensor methods with NumPy's meaning: the same functions as ``strideweave.array_api``.

``t.reshape(3, 2)`` is C order, ``t.sum(axis=0)`` counts axes and a full
reduction is 0-d, as in NumPy and torch, so a user of either never gets other
values from a method than from their own library. The layout-native forms
(``sw.reshape`` colexicographic, ``sw.sum(t, modes=...)`` with its ``(1)``
full reduction) stay the top-level ``strideweave`` functions.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from . import array_api as _xp
from . import ops as _ops
from .dtypes import DType, SimpleDType
from .dtypes import as_dtype as _as_dtype
from .layout import Shape
from .ops.reduction import RULES as _RULES

__all__ = ["METHODS"]

_FLOAT32 = DType.Float32
_Sum: Any = _RULES["sum"]  # a Reduction class (the table is typed by ``type``)


def _no_out(name: str, out: Any) -> None:
    if out is not None:
        raise TypeError(f"Tensor.{name}: out= is not supported (results are new Tensors; write one into "
                        f"another with t[...] = result)")


def _shape_args(name: str, shape: tuple) -> tuple:
    """``f(3, 2)`` or ``f((3, 2))`` as a tuple of ints, the way NumPy reads a shape."""
    if not shape:
        raise TypeError(f"Tensor.{name} needs a shape, e.g. t.{name}(3, 2) or t.{name}((3, 2))")
    if len(shape) == 1 and not isinstance(shape[0], (int, np.integer)):
        shape = shape[0]
    if isinstance(shape, Shape):
        raise TypeError(f"Tensor.{name} takes ints in C order, as NumPy; for a hierarchical {shape!r} use "
                        f"sw.{name}(t, shape) (colexicographic)")
    try:
        return tuple(operator.index(n) for n in shape)
    except TypeError:
        raise TypeError(f"Tensor.{name}: the shape must be ints or one tuple of ints, got {shape!r}") from None


def _axes_args(name: str, axes: tuple) -> tuple | None:
    if not axes or axes == (None,):
        return None
    if len(axes) == 1 and not isinstance(axes[0], (int, np.integer)):
        axes = axes[0]
    try:
        return tuple(operator.index(a) for a in axes)
    except TypeError:
        raise TypeError(f"Tensor.{name}: axes must be ints or one tuple of ints, got {axes!r}") from None


def as_dtype(dtype: Any, name: str = "astype") -> SimpleDType:
    """A StrideWeave dtype from a StrideWeave, NumPy, torch or Python dtype (``np.float64``, ``"int32"``, ``float``)."""
    return _as_dtype(dtype, f"Tensor.{name}: dtype")


# ----- shape -------------------------------------------------------------------------------------------

def reshape(self, *shape, order="C", copy=None):
    """The same values read in C order (``order="F"``: Fortran order) under a new shape, as NumPy."""
    target = _shape_args("reshape", shape)
    if order == "C":
        return _xp.reshape(self, target, copy=copy)
    if order != "F":
        raise ValueError(f"Tensor.reshape: order must be 'C' or 'F', got {order!r}")
    # Fortran order is StrideWeave's colexicographic order over the top-level modes.
    out = _ops.reshape(self, Shape(_xp.inferred_shape(self, target, "Tensor.reshape", "a Tensor")))
    return _ops.copy(out) if copy else out


def flatten(self, order="C"):
    """A 1-D copy of the values in C order (``order="F"``: Fortran order), as NumPy's ``flatten``."""
    if order not in ("C", "F"):
        raise ValueError(f"Tensor.flatten: order must be 'C' or 'F', got {order!r}")
    return reshape(self, -1, order=order, copy=True)


def ravel(self, order="C"):
    """The values as a 1-D Tensor in C order (a view where the layout allows), as NumPy's ``ravel``."""
    if order not in ("C", "F"):
        raise ValueError(f"Tensor.ravel: order must be 'C' or 'F', got {order!r}")
    return reshape(self, -1, order=order)


def squeeze(self, axis=None):
    """Remove the extent-1 axes (``axis``: only those, each of which must have extent 1)."""
    if axis is None:
        axis = tuple(i for i, n in enumerate(self.shape) if n == 1)
    return _xp.squeeze(self, axis)


def transpose(self, *axes):
    """The axes reversed (``t.transpose()``) or reordered (``t.transpose(1, 0)``, ``t.transpose((1, 0))``)."""
    order = _axes_args("transpose", axes)
    if order is None:
        order = tuple(range(self.ndim - 1, -1, -1))
    return _xp.permute_dims(self, order)


def permute(self, *axes):
    """The axes reordered: axis ``i`` of the result is axis ``axes[i]`` (torch's ``permute``)."""
    order = _axes_args("permute", axes)
    if order is None:
        raise TypeError("Tensor.permute needs the new order of the axes, e.g. t.permute(1, 0)")
    return _xp.permute_dims(self, order)


# ----- reductions --------------------------------------------------------------------------------------

def _cast(self, dtype, name):
    return self if dtype is None else _xp.astype(self, as_dtype(dtype, name))


def sum(self, axis=None, dtype=None, out=None, keepdims=False):  # noqa: A001
    """Sum over ``axis`` (None: every axis, a 0-d result), as ``xp.sum``."""
    if axis is None and dtype is None and out is None and keepdims is False and self._dtype is _FLOAT32:
        result = _Sum.full_flat(self)  # ``xp.sum``'s first step for a dense Float32 Tensor, without its calls
        if result is not None:
            return result
    _no_out("sum", out)
    return _xp.sum(self, axis=axis, dtype=None if dtype is None else as_dtype(dtype, "sum"), keepdims=keepdims)


def prod(self, axis=None, dtype=None, out=None, keepdims=False):
    """Product over ``axis`` (None: every axis, a 0-d result), as ``xp.prod``."""
    _no_out("prod", out)
    return _xp.prod(self, axis=axis, dtype=None if dtype is None else as_dtype(dtype, "prod"), keepdims=keepdims)


def mean(self, axis=None, dtype=None, out=None, keepdims=False):
    """Arithmetic mean over ``axis`` (None: a 0-d result), computed in ``dtype`` when given."""
    _no_out("mean", out)
    return _xp.mean(_cast(self, dtype, "mean"), axis=axis, keepdims=keepdims)


def _over_axis(name, doc):
    """``t.max(axis=0)`` and its kin: ``xp.<name>`` over ``axis`` (None: a 0-d result), NumPy's ``out=`` refused."""
    def method(self, axis=None, out=None, keepdims=False):
        _no_out(name, out)
        return getattr(_xp, name)(self, axis=axis, keepdims=keepdims)
    method.__name__ = name
    method.__doc__ = doc
    return method


def _statistic(name):
    def method(self, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, correction=None):
        _no_out(name, out)
        if correction is not None and ddof != 0:
            raise ValueError(f"Tensor.{name}: give ddof or correction, not both")
        return getattr(_xp, name)(_cast(self, dtype, name), axis=axis, keepdims=keepdims,
                                  correction=ddof if correction is None else correction)
    method.__name__ = name
    method.__doc__ = (f"{'Standard deviation' if name == 'std' else 'Variance'} over ``axis`` with ``ddof`` (or "
                      f"``correction``) degrees of freedom removed, as NumPy and ``xp.{name}``.")
    return method


def _arg_extremum(name):
    def method(self, axis=None, out=None, *, keepdims=False):
        _no_out(name, out)
        return getattr(_xp, name)(self, axis=axis, keepdims=keepdims)
    method.__name__ = name
    method.__doc__ = f"Index of the first {name[3:]}imum along ``axis`` (None: of the C-order flattened values)."
    return method


def cumsum(self, axis=None, dtype=None, out=None):
    """Cumulative sum along ``axis`` (None: over the C-order flattened values), as NumPy."""
    _no_out("cumsum", out)
    x = self if axis is not None else _xp.reshape(self, (-1,))
    return _xp.cumulative_sum(x, axis=0 if axis is None else axis,
                              dtype=None if dtype is None else as_dtype(dtype, "cumsum"))


def round(self, decimals=0, out=None):  # noqa: A001
    """Rounded to ``decimals`` decimal places (half to even), as NumPy's ``round``; its gradient is zero."""
    _no_out("round", out)
    decimals = operator.index(decimals)
    if decimals == 0:
        return _xp.round(self)
    if self.dtype.kind in ("int", "uint", "bool"):
        if decimals > 0:
            return _ops.copy(self)
        raise NotImplementedError(f"Tensor.round: decimals={decimals} on {self.dtype!r} is not supported; round "
                                  f"a floating copy (t.astype('float64').round({decimals}))")
    # NumPy's own rule: scale, round half to even, scale back.
    scale = 10.0 ** decimals
    return _xp.round(self * scale) / scale


# ----- copies, dtypes, formatting ---------------------------------------------------------------------

def clone(self):
    """A differentiable copy in fresh storage (torch's ``clone``; ``t.copy()`` is the same)."""
    return _ops.copy(self)


def astype(self, dtype, /, *, copy=True, device=None):
    """The values converted to ``dtype`` (a StrideWeave or NumPy dtype), as ``xp.astype``."""
    return _xp.astype(self, as_dtype(dtype), copy=copy, device=device)


def __format__(self, spec):
    """``f"{loss:.3f}"``: a one-element Tensor formats its value; without a spec, ``str(t)``."""
    if not spec:
        return str(self)
    if self.size != 1:
        raise TypeError(f"unsupported format string {spec!r} for a Tensor of shape {self.shape}: only a "
                        f"one-element Tensor formats as a number (format t.tolist() or t.numpy() instead)")
    return format(self.item(), spec)


#: name -> method: the NumPy-meaning rows of the one table ``strideweave._methods`` attaches
METHODS: dict[str, Any] = {
    **{fn.__name__: fn for fn in (reshape, flatten, ravel, squeeze, transpose, permute, sum, prod, mean, cumsum,
                                  clone, astype, round, __format__)},
    "max": _over_axis("max", "Maximum over ``axis`` (None: a 0-d result), as ``xp.max``."),
    "min": _over_axis("min", "Minimum over ``axis`` (None: a 0-d result), as ``xp.min``."),
    "all": _over_axis("all", "Logical AND over ``axis`` (None: a 0-d result)."),
    "any": _over_axis("any", "Logical OR over ``axis`` (None: a 0-d result)."),
    **{name: _statistic(name) for name in ("std", "var")},
    **{name: _arg_extremum(name) for name in ("argmax", "argmin")},
}
