"""Native arrays meeting Tensors: in operators, NumPy ufuncs and NumPy functions.

An operator between a Tensor and a native array of the Tensor's own library
(an ndarray beside a NumPy-carrier Tensor, a ``torch.Tensor`` beside a
torch-carrier one) treats the array as a constant on that carrier, as
``xp.asarray`` would wrap it; an array of another library is refused with a
``TypeError`` naming its type and the fix, as two Tensors on different
carriers are. A result is never a native array: leaving the graph is always
an explicit ``t.numpy()`` / ``t.detach()``.

NumPy ufuncs and functions called on Tensors (``np.exp(t)``, ``np.sum(t)``)
run StrideWeave's own, recorded operation where one has NumPy's meaning, and
are refused otherwise, so no NumPy call computes on a Tensor's values behind
the autograd engine's back.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..carriers import TracerError, kind_for_array
from ..ops.elementwise import NAMESPACE as _ELEMENTWISE
from ..tensors.tensor import Tensor
from ._namespace import namespace
from ._nan_reductions import FUNCTIONS as _NAN_FUNCTIONS
from ._numpy_extras import gradient as _gradient
from ._numpy_extras import isin as _isin
from ._numpy_extras import nanquantile as _nanquantile
from ._numpy_extras import pad as _pad
from ._numpy_extras import quantile as _quantile

__all__ = ["array_function", "array_ufunc", "constant"]

_SCALARS = (bool, int, float, complex, np.generic)

def _library(kind) -> tuple[str, str]:
    """The carrier's name and its library's public array type, for messages (a library carrier names both)."""
    array_name = getattr(kind.cls, "array_name", "")
    if array_name:
        return kind.cls.backend, array_name.removeprefix("a ")
    module = getattr(kind.namespace, "__name__", "array_api")
    return module, f"{module}.Array"


def _native_kind(value: Any):
    """The carrier kind of a native array, or None for anything else (scalars, lists, Tensors)."""
    if isinstance(value, (Tensor, *_SCALARS)) or value is None:
        return None
    try:
        return kind_for_array(value)
    except TracerError:
        raise
    except TypeError:
        return None


def constant(tensor: Tensor, value: Any, what: str) -> Any:
    """``value`` ready to meet ``tensor`` in ``what`` (an operator symbol or a NumPy function name).

    A native array of ``tensor``'s own library becomes a constant Tensor over
    it (no copy); one of another library raises ``TypeError``; anything else
    comes back as is, for the operation's own checks.
    """
    kind = _native_kind(value)
    if kind is None:
        return value
    here = tensor._carriers[0].kind
    if kind.cls is here.cls and kind.namespace is here.namespace:
        return namespace().asarray(value, device=kind)  # its own carrier, whatever the default carrier is
    carrier, _ = _library(here)
    raise TypeError(
        f"{what} between a Tensor on the {carrier} carrier and a {_library(kind)[1]}: a native array joins a "
        f"Tensor only from the Tensor's own library; convert it first with xp.asarray(a, device=t.device) or "
        f"sw.tensor(a, carrier={carrier!r})")


def _anchor(values) -> Tensor:
    for value in values:
        if isinstance(value, Tensor):
            return value
        if isinstance(value, (list, tuple)):
            found = _anchor(value)
            if found is not None:
                return found
    # None only inside the recursion, which checks it: NumPy dispatches here for arguments holding a Tensor
    return None  # type: ignore[return-value]


def _constants(values, anchor: Tensor, what: str) -> list:
    return [constant(anchor, v, what) for v in values]


# ----- NumPy ufuncs ----------------------------------------------------------------------------------

#: NumPy ufunc name -> strideweave.array_api function of the same meaning: every row of the elementwise table
#: that NumPy has as a ufunc (under the ufunc's own name: ``np.asin`` is ``arcsin``), NumPy's spellings of the
#: others where NumPy 1.x has no alias, and matmul
_UFUNCS = {ufunc.__name__: name for name in _ELEMENTWISE if isinstance(ufunc := getattr(np, name, None), np.ufunc)}
_UFUNCS.update(power="pow", absolute="abs", arcsin="asin", arccos="acos", arctan="atan", arctan2="atan2",
               arcsinh="asinh", arccosh="acosh", arctanh="atanh", rint="round", invert="bitwise_invert",
               left_shift="bitwise_left_shift", right_shift="bitwise_right_shift", conjugate="conj", matmul="matmul")


def array_ufunc(self, ufunc, method, *inputs, **kwargs):
    """``np.exp(t)``, ``ndarray + t``: StrideWeave's recorded operation, or a ``TypeError``."""
    name = getattr(ufunc, "__name__", repr(ufunc))
    target = _UFUNCS.get(name)
    if method != "__call__" or target is None or kwargs:
        how = f"np.{name}.{method}" if method != "__call__" else f"np.{name}"
        extra = f" with {', '.join(f'{k}=' for k in kwargs)}" if kwargs and target is not None else ""
        raise TypeError(
            f"{how}{extra} is not run on StrideWeave Tensors, since NumPy would compute behind the autograd "
            f"engine's back; use strideweave.array_api's functions (recorded), or call NumPy on t.numpy() "
            f"for the values outside the graph")
    args = _constants(inputs, self, f"np.{name}")
    return getattr(namespace(), target)(*args)


# ----- NumPy functions -------------------------------------------------------------------------------

def _method(name):
    def run(a, *args, **kwargs):
        if not isinstance(a, Tensor):
            raise _refuse(name)
        return getattr(a, name)(*args, **kwargs)
    return run


def _reshape(a, shape=None, order="C", *, newshape=None, copy=None):
    return a.reshape(shape if newshape is None else newshape, order=order, copy=copy)


def _transpose(a, axes=None):
    return a.transpose(axes)


def _where(condition, x=None, y=None):
    if x is None or y is None:
        raise _refuse("where (one argument)")
    anchor = _anchor((condition, x, y))
    return namespace().where(*_constants((condition, x, y), anchor, "np.where"))


def _concatenate(arrays, axis=0):
    return namespace().concat(_constants(arrays, _anchor(arrays), "np.concatenate"), axis=axis)


def _stack(arrays, axis=0):
    return namespace().stack(_constants(arrays, _anchor(arrays), "np.stack"), axis=axis)


def _clip(a, a_min=None, a_max=None):
    return namespace().clip(a, a_min, a_max)


def _round(a, decimals=0, out=None):
    if decimals != 0 or out is not None:
        raise _refuse("round with decimals= or out=")
    return namespace().round(a)


def _tensordot(a, b, axes=2):
    anchor = _anchor((a, b))
    return namespace().tensordot(*_constants((a, b), anchor, "np.tensordot"), axes=axes)


def _values(fn):
    """A NumPy predicate (``np.allclose``): it reads values and returns no array into the graph."""
    def run(*args, **kwargs):
        def host(v):
            return v._read_numpy() if isinstance(v, Tensor) else v
        return fn(*[host(a) for a in args], **{k: host(v) for k, v in kwargs.items()})
    return run


_FUNCTIONS = {
    **{name: _method(name) for name in ("sum", "prod", "mean", "max", "min", "std", "var", "argmax", "argmin",
                                          "any", "all", "cumsum", "squeeze", "ravel", "copy", "astype")},
    "amax": _method("max"), "amin": _method("min"), "reshape": _reshape, "transpose": _transpose,
    "where": _where, "concatenate": _concatenate, "concat": _concatenate, "stack": _stack, "clip": _clip,
    "round": _round, "around": _round, "tensordot": _tensordot,
    "expand_dims": lambda a, axis: namespace().expand_dims(a, axis=axis),
    "broadcast_to": lambda array, shape: namespace().broadcast_to(array, shape),
    "flip": lambda m, axis=None: namespace().flip(m, axis=axis),
    "shape": lambda a: a.shape, "ndim": lambda a: a.ndim, "size": lambda a: a.size,
    "allclose": _values(np.allclose), "isclose": _values(np.isclose), "array_equal": _values(np.array_equal),
    "array_equiv": _values(np.array_equiv),
    **_NAN_FUNCTIONS,
    "quantile": _quantile, "nanquantile": _nanquantile, "pad": _pad, "isin": _isin, "gradient": _gradient,
}


def _refuse(name: str) -> TypeError:
    return TypeError(f"np.{name} is not run on StrideWeave Tensors, since NumPy would compute behind the autograd "
                     f"engine's back; use strideweave.array_api's functions (recorded), or call NumPy on "
                     f"t.numpy() for the values outside the graph")


def array_function(self, func, types, args, kwargs):
    """``np.sum(t)``, ``np.reshape(t, ...)``: the Tensor method of NumPy's meaning, or a ``TypeError``."""
    if any(not issubclass(t, (Tensor, np.ndarray)) for t in types):
        return NotImplemented
    handler = _FUNCTIONS.get(func.__name__) if func.__module__ == "numpy" else None
    if handler is None:
        module = func.__module__.removeprefix("numpy").lstrip(".")
        raise _refuse(f"{module}.{func.__name__}" if module else func.__name__)
    return handler(*args, **kwargs)
