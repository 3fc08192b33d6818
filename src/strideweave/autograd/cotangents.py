"""The cotangent protocol between backward rules and the engine.

A built-in rule returns, per input, a cotangent Tensor in that input's exact
layout (``cotangent_for``), or inside a traversal one of the lighter forms the
engine understands: a raw buffer in the input's storage order (flat nodes),
``Unplaced`` values to place once all contributions are summed, a ``Patch``
of a view's slots, ``Ones`` that are never filled. (``InStorageOrder`` tags
a rule's gradient for ``cotangent_for`` and never reaches the engine.)
Every built-in rule returns, beside its cotangents, whether the traversal
owns each (``owned``): it may then add into it in place and hand it out as
a ``.grad`` without a copy. The engine sits on this module; rules sit above it.
"""

from __future__ import annotations

from typing import Any, Protocol

from .._marks import _UNIT_ARRAYS, is_unit
from .._marks import mark_unit as _mark_unit
from .._marks import unit_alias as _unit_alias
from ..carriers import REGISTERED, CarrierKind, transfer
from ..carriers.jax_carrier import is_tracer
from ..layout import Layout
from ..layout.order import batched_layout, storage_shape
from ..tensors.broadcasting import reshape_array
from ..tensors.tensor import Tensor
from ..tensors.values import _dense, kind_of, operand, to_storage, wrap

# ----- what one traversal asks of one rule call ------------------------------------------------------

class Request:
    """What a traversal asks of one built-in backward call, passed to it as an argument.

    ``wanted``: None (every input needs a cotangent) or one bool per saved
    input (functional ``grad`` skips leaves nobody asked for). ``defer``:
    cotangents for Tensors whose layout has holes may come back ``Unplaced``.
    ``owned``: the traversal owns the incoming cotangent outright, so a
    cotangent the rule makes from its storage for one input alone is owned
    too. A node is shared by every traversal that reaches it, concurrent
    ones included, so none of this is ever stored on it.
    """

    __slots__ = ("defer", "owned", "wanted")

    def __init__(self, wanted: tuple | None = None, defer: bool = False, owned: bool = False) -> None:
        self.wanted = wanted
        self.defer = defer
        self.owned = owned

    def wants(self, index: int) -> bool:
        wanted = self.wanted
        return wanted is None or wanted[index]


#: A backward called outside a traversal: every input, each cotangent a Tensor.
EVERY = Request()
#: An unpruned traversal's requests, by ``(defer, owned)``: made once, not per call.
REQUESTS = {(defer, owned): Request(None, defer, owned) for defer in (False, True) for owned in (False, True)}
REQUESTS[False, False] = EVERY


# ----- cotangent forms ---------------------------------------------------------------------

class Unplaced:
    """A cotangent for a Tensor whose layout has holes, not yet placed in that layout.

    ``values`` is a rev array of the Tensor's leaves (or one broadcasting to
    them). A built-in backward returns these only inside a traversal
    (``Request.defer``): the engine sums all contributions for the Tensor
    first and places the total once, instead of placing every contribution
    into its own padded buffer.
    """

    __slots__ = ("values",)

    def __init__(self, values: Any) -> None:
        self.values = values


class Patch:
    """A cotangent of a compact Tensor that is zero outside one view of its storage, not yet placed.

    ``layout`` (injective) and ``offset`` (from the Tensor's own offset) say
    where the view's slots lie in the Tensor's storage window; ``values`` is a
    rev array of the view's leaves. A view's backward returns one only inside
    a traversal (``Request.defer``): the engine adds every patch for a Tensor
    into one buffer, so k views of one Tensor cost O(n) in all, not k buffers.
    """

    __slots__ = ("layout", "offset", "values")

    def __init__(self, layout: Any, offset: int, values: Any) -> None:
        self.layout = layout
        self.offset = offset
        self.values = values


class Ones:
    """An all-ones cotangent of ``shape`` (native ``dtype`` on namespace ``xp``), never filled in memory.

    ``loss.backward()`` seeds a full reduction with one, which it passes on
    as a one for every element of its input; where the library has no
    stride-0 views (JAX) filling them is a full pass writing memory. So
    inside a traversal such a gradient for a dense Tensor is a ``Ones``
    record, filled only where something reads it (``Traversal.received``).
    A rule flagged ``linear_in_g`` takes one as ``g`` (offered by
    ``Primitive.ones_for``, or made at the rule's boundary from an array
    flagged all ones, ``_marks.is_unit``): its VJP ``g * factor`` (either
    side) is then ``factor`` broadcast to ``shape``, no product computed.
    It supports nothing else: any other use fails loudly instead of
    computing with a wrong value.
    """

    __slots__ = ("dtype", "seed", "shape", "xp")
    __array_ufunc__ = None  # NumPy defers ``array * ones`` to ``__rmul__`` instead of broadcasting it

    def __init__(self, shape: tuple, dtype: Any, xp: Any, seed: Any = None) -> None:
        self.shape = shape    # (n,) for a flat node: then any buffer of n elements lines up
        self.dtype = dtype
        self.xp = xp
        # A record's one-element array of ones it was made from: filling the record then makes
        # no array for its one (on JAX each array made is a dispatch).
        self.seed = seed

    def __mul__(self, factor: Any) -> Any:
        """``ones * factor``: ``factor`` itself where it has every element, else broadcast or filled."""
        shape = self.shape
        if not hasattr(factor, "shape"):
            return self.xp.full(shape, factor, dtype=self.dtype)
        have = tuple(factor.shape)
        if have == shape:
            return factor
        if len(shape) == 1:
            count = 1
            for extent in have:
                count *= extent
            if count == 1 and len(have) <= 1:
                return self.xp.broadcast_to(factor, shape)  # one value (a 0-d operand): the same everywhere
            if count != shape[0]:
                raise RuntimeError(f"a flat node's unit cotangent of {shape[0]} elements was scaled by an array "
                                   f"of shape {have}; flat operands must match the result's buffer")
            return factor
        return self.xp.broadcast_to(factor, shape)

    __rmul__ = __mul__

    def __repr__(self) -> str:
        return f"Ones({self.shape}, {self.dtype})"

    def one(self, ndim: int) -> Any:
        """A one-element array of ones (``ndim`` extent-1 axes at most): what ``cotangent_for`` fills from."""
        seed = self.seed
        return _mark_unit(self.xp.ones((1,) * ndim, dtype=self.dtype)) if seed is None else seed


# ----- the contract as types ---------------------------------------------------------------------

#: A rule's answer: per saved input, its cotangent (or None), and whether the traversal owns each.
RuleAnswer = tuple[tuple, tuple]


class Rule(Protocol):
    """What the traversal calls on a built-in node (``ops._primitive.Primitive``): the engine-rule contract.

    ``pullback`` takes the result's cotangent Tensor (or ``Ones``, where
    ``ones_for`` offered them), ``backward_flat`` the raw 1-D buffer (only
    where forward set ``flat``; ``flat_cotangent`` makes one of a Tensor).
    Per-call options come in ``request``; nothing per call is on the node.
    ``ops/_contract`` holds ``Primitive`` to this under mypy.
    """

    flat: bool

    def pullback(self, gradient: Tensor, request: Request = EVERY) -> RuleAnswer: ...

    def backward_flat(self, g: Any, request: Request = EVERY) -> RuleAnswer: ...

    def flat_cotangent(self, gradient: Tensor) -> Any: ...

    def ones_for(self, dtype: Any) -> Ones | None: ...


# ----- cotangents in an input's exact layout -----------------------------------------------------

class InStorageOrder:
    """A gradient already in its target's dense storage order (N-D, C order): ``cotangent_for`` adopts it.

    Not a traversal record (the engine never sees one): a tag between a rule
    computing in storage order (``ops._storage.storage_cotangent``) and
    ``cotangent_record``. An N-D array alone would be read as a rev array,
    and the two cannot be told apart by shape (a transposed square layout);
    flattening it instead is a copy where reshapes copy (JAX), and so is
    reading it in rev order (a transpose each way).
    """

    __slots__ = ("values",)

    def __init__(self, values: Any) -> None:
        self.values = values


#: Backends whose arrays hold values now, so a one-element cotangent can be read cheaply
#: (a lazy backend such as Dask would compute its whole graph): the registry's eager entries.
_EAGER = frozenset(entry.cls.backend for entry in REGISTERED if entry.eager)


def gradient_layout(target: Tensor) -> Layout:
    """The layout of every gradient buffer for ``target``: its own if injective, else canonical."""
    layout = target._layout
    return layout if layout._aliasing == "injective" else Layout.canonical(layout._shape_modes)


def cotangent_for(target: Tensor, values: Any, values_kind: CarrierKind | None = None, owned: bool = False,
                  defer: bool = False) -> Any:
    """The cotangent for ``target`` from ``values``: ``cotangent_record``'s value, without its ownership."""
    return cotangent_record(target, values, values_kind, owned, defer)[0]


def cotangent_record(target: Tensor, values: Any, values_kind: CarrierKind | None = None, owned: bool = False,
                     defer: bool = False) -> tuple[Any, bool]:
    """The cotangent for ``target`` from ``values`` (a rev array of its leaf shape), and whether it is owned.

    The cotangent lives on ``target``'s own carrier class and, for an
    injective target, has exactly ``target.layout`` (holes zero); otherwise
    it uses the canonical layout, as the spec requires of gradients for
    broadcast targets. ``owned`` says the rule allocated ``values`` for this
    target alone: the cotangent is then owned unless it broadcasts them, as
    is one this function placed in new storage itself. With ``defer`` a
    target whose layout has holes gets ``Unplaced(values)`` instead, which
    the engine places once all contributions are summed; a unit cotangent
    where broadcasting it would fill memory is ``Ones``, filled only if read.
    """
    carrier = target._carriers[0]
    cls = carrier.__class__
    xp = carrier._xp
    in_storage_order = values.__class__ is InStorageOrder
    if in_storage_order:
        values = values.values
    if values_kind is not None and not values_kind.holds(carrier):
        values = transfer(values, kind_of(carrier))
        owned = False  # a zero-copy transfer may share (read-only) memory with the source: never add into it
    layout = target._layout
    dense = _dense(layout)
    if in_storage_order:
        return wrap(values, layout, kind_of(carrier)), owned
    if values.ndim == 1 and values.shape[0] == layout.size and dense:
        # Already flat values in the layout's storage order (the elementwise fast path).
        return Tensor._make(cls._adopt(values, xp, carrier._device, carrier._kind), layout, 0), owned
    leaves = layout.rev_leaf_shape
    if values.shape != leaves:
        if dense and all(extent == 1 for extent in values.shape):
            return _one_value_everywhere(target, values, defer), False
        if defer and layout.aliasing() == "broadcast":
            # Kept compact: a broadcast view's backward sums over its stride-0 axes anyway.
            return Unplaced(values), False
        owned = False
        values = xp.broadcast_to(values, leaves)
    if dense or not layout.is_injective():
        if dense:
            values = to_storage(values, layout, xp)
        flat = values.reshape(-1) if cls.native_methods else xp.reshape(values, (-1,))
        return Tensor._make(cls._adopt(flat, xp, carrier._device, carrier._kind), layout if dense
                            else Layout.canonical(layout._shape_modes), 0), owned
    if defer:
        return Unplaced(values), False
    return Tensor._make(carrier.placed(layout, values), layout, 0), True


def _one_value_everywhere(target: Tensor, values: Any, defer: bool) -> Any:
    """A full reduction's gradient, one value for every element of dense ``target``: broadcast flat, in any order."""
    carrier = target._carriers[0]
    cls = carrier.__class__
    xp = carrier._xp
    layout = target._layout
    unit = is_unit(values)
    if unit and defer and cls.keeps_shape and layout.size > 1:
        # Filling is a full pass here: the engine fills only if a consumer reads the ones.
        return Ones((layout.size,), values.dtype, xp, values)
    one = reshape_array(values, (1,), xp)
    # Where reshapes copy, broadcast straight to the shape the target's own values were
    # computed in, which is what the operations reading them use.
    shape: tuple[int, ...] = (layout.size,)
    if cls.keeps_shape and target._offset == 0 and carrier._size == layout.size \
            and carrier.dense_values().ndim > 1:
        shape = storage_shape(layout)
    if not cls.keeps_shape:
        values = spread(one, layout.size, kind_of(carrier), unit,
                        carrier if carrier._size == layout.size else None)
    elif cls.backend in _EAGER and layout.size > 1 and (unit or not is_tracer(one)):  # a traced value stays unread
        value = 1.0 if unit else float(one[0])
        if defer and value == 1.0:
            return Ones((layout.size,), one.dtype, xp, values)
        # Without stride-0 views a broadcast is a full copy, and XLA fills a constant
        # several times faster than it broadcasts a buffer's value.
        values = xp.full(shape, value, dtype=one.dtype)
        if value == 1.0:
            _mark_unit(values)
    else:
        values = xp.broadcast_to(one, shape)
    return wrap(values, layout, kind_of(carrier))


def spread(one: Any, size: int, kind: CarrierKind, unit: bool = False, like: Any = None) -> Any:
    """One value (a one-element 1-D array) for each of ``size`` elements, as a stride-0 view.

    A full reduction's gradient. Where the value is 1 (``unit``: known to be)
    the view is flagged unit, so a rule linear in its cotangent takes it as
    ``Ones`` and skips multiplying by it; reading
    it back is cheap on eager backends only. Not for ``keeps_shape``
    carriers, which have no stride-0 views (``cotangent_for`` fills there).
    ``like``: the carrier of the Tensor it is spread over, when that holds
    exactly its ``size`` elements; the view is laid out like its buffer (on
    Dask in its chunks, so combining the two needs no rechunk).
    """
    values = kind.namespace.broadcast_to(one, (size,)) if like is None else like._spread(one, size)
    # (Read back on an eager backend: no JAX tracer comes here, as JAX carriers keep their shapes.)
    if size > 1 and (unit or is_unit(one) or (kind.cls.backend in _EAGER and float(one[0]) == 1.0)):
        _UNIT_ARRAYS.add(values)  # (``mark_unit`` without its call: once per full reduction)
    return values


# ----- batched cotangents ----------------------------------------------------------------------------
#
# ``grad(..., batched=True)`` can push all K cotangents through the graph at
# once. A batched cotangent for a Tensor with gradient layout L has the
# layout ``batched_layout(L, K)``: one prepended leaf batch mode whose stride
# is L's cosize, exactly the stacked layout the spec returns. Inside backward
# rules its values are a rev array with the batch axis moved to the front,
# so it broadcasts against the unbatched rev arrays of the saved inputs.

class BatchUnsupported(Exception):
    """Raised by a backward rule that cannot take batched cotangents; the engine then loops."""


# ``op``: a built-in node (``ops``' Primitive, a floor above, hence untyped here), which has ``kind``.
def gradient_values(op: Any, gradient: Tensor) -> tuple[Any, int | None]:
    """The incoming cotangent as a rev array on the op's carrier kind, and the batch extent (or None).

    A batched cotangent has one more top-level mode than the op's result; its
    batch axis comes first in the returned array.
    """
    values = _unit_alias(gradient._carriers[0].dense_values(), operand(gradient, op.kind))
    layout = gradient._layout
    if layout is op._result_layout or len(layout._shape_modes) == len(op._result_layout._shape_modes):
        return values, None
    last = values.ndim - 1
    return op.kind.namespace.permute_dims(values, (last, *tuple(range(last)))), values.shape[last]


def cotangent_for_batched(target: Tensor, values: Any, values_kind: CarrierKind, batch: int) -> Tensor:
    """The batched cotangent for ``target`` from ``values`` of shape ``(batch, *target rev leaves)``."""
    carrier = target._carriers[0]
    cls = carrier.__class__
    xp = carrier._xp
    if not values_kind.holds(carrier):
        values = transfer(values, kind_of(carrier))
    single = gradient_layout(target)
    layout = batched_layout(single, batch)
    shape = (batch, *single.rev_leaf_shape)
    if values.shape != shape:
        values = xp.broadcast_to(values, shape)
    if single.is_canonical():
        flat = values.reshape(-1) if cls.native_methods else xp.reshape(values, (-1,))
        return Tensor._make(cls._adopt(flat, xp, carrier._device, carrier._kind), layout, 0)
    last = values.ndim - 1
    return Tensor._make(carrier.placed(layout, xp.permute_dims(values, (*tuple(range(1, last + 1)), 0))), layout, 0)
