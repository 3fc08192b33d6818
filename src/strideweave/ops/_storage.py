"""The memory order of elementwise results and their cotangents (docs/api.md section 5).

Elementwise results keep the storage order of their dense operands (NumPy's
``order='K'``), so a program on C-ordered arrays never pays a transpose;
their backward works on buffers in that order (see ``layout.order``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .._marks import unit_alias as _unit_alias
from ..autograd.cotangents import InStorageOrder
from ..carriers import CarrierKind
from ..layout import Layout
from ..tensors.broadcasting import expand, expand_plan, reduce_plan, reshape_array
from ..tensors.tensor import Tensor
from ..tensors.values import _dense, _inverse, dense_buffer, dense_carrier, operand, reshaped, to_storage


def flat_gradient(gradient: Tensor, kind: CarrierKind) -> Any:
    """A cotangent for a dense result as 1-D values in the storage order of its layout."""
    flat = dense_buffer(gradient, kind)
    if flat is not None:
        return flat
    layout = gradient._layout
    values = operand(gradient, kind)
    if values.ndim == 1:
        return values
    values = to_storage(values, layout, kind.namespace) if layout.is_compact() else values
    return reshaped(values, (-1,), kind)


#: ``np.sum`` without its Python wrapper (about 1 us a call): the same ufunc reduction, same result
_ADD_REDUCE: Any = np.add.reduce


def summed(xp: Any, values: Any, axes: tuple, keepdims: bool = False) -> Any:
    """``xp.sum(values, axis=axes, keepdims=keepdims)``; for an exact ndarray the ufunc reduction
    that ``np.sum`` calls, without its Python wrapper."""
    if values.__class__ is np.ndarray:
        return _ADD_REDUCE(values, axes, None, None, keepdims)
    return xp.sum(values, axis=axes, keepdims=keepdims)


#: ``lined_up_shape``'s answers, keyed by the two layouts' modes: tuples of ints hash in C, where a
#: Layout key costs two Python ``__hash__`` calls a lookup. Cleared when it grows past 1024.
_LINED_UP: dict = {}


def lined_up_shape(source: Layout, target: Layout) -> tuple[int, ...] | None:
    """The shape that lines dense ``source``'s buffer up with dense ``target``'s storage order, or None.

    ``source`` broadcasts against ``target`` (its extent-1 modes stretch).
    Where its own storage order runs through the axes it shares with
    ``target`` in ``target``'s storage order, its buffer in that shape (a
    1 for every stretched axis) is the operand lined up with ``target``,
    and a gradient summed over the stretched axes in ``target``'s storage
    order, kept as 1s, is ``source``'s own storage order.
    """
    key = (source._shape_modes, source._stride_modes, target._shape_modes, target._stride_modes)
    try:
        return _LINED_UP[key]
    except KeyError:
        pass
    if len(_LINED_UP) >= 1024:
        _LINED_UP.clear()
    shape = _LINED_UP[key] = _lined_up_shape(source, target)
    return shape


def _lined_up_shape(source: Layout, target: Layout) -> tuple[int, ...] | None:
    lined_up = expand_plan(source._shape_modes, target._shape_modes) or source.rev_leaf_shape
    perm = target._storage_perm or tuple(range(len(lined_up)))
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
    carrier = dense_carrier(tensor, kind)
    return _lined_up(tensor, layout, kind, carrier, None if carrier is None else buffer_shape(tensor, layout))


def storage_operands(a: Tensor, b: Tensor, layout: Layout, kind: CarrierKind) -> tuple[bool, Any, Any]:
    """``storage_operand`` of both, after whether the node may run backward on raw buffers.

    That is both ``flat_capable`` and each buffer lined up (``lined_up_shape``); each Tensor's
    carrier and buffer shape are found once for both answers.
    """
    carrier_a, carrier_b = dense_carrier(a, kind), dense_carrier(b, kind)
    shape_a = None if carrier_a is None else buffer_shape(a, layout)
    shape_b = None if carrier_b is None else buffer_shape(b, layout)
    flat = shape_a is not None and shape_b is not None and not kind.cls.keeps_shape
    return flat, _lined_up(a, layout, kind, carrier_a, shape_a), _lined_up(b, layout, kind, carrier_b, shape_b)


def buffer_shape(tensor: Tensor, layout: Layout) -> tuple[int, ...] | None:
    """The shape that lines a dense ``tensor``'s buffer up with dense ``layout``'s storage order, or None."""
    own = tensor._layout
    return layout._storage_shape if same_layout(own, layout) else lined_up_shape(own, layout)


def same_layout(own: Layout, layout: Layout) -> bool:
    """``own == layout``, the modes compared first: a broadcast operand's differ, and tuples compare
    without a Python call."""
    return own is layout or (own._shape_modes == layout._shape_modes and own == layout)


def _lined_up(tensor: Tensor, layout: Layout, kind: CarrierKind, carrier: Any, shape: tuple | None) -> Any:
    if shape is not None:
        computed = carrier.dense_values()
        if tuple(computed.shape) == shape:
            return computed
        return _unit_alias(computed, carrier.shaped(shape))
    values = expand(operand(tensor, kind), tensor._layout._shape_modes, layout._shape_modes, kind.namespace)
    return to_storage(values, layout, kind.namespace)


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
    shape = layout._storage_shape
    if tuple(values.shape) != shape:
        values = xp.broadcast_to(values, shape)
    if same_layout(target._layout, layout):
        return (values if values.ndim == 1 else InStorageOrder(values)), False
    owned = False
    source = target._layout._shape_modes
    axes, leaves = reduce_plan(source, layout._shape_modes)
    perm = layout._storage_perm
    if perm is not None:
        position = _inverse(perm)
        axes = tuple(sorted(position[axis] for axis in axes))
    if axes:
        values = summed(xp, values, axes, True)
        owned = True
    if _dense(target._layout) and lined_up_shape(target._layout, layout) is not None:
        return InStorageOrder(values), owned
    if perm is not None:
        values = xp.permute_dims(values, _inverse(perm))
    return (values if tuple(values.shape) == leaves else reshape_array(values, leaves, xp)), owned


def flat_capable(tensors: Sequence[Tensor], kind: CarrierKind) -> bool:
    """Whether a node over ``tensors`` on ``kind`` may run backward on raw storage-order buffers.

    Every Tensor must be dense over its whole carrier on ``kind``, and the
    carrier's arrays must reshape for free (not ``keeps_shape``: on JAX a
    reshape between 1-D and N-D is a copy, so those nodes keep N-D Tensors).
    """
    if kind.cls.keeps_shape:
        return False
    for tensor in tensors:
        if dense_carrier(tensor, kind) is None:
            return False
    return True


def storage_flat(values: Any, layout: Layout, kind: CarrierKind) -> Any:
    """A rev array of dense ``layout``'s leaves as its 1-D buffer in storage order (a raw cotangent)."""
    return reshaped(to_storage(values, layout, kind.namespace), (-1,), kind)


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


def canonical(modes: tuple) -> Layout:
    return Layout.canonical(modes)
