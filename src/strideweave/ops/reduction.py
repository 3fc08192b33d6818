"""The reduction rules (sum, mean, max, min, prod): each forward beside its vector-Jacobian product.

The fields are those of ``ReductionRule`` (``ops/_reduction.py``, the
machinery): ``forward(xp, values, axes)`` reduces rev axes, and
``vjp(xp, g, out, x, *, axes, n)`` gives the input's gradient from ``g``
(the reduced axes kept with extent 1), the result ``out`` and the input
values ``x`` (each present only when ``reads`` names it), the reduced
``axes`` and ``n``, one over the number of elements reduced into each
result: every rule family's convention, ``vjp(xp, g, kept, *operands,
**params)``, with the result as what the forward kept.
"""

from __future__ import annotations

from ._reduction import ReductionRule, reduction_op
from ._storage import summed

__all__ = ["max", "mean", "min", "prod", "sum"]


def _extremum_vjp(xp, g, out, x, *, axes, n):
    # The positions that attain the extremum share the gradient evenly.
    hits = xp.astype(x == out, x.dtype)
    return g * (hits / xp.sum(hits, axis=axes, keepdims=True))


def _prod_vjp(xp, g, out, x, *, axes, n):
    # d prod / d x_i is the product of the others; dividing by x_i fails at zeros,
    # so count zeros per slice and use the product of the non-zero entries.
    is_zero = x == 0
    nonzero = xp.where(is_zero, xp.ones_like(x), x)
    product_nonzero = xp.prod(nonzero, axis=axes, keepdims=True)
    zeros = xp.sum(xp.astype(is_zero, x.dtype), axis=axes, keepdims=True)
    others = xp.where(zeros == 0, product_nonzero / nonzero,
                      xp.where((zeros == 1) & is_zero, product_nonzero, xp.zeros_like(x)))
    return g * others


REDUCTION_RULES = {
    "sum": ReductionRule(lambda xp, v, axes: summed(xp, v, axes), vjp=lambda xp, g, out, x, *, axes, n: g,
                         doc="Sum"),
    "mean": ReductionRule(lambda xp, v, axes: xp.mean(v, axis=axes), vjp=lambda xp, g, out, x, *, axes, n: g * n,
                          doc="Arithmetic mean"),
    "max": ReductionRule(lambda xp, v, axes: xp.max(v, axis=axes), vjp=_extremum_vjp, reads="x out",
                         doc="Maximum (ties share the gradient evenly)"),
    "min": ReductionRule(lambda xp, v, axes: xp.min(v, axis=axes), vjp=_extremum_vjp, reads="x out",
                         doc="Minimum (ties share the gradient evenly)"),
    "prod": ReductionRule(lambda xp, v, axes: xp.prod(v, axis=axes), vjp=_prod_vjp, reads="x", doc="Product"),
}

#: the node class of each reduction, by name
RULES: dict[str, type] = {}
RULES["sum"], sum = reduction_op("sum", REDUCTION_RULES["sum"])  # noqa: A001
RULES["mean"], mean = reduction_op("mean", REDUCTION_RULES["mean"])
RULES["max"], max = reduction_op("max", REDUCTION_RULES["max"])  # noqa: A001
RULES["min"], min = reduction_op("min", REDUCTION_RULES["min"])  # noqa: A001
RULES["prod"], prod = reduction_op("prod", REDUCTION_RULES["prod"])
