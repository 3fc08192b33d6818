"""Shared machinery of the operation library.

Where an operation runs (placement), how operands are read as rev arrays
(see docs/internals.md), the memory order of dense results, how results are
wrapped as Tensors, and the one helper that turns a computed gradient into
a cotangent in an input's exact layout. Broadcasting over top-level modes
lives in ``_broadcasting``.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Sequence

from .._marks import IdentityMarks
from ..carriers import CarrierKind, resolve, transfer
from ..carriers.base import is_unit, mark_unit as _mark_unit, unit_alias as _unit_alias
from ..dtypes import DType, as_python_scalar, result_type
from ..layout import Layout
from ..operation import Ones, Operation, Unplaced, allocated
from ..tensor import Tensor
from ._broadcasting import expand, expand_plan, reduce_plan, reshape_array

_FLOAT32 = DType.Float32


# ----- placement ---------------------------------------------------------------------------------

def kind_of(carrier) -> CarrierKind:
    kind = carrier._kind
    return kind if kind is not None else carrier.kind


def _same_place(a, b) -> bool:
    return a is b or (a.__class__ is b.__class__ and a._xp is b._xp and a._device == b._device)


#: 0-d Tensors made without ``device=`` (``xp.asarray(2.0)``): like torch's 0-d CPU tensors, they
#: join the carrier of the operands they meet instead of making the operation a mix of carriers.
_JOINS_PARTNER = IdentityMarks()


def joins_partner(tensor: Tensor) -> Tensor:
    """Mark the 0-d ``tensor`` (made without ``device=``) as joining its partners' carrier; returns it."""
    return _JOINS_PARTNER.add(tensor)


def place(tensors: Sequence[Tensor], options) -> CarrierKind:
    """The carrier kind an operation on ``tensors`` runs on.

    ``options.carrier`` decides when given; otherwise every operand must
    already share one carrier kind (class, namespace and device), except
    0-d Tensors made without ``device=`` (``joins_partner``), which join it.
    """
    if options is not None and options.carrier is not None:
        return resolve(options.carrier, device=options.device)
    first = tensors[0]._carriers[0]
    if len(tensors) == 1 and tensors[0]._blocks is None:
        return first._kind or first.kind
    for tensor in tensors:
        for carrier in tensor._carriers:
            if carrier is not first and not _same_place(first, carrier):
                return _mixed_place(tensors)
    return kind_of(first)


def _mixed_place(tensors: Sequence[Tensor]) -> CarrierKind:
    """Operands on several carriers: the one carrier the non-joining operands share, or TypeError."""
    joining = [t in _JOINS_PARTNER and t._layout.rank == 0 and t._blocks is None for t in tensors]
    anchors = [t for t, joins in zip(tensors, joining) if not joins] or [tensors[0]]
    first = anchors[0]._carriers[0]
    for tensor in anchors:
        for carrier in tensor._carriers:
            if carrier is not first and not _same_place(first, carrier):
                blocks = any(t._blocks is not None for t in tensors)
                raise (MixedBlocks if blocks else TypeError)(
                    f"operands live on different carriers ({_describe(first)} and {_describe(carrier)}); move one "
                    "with xp.asarray(x, device=y.device) or x.to_device(y.device) (differentiable), or pass "
                    "options=ExecutionOptions(carrier=...) to say where the operation runs"
                )
    return kind_of(first)


def single_place(tensor: Tensor, options) -> tuple[CarrierKind, Any]:
    """For an operation on one Tensor: where it runs, and the carrier's own buffer when the Tensor is dense there.

    The buffer (None unless ``dense_buffer`` would give it) lets elementwise
    rules compute flat; the common case (no options, one carrier) is decided
    here without ``place``.
    """
    if options is None and tensor._blocks is None:
        flat = flat_operand(tensor)
        if flat is not None:
            return flat[1], flat[0]
        carrier = tensor._carriers[0]
        return carrier._kind or carrier.kind, None
    kind = place((tensor,), options)
    return kind, dense_buffer(tensor, kind)


def flat_operand(tensor: Tensor) -> tuple[Any, CarrierKind] | None:
    """``(buffer, kind)`` when ``tensor`` is dense and alone on its one carrier, else None.

    The elementwise hot path's test; a result made by ``Tensor._from_raw``
    passes it without its carrier object being made.
    """
    values = tensor._raw
    if values is not None:
        return values, tensor._kind
    carrier = tensor._carriers[0]
    layout = tensor._layout
    if tensor._offset or tensor._blocks is not None or carrier._size != layout.size or not _dense(layout):
        return None
    return carrier._array, carrier._kind or carrier.kind


class MixedBlocks(TypeError):
    """Operands (blocks of a multi-subtensor Tensor among them) on several carriers, no options given.

    Elementwise primitives then run block by block (``ops/_blockwise.py``);
    every other operation reports it as the TypeError it is.
    """


def _describe(carrier) -> str:
    return f"{type(carrier).__name__} on {carrier.device}"


def operand(tensor: Tensor, kind: CarrierKind) -> Any:
    """The rev array of ``tensor``, moved onto ``kind`` when it lives elsewhere."""
    carrier = tensor._carriers[0]
    cls, xp, device = kind
    if carrier.__class__ is cls and carrier._xp is xp and tensor._blocks is None and carrier._device == device:
        layout = tensor._layout
        if cls.keeps_shape and tensor._offset == 0 and carrier._size == layout.size and layout.is_canonical():
            return carrier.shaped(layout.rev_leaf_shape)  # the whole buffer: a cached reshape, no copy
        return carrier.gather_rev(layout, tensor._offset)
    if tensor._blocks is not None:
        from ..creation import blocks_rev_array

        return blocks_rev_array(tensor, kind)
    return transfer(tensor.rev_array(), kind)


def flat_gradient(gradient: Tensor, kind: CarrierKind) -> Any:
    """A cotangent for a dense result as 1-D values in the storage order of its layout."""
    flat = dense_buffer(gradient, kind)
    if flat is not None:
        return flat
    layout = gradient._layout
    values = operand(gradient, kind)
    if values.ndim == 1:
        return values
    values = to_storage(values, layout, kind[1]) if layout.is_compact() else values
    return reshaped(values, (-1,), kind)


# ----- memory order of dense results (API.md section 5) ------------------------------------------
#
# A layout is *dense* when it maps its coordinates one to one onto [0, size):
# canonical, row-major, any permutation of the modes. Elementwise results
# keep the storage order of their dense operands (NumPy's order='K'), so a
# program on C-ordered arrays never pays a transpose. Values in a dense
# layout's storage order are the rev array with its axes permuted slowest
# stride first (``storage_perm``); flattening that in C order is the buffer.

@lru_cache(maxsize=1024)
def storage_perm(layout: Layout) -> tuple[int, ...] | None:
    """Rev-axis permutation that puts a dense ``layout``'s storage in C order; None when none is needed.

    Extent-1 leaves may sit anywhere (they do not move memory), so a layout
    whose non-trivial leaves already run slowest first in rev order needs none.
    """
    extents = layout.rev_leaf_shape
    strides = layout.leaf_stride[::-1]
    moving = [stride for extent, stride in zip(extents, strides) if extent > 1]
    if all(x > y for x, y in zip(moving, moving[1:])):
        return None
    return tuple(sorted(range(len(extents)), key=lambda axis: -strides[axis] if extents[axis] > 1 else 0))


@lru_cache(maxsize=1024)
def _inverse(perm: tuple[int, ...]) -> tuple[int, ...]:
    inverse = [0] * len(perm)
    for position, axis in enumerate(perm):
        inverse[axis] = position
    return tuple(inverse)


def to_storage(values: Any, layout: Layout, xp: Any) -> Any:
    """A rev array (or one broadcasting against it) with its axes in ``layout``'s storage order."""
    perm = storage_perm(layout)
    return values if perm is None else xp.permute_dims(values, perm)


def from_storage(values: Any, layout: Layout, xp: Any) -> Any:
    """The rev array of values held in a dense ``layout``'s storage order (flat or storage-shaped)."""
    perm = storage_perm(layout)
    rev = layout.rev_leaf_shape
    if perm is None:
        return values if tuple(values.shape) == rev else xp.reshape(values, rev)
    if values.ndim != len(perm):
        values = xp.reshape(values, tuple(rev[axis] for axis in perm))
    return xp.permute_dims(values, _inverse(perm))


@lru_cache(maxsize=1024)
def storage_shape(layout: Layout) -> tuple[int, ...]:
    """The rev leaf shape of a dense ``layout`` with its axes in storage order (C order is its buffer)."""
    perm = storage_perm(layout)
    rev = layout.rev_leaf_shape
    return rev if perm is None else tuple(rev[axis] for axis in perm)


@lru_cache(maxsize=1024)
def lined_up_shape(source: Layout, target: Layout) -> tuple[int, ...] | None:
    """The shape that lines dense ``source``'s buffer up with dense ``target``'s storage order, or None.

    ``source`` broadcasts against ``target`` (its extent-1 modes stretch).
    Where its own storage order runs through the axes it shares with
    ``target`` in ``target``'s storage order, its buffer in that shape (a
    1 for every stretched axis) is the operand lined up with ``target``,
    and a gradient summed over the stretched axes in ``target``'s storage
    order, kept as 1s, is ``source``'s own storage order.
    """
    lined_up = expand_plan(source._shape_modes, target._shape_modes) or source.rev_leaf_shape
    perm = storage_perm(target) or tuple(range(len(lined_up)))
    if len(lined_up) != len(perm):
        return None
    moving_strides = [stride for extent, stride in zip(source.rev_leaf_shape, source.leaf_stride[::-1])
                      if extent > 1]
    moving_axes = [axis for axis, extent in enumerate(lined_up) if extent > 1]
    if len(moving_strides) != len(moving_axes):
        return None
    stride_of = dict(zip(moving_axes, moving_strides))
    if [axis for axis in perm if axis in stride_of] != sorted(moving_axes, key=lambda axis: -stride_of[axis]):
        return None
    return tuple(lined_up[axis] for axis in perm)


def storage_operand(tensor: Tensor, layout: Layout, kind: CarrierKind) -> Any:
    """``tensor``'s values lined up with an elementwise result in dense ``layout``, in its storage order.

    A dense operand whose storage runs in that order (the same layout, or a
    broadcast row of it) is its own buffer, reshaped: no transpose, which on
    JAX would be a copy each way. Anything else is read as a rev array,
    expanded to the result's modes and permuted.
    """
    xp = kind[1]
    carrier = dense_carrier(tensor, kind)
    if carrier is not None:
        shape = storage_shape(layout) if tensor._layout is layout else lined_up_shape(tensor._layout, layout)
        if shape is not None:
            computed = carrier.dense_values()
            if tuple(computed.shape) == shape:
                return computed
            return _unit_alias(computed, carrier.shaped(shape))
    values = expand(operand(tensor, kind), tensor._layout._shape_modes, layout._shape_modes, xp)
    return to_storage(values, layout, xp)


def storage_cotangent(values: Any, target: Tensor, layout: Layout, xp: Any) -> tuple[Any, bool]:
    """A gradient held in dense ``layout``'s storage order, brought back to ``target``'s shape.

    For a target with exactly ``layout`` that is the flat storage-ordered
    buffer (``cotangent_for`` adopts it); otherwise the sum over the modes
    broadcasting stretched: in the target's own storage order where that
    runs as ``layout``'s does (``lined_up_shape``), else as a rev array of
    its leaves. Returns it with whether it is a sum made here, a new array
    for ``target`` alone.
    """
    if values is None:
        return None, False
    shape = storage_shape(layout)
    if tuple(values.shape) != shape:
        values = xp.broadcast_to(values, shape)
    if target._layout is layout or target._layout == layout:
        return (values if values.ndim == 1 else InStorageOrder(values)), False
    fresh = False
    source = target._layout._shape_modes
    axes, leaves = reduce_plan(source, layout._shape_modes)
    perm = storage_perm(layout)
    if perm is not None:
        position = _inverse(perm)
        axes = tuple(sorted(position[axis] for axis in axes))
    if axes:
        values = xp.sum(values, axis=axes, keepdims=True)
        fresh = True
    if _dense(target._layout) and lined_up_shape(target._layout, layout) is not None:
        return InStorageOrder(values), fresh
    if perm is not None:
        values = xp.permute_dims(values, _inverse(perm))
    return (values if tuple(values.shape) == leaves else reshape_array(values, leaves, xp)), fresh


def _dense(layout: Layout) -> bool:
    return layout.is_compact()  # cached on the layout


class InStorageOrder:
    """A gradient already in its target's dense storage order (N-D, C order): ``cotangent_for`` adopts it."""

    __slots__ = ("values",)

    def __init__(self, values: Any) -> None:
        self.values = values


def dense_carrier(tensor: Tensor, kind: CarrierKind):
    """``tensor``'s carrier when it holds exactly ``tensor``'s values in a dense layout on ``kind``, else None."""
    carrier = tensor._carriers[0]
    layout = tensor._layout
    if tensor._offset == 0 and carrier._size == layout.size and tensor._blocks is None and _dense(layout) \
            and carrier.__class__ is kind[0] and carrier._xp is kind[1] and carrier._device == kind[2]:
        return carrier
    return None


def flat_capable(tensors: Sequence[Tensor], kind: CarrierKind) -> bool:
    """Whether a node over ``tensors`` on ``kind`` may run backward on raw storage-order buffers.

    Every Tensor must be dense over its whole carrier on ``kind``, and the
    carrier's arrays must reshape for free (not ``keeps_shape``: on JAX a
    reshape between 1-D and N-D is a copy, so those nodes keep N-D Tensors).
    """
    if kind[0].keeps_shape:
        return False
    for tensor in tensors:
        if dense_carrier(tensor, kind) is None:
            return False
    return True


def lines_up(tensor: Tensor, layout: Layout) -> bool:
    """Whether a dense ``tensor``'s buffer, reshaped, is its operand to an elementwise result in dense
    ``layout`` (the same layout, or a broadcast row of it: ``lined_up_shape``)."""
    return tensor._layout == layout or lined_up_shape(tensor._layout, layout) is not None


def storage_flat(values: Any, layout: Layout, kind: CarrierKind) -> Any:
    """A rev array of dense ``layout``'s leaves as its 1-D buffer in storage order (a raw cotangent)."""
    return reshaped(to_storage(values, layout, kind[1]), (-1,), kind)


def dense_buffer(tensor: Tensor, kind: CarrierKind) -> Any:
    """The carrier's own 1-D buffer when it holds exactly ``tensor``'s values in a dense layout, else None.

    The buffer is in the storage order of ``tensor.layout``; two Tensors
    with equal dense layouts can be combined flat, with no reshape on the
    way in or out (each eager reshape copies on JAX).
    """
    carrier = dense_carrier(tensor, kind)
    return None if carrier is None else carrier._array


def result_layout(modes: tuple, tensors: Sequence[Tensor]) -> Layout:
    """The layout of an elementwise result of shape ``modes`` computed from ``tensors``.

    The layout shared by every dense operand that has the full shape (a
    broadcast operand has no say); canonical when they disagree or none is dense.
    """
    chosen = None
    for tensor in tensors:
        layout = tensor._layout
        if layout._shape_modes != modes or not _dense(layout):
            continue
        if chosen is None:
            chosen = layout
        elif layout != chosen:
            return Layout.canonical(modes)
    return Layout.canonical(modes) if chosen is None else chosen


def reshaped(values: Any, shape: tuple, kind: CarrierKind) -> Any:
    """``xp.reshape`` on ``kind``, through the arrays' own method where the carrier class says they have one."""
    return values.reshape(shape) if kind[0].native_methods else kind[1].reshape(values, shape)


def mode_operand(tensor: Tensor, kind: CarrierKind) -> Any:
    """Rev array with one axis per top-level mode (reversed order), nested modes merged."""
    values = operand(tensor, kind)
    sizes = tensor._layout.mode_sizes[::-1]
    return values if tuple(values.shape) == sizes else reshaped(values, sizes, kind)


def wrap(values: Any, layout: Layout, kind: CarrierKind) -> Tensor:
    """A Tensor with dense ``layout`` whose storage is ``values`` flattened in C order.

    ``values`` is the rev array (canonical ``layout``) or, for another dense
    layout, the values in its storage order (``to_storage``), or already flat.
    """
    cls, xp, device = kind
    if values.ndim != 1:
        if cls.keeps_shape:  # N-D or 0-d: flattened only if something reads the 1-D buffer
            return Tensor._make(cls._adopt_shaped(values, xp, device, kind), layout, 0)
        values = reshaped(values, (-1,), kind)
    return Tensor._make(cls._adopt(values, xp, device, kind), layout, 0)


def canonical(modes: tuple) -> Layout:
    return Layout.canonical(modes)


def scalar_operand(value: Any, dtype, name: str) -> Any:
    """A Python or NumPy scalar operand, as a Python scalar of the result's kind.

    Scalars are weak (one rule on every carrier, ``dtypes.result_type``): they
    never widen the Tensor's dtype, and one of a higher kind lifts it to that
    kind's default dtype (an Int32 Tensor times 0.5 is Float32). NumPy
    scalars count as scalars, so ``x + np.float64(0.5)`` stays Float32.
    """
    scalar = as_python_scalar(value)
    if scalar is None or isinstance(scalar, complex):
        raise TypeError(f"{name} expects Tensors or Python scalars, got {type(value).__name__}: {value!r}")
    kind = result_type(dtype, scalar).kind  # OverflowError for an int out of the dtype's range
    return float(scalar) if kind == "float" else int(scalar) if kind in ("int", "uint") else scalar


def cast_values(values: Any, dtype, kind: CarrierKind) -> Any:
    """``values`` (a native array, or a Python scalar) in ``dtype`` on ``kind``."""
    if not hasattr(values, "dtype"):
        return float(values) if dtype.kind == "float" else values
    native = kind[0]._native_dtype_in(kind[1], dtype)
    return values if values.dtype == native else kind[1].astype(values, native)


def as_array_like(value: Any, like: Any, xp: Any) -> Any:
    """A Python scalar as a 0-d array of ``like``'s dtype and device (for functions, not operators)."""
    if isinstance(value, (int, float, bool)):
        return xp.asarray(value, dtype=like.dtype, device=getattr(like, "device", None))
    return value


def times(g: Any, values: Any, xp: Any) -> Any:
    """``g * values`` for a backward rule, skipping the product when ``g`` is a unit cotangent.

    ``loss.backward()`` seeds the traversal with ones, which a full
    reduction passes on as one value for every element (a stride-0 view on
    NumPy and PyTorch; on JAX ``Ones`` for a flat node that takes it, else a
    filled array). Such arrays carry a unit flag (``is_unit``), on every
    backend alike; multiplying by them would cost a full pass over the data
    for nothing: the values themselves, broadcast to the cotangent's shape,
    are the product. Such a view of saved values is never marked as
    allocated, so the engine never adds into it in place.
    """
    if g.__class__ is Ones:
        return g.times(values, xp)
    if values.__class__ is not float and is_unit(g) and hasattr(values, "shape"):
        return values if tuple(values.shape) == tuple(g.shape) else xp.broadcast_to(values, tuple(g.shape))
    return g * values


#: Backends whose arrays hold values now, so a one-element cotangent can be read cheaply
#: (a lazy backend such as Dask would compute its whole graph).
_EAGER = frozenset({"numpy", "torch", "jax"})


# ----- cotangents in an input's exact layout ----------------------------------------------------

def gradient_layout(target: Tensor) -> Layout:
    """The layout of every gradient buffer for ``target``: its own if injective, else canonical."""
    layout = target._layout
    return layout if layout.is_injective() else Layout.canonical(layout._shape_modes)


@lru_cache(maxsize=1024)
def broadcast_axes(layout: Layout) -> tuple[int, ...]:
    """Rev axes of ``layout``'s stride-0 leaves of extent > 1 (the ones broadcast aliasing comes from)."""
    return tuple(axis for axis, (extent, stride) in enumerate(zip(layout.rev_leaf_shape, layout.leaf_stride[::-1]))
                 if stride == 0 and extent > 1)


def cotangent_for(target: Tensor, values: Any, values_kind: CarrierKind | None = None, fresh: bool = False,
                  defer: bool = False) -> Tensor:
    """Build the cotangent for ``target`` from ``values`` (a rev array of its leaf shape).

    The result lives on ``target``'s own carrier class and, for an injective
    target, has exactly ``target.layout`` (holes zero); otherwise it uses the
    canonical layout, as the spec requires of gradients for broadcast targets.
    ``fresh`` says the rule allocated ``values`` for this target alone: the
    result is then marked ``allocated`` unless it broadcasts them, as is a
    result this function placed in new storage itself. With ``defer`` a
    target whose layout has holes gets ``Unplaced(values)`` instead, which
    the engine places once all contributions are summed; so does a unit
    cotangent where broadcasting it would fill memory (``Unplaced.unit``).
    """
    carrier = target._carriers[0]
    cls = carrier.__class__
    xp = carrier._xp
    in_storage_order = values.__class__ is InStorageOrder
    if in_storage_order:
        values = values.values
    if values_kind is not None and not (cls is values_kind[0] and xp is values_kind[1]
                                        and carrier._device == values_kind[2]):
        values = transfer(values, kind_of(carrier))
        fresh = False  # a zero-copy transfer may share (read-only) memory with the source: never add into it
    layout = target._layout
    dense = _dense(layout)
    if in_storage_order:
        result = wrap(values, layout, kind_of(carrier))
        return allocated(result) if fresh else result
    if values.ndim == 1 and values.shape[0] == layout.size and dense:
        # Already flat values in the layout's storage order (the elementwise fast path).
        result = Tensor._make(cls._adopt(values, xp, carrier._device, carrier._kind), layout, 0)
        return allocated(result) if fresh else result
    leaves = layout.rev_leaf_shape
    if values.shape != leaves:
        fresh = False
        if dense and all(extent == 1 for extent in values.shape):
            # One value for every element (a full reduction's gradient): broadcast it flat, in any order.
            unit = is_unit(values)
            if unit and defer and cls.keeps_shape and layout.size > 1:
                # Filling is a full pass here: the engine fills only if a consumer reads the ones.
                return Unplaced(values, unit=True)
            one = reshape_array(values, (1,), xp)
            # Where reshapes copy, broadcast straight to the shape the target's own values were
            # computed in, which is what the operations reading them use.
            shape = (layout.size,)
            if cls.keeps_shape and target._offset == 0 and carrier._size == layout.size \
                    and carrier.dense_values().ndim > 1:
                shape = storage_shape(layout)
            if not cls.keeps_shape:
                values = spread(one, layout.size, kind_of(carrier), unit)
            elif cls.backend in _EAGER and layout.size > 1:
                value = 1.0 if unit else float(one[0])
                if defer and value == 1.0:
                    return Unplaced(values, unit=True)
                # Without stride-0 views a broadcast is a full copy, and XLA fills a constant
                # several times faster than it broadcasts a buffer's value.
                values = xp.full(shape, value, dtype=one.dtype)
                if value == 1.0:
                    _mark_unit(values)
            else:
                values = xp.broadcast_to(one, shape)
            return wrap(values, layout, kind_of(carrier))
        values = xp.broadcast_to(values, leaves)
    if dense or not layout.is_injective():
        if dense:
            values = to_storage(values, layout, xp)
        flat = values.reshape(-1) if cls.native_methods else xp.reshape(values, (-1,))
        result = Tensor._make(cls._adopt(flat, xp, carrier._device, carrier._kind), layout if dense
                              else Layout.canonical(layout._shape_modes), 0)
        return allocated(result) if fresh else result
    if defer:
        return Unplaced(values)
    return allocated(Tensor._make(carrier.placed(layout, values), layout, 0))


def spread(one: Any, size: int, kind: CarrierKind, unit: bool = False) -> Any:
    """One value (a one-element 1-D array) for each of ``size`` elements, as a stride-0 view.

    A full reduction's gradient. Where the value is 1 (``unit``: known to be)
    the view is flagged unit, so ``times`` skips multiplying by it; reading
    it back is cheap on eager backends only. Not for ``keeps_shape``
    carriers, which have no stride-0 views (``cotangent_for`` fills there).
    """
    values = kind[1].broadcast_to(one, (size,))
    if size > 1 and (unit or is_unit(one) or (kind[0].backend in _EAGER and float(one[0]) == 1.0)):
        _mark_unit(values)
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


@lru_cache(maxsize=1024)
def batched_layout(single: Layout, count: int) -> Layout:
    """``single`` with a prepended leaf batch mode of extent ``count`` and stride ``single.cosize``."""
    return Layout._trusted((count,) + single._shape_modes, (single.cosize,) + single._stride_modes)


def gradient_values(op: Operation, gradient: Tensor) -> tuple[Any, int | None]:
    """The incoming cotangent as a rev array on the op's carrier kind, and the batch extent (or None).

    A batched cotangent has one more top-level mode than the op's result; its
    batch axis comes first in the returned array.
    """
    values = _unit_alias(gradient._carriers[0].dense_values(), operand(gradient, op.place))
    layout = gradient._layout
    if layout is op._result_layout or len(layout._shape_modes) == len(op._result_layout._shape_modes):
        return values, None
    last = values.ndim - 1
    return op.place.namespace.permute_dims(values, (last,) + tuple(range(last))), values.shape[last]


def cotangent_for_batched(target: Tensor, values: Any, values_kind: CarrierKind, batch: int) -> Tensor:
    """The batched cotangent for ``target`` from ``values`` of shape ``(batch, *target rev leaves)``."""
    carrier = target._carriers[0]
    cls = carrier.__class__
    xp = carrier._xp
    if not (cls is values_kind[0] and xp is values_kind[1] and carrier._device == values_kind[2]):
        values = transfer(values, kind_of(carrier))
    single = gradient_layout(target)
    layout = batched_layout(single, batch)
    shape = (batch,) + single.rev_leaf_shape
    if values.shape != shape:
        values = xp.broadcast_to(values, shape)
    if single.is_canonical():
        flat = values.reshape(-1) if cls.native_methods else xp.reshape(values, (-1,))
        return Tensor._make(cls._adopt(flat, xp, carrier._device, carrier._kind), layout, 0)
    last = values.ndim - 1
    return Tensor._make(carrier.placed(layout, xp.permute_dims(values, tuple(range(1, last + 1)) + (0,))), layout, 0)
