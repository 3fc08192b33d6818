"""NumPy's NaN-skipping reductions on Tensors (``np.nanmean(t)``), composed of recorded operations.

What xarray calls by default (``skipna``) on floating data. Each one masks the
NaN entries with ``where`` before an ordinary reduction, so a NaN entry gets a
zero gradient, as torch's ``nansum`` / ``nanmean`` give it; the other entries
get the gradient of the reduction over the remaining values (ties in
``nanmax`` / ``nanmin`` share it, as in ``xp.max``; a constant slice of
``nanstd`` gets zero, as torch's ``std``). Values follow NumPy: an all-NaN
slice gives NaN (``nanmax``, ``nanmean``, ...), 0 (``nansum``) or 1
(``nanprod``), and ``nanargmax`` / ``nanargmin`` raise ``ValueError`` there.
Called through the NumPy protocol (``_native_operands``).
"""

from __future__ import annotations

import math

from ..dtypes import as_dtype
from ..tensors.tensor import Tensor
from ._namespace import namespace

__all__ = ["FUNCTIONS"]




def _checked(name, a, out=None, **unsupported):
    if not isinstance(a, Tensor):
        raise TypeError(f"np.{name}: expected a StrideWeave Tensor, got {type(a).__name__}")
    if out is not None:
        raise TypeError(f"np.{name}: out= is not supported on StrideWeave Tensors (results are new Tensors)")
    given = [k for k, v in unsupported.items() if v is not None]
    if given:
        raise TypeError(f"np.{name}: {', '.join(k + '=' for k in given)} is not supported on StrideWeave Tensors; "
                        f"mask the values with xp.where first")
    return a


def _axis(a: Tensor, axis):
    if axis is None:
        return None
    return tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)


def _floating(a: Tensor) -> bool:
    return a._dtype.kind in ("float", "complex")


def _filled(a: Tensor, value) -> tuple[Tensor, Tensor | None]:
    """``a`` with its NaN entries replaced by ``value`` (a recorded ``where``), and the NaN mask."""
    if not _floating(a):
        return a, None
    xp = namespace()
    nan = xp.isnan(a)
    return xp.where(nan, xp.asarray(value, dtype=a.dtype, device=a.device), a), nan


def _count(a: Tensor, nan, axis, keepdims) -> Tensor:
    """How many entries are not NaN along ``axis``, in ``a``'s dtype."""
    xp = namespace()
    valid = xp.ones_like(a) if nan is None else xp.astype(xp.logical_not(nan), a.dtype)
    return xp.sum(valid, axis=axis, keepdims=keepdims)


def _as(dtype, a):
    return a if dtype is None else namespace().astype(a, as_dtype(dtype, "dtype"))


def nansum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    """``np.nansum``: the sum with NaN counted as zero (zero gradient to NaN entries)."""
    a = _checked("nansum", a, out, initial=initial, where=where)
    filled, _ = _filled(_as(dtype, a), 0)
    return namespace().sum(filled, axis=_axis(a, axis), keepdims=bool(keepdims))


def nanprod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    """``np.nanprod``: the product with NaN counted as one."""
    a = _checked("nanprod", a, out, initial=initial, where=where)
    filled, _ = _filled(_as(dtype, a), 1)
    return namespace().prod(filled, axis=_axis(a, axis), keepdims=bool(keepdims))


def nanmean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=None):
    """``np.nanmean``: the mean of the values that are not NaN (NaN for an all-NaN slice)."""
    a = _as(dtype, _checked("nanmean", a, out, where=where))
    if not _floating(a):
        a = namespace().astype(a, namespace().float64)
    filled, nan = _filled(a, 0)
    axis = _axis(a, axis)
    return namespace().sum(filled, axis=axis, keepdims=bool(keepdims)) / _count(a, nan, axis, bool(keepdims))


def nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None, mean=None,
           correction=None):
    """``np.nanvar``: the variance of the values that are not NaN, with ``ddof`` degrees of freedom removed."""
    a = _as(dtype, _checked("nanvar", a, out, where=where, mean=mean))
    if correction is not None:
        if ddof != 0:
            raise ValueError("np.nanvar: give ddof or correction, not both")
        ddof = correction
    xp = namespace()
    if not _floating(a):
        a = xp.astype(a, xp.float64)
    axis = _axis(a, axis)
    filled, nan = _filled(a, 0)
    count = _count(a, nan, axis, True)
    centred = filled - xp.sum(filled, axis=axis, keepdims=True) / count
    if nan is not None:
        centred = xp.where(nan, xp.zeros_like(centred), centred)
    total = xp.sum(centred * centred, axis=axis, keepdims=True)
    # NumPy: a slice with no more than ddof values has no variance (NaN).
    denominator = count - ddof
    result = total / xp.where(denominator > 0, denominator, xp.full_like(denominator, math.nan))
    return result if keepdims else _squeezed(result, axis)


def _squeezed(result: Tensor, axis) -> Tensor:
    xp = namespace()
    if axis is None:
        return xp.reshape(result, ())
    return xp.squeeze(result, axis=tuple(a % result.ndim for a in axis))


def nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None, mean=None,
           correction=None):
    """``np.nanstd``: the square root of ``nanvar``; a constant slice gets a zero gradient, as torch's ``std``."""
    variance = nanvar(a, axis, dtype, out, ddof, keepdims, where=where, mean=mean, correction=correction)
    xp = namespace()
    positive = variance > 0
    # sqrt'(0) is infinite: route the zero variances through a constant, as torch's std masks them.
    root = xp.sqrt(xp.where(positive, variance, xp.ones_like(variance)))
    return xp.where(positive, root, variance * 0)


def _extremum(name, fill):
    def reduce(a, axis=None, out=None, keepdims=False, initial=None, where=None):
        a = _checked(name, a, out, initial=initial, where=where)
        xp = namespace()
        filled, nan = _filled(a, fill)
        result = getattr(xp, name[3:])(filled, axis=_axis(a, axis), keepdims=bool(keepdims))
        if nan is None:
            return result
        every = xp.all(nan, axis=_axis(a, axis), keepdims=bool(keepdims))
        return xp.where(every, xp.full_like(result, math.nan), result)
    reduce.__name__ = name
    reduce.__doc__ = f"``np.{name}``: the {name[3:]}imum of the values that are not NaN (NaN for an all-NaN slice)."
    return reduce


def _arg_extremum(name, fill):
    def reduce(a, axis=None, out=None, *, keepdims=False):
        a = _checked(name, a, out)
        xp = namespace()
        filled, nan = _filled(a, fill)
        if nan is not None and bool(xp.any(xp.all(nan, axis=axis))):
            raise ValueError(f"np.{name}: All-NaN slice encountered")
        if axis is None:
            filled = xp.reshape(filled, (-1,))
        return getattr(xp, name[3:])(filled, axis=axis if axis is not None else 0, keepdims=bool(keepdims))
    reduce.__name__ = name
    reduce.__doc__ = (f"``np.{name}``: the index of the {name[6:]}imum, NaN skipped (``ValueError`` for an "
                      f"all-NaN slice).")
    return reduce


def _cumulative(name, fill, how):
    """``np.nancumsum`` / ``np.nancumprod``: the running ``how`` with NaN counted as ``fill``."""
    def accumulate(a, axis=None, dtype=None, out=None):
        a = _checked(name, a, out)
        filled, _ = _filled(a, fill)
        xp = namespace()
        if axis is None:
            filled, axis = xp.reshape(filled, (-1,)), 0
        return getattr(xp, how)(filled, axis=axis, dtype=None if dtype is None else as_dtype(dtype, "dtype"))
    accumulate.__name__ = name
    accumulate.__doc__ = (f"``np.{name}``: the cumulative {how.removeprefix('cumulative_')} with NaN counted as "
                          f"{fill} (``axis=None``: over the flattened values).")
    return accumulate


nancumsum = _cumulative("nancumsum", 0, "cumulative_sum")
nancumprod = _cumulative("nancumprod", 1, "cumulative_prod")


#: NumPy function name -> its recorded form on Tensors
FUNCTIONS = {
    "nansum": nansum, "nanprod": nanprod, "nanmean": nanmean, "nanvar": nanvar, "nanstd": nanstd,
    "nanmax": _extremum("nanmax", -math.inf), "nanmin": _extremum("nanmin", math.inf),
    "nanargmax": _arg_extremum("nanargmax", -math.inf), "nanargmin": _arg_extremum("nanargmin", math.inf),
    "nancumsum": nancumsum, "nancumprod": nancumprod,
}
