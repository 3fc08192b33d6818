"""einops, marray and array-api-extra on StrideWeave arrays, each call as a case for the library harness.

These libraries consume whatever Array API namespace their input has
(``x.__array_namespace__()``, ``array_api_compat.array_namespace``), so the
same code runs on a Tensor, on NumPy and, where it knows torch, on torch.
The reference is torch.autograd in float64 on the same code where it runs
(marray and array-api-extra reach torch through array-api-compat), else
float64 central differences of the same code on NumPy (einops' Array API
entry points ask the array for ``__array_namespace__``, which torch tensors
lack).

array-api-extra's in-place helper ``at(x)[...].set`` writes into a copy of a
computed array here, so it differentiates; on a plain leaf made from data
the same write raises (docs/api.md section 4).
"""

from __future__ import annotations

import numpy as np
from _library_harness import Case, constant, float64_cut, namespace

OTHER = np.random.default_rng(21).uniform(0.5, 2.0, (6, 4))
MASK = np.random.default_rng(22).uniform(size=(6, 4)) < 0.3


# ----- einops (einops.array_api) ----------------------------------------------------------------------

def _einops(name, pattern, *args, **lengths):
    def program(x):
        import einops.array_api as ea
        return getattr(ea, name)(x, pattern, *args, **lengths)
    return program


def _einops_pack(x):
    import einops.array_api as ea
    packed, shapes = ea.pack([x, x[:, :2] * 2.0], "i *")
    a, b = ea.unpack(packed * packed, shapes, "i *")
    return a + ea.repeat(b[:, :1], "i 1 -> i 4")


EINOPS = [
    Case("einops", "rearrange", _einops("rearrange", "(a b) c -> c (b a)", a=2)),
    Case("einops", "rearrange_split", _einops("rearrange", "(a b) c -> a (c b)", b=3)),
    Case("einops", "reduce_mean", _einops("reduce", "(a b) c -> a c", "mean", b=2)),
    Case("einops", "reduce_max", _einops("reduce", "a (b c) -> a b", "max", c=2)),
    Case("einops", "reduce_sum", _einops("reduce", "a c -> c", "sum")),
    Case("einops", "reduce_prod", _einops("reduce", "a c -> a", "prod"), domain="positive"),
    Case("einops", "repeat", _einops("repeat", "a c -> a c r", r=3)),
    Case("einops", "pack_unpack", _einops_pack),
]


# ----- marray (marray.masked_namespace) ---------------------------------------------------------------

def _masked(x):
    import marray

    mxp = marray.masked_namespace(namespace(x))
    return mxp, mxp.asarray(x, mask=constant(x, MASK, dtype=namespace(x).bool))


def _marray(name, **kwargs):
    def program(x):
        mxp, m = _masked(x)
        out = getattr(mxp, name)(m, **kwargs)
        return mxp.where(out.mask, 0.0, out).data if out.ndim else out.data
    return program


def _marray_arith(x):
    mxp, m = _masked(x)
    y = mxp.exp(m * 0.5) + m * m - mxp.asarray(constant(x, OTHER))
    return mxp.where(y.mask, 0.0, y).data


def _marray_sort(x):
    mxp, m = _masked(x)
    y = mxp.sort(m, axis=0)
    return mxp.where(y.mask, 0.0, y).data


MARRAY = [
    Case("marray", "sum", _marray("sum", axis=0)),
    Case("marray", "mean", _marray("mean", axis=1)),
    Case("marray", "var", _marray("var", axis=0)),
    Case("marray", "max", _marray("max", axis=1)),
    Case("marray", "prod", _marray("prod", axis=0), domain="positive"),
    Case("marray", "cumulative_sum", _marray("cumulative_sum", axis=0)),
    Case("marray", "arithmetic", _marray_arith),
    Case("marray", "sort", _marray_sort),
]


# ----- array-api-extra -----------------------------------------------------------------------------------

def _xpx(name, *args, **kwargs):
    def program(x):
        import array_api_extra as xpx
        return getattr(xpx, name)(x, *args, **kwargs)
    return program


def _xpx_at_set(x):
    import array_api_extra as xpx
    y = x * 2.0
    return xpx.at(y)[1:3, :].set(x[:2, :] * x[:2, :])


def _xpx_at_add(x):
    import array_api_extra as xpx
    y = x + 0.0
    return xpx.at(y)[:, 0].add(x[:, 1])


def _xpx_cov(x):
    import array_api_extra as xpx
    return xpx.cov(namespace(x).permute_dims(x, (1, 0)))


def _xpx_nan(name):
    def program(x):
        import array_api_extra as xpx
        xp = namespace(x)
        y = xp.where(constant(x, MASK, dtype=xp.bool), xp.nan, x)
        return getattr(xpx, name)(y, axis=0)
    return program


def _xpx_apply_where(x):
    import array_api_extra as xpx
    xp = namespace(x)
    return xpx.apply_where(x > 0, (x,), lambda v: xp.sqrt(v), lambda v: -v)


XPX = [
    Case("array-api-extra", "at_set", _xpx_at_set),
    Case("array-api-extra", "at_add", _xpx_at_add),
    # cov computes in the namespace's float64 (where it is stored: not on JAX without x64)
    Case("array-api-extra", "cov", _xpx_cov, loud=(float64_cut(r"array_api_extra/", "xpx.cov promotes to float64"),)),
    Case("array-api-extra", "pad", _xpx("pad", 1)),
    Case("array-api-extra", "kron", lambda x: __import__("array_api_extra").kron(x[:2, :2], x[2:4, 2:4])),
    Case("array-api-extra", "sinc", _xpx("sinc")),
    Case("array-api-extra", "atleast_nd", lambda x: __import__("array_api_extra").atleast_nd(x[0], ndim=3) * 2.0),
    Case("array-api-extra", "create_diagonal", lambda x: __import__("array_api_extra").create_diagonal(x[0])),
    Case("array-api-extra", "nan_to_num", lambda x: __import__("array_api_extra").nan_to_num(x * 1.0)),
    Case("array-api-extra", "nanmean", _xpx_nan("nanmean")),
    Case("array-api-extra", "nansum", _xpx_nan("nansum")),
    Case("array-api-extra", "apply_where", _xpx_apply_where),
    Case("array-api-extra", "expand_dims", lambda x: __import__("array_api_extra").expand_dims(x, axis=(0, 2))),
]

CASES = EINOPS + MARRAY + XPX
