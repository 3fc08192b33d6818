"""xarray on StrideWeave arrays: ``xr.DataArray`` wrapping a Tensor, each operation as a case for the harness.

xarray wraps any array that has ``__array_namespace__`` and calls that
namespace (``xp.sum``, ``xp.einsum``, ``xp.pad``, ...) or NumPy's functions
through the NumPy protocols (``np.nanmean`` for the default ``skipna``).
torch tensors have no ``__array_namespace__``, so xarray converts them to
NumPy, which torch refuses for a tensor with a history: the reference is
float64 central differences of the same xarray code on NumPy.

Three operations stop inside xarray on any array whose dtype is not a NumPy
dtype object (array_api_strict's too): a missing-value fill
(``dtypes.maybe_promote``) in ``.where(cond)`` without ``other``,
``.weighted(w).mean()`` and ``.rolling(...).mean()``. They fail loudly
there; ``.where(cond, xp.nan)`` and ``.rolling(...).construct(...)`` are the
forms that differentiate (``rolling(...).construct("window", fill_value=np.nan)``
with an explicit fill). ``.shift`` without ``fill_value`` stops there too.

Three more stop in xarray for other reasons (docs/xarray.md): ``.polyfit``
solves with ``np.linalg.lstsq`` on a float64 Vandermonde matrix, which a
Tensor refuses by name; ``.integrate`` multiplies the data by differences
of its NumPy coordinate (float64: a Float64 result that backward refuses,
naming xarray's line; on JAX without 64-bit types: ``CarrierMismatchError``);
``.isel`` with a DataArray of indices is vectorized indexing, which xarray
refuses for every Array API array. Each has a case that shows the failure
and one for the form that differentiates.
"""

from __future__ import annotations

import dataclasses

import numpy as np
from _library_harness import Case, Loud, constant, float64_cut, namespace

from strideweave import CarrierMismatchError

MASK = np.random.default_rng(31).uniform(size=(6, 4)) < 0.25
WEIGHTS = np.array([0.5, 1.0, 2.0, 1.5])
FILL = Loud(TypeError, "must be one of an extension array dtype or numpy dtype",
            "xarray's dtypes.maybe_promote takes only NumPy dtype objects for its missing-value fill")
LSTSQ = Loud(TypeError, r"np\.linalg\.lstsq is not run on StrideWeave Tensors",
             "xarray's polyfit solves with NumPy's lstsq on a float64 Vandermonde matrix of the coordinate")
TRAPEZOID_FLOAT64 = dataclasses.replace(
    float64_cut(r"xarray/core/duck_array_ops\.py", "xarray's integrate multiplies by differences of the float64 "
                "NumPy coordinate (which xp.asarray puts on the default carrier)"),
    carriers=("numpy", "torch", "array_api_strict"))
TRAPEZOID_ON_NUMPY = Loud(CarrierMismatchError, r"different carriers \(NumpyCarrier",
                          "xarray's integrate multiplies by differences of its NumPy coordinate",
                          carriers=("jax",))
VECTORIZED = Loud(TypeError, "^Vectorized indexing is not supported$",
                  "xarray's ArrayApiIndexingAdapter refuses vectorized indexing for every Array API array")
TIMES = np.arange(6) * 0.5


def _array(x):
    import xarray as xr

    return xr.DataArray(x, dims=("time", "space"),
                        coords={"time": np.arange(6) * 0.5, "space": [10, 20, 30, 40],
                                "season": ("time", ["a", "b", "a", "c", "b", "a"])})


def _xr(fn):
    def program(x):
        return fn(_array(x)).data
    program.__name__ = getattr(fn, "__name__", "program")
    return program


def _with_nan(d):
    """``d`` with NaN where MASK is set, as a user's data with gaps."""
    import xarray as xr

    mask = xr.DataArray(constant(d.data, MASK, dtype=namespace(d.data).bool), dims=d.dims)
    return d.where(~mask, np.nan)


def _dot(d):
    import xarray as xr

    w = xr.DataArray(constant(d.data, WEIGHTS), dims="space")
    return xr.dot(d, w * d.isel(time=0), dim="space")


def _dot_without_opt_einsum(d):
    import xarray as xr

    with xr.set_options(use_opt_einsum=False):
        return _dot(d)


def _on_carrier_time(d):
    """``d`` with its time coordinate as a Float32 array of its own namespace (a non-index coordinate ``t``)."""
    return d.assign_coords(t=("time", constant(d.data, TIMES)))


def _polyfit_by_pinv(d):
    import xarray as xr

    pinv = xr.DataArray(constant(d.data, np.linalg.pinv(np.vander(TIMES, 3))), dims=("degree", "time"))
    return xr.dot(pinv, d, dim="time")


def _take_at_argmax(d):
    import xarray as xr

    xp = namespace(d.data)
    peak = d.argmax("time")
    return xr.DataArray(xp.take_along_axis(d.data, xp.expand_dims(peak.data, axis=0), axis=0)[0], dims="space")


def _weighted(d):
    import xarray as xr

    return d.weighted(xr.DataArray(constant(d.data, WEIGHTS), dims="space")).mean("space")


def _weighted_sum(d):
    import xarray as xr

    return d.weighted(xr.DataArray(constant(d.data, WEIGHTS), dims="space")).sum("space", skipna=False)


CASES = [
    Case("xarray", "mean", _xr(lambda d: d.mean("time"))),
    Case("xarray", "mean_skipna_nan", _xr(lambda d: _with_nan(d).mean("time"))),
    Case("xarray", "std", _xr(lambda d: d.std("space")), seed=1),
    Case("xarray", "std_nan_ddof1", _xr(lambda d: _with_nan(d).std("time", ddof=1)), seed=1),
    Case("xarray", "std_skipna_false", _xr(lambda d: d.std("space", skipna=False))),
    Case("xarray", "var", _xr(lambda d: d.var())),
    Case("xarray", "max", _xr(lambda d: d.max("space"))),
    Case("xarray", "min_nan", _xr(lambda d: _with_nan(d).min("time"))),
    Case("xarray", "cumsum", _xr(lambda d: d.cumsum("time"))),
    Case("xarray", "cumsum_nan", _xr(lambda d: _with_nan(d).cumsum("time"))),
    Case("xarray", "sum_nan", _xr(lambda d: _with_nan(d).sum("space"))),
    Case("xarray", "arithmetic_by_name", _xr(lambda d: d * d.isel(time=0) + d.mean("space"))),
    Case("xarray", "where_other", _xr(lambda d: d.where(d > 0, np.nan).sum("time"))),
    Case("xarray", "where_default", _xr(lambda d: d.where(d > 0).sum("time")), loud=(FILL,)),
    Case("xarray", "fillna", _xr(lambda d: _with_nan(d).fillna(0.5) * d)),
    Case("xarray", "sel_list", _xr(lambda d: d.sel(space=[20, 40, 20]) * 2.0)),
    Case("xarray", "isel_slice", _xr(lambda d: d.isel(time=slice(1, None, 2)).transpose())),
    Case("xarray", "groupby_mean", _xr(lambda d: d.groupby("season").mean())),
    Case("xarray", "dot", _xr(_dot)),
    Case("xarray", "dot_einsum", _xr(_dot_without_opt_einsum)),
    Case("xarray", "weighted_mean", _xr(_weighted), loud=(FILL,)),
    Case("xarray", "weighted_sum", _xr(_weighted_sum)),
    Case("xarray", "rolling_mean", _xr(lambda d: d.rolling(time=3).mean()), loud=(FILL,)),
    Case("xarray", "rolling_construct", _xr(lambda d: d.rolling(time=3).construct("window", fill_value=np.nan)
                                            .isel(time=slice(2, None)).mean("window"))),
    # the input's own dtype by name: float32 on a Tensor, float64 on the reference's NumPy path
    Case("xarray", "astype", _xr(lambda d: d.astype(d.dtype.name) * d)),
    Case("xarray", "pad", _xr(lambda d: d.pad(time=(1, 2), constant_values=0.5) * 3.0)),
    Case("xarray", "round", _xr(lambda d: d.round(2) + d * d)),
    Case("xarray", "quantile", _xr(lambda d: d.quantile([0.25, 0.6], dim="time"))),
    Case("xarray", "isin", _xr(lambda d: d * d.isin(d.data[0, :2]))),
    Case("xarray", "differentiate", _xr(lambda d: d.differentiate("time"))),
    Case("xarray", "concat", _xr(lambda d: __import__("xarray").concat([d, d * 2.0], dim="time"))),
    Case("xarray", "shift_default", _xr(lambda d: d.shift(time=1)), loud=(FILL,)),
    Case("xarray", "shift_fill", _xr(lambda d: d.shift(time=2, fill_value=0.5) * d)),
    Case("xarray", "shift_nan", _xr(lambda d: d.shift(space=-1, fill_value=np.nan).isel(space=slice(0, 3)))),
    Case("xarray", "polyfit", _xr(lambda d: d.polyfit("time", 2).polyfit_coefficients), loud=(LSTSQ,)),
    Case("xarray", "polyfit_by_pinv", _xr(_polyfit_by_pinv)),
    Case("xarray", "integrate", _xr(lambda d: d.integrate("time")), loud=(TRAPEZOID_FLOAT64, TRAPEZOID_ON_NUMPY)),
    Case("xarray", "integrate_float32_coordinate", _xr(lambda d: _on_carrier_time(d).integrate("t"))),
    Case("xarray", "cumulative_integrate", _xr(lambda d: _on_carrier_time(d).cumulative_integrate("t"))),
    Case("xarray", "cumsum_skipna_false", _xr(lambda d: d.cumsum("time", skipna=False))),
    Case("xarray", "isel_argmax", _xr(lambda d: d.isel(time=d.argmax("time"))), loud=(VECTORIZED,)),
    Case("xarray", "take_at_argmax", _xr(_take_at_argmax)),
]
