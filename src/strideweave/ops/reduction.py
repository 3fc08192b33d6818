"""Reductions over top-level modes (sum, mean, max, min, prod) and their gradients."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from .._marks import unit_alias
from ..layout import Layout
from ..tensors.tensor import Tensor
from ..tensors.broadcasting import leaves_of
from ._args import axes as _axes, tensor as _tensor
from ._primitive import Primitive
from ..tensors.values import dense_carrier, operand, place, reshaped, wrap
from ._storage import flat_capable
from ..autograd.cotangents import gradient_values, spread

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


class _Reduction(Primitive):
    """Forward reduces the rev axes of the chosen modes; ``saved`` is (axes, kept rev shape, extra)."""

    __slots__ = ()
    function = ""
    composite = False  # forward computes natively, calling no other operation
    #: whether the VJP reads the input's values (else a full reduction may read the flat buffer)
    reads_input = False
    #: whether the VJP reads the result
    reads_result = False

    def forward(self, x: Tensor, *, reduced: tuple, keepdims: bool = False, options=None) -> Tensor:
        # ``reduced``: the top-level modes to reduce, normalised by the caller (``_args.axes``)
        kind = place((x,), options)
        xp = kind.namespace
        axes, kept_rev, out_modes = _reduction_plan(x._layout.shape.modes, reduced, bool(keepdims))
        carrier = dense_carrier(x, kind) if not self.reads_input and len(axes) == len(kept_rev) else None
        if carrier is not None:
            # Every axis reduced: the buffer says it all, in whatever shape it was computed.
            values = carrier.dense_values()
            out = self.compute(xp, values, tuple(range(values.ndim)))
            # Backward spreads one value over the flat buffer: raw, where arrays reshape for free.
            self.flat = flat_capable((x,), kind)
        else:
            out = self.compute(xp, operand(x, kind), axes)
        self.place = kind
        kept = 1
        for extent in kept_rev:
            kept *= extent
        size = x._layout.size
        # 1 / (elements reduced into each result) = kept / size; 1 for an empty input
        self.saved = (axes, kept_rev, xp.reshape(out, kept_rev) if self.reads_result else None,
                      kept / size if size else 1.0)
        out_layout = Layout.canonical(out_modes)
        if out.ndim == 0 and kind[0].keeps_shape:
            return wrap(out, out_layout, kind)  # one value: any shape is its buffer (a reshape is a dispatch)
        return wrap(reshaped(out, out_layout.rev_leaf_shape, kind), out_layout, kind)

    supports_batched = True

    def backward_flat(self, g: Any) -> tuple[tuple, tuple]:
        # A full reduction that reads neither its input nor its result: ``g`` holds one value.
        kind = self.place
        axes, _, _, inv_count = self.saved
        one = self.vjp(kind[1], g, None, axes, None, inv_count)
        return (spread(one, self._inputs[0]._layout.size, kind),), (False,)  # a stride-0 view

    def backward(self, gradient: Tensor) -> tuple:
        xp = self.place.namespace
        axes, kept_rev, out, inv_count = self.saved
        g, batch = gradient_values(self, gradient)
        # The reduced axes come back with extent 1, so g broadcasts against the input (and its batch axis
        # leads). One value of no more axes than the input's already does.
        if batch is not None or g.ndim > len(kept_rev) or any(extent != 1 for extent in kept_rev):
            g = unit_alias(g, reshaped(g, kept_rev if batch is None else (batch,) + kept_rev, self.place))
        values = operand(self._inputs[0], self.place) if self.reads_input else None
        return self.cotangents((self.vjp(xp, g, values, axes, out, inv_count),), batch)


# ----- Rules: one line per reduction ------------------------------------------------------------------
#
# ``forward(xp, values, axes)`` reduces rev axes; ``vjp(xp, g, x, axes, out,
# inv_count)`` gives the input's gradient from ``g`` (reduced axes kept with
# extent 1), the input values ``x`` and the result ``out`` (each present only
# when ``reads`` names it) and ``inv_count``, one over the number of elements
# reduced into each result.

def _extremum_vjp(xp, g, x, axes, out, inv_count):
    # The positions that attain the extremum share the gradient evenly.
    hits = xp.astype(x == out, x.dtype)
    return g * (hits / xp.sum(hits, axis=axes, keepdims=True))


def _prod_vjp(xp, g, x, axes, out, inv_count):
    # d prod / d x_i is the product of the others; dividing by x_i fails at zeros,
    # so count zeros per slice and use the product of the non-zero entries.
    is_zero = x == 0
    nonzero = xp.where(is_zero, xp.ones_like(x), x)
    product_nonzero = xp.prod(nonzero, axis=axes, keepdims=True)
    zeros = xp.sum(xp.astype(is_zero, x.dtype), axis=axes, keepdims=True)
    others = xp.where(zeros == 0, product_nonzero / nonzero,
                      xp.where((zeros == 1) & is_zero, product_nonzero, xp.zeros_like(x)))
    return g * others


#: name: (forward, vjp, reads, doc)
REDUCTION_RULES = {
    "sum": (lambda xp, v, axes: xp.sum(v, axis=axes), lambda xp, g, x, axes, out, n: g, "", "Sum"),
    "mean": (lambda xp, v, axes: xp.mean(v, axis=axes), lambda xp, g, x, axes, out, n: g * n, "",
             "Arithmetic mean"),
    "max": (lambda xp, v, axes: xp.max(v, axis=axes), _extremum_vjp, "x out",
            "Maximum (ties share the gradient evenly)"),
    "min": (lambda xp, v, axes: xp.min(v, axis=axes), _extremum_vjp, "x out",
            "Minimum (ties share the gradient evenly)"),
    "prod": (lambda xp, v, axes: xp.prod(v, axis=axes), _prod_vjp, "x", "Product"),
}


def _reduction(name, forward, vjp, reads, doc):
    op_class = type(name.title(), (_Reduction,), {
        "__slots__": (), "function": name, "compute": staticmethod(forward), "vjp": staticmethod(vjp),
        "reads_input": "x" in reads, "reads_result": "out" in reads})

    def reduce(x, modes=None, keepdims: bool = False, *, options=None) -> Tensor:
        x = _tensor(x, name)
        reduced = _axes(modes, x._layout.rank, name, "mode")
        return op_class()(x, reduced=reduced, keepdims=keepdims, options=options)

    reduce.__name__ = reduce.__qualname__ = name
    reduce.__doc__ = (f"{doc} over the top-level ``modes`` (None: all). Reduced modes are removed, or kept "
                      "with extent 1 when ``keepdims``; reducing every mode gives layout (1):(1).")
    return op_class, reduce


RULES: dict[str, type] = {}
for _name, _rule in REDUCTION_RULES.items():
    RULES[_name], globals()[_name] = _reduction(_name, *_rule)
del _name, _rule
