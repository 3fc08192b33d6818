"""Gradient buffers: cotangent validation, summation, broadcast aggregation, detached copies.

Every gradient buffer autograd allocates has an injective layout: the
target's own layout when that is injective, else the canonical layout of the
target's shape, holding the sum over each storage slot at every logical
position that addresses it.
"""

from __future__ import annotations

from typing import Any

from .._marks import mark_unit
from ..layout import Layout
from ..layout.order import batched_layout, broadcast_axes
from ..tensors.tensor import Tensor
from ..tensors.values import kind_of, operand, wrap
from .cotangents import gradient_layout


def _overlapping(target_layout: Layout) -> ValueError:
    return ValueError(f"reverse-mode differentiation reached a Tensor with layout {target_layout}, whose aliasing "
                      "broadcast modes do not explain (overlapping); its gradient would be under-counted")


def library_type_name(value: Any) -> str:
    """``value``'s type as its library spells it (``torch.Tensor``, ``numpy.ndarray``, ``jax.Array``, ``list``)."""
    cls = type(value)
    module = cls.__module__ or ""
    if module.startswith(("jax", "jaxlib")):
        return "jax.Array"
    return cls.__qualname__ if module == "builtins" else f"{module.split('.')[0]}.{cls.__qualname__}"


def not_a_tensor(what: str, value: Any) -> TypeError:
    """The TypeError for a cotangent that is not a Tensor: its type by library, and the conversion."""
    return TypeError(f"{what} must be a StrideWeave Tensor, got a {library_type_name(value)}: {value!r}; convert it "
                     f"first, with xp.asarray(g, device=t.device) (strideweave.array_api) or sw.tensor(g)")


def validate_cotangent(target: Tensor, cotangent: Any, what: str, batch: int | None = None) -> None:
    """Check ``cotangent`` against ``target`` as the spec requires (TypeError / ValueError).

    With ``batch``, ``cotangent`` carries a leading batch mode of that extent
    before the layout the unbatched rule asks for.
    """
    if not isinstance(cotangent, Tensor):
        raise not_a_tensor(what, cotangent)
    target_layout = target._layout
    aliasing = target_layout.aliasing()
    if aliasing == "overlapping":
        raise _overlapping(target_layout)
    layout = cotangent._layout
    if batch is not None:
        shape, stride = layout._shape_modes, layout._stride_modes
        ok = len(shape) == target_layout.rank + 1 and shape[0] == batch and shape[1:] == target_layout._shape_modes
        if ok and aliasing == "injective":
            ok = stride[1:] == target_layout._stride_modes
        elif ok:
            ok = Layout._trusted(shape[1:], stride[1:]).is_injective()
        if not ok:
            raise ValueError(f"{what} has layout {layout}; a batched cotangent for a Tensor with layout "
                             f"{target_layout} needs a leading batch mode of extent {batch} followed by that layout"
                             + (" in an injective form" if aliasing == "broadcast" else ""))
        return
    if aliasing == "injective":
        if layout is not target_layout and layout != target_layout:
            raise ValueError(f"{what} has layout {layout} but the Tensor it is for has the injective layout "
                             f"{target_layout}; the cotangent layout must equal it exactly")
    elif layout.shape != target_layout.shape or not layout.is_injective():
        raise ValueError(f"{what} has layout {layout}, but the broadcast Tensor it is for (layout "
                         f"{target_layout}) needs a cotangent of shape {target_layout.shape} in an injective layout")
    if len(cotangent._carriers) != 1 and cotangent._blocks is None:
        raise TypeError(f"{what} must be a Float32 Tensor, got a {cotangent.dtype!r} Tensor")


def place_values(values: Any, layout: Layout, like: Any) -> Tensor:
    """Fresh storage of ``like``'s kind holding rev-array ``values`` in injective ``layout`` (holes zero)."""
    if layout.is_canonical():
        return wrap(like._xp.asarray(values, copy=True), layout, like.kind)
    return Tensor._make(like.placed(layout, values), layout, 0)


def add_cotangents(first: Tensor, second: Tensor, target: Tensor | None = None,
                   batch: int | None = None) -> Tensor:
    """Elementwise sum of two cotangents for the same Tensor, in fresh storage.

    With ``batch``, two batched cotangents for ``target``: the sum takes the
    stacked layout of its gradient (see ``layout.order.batched_layout``).
    """
    carrier = first._carriers[0]
    kind = kind_of(carrier)
    layout = first._layout
    if batch is None:
        other = second._carriers[0]
        if (layout is second._layout or layout == second._layout) and first._offset == 0 == second._offset \
                and carrier._size == other._size == layout.cosize and other.kind == kind:
            # Same layout over whole buffers: add the storage itself (holes are zero
            # in both), which avoids reading either through a strided layout.
            total = carrier._array + other._array
            return Tensor._make(kind.cls._adopt(total, kind.namespace, kind.device, kind), layout, 0)
        layout = layout if layout == second._layout else Layout.canonical(layout.shape.modes)
    else:
        layout = batched_layout(gradient_layout(target), batch)  # type: ignore[arg-type]  # given with batch
    total = operand(first, kind) + operand(second, kind)
    if layout.is_canonical():
        return wrap(total, layout, kind)  # ``total`` is a new array already
    return Tensor._make(carrier.placed(layout, total), layout, 0)


def add_into(owned: Tensor, other: Tensor) -> Tensor:
    """``owned + other`` for two cotangents of one Tensor, written into ``owned``'s storage where possible.

    ``owned`` belongs to the traversal alone (a backward rule allocated it),
    so adding in place is invisible; anywhere else this is ``add_cotangents``.
    """
    carrier = owned._carriers[0]
    other_carrier = other._carriers[0]
    layout = owned._layout
    if (layout is other._layout or layout == other._layout) and owned._offset == 0 == other._offset \
            and carrier._size == other_carrier._size == layout.cosize and other_carrier.__class__ is carrier.__class__ \
            and other_carrier._xp is carrier._xp and other_carrier._device == carrier._device:
        total = carrier._accumulate(carrier._array, other_carrier._array)
        if total is carrier._array:
            return owned
        return Tensor._make(carrier.__class__._adopt(total, carrier._xp, carrier._device, carrier._kind), layout, 0)
    return add_cotangents(owned, other)


def add_patch(target: Tensor, total: Tensor, patch: Any) -> bool:
    """Add ``patch`` (a ``Patch`` for ``target``) into ``total``'s storage in place; False where it cannot.

    ``total`` must belong to the traversal alone and be stored in ``target``'s
    layout on a carrier whose arrays are written in place (so the cost is the
    patch's size, not the Tensor's).
    """
    carrier = total._carriers[0]
    if carrier.immutable_arrays or not (total._layout is target._layout or total._layout == target._layout):
        return False
    offset = total._offset + patch.offset
    carrier.scatter_rev(patch.layout, offset, carrier.gather_rev(patch.layout, offset) + patch.values)
    return True


def slot_sums(layout: Layout, values: Any, xp: Any) -> Any:
    """The sum over each storage slot of broadcast ``layout`` of rev array ``values`` (or one broadcasting to it).

    Extent 1 on every stride-0 axis (kept dims). An axis along which
    ``values`` is already constant is not read: its sum is the value times
    the extent, so a constant cotangent costs nothing like the view's size.
    """
    leaves = layout.rev_leaf_shape
    if values.ndim < len(leaves):
        values = xp.reshape(values, (1,) * (len(leaves) - values.ndim) + tuple(values.shape))
    stretched = broadcast_axes(layout)
    summed = tuple(axis for axis in stretched if values.shape[axis] != 1)
    count = 1
    for axis in stretched:
        if values.shape[axis] == 1:
            count *= leaves[axis]
    if summed:
        values = xp.sum(values, axis=summed, keepdims=True)
    return values * count if count != 1 else values


def aggregate(target: Tensor, total: Tensor, batch: int | None = None) -> Tensor:
    """For a broadcast target: the sum over each storage slot, replicated at each of its positions.

    With ``batch``, for every batch index of a batched cotangent (whose
    values carry the batch axis last), in the stacked canonical layout.
    """
    layout = target._layout
    carrier = total._carriers[0]
    kind = kind_of(carrier)
    xp = kind.namespace
    values = operand(total, kind)
    sums = slot_sums(layout, values, xp)
    canonical = Layout.canonical(layout._shape_modes)
    if batch is None:
        return wrap(xp.broadcast_to(sums, layout.rev_leaf_shape), canonical, kind)
    stacked = batched_layout(canonical, batch)
    return Tensor._make(carrier.placed(stacked, xp.broadcast_to(sums, tuple(values.shape))), stacked, 0)


def detached_gradient(target: Tensor, total: Tensor, owned: bool, batch: int | None = None) -> Tensor:
    """``total`` as a detached gradient in fresh storage of ``target``'s exact carrier class.

    ``owned`` says the traversal owns ``total`` (nothing else refers to it), so
    it is handed out without another copy when it already has the right kind.
    With ``batch``, a stacked gradient (batch stride = single-gradient cosize).
    """
    # Slots read in place of the ``_carriers``/``namespace``/``device`` properties: once per .grad.
    carrier = (target._carrier_tuple or target._materialize())[0]
    kind = carrier._kind or kind_of(carrier)
    layout = gradient_layout(target)
    if batch is not None:
        layout = batched_layout(layout, batch)
    total_carrier = (total._carrier_tuple or total._materialize())[0]
    if total._offset == 0 and total_carrier.__class__ is kind.cls and total_carrier._xp is kind.namespace \
            and total_carrier._device == kind.device and (total._layout is layout or total._layout == layout):
        if owned:
            return total
        cls = kind.cls
        if batch is None and total_carrier._size == layout.cosize and layout._is_compact \
                and not cls.keeps_shape and not cls.natural_products:
            # The whole buffer in the gradient's own dense layout: one flat copy of it, as ``settle_leaves``
            # copies a shared raw total. (Carriers that keep N-D structure, JAX's shapes and Dask's
            # chunks, take the path below, which keeps it.)
            return wrap(cls._fresh_copy(kind.namespace, total_carrier._array), layout, kind)
    if batch is not None:
        return Tensor._make(carrier.placed(layout, operand(total, kind)), layout, 0)
    return place_values(operand(total, kind), layout, carrier)


def accumulated_gradient(target: Tensor, total: Tensor, owned: bool) -> Tensor:
    """The new ``.grad`` of ``target``: ``total`` added to any gradient it already holds."""
    existing = target._grad
    if existing is None:
        return detached_gradient(target, total, owned)
    carrier = target._carriers[0]
    kind = kind_of(carrier)
    return place_values(operand(existing, kind) + operand(total, kind), gradient_layout(target), carrier)


def unit_cotangent(target: Tensor) -> Tensor:
    """Ones in ``target``'s layout, in fresh storage of its carrier's exact class."""
    layout = target._layout
    carrier = target._carriers[0]
    if layout.size == layout.cosize and layout.is_injective():
        storage = carrier.fresh(layout.cosize, fill=1.0)  # every slot addressed: no holes to keep zero
        if storage.immutable_arrays:
            # Known ones, so a full reduction passes them on without reading a value back
            # (which would wait for the forward pass on an asynchronous backend).
            mark_unit(storage.dense_values())
    else:
        storage = carrier.placed(layout, 1.0)
    return Tensor._make(storage, layout, 0)
