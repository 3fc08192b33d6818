"""NumPy functions beyond the standard that xarray calls on its array's namespace: ``pad``, ``isin``,
``quantile``, ``gradient``, ``transpose``, ``lib.stride_tricks.sliding_window_view``, NumPy's ``ddof=``
in ``std`` / ``var``, NumPy's ``out=None`` in ``any`` / ``all``, and ``cumsum`` / ``cumprod``.

xarray reaches them as ``xp.pad``, ``xp.isin``, ``xp.quantile``,
``xp.gradient`` and ``xp.cumsum`` (``DataArray.pad`` and ``rolling``,
``isin``, ``quantile``, ``differentiate``, ``cumulative_integrate``), and
``xp.any(..., out=None)`` from ``np.any(variable)`` (``polyfit``). Each is
composed of recorded operations with NumPy's meaning for the arguments
xarray passes, and refuses the rest with a ``NotImplementedError`` naming
the argument (``out=`` other than None: ``TypeError``, as NumPy's NaN
reductions on Tensors refuse it).
"""

from __future__ import annotations

import math

import numpy as np

from ..carriers import one_call
from ..dtypes import as_dtype
from ..operation import no_grad
from ..ops._args import tensor as _check
from ..ops.arrays import std as _std
from ..ops.arrays import var as _var
from ..tensors.tensor import Tensor, refuse_implicit_export
from ._namespace import namespace
from ._statistical import all as _all
from ._statistical import any as _any

__all__ = [
    "all",
    "any",
    "cumprod",
    "cumsum",
    "gradient",
    "isin",
    "lib",
    "nanquantile",
    "pad",
    "quantile",
    "sliding_window_view",
    "std",
    "transpose",
    "var",
]




def _pairs(value, ndim: int, name: str) -> list:
    """NumPy's per-axis ``(before, after)`` pairs from an int, a pair, or one pair per axis."""
    arr = np.asarray(value, dtype=object)
    if arr.ndim == 0:
        return [(value, value)] * ndim
    if arr.shape == (2,) and not isinstance(value[0], (tuple, list)):
        return [tuple(value)] * ndim
    if arr.shape == (1, 2):
        return [tuple(value[0])] * ndim
    if arr.shape != (ndim, 2):
        raise ValueError(f"pad: {name} must be a number, a pair or one pair per axis ({ndim}), got {value!r}")
    return [tuple(v) for v in value]


@one_call
def pad(array, pad_width, mode="constant", *, constant_values=0, **kwargs):
    """``np.pad`` in ``mode="constant"``: ``array`` surrounded by ``constant_values`` (differentiable)."""
    xp = namespace()
    x = _check(array, "pad")
    if mode != "constant" or kwargs:
        extra = f"mode={mode!r}" if mode != "constant" else ", ".join(f"{k}=" for k in kwargs)
        raise NotImplementedError(f"pad: only mode='constant' is implemented for StrideWeave Tensors, got {extra}")
    widths = _pairs(pad_width, x.ndim, "pad_width")
    values = _pairs(constant_values, x.ndim, "constant_values")
    for axis, ((before, after), (low, high)) in enumerate(zip(widths, values)):
        before, after = int(before), int(after)
        if before < 0 or after < 0:
            raise ValueError(f"pad: widths must be >= 0, got {pad_width!r}")
        parts = []
        for width, value in ((before, low), (after, high)):
            shape = list(x.shape)
            shape[axis] = width
            parts.append(xp.full(tuple(shape), value, dtype=x.dtype, device=x.device) if width else None)
        pieces = [p for p in (parts[0], x, parts[1]) if p is not None]
        x = xp.concat(pieces, axis=axis) if len(pieces) > 1 else x
    return x


def isin(element, test_elements, assume_unique=False, invert=False, *, kind=None):
    """``np.isin``: whether each element of ``element`` is one of ``test_elements`` (Bool, no gradient).

    Real values are looked up in the sorted test values (sort, then searchsorted): O((n + m) log m), never
    the n x m comparison, which stays only for Bool and complex values (the standard sorts neither).
    """
    xp = namespace()
    x = _check(element, "isin")
    tests = test_elements if isinstance(test_elements, Tensor) else xp.asarray(
        np.asarray(test_elements), device=x.device)
    tests = xp.reshape(tests, (-1,))
    dtype = xp.result_type(x, tests)
    if tests.shape[0] == 0:
        found = xp.zeros(x.shape, dtype=xp.bool, device=x.device)
    elif xp.isdtype(dtype, ("real floating", "integral")):
        with no_grad():
            table, wanted = xp.astype(tests, dtype), xp.reshape(xp.astype(x, dtype), (-1,))
            some = None
            if xp.isdtype(dtype, "real floating"):
                # A NaN matches nothing: it takes the largest other test value (a duplicate changes no
                # answer), so the sort never meets a NaN (dask.array's sort spreads NaN over its result).
                nan = xp.isnan(table)
                some = xp.any(xp.logical_not(nan))
                fill = xp.where(some, xp.max(xp.where(nan, -math.inf, table)), 0.0)  # all NaN: any finite value
                table = xp.where(nan, fill, table)
            table = xp.sort(table)
            at = xp.clip(xp.searchsorted(table, wanted), max=tests.shape[0] - 1)
            found = xp.take(table, at) == wanted
            found = xp.reshape(found if some is None else xp.logical_and(found, some), x.shape)
    else:
        found = xp.any(xp.expand_dims(x, axis=-1) == xp.reshape(tests, (1,) * x.ndim + (-1,)), axis=-1)
    return xp.logical_not(found) if invert else found


def _interpolated(sorted_x, q, axis: int, method: str):
    """NumPy's ``linear`` quantiles of values already sorted along ``axis`` (q first in the result)."""
    xp = namespace()
    n = sorted_x.shape[axis]
    if isinstance(q, Tensor):  # as np.asarray(q) would, without watching q's buffer for a view nobody gets
        refuse_implicit_export(q, "quantile: q")
        q = q._read_numpy()
    qs = np.atleast_1d(np.asarray(q, dtype=np.float64))
    if np.any((qs < 0) | (qs > 1)):
        raise ValueError(f"quantile: q must be in [0, 1], got {q!r}")
    rows = []
    for value in qs:
        position = value * (n - 1)
        low = math.floor(position)
        high = min(low + 1, n - 1)
        frac = position - low
        a = xp.take(sorted_x, xp.asarray([low], device=sorted_x.device), axis=axis)
        b = xp.take(sorted_x, xp.asarray([high], device=sorted_x.device), axis=axis)
        # NumPy's lerp: a + (b - a) * t, written from the nearer end for t >= 0.5
        rows.append(xp.squeeze(a + (b - a) * frac if frac < 0.5 else b - (b - a) * (1 - frac), axis=axis))
    out = xp.stack(rows, axis=0)
    return out if np.ndim(q) else out[0]


@one_call
def quantile(a, q, axis=None, *, method="linear", keepdims=False, out=None, overwrite_input=False,
             weights=None, interpolation=None):
    """``np.quantile`` with ``method="linear"`` (NumPy's default): sort, then interpolate (differentiable)."""
    xp = namespace()
    x = _check(a, "quantile")
    if method != "linear" or interpolation is not None or weights is not None or out is not None:
        raise NotImplementedError(f"quantile: only method='linear' without weights= or out= is implemented for "
                                  f"StrideWeave Tensors, got method={method!r}")
    if axis is None:
        x, axes = xp.reshape(x, (-1,)), (0,)
    else:
        axes = tuple(ax % x.ndim for ax in (axis if isinstance(axis, (tuple, list)) else (axis,)))
        rest = [i for i in range(x.ndim) if i not in axes]
        x = xp.permute_dims(x, tuple(rest) + axes)
        x = xp.reshape(x, (*tuple(x.shape[:len(rest)]), -1))
    result = _interpolated(xp.sort(x, axis=-1), q, -1, method)
    if keepdims:
        raise NotImplementedError("quantile: keepdims=True is not implemented for StrideWeave Tensors")
    return result


@one_call
def nanquantile(a, q, axis=None, **kwargs):
    """``np.nanquantile``: ``quantile`` when ``a`` holds no NaN; a NaN raises ``NotImplementedError``."""
    xp = namespace()
    x = _check(a, "nanquantile")
    if x._dtype.kind in ("float", "complex") and bool(xp.any(xp.isnan(x))):
        raise NotImplementedError("np.nanquantile on a StrideWeave Tensor that holds NaN is not implemented; drop "
                                  "the NaN first, or use quantile(..., skipna=False) in xarray")
    return quantile(x, q, axis=axis, **kwargs)


@one_call
def gradient(f, *varargs, axis=None, edge_order=1):
    """``np.gradient`` along one ``axis`` with one coordinate array or spacing, ``edge_order=1`` (differentiable).

    Second-order central differences inside (NumPy's formula for uneven
    spacing), one-sided first-order differences at the two ends.
    """
    xp = namespace()
    x = _check(f, "gradient")
    if axis is None and x.ndim == 1:
        axis = 0
    if isinstance(axis, (tuple, list)) or axis is None or edge_order != 1 or len(varargs) > 1:
        raise NotImplementedError(f"gradient: only one axis, at most one spacing and edge_order=1 are implemented "
                                  f"for StrideWeave Tensors, got axis={axis!r}, edge_order={edge_order!r}, "
                                  f"{len(varargs)} spacings")
    axis %= x.ndim
    n = x.shape[axis]
    if n < 2:
        raise ValueError(f"gradient: axis {axis} has {n} entries; at least 2 are needed")
    spacing = varargs[0] if varargs else 1.0
    if isinstance(spacing, Tensor):
        spacing = spacing._read_numpy()
    coords = np.asarray(spacing, dtype=np.float64)
    dx = np.diff(coords) if coords.ndim else np.full(n - 1, float(coords))
    if dx.shape != (n - 1,):
        raise ValueError(f"gradient: the coordinates must have {n} entries along axis {axis}, got {coords.shape}")

    def along(values):  # a host vector shaped to broadcast along ``axis``
        shape = [1] * x.ndim
        shape[axis] = len(values)
        return xp.asarray(np.asarray(values).reshape(shape).astype(x._dtype.name), device=x.device)

    def part(start, stop):
        key = [slice(None)] * x.ndim
        key[axis] = slice(start, stop)
        return x[tuple(key)]

    first = (part(1, 2) - part(0, 1)) / float(dx[0])
    last = (part(n - 1, n) - part(n - 2, n - 1)) / float(dx[-1])
    if n == 2:
        return xp.concat([first, last], axis=axis)
    dx1, dx2 = dx[:-1], dx[1:]
    a = -dx2 / (dx1 * (dx1 + dx2))
    b = (dx2 - dx1) / (dx1 * dx2)
    c = dx1 / (dx2 * (dx1 + dx2))
    inner = along(a) * part(0, n - 2) + along(b) * part(1, n - 1) + along(c) * part(2, n)
    return xp.concat([first, inner, last], axis=axis)


@one_call
def sliding_window_view(x, window_shape, axis=None, *, subok=False, writeable=False):
    """NumPy's ``sliding_window_view`` as a gather (a copy, differentiable): one new trailing axis per window.

    xarray's ``rolling`` reaches it as ``xp.lib.stride_tricks.sliding_window_view``.
    """
    xp = namespace()
    x = _check(x, "sliding_window_view")
    shapes = tuple(window_shape) if isinstance(window_shape, (tuple, list)) else (window_shape,)
    if axis is None:
        axes = tuple(range(x.ndim))
    else:
        axes = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
    if len(axes) != len(shapes):
        raise ValueError(f"sliding_window_view: {len(shapes)} window sizes for {len(axes)} axes")
    out = x
    for ax, width in zip(axes, shapes):
        ax %= x.ndim
        n = out.shape[ax]
        width = int(width)
        if not 0 <= width <= n:
            raise ValueError(f"sliding_window_view: window {width} does not fit axis {ax} of extent {n}")
        starts = np.arange(n - width + 1)
        index = (starts[:, None] + np.arange(width)[None, :]).reshape(-1)
        taken = xp.take(out, xp.asarray(index, device=out.device), axis=ax)
        split = (*out.shape[:ax], n - width + 1, width, *out.shape[ax + 1:])
        out = xp.moveaxis(xp.reshape(taken, split), ax + 1, -1)
    return out


class _StrideTricks:
    """``xp.lib.stride_tricks``: the one function xarray's ``rolling`` takes from it."""

    sliding_window_view = staticmethod(sliding_window_view)


class _Lib:
    """``xp.lib``, as xarray's ``rolling`` reaches into NumPy's."""

    stride_tricks = _StrideTricks()


lib = _Lib()


def _with_ddof(name, fn):
    def statistic(x, /, *, axis=None, correction=None, keepdims=False, ddof=None, options=None):
        if ddof is not None and correction is not None:
            raise TypeError(f"{name}: give correction (the standard's name) or ddof (NumPy's), not both")
        correction = ddof if ddof is not None else 0.0 if correction is None else correction
        return fn(x, axis=axis, correction=correction, keepdims=keepdims, options=options)
    statistic.__name__ = statistic.__qualname__ = name
    statistic.__doc__ = (f"{fn.__doc__.splitlines()[0]} ``ddof=`` is accepted as NumPy's name for ``correction`` "
                         f"(xarray passes it).")
    return statistic


std = _with_ddof("std", _std)
var = _with_ddof("var", _var)


def transpose(x, axes=None):
    """NumPy's ``transpose``: the axes reversed, or reordered by ``axes`` (xarray calls ``xp.transpose``)."""
    x = _check(x, "transpose")
    return namespace().permute_dims(x, tuple(range(x.ndim - 1, -1, -1)) if axes is None else tuple(axes))


def _refuse_out(name: str, out) -> None:
    if out is not None:
        raise TypeError(f"{name}: out= is not supported on StrideWeave Tensors (results are new Tensors); "
                        f"got {type(out).__name__}, expected None")


def _with_out(name, fn):
    # NumPy's ``np.any(variable)`` reaches xarray's ``Variable.any(out=None)``, which hands ``out=None`` on to xp.
    def reduction(x, /, *, axis=None, keepdims=False, out=None):
        _refuse_out(name, out)
        return fn(x, axis=axis, keepdims=keepdims)
    reduction.__name__ = reduction.__qualname__ = name
    reduction.__doc__ = (f"{fn.__doc__.splitlines()[0]} NumPy's ``out=None`` is accepted (xarray passes it); "
                         f"any other ``out`` raises TypeError.")
    return reduction


all = _with_out("all", _all)  # noqa: A001
any = _with_out("any", _any)  # noqa: A001


def _cumulative(name, how):
    @one_call
    def accumulate(a, axis=None, dtype=None, out=None):
        x = _check(a, name)
        _refuse_out(name, out)
        xp = namespace()
        if axis is None:
            x, axis = xp.reshape(x, (-1,)), 0
        return getattr(xp, how)(x, axis=axis, dtype=None if dtype is None else as_dtype(dtype, "dtype"))
    accumulate.__name__ = accumulate.__qualname__ = name
    accumulate.__doc__ = (f"``np.{name}``: the standard's ``{how}`` under NumPy's name (``axis=None``: over the "
                          f"flattened values; xarray calls it for ``skipna=False``).")
    return accumulate


cumsum = _cumulative("cumsum", "cumulative_sum")
cumprod = _cumulative("cumprod", "cumulative_prod")
