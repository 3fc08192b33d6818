"""Reading a Tensor's values: where it lives, its values as rev arrays, dense buffers, wrapping results.

Every operation asks these questions of its operands. Rev arrays are native
arrays with one axis per leaf mode in reverse leaf order (docs/internals.md);
a dense layout's *storage order* is the rev array with its axes permuted
slowest stride first (``layout.order.storage_perm``).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from .._marks import IdentityMarks
from ..carriers import CarrierKind, resolve, transfer
from ..errors import CarrierMismatchError
from ..layout import Layout
from ..layout.order import storage_perm
from .tensor import Tensor, blocks_rev_array

# ----- where a Tensor lives ----------------------------------------------------------------------

def where(tensor: Tensor) -> CarrierKind:
    """The carrier kind a one-carrier Tensor lives on.

    The one answer to "where does this Tensor live": a result made by
    ``Tensor._from_raw`` answers from its kind, so asking never makes the
    carrier object its laziness saved.
    """
    if tensor._raw is not None:
        return tensor._kind
    carrier = tensor._carrier_tuple[0]  # type: ignore[index]  # no ``_raw``: the carriers exist
    kind = carrier._kind
    return kind if kind is not None else carrier.kind


def kind_of(carrier) -> CarrierKind:
    """The kind of a carrier object (its cached ``kind``)."""
    kind = carrier._kind
    return kind if kind is not None else carrier.kind


#: 0-d Tensors made without ``device=`` (``xp.asarray(2.0)``): like torch's 0-d CPU tensors, they
#: join the carrier of the operands they meet instead of making the operation a mix of carriers.
_JOINS_PARTNER = IdentityMarks()


def joins_partner(tensor: Tensor) -> Tensor:
    """Mark the 0-d ``tensor`` (made without ``device=``) as joining its partners' carrier; returns it."""
    return _JOINS_PARTNER.add(tensor)


def operation_kind(tensors: Sequence[Tensor], options) -> CarrierKind:
    """The carrier kind an operation on ``tensors`` runs on.

    ``options.carrier`` decides when given; otherwise every operand must
    already share one carrier kind (class, namespace and device), except
    0-d Tensors made without ``device=`` (``joins_partner``), which join it.
    ``options.device`` alone keeps that carrier and runs on that device.
    """
    if options is not None and (options.carrier is not None or options.device is not None):
        carrier = options.carrier if options.carrier is not None else operation_kind(tensors, None)
        return placed_kind(carrier, options.device)
    first = tensors[0]
    if first._blocks is None:
        kind = where(first)
        if len(tensors) == 1:
            return kind
    else:
        kind = kind_of(first._carriers[0])
    for tensor in tensors:
        if tensor._raw is not None:
            other = tensor._kind
            if other is not kind and other != kind:
                return _mixed_place(tensors)
            continue
        for carrier in tensor._carrier_tuple:  # type: ignore[union-attr]  # no ``_raw``: the carriers exist
            other = carrier._kind
            if other is not kind and kind_of(carrier) != kind:
                return _mixed_place(tensors)
    return kind


def placed_kind(carrier, device) -> CarrierKind:
    """``resolve(carrier, device=device)``, where a device that carrier does not have raises ``ValueError``
    naming both (torch's own word for a device string it cannot parse is ``RuntimeError``)."""
    try:
        return resolve(carrier, device=device)
    except RuntimeError as err:
        raise ValueError(f"device {device!r} is not a device of carrier {carrier!r} ({err})") from None


def _mixed_place(tensors: Sequence[Tensor]) -> CarrierKind:
    """Operands on several carriers: the one carrier the non-joining operands share, or TypeError."""
    joining = [t in _JOINS_PARTNER and t._layout.rank == 0 and t._blocks is None for t in tensors]
    anchors = [t for t, joins in zip(tensors, joining) if not joins] or [tensors[0]]
    first = anchors[0]._carriers[0]
    for tensor in anchors:
        for carrier in tensor._carriers:
            if carrier is not first and kind_of(carrier) != kind_of(first):
                blocks = any(t._blocks is not None for t in tensors)
                raise (MixedBlocks if blocks else CarrierMismatchError)(
                    f"operands live on different carriers ({_describe(first)} and {_describe(carrier)}); move one "
                    "with xp.asarray(x, device=y.device) or x.to_device(y.device) (differentiable), or pass "
                    "options=ExecutionOptions(carrier=...) to say where the operation runs"
                )
    return kind_of(first)


def single_operation_kind(tensor: Tensor, options) -> tuple[CarrierKind, Any]:
    """For an operation on one Tensor: where it runs, and the carrier's own buffer when the Tensor is dense there.

    The buffer (None unless ``dense_buffer`` would give it) lets elementwise
    rules compute flat; the common case (no options, one carrier) is decided
    here without ``operation_kind``.
    """
    if options is None and tensor._blocks is None:
        flat = flat_operand(tensor)
        if flat is not None:
            return flat[1], flat[0]
        return where(tensor), None
    kind = operation_kind((tensor,), options)
    return kind, dense_buffer(tensor, kind)


def flat_operand(tensor: Tensor) -> tuple[Any, CarrierKind] | None:
    """``(buffer, kind)`` when ``tensor`` is dense and alone on its one carrier, else None.

    The elementwise hot path's test; a result made by ``Tensor._from_raw``
    passes it without its carrier object being made.
    """
    values = tensor._raw
    if values is not None:
        return values, tensor._kind
    # Slots read directly (the ``_carriers`` and layout properties only when not yet set): this
    # test runs for every elementwise call.
    carrier = (tensor._carrier_tuple or tensor._materialize())[0]
    layout = tensor._layout
    # Compact and covering the carrier exactly; the layout's slots read directly, as below.
    if tensor._offset or tensor._blocks is not None or not layout._is_compact or layout._size != carrier._size:
        return None
    return carrier._array, carrier._kind or carrier.kind


class MixedBlocks(CarrierMismatchError):
    """Operands (blocks of a multi-subtensor Tensor among them) on several carriers, no options given.

    Elementwise primitives then run block by block (``ops/_blockwise.py``);
    every other operation reports it as the TypeError it is.
    """


def _describe(carrier) -> str:
    return f"{type(carrier).__name__} on {carrier.device}"


def operand(tensor: Tensor, kind: CarrierKind) -> Any:
    """The rev array of ``tensor``, moved onto ``kind`` when it lives elsewhere."""
    raw = tensor._raw
    if raw is not None and (tensor._kind is kind or tensor._kind == kind) and not kind.cls.keeps_shape:
        return from_storage(raw, tensor._layout, kind.namespace)  # a lazy result's buffer: no carrier made
    carrier = tensor._carriers[0]
    cls, xp, device = kind
    # ``kind.holds(carrier)`` written inline: every operand of every operation passes here.
    if carrier.__class__ is cls and carrier._xp is xp and tensor._blocks is None and carrier._device == device:
        layout = tensor._layout
        if cls.keeps_shape and tensor._offset == 0 and carrier._size == layout.size and layout.is_canonical():
            return carrier.shaped(layout.rev_leaf_shape)  # the whole buffer: a cached reshape, no copy
        return carrier.gather_rev(layout, tensor._offset)
    if tensor._blocks is not None:
        return blocks_rev_array(tensor, kind)
    return transfer(tensor.rev_array(), kind)



# ----- dense values and storage order ------------------------------------------------------------


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


def _dense(layout: Layout) -> bool:
    return layout.is_compact()  # cached on the layout


def dense_carrier(tensor: Tensor, kind: CarrierKind):
    """``tensor``'s carrier when it holds exactly ``tensor``'s values in a dense layout on ``kind``, else None."""
    # The ``_carriers`` property, ``CarrierKind.holds`` and the layout's slots read inline: this test
    # runs several times per node, and a call apiece would cost more than the test itself.
    carrier = (tensor._carrier_tuple or tensor._materialize())[0]
    if tensor._offset or tensor._blocks is not None or carrier.__class__ is not kind.cls \
            or carrier._xp is not kind.namespace or carrier._device != kind.device:
        return None
    layout = tensor._layout
    return carrier if layout._is_compact and layout._size == carrier._size else None


def dense_buffer(tensor: Tensor, kind: CarrierKind) -> Any:
    """The carrier's own 1-D buffer when it holds exactly ``tensor``'s values in a dense layout, else None.

    The buffer is in the storage order of ``tensor.layout``; two Tensors
    with equal dense layouts can be combined flat, with no reshape on the
    way in or out (each eager reshape copies on JAX).
    """
    carrier = dense_carrier(tensor, kind)
    return None if carrier is None else carrier._array


def reshaped(values: Any, shape: tuple, kind: CarrierKind) -> Any:
    """``xp.reshape`` on ``kind``, through the arrays' own method where the carrier class says they have one."""
    return values.reshape(shape) if kind.cls.native_methods else kind.namespace.reshape(values, shape)


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
            # ``_adopt_shaped``: defined by the carriers that keep shapes
            return Tensor._make(cls._adopt_shaped(values, xp, device, kind), layout, 0)  # type: ignore[attr-defined]
        values = reshaped(values, (-1,), kind)
    return Tensor._make(cls._adopt(values, xp, device, kind), layout, 0)


def cast_values(values: Any, dtype, kind: CarrierKind) -> Any:
    """``values`` (a native array, or a Python scalar) in ``dtype`` on ``kind``."""
    if not hasattr(values, "dtype"):
        return float(values) if dtype.kind == "float" else values
    native = kind.cls._native_dtype_in(kind.namespace, dtype)
    return values if values.dtype == native else kind.namespace.astype(values, native)


def as_array_like(value: Any, like: Any, xp: Any) -> Any:
    """A Python scalar as a 0-d array of ``like``'s dtype and device (for functions, not operators)."""
    if isinstance(value, (int, float, bool)):
        return xp.asarray(value, dtype=like.dtype, device=getattr(like, "device", None))
    return value
