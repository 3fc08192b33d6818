"""The reduction machinery: the rule record, the ``Reduction`` base, and the public functions it makes.

The rules themselves are a table in ``ops/reduction.py``. A reduction sums
(or takes the mean, extremum, product of) the rev axes of the chosen
top-level modes. Reduced modes are removed, or kept with extent 1 with
``keepdims``; reducing every mode gives layout ``(1):(1)``, the layout-native
result, or a 0-d result with ``zero_d`` (the Array API's), in the same one
recorded node.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from .._marks import unit_alias
from ..autograd.cotangents import EVERY, Request, gradient_values, spread
from ..layout import Layout
from ..tensors.broadcasting import leaves_of
from ..tensors.tensor import Tensor
from ..tensors.values import dense_carrier, operand, operation_kind, reshaped, wrap
from ._args import axes as _axes
from ._args import tensor as _tensor
from ._primitive import KEEPS_SHAPE_SOURCE, Primitive, flat_operand_source, flat_recorder
from ._storage import flat_capable
from .manipulation import copy

__all__ = ["Reduction", "ReductionRule", "reduction_op"]


@dataclass(frozen=True)
class ReductionRule:
    """``forward(xp, values, axes)`` reduces rev axes; ``vjp(xp, g, out, x, *, axes, n)`` is the gradient.

    The VJP gets ``g`` with the reduced axes kept at extent 1, the result
    ``out`` and the input values ``x`` (each only when ``reads`` names it,
    ``"out"`` and ``"x"``; else None), the reduced ``axes``, and ``n``, one
    over the number of elements reduced into each result. ``doc`` starts the function's
    docstring.
    """

    forward: Callable
    _: KW_ONLY
    vjp: Callable
    doc: str
    reads: str = ""

    def __post_init__(self) -> None:
        unknown = set(self.reads.split()) - {"x", "out"}
        if unknown:
            raise ValueError(f"a reduction rule's reads names {sorted(unknown)}; expected words among ('x', 'out')")


@lru_cache(maxsize=4096)
def _reduction_plan(modes: tuple, reduced: tuple, keepdims: bool, zero_d: bool) -> tuple:
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
        out_modes = tuple(m for i, m in enumerate(modes) if i not in reduced) or (() if zero_d else (1,))
    return tuple(sorted(axes)), kept_rev, out_modes


class Reduction(Primitive):
    """Forward reduces the rev axes of the chosen modes; ``saved`` is (axes, kept rev shape, result, 1/count)."""

    __slots__ = ()
    # set per rule by the builder of the subclasses (static functions of the class)
    compute: Callable[..., Any]
    vjp: Callable[..., Any]
    function = ""
    composite = False  # forward computes natively, calling no other operation
    #: whether the VJP reads the input's values (else a full reduction may read the flat buffer)
    reads_input = False
    #: whether the VJP reads the result
    reads_result = False

    def forward(self, x: Tensor, *, reduced: tuple, keepdims: bool = False, zero_d: bool = False,
                options=None) -> Tensor:
        # ``reduced``: the top-level modes to reduce, normalised by the caller (``_args.axes``), once.
        # ``zero_d``: every mode reduced without ``keepdims`` gives a 0-d result, not (1):(1).
        kind = operation_kind((x,), options)
        xp = kind.namespace
        axes, kept_rev, out_modes = _reduction_plan(x._layout.shape.modes, reduced, bool(keepdims), zero_d)
        carrier = dense_carrier(x, kind) if not self.reads_input and len(axes) == len(kept_rev) else None
        if carrier is not None:
            # Every axis reduced: the buffer says it all, in whatever shape it was computed.
            values = carrier.dense_values()
            out = self.compute(xp, values, tuple(range(values.ndim)))
            # Backward spreads one value over the flat buffer: raw, where arrays reshape for free.
            self.flat = flat_capable((x,), kind)
        else:
            out = self.compute(xp, operand(x, kind), axes)
        self.kind = kind
        kept = 1
        for extent in kept_rev:
            kept *= extent
        size = x._layout.size
        # 1 / (elements reduced into each result) = kept / size; 1 for an empty input
        self.saved = (axes, kept_rev, xp.reshape(out, kept_rev) if self.reads_result else None,
                      kept / size if size else 1.0)
        out_layout = Layout.canonical(out_modes)
        if out.ndim == 0 and kind.cls.keeps_shape:
            return wrap(out, out_layout, kind)  # one value: any shape is its buffer (a reshape is a dispatch)
        return wrap(reshaped(out, out_layout.rev_leaf_shape, kind), out_layout, kind)

    supports_batched = True

    if TYPE_CHECKING:  # made by ``flat_recorder`` after the class
        @classmethod
        def full_flat(cls, x: Tensor) -> Tensor | None: ...

    def backward_flat(self, g: Any, request: Request = EVERY) -> tuple[tuple, tuple]:
        # A full reduction that reads neither its input nor its result: ``g`` holds one value.
        kind = self.kind
        axes, _, _, inv_count = self.saved
        one = self.vjp(kind.namespace, g, None, None, axes=axes, n=inv_count)
        x = self._inputs[0]
        carriers = x._carrier_tuple
        like = carriers[0] if carriers is not None else kind.cls if kind.cls.spreads_alone else x._materialize()[0]
        return (spread(one, x._layout._size, kind, like=like),), (False,)  # a stride-0 view

    def pullback(self, gradient: Tensor, request: Request = EVERY) -> tuple[tuple, tuple]:
        xp = self.kind.namespace
        axes, kept_rev, out, inv_count = self.saved
        g, batch = gradient_values(self, gradient)
        # The reduced axes come back with extent 1, so g broadcasts against the input (and its batch axis
        # leads). One value of no more axes than the input's already does.
        if batch is not None or g.ndim > len(kept_rev) or any(extent != 1 for extent in kept_rev):
            g = unit_alias(g, reshaped(g, kept_rev if batch is None else (batch, *kept_rev), self.kind))
        values = operand(self._inputs[0], self.kind) if self.reads_input else None
        return self.cotangents((self.vjp(xp, g, out, values, axes=axes, n=inv_count),), batch, request=request)


Reduction.full_flat = flat_recorder(  # type: ignore[method-assign]
    "full_flat", "cls, x", """\
if cls.reads_input or cls.reads_result:
    return None
""" + KEEPS_SHAPE_SOURCE.format(tensor="x") + flat_operand_source("x", "values", "kind") + """\
if kind.cls.natural_products or not x._layout._shape_modes:
    return None  # products left to the library (Dask), and a 0-d input, take the general path
modes = x._layout._shape_modes
axes, kept_rev, _ = _reduction_plan(modes, tuple(range(len(modes))), False, True)
size = x._layout._size
saved = (axes, kept_rev, None, 1 / size if size else 1.0)
out = reshaped(cls.compute(kind.namespace, values, (0,)), (1,), kind)
layout = _canonical(())
inputs = (x,)
""", {"_reduction_plan": _reduction_plan, "reshaped": reshaped, "_canonical": Layout.canonical},
    """The full reduction (a 0-d result) of a Float32 Tensor dense on its carrier, made and recorded as
    ``forward`` makes it (a flat node over the flat buffer), or None for the general path: a rule that
    reads its input or result, or a carrier that keeps N-D buffers.
    """, names=("x",))


class _NotGiven:
    """The default of ``axis=``: told apart from ``axis=None`` (NumPy's every axis)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<not given>"


_NOT_GIVEN = _NotGiven()


def reduction_op(name: str, rule: ReductionRule) -> tuple[type, Callable]:
    """The ``Reduction`` class of ``rule`` and its layout-native public function ``name(x, modes, keepdims)``."""
    op_class = type(name.title(), (Reduction,), {
        "__slots__": (), "function": name, "compute": staticmethod(rule.forward), "vjp": staticmethod(rule.vjp),
        "reads_input": "x" in rule.reads.split(), "reads_result": "out" in rule.reads.split()})

    def reduce(x, modes=None, keepdims: bool = False, *, axis=_NOT_GIVEN, options=None) -> Tensor:
        x = _tensor(x, name)
        if axis is _NOT_GIVEN:
            reduced = _axes(modes, x._layout.rank, name, "mode")
            return op_class()(x, reduced=reduced, keepdims=keepdims, options=options)
        if modes is not None:
            raise TypeError(f"{name}() got modes={modes!r} and axis={axis!r}: modes= is StrideWeave's keyword, "
                            f"axis= NumPy's; give one")
        # NumPy's keyword gets NumPy's result, as xp.{name} and t.{name}() give it: the axes are the
        # top-level modes, and reducing every one without keepdims is 0-d.
        reduced = _axes(axis, x._layout.rank, name, "axis", scalar=True)
        if not reduced:
            return copy(x)
        return op_class()(x, reduced=reduced, keepdims=keepdims, zero_d=True, options=options)

    reduce.__name__ = reduce.__qualname__ = name
    reduce.__doc__ = (f"{rule.doc} over the top-level ``modes`` (None: all). Reduced modes are removed, or kept "
                      "with extent 1 when ``keepdims``; reducing every mode gives layout (1):(1).\n\n"
                      "``axis=`` is NumPy's keyword for the same modes, with NumPy's result: reducing every "
                      f"axis (``axis=None``) gives a 0-d Tensor, as ``xp.{name}`` and ``t.{name}()`` do.")
    return op_class, reduce
