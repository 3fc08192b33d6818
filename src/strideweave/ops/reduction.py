"""Reductions over top-level modes (sum, mean, max, min, prod) and their gradients."""

from __future__ import annotations

import operator
from functools import lru_cache
from typing import Any

from ..layout import Layout
from ..tensor import Tensor
from ._support import Primitive, dense_buffer, gradient_values, leaves_of, operand, place, wrap

__all__ = ["sum", "mean", "max", "min", "prod"]


@lru_cache(maxsize=4096)
def _reduction_plan(modes: tuple, reduced: tuple, keepdims: bool) -> tuple:
    """Rev axes to reduce, rev shape of the result with kept singleton axes, and the result modes."""
    n_leaves = len(leaves_of(modes))
    axes: list[int] = []
    start = 0
    for index, mode in enumerate(modes):
        count = len(leaves_of((mode,)))
        if index in reduced:
            axes.extend(range(n_leaves - start - count, n_leaves - start))
        start += count
    kept_rev = tuple(1 if axis in axes else extent
                     for axis, extent in enumerate(reversed(leaves_of(modes))))
    if keepdims:
        out_modes = tuple(1 if i in reduced else m for i, m in enumerate(modes))
    else:
        out_modes = tuple(m for i, m in enumerate(modes) if i not in reduced) or (1,)
    return tuple(sorted(axes)), kept_rev, out_modes


def _normalise_modes(modes: Any, rank: int, name: str) -> tuple:
    if modes is None:
        return tuple(range(rank))
    if isinstance(modes, bool):
        raise TypeError(f"{name}: modes must be None, an int or a tuple of ints, got {modes!r}")
    if not isinstance(modes, (tuple, list)):
        modes = (modes,)
    out = []
    for mode in modes:
        try:
            index = operator.index(mode)
        except TypeError:
            raise TypeError(f"{name}: modes must hold ints, got {mode!r}") from None
        if not -rank <= index < rank:
            raise IndexError(f"{name}: mode {index} is out of range for a Tensor with {rank} top-level modes")
        index %= rank
        if index in out:
            raise ValueError(f"{name}: mode {index} appears twice in {tuple(modes)!r}")
        out.append(index)
    return tuple(sorted(out))


class _Reduction(Primitive):
    """Forward reduces the rev axes of the chosen modes; ``saved`` is (axes, kept rev shape, extra)."""

    __slots__ = ()
    function = ""
    #: whether a reduction over every mode may read the flat buffer (backward never reads x's axes)
    reads_flat = False

    def forward(self, x: Any, *, modes=None, keepdims: bool = False, options=None) -> Tensor:
        if not isinstance(x, Tensor):
            raise TypeError(f"{self.function} expects a Tensor, got {type(x).__name__}: {x!r}")
        kind = place((x,), options)
        xp = kind.namespace
        reduced = _normalise_modes(modes, x._layout.rank, self.function)
        axes, kept_rev, out_modes = _reduction_plan(x._layout.shape.modes, reduced, bool(keepdims))
        flat = dense_buffer(x, kind) if self.reads_flat and len(axes) == len(kept_rev) else None
        if flat is not None:
            out = self.compute(xp, flat, (0,))  # every axis reduced: the flat buffer says it all
        else:
            out = self.compute(xp, operand(x, kind), axes)
        self.place = kind
        self.saved = (axes, kept_rev, self.keep(xp, out, kept_rev))
        out_layout = Layout.canonical(out_modes)
        return wrap(xp.reshape(out, out_layout.rev_leaf_shape), out_layout, kind)

    def keep(self, xp, out, kept_rev):
        return None

    supports_batched = True

    def backward(self, gradient: Tensor) -> tuple:
        xp = self.place.namespace
        axes, kept_rev, extra = self.saved
        g, batch = gradient_values(self, gradient)
        g = xp.reshape(g, kept_rev if batch is None else (batch,) + kept_rev)
        if batch is not None:
            axes = tuple(axis + 1 for axis in axes)
        return self.cotangents((self.vjp(xp, g, self._inputs[0], axes, extra),), batch)


class Sum(_Reduction):
    __slots__ = ()
    reads_flat = True
    function = "sum"

    def compute(self, xp, values, axes):
        return xp.sum(values, axis=axes)

    def vjp(self, xp, g, x, axes, extra):
        return g


class Mean(_Reduction):
    __slots__ = ()
    reads_flat = True
    function = "mean"

    def compute(self, xp, values, axes):
        return xp.mean(values, axis=axes)

    def vjp(self, xp, g, x, axes, extra):
        kept = 1
        for extent in self.saved[1]:
            kept *= extent
        return g * (kept / x._layout.size) if x._layout.size else g  # kept / size = 1 / reduced count


class _Extremum(_Reduction):
    """max / min: the gradient is shared evenly among the positions that attain the extremum."""

    __slots__ = ()

    def compute(self, xp, values, axes):
        return getattr(xp, self.function)(values, axis=axes)

    def keep(self, xp, out, kept_rev):
        return xp.reshape(out, kept_rev)

    def vjp(self, xp, g, x, axes, extremum):
        values = operand(x, self.place)
        hits = xp.astype(values == extremum, values.dtype)
        return g * (hits / xp.sum(hits, axis=self.saved[0], keepdims=True))


class Max(_Extremum):
    __slots__ = ()
    function = "max"


class Min(_Extremum):
    __slots__ = ()
    function = "min"


class Prod(_Reduction):
    __slots__ = ()
    function = "prod"

    def compute(self, xp, values, axes):
        return xp.prod(values, axis=axes)

    def vjp(self, xp, g, x, axes, extra):
        # d prod / d x_i is the product of the others; dividing by x_i fails at zeros,
        # so count zeros per slice and use the product of the non-zero entries.
        values = operand(x, self.place)
        axes = self.saved[0]  # unbatched axes: these arrays have no batch axis
        is_zero = values == 0
        nonzero = xp.where(is_zero, xp.ones_like(values), values)
        product_nonzero = xp.prod(nonzero, axis=axes, keepdims=True)
        zeros = xp.sum(xp.astype(is_zero, values.dtype), axis=axes, keepdims=True)
        others = xp.where(zeros == 0, product_nonzero / nonzero,
                          xp.where((zeros == 1) & is_zero, product_nonzero, xp.zeros_like(values)))
        return g * others


def _reduce(op_class, doc):
    def reduce(x, modes=None, keepdims: bool = False, *, options=None) -> Tensor:
        return op_class()(x, modes=modes, keepdims=keepdims, options=options)

    reduce.__name__ = reduce.__qualname__ = op_class.function
    reduce.__doc__ = (f"{doc} over the top-level ``modes`` (None: all). Reduced modes are removed, or kept "
                      "with extent 1 when ``keepdims``; reducing every mode gives layout (1):(1).")
    return reduce


sum = _reduce(Sum, "Sum")  # noqa: A001 (Array API names)
mean = _reduce(Mean, "Arithmetic mean")
max = _reduce(Max, "Maximum (ties share the gradient evenly)")  # noqa: A001
min = _reduce(Min, "Minimum (ties share the gradient evenly)")  # noqa: A001
prod = _reduce(Prod, "Product")
