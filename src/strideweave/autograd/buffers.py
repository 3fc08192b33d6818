"""Gradient buffers: cotangent validation, summation, broadcast aggregation, detached copies.

Every gradient buffer autograd allocates has an injective layout: the
target's own layout when that is injective, else the canonical layout of the
target's shape, holding the sum over each storage slot at every logical
position that addresses it.
"""

from __future__ import annotations

from typing import Any

from ..layout import Layout
from ..ops._support import kind_of, operand, wrap
from ..tensor import Tensor


def gradient_layout(target: Tensor) -> Layout:
    """The layout of every gradient buffer allocated for ``target``."""
    layout = target._layout
    return layout if layout.is_injective() else Layout.canonical(layout.shape.modes)


def validate_cotangent(target: Tensor, cotangent: Any, what: str) -> None:
    """Check ``cotangent`` against ``target`` as the spec requires (TypeError / ValueError)."""
    if not isinstance(cotangent, Tensor):
        raise TypeError(f"{what} must be a Tensor, got {type(cotangent).__name__}: {cotangent!r}")
    target_layout = target._layout
    layout = cotangent._layout
    aliasing = target_layout.aliasing()
    if aliasing == "injective":
        if layout is not target_layout and layout != target_layout:
            raise ValueError(f"{what} has layout {layout} but the Tensor it is for has the injective layout "
                             f"{target_layout}; the cotangent layout must equal it exactly")
    elif aliasing == "broadcast":
        if layout.shape != target_layout.shape or not layout.is_injective():
            raise ValueError(f"{what} has layout {layout}, but the broadcast Tensor it is for (layout "
                             f"{target_layout}) needs a cotangent of shape {target_layout.shape} in an injective layout")
    else:
        raise ValueError(f"reverse-mode differentiation reached a Tensor with layout {target_layout}, whose aliasing "
                         "broadcast modes do not explain (overlapping); its gradient would be under-counted")
    if len(cotangent._carriers) != 1 and cotangent._blocks is None:
        raise TypeError(f"{what} must be a Float32 Tensor, got a {cotangent.dtype!r} Tensor")


def place_values(values: Any, layout: Layout, like: Any) -> Tensor:
    """Fresh storage of ``like``'s kind holding rev-array ``values`` in injective ``layout`` (holes zero)."""
    if layout.is_canonical():
        return wrap(like._xp.asarray(values, copy=True), layout, like.kind)
    return Tensor._make(like.placed(layout, values), layout, 0)


def add_cotangents(first: Tensor, second: Tensor) -> Tensor:
    """Elementwise sum of two cotangents for the same Tensor, in fresh storage."""
    carrier = first._carriers[0]
    kind = kind_of(carrier)
    total = operand(first, kind) + operand(second, kind)
    layout = first._layout if first._layout == second._layout else Layout.canonical(first._layout.shape.modes)
    if layout.is_canonical():
        return wrap(total, layout, kind)  # ``total`` is a new array already
    return Tensor._make(carrier.placed(layout, total), layout, 0)


def aggregate(target: Tensor, total: Tensor) -> Tensor:
    """For a broadcast target: the sum over each storage slot, replicated at each of its positions."""
    layout = target._layout
    kind = kind_of(total._carriers[0])
    xp = kind.namespace
    rev_shape = layout.rev_leaf_shape
    rev_strides = layout.leaf_stride[::-1]
    axes = tuple(i for i, (e, s) in enumerate(zip(rev_shape, rev_strides)) if s == 0 and e > 1)
    sums = xp.sum(operand(total, kind), axis=axes, keepdims=True)
    return wrap(xp.broadcast_to(sums, rev_shape), Layout.canonical(layout.shape.modes), kind)


def detached_gradient(target: Tensor, total: Tensor, fresh: bool) -> Tensor:
    """``total`` as a detached gradient in fresh storage of ``target``'s exact carrier class.

    ``fresh`` says ``total`` was allocated by the traversal itself, so it can
    be handed out without another copy when it already has the right kind.
    """
    carrier = target._carriers[0]
    kind = kind_of(carrier)
    layout = gradient_layout(target)
    total_carrier = total._carriers[0]
    if fresh and total._layout == layout and total._offset == 0 and type(total_carrier) is kind.cls \
            and total_carrier.namespace is kind.namespace and total_carrier.device == kind.device:
        return total
    return place_values(operand(total, kind), layout, carrier)


def accumulated_gradient(target: Tensor, total: Tensor, fresh: bool) -> Tensor:
    """The new ``.grad`` of ``target``: ``total`` added to any gradient it already holds."""
    existing = target._grad
    if existing is None:
        return detached_gradient(target, total, fresh)
    carrier = target._carriers[0]
    kind = kind_of(carrier)
    return place_values(operand(existing, kind) + operand(total, kind), gradient_layout(target), carrier)


def unit_cotangent(target: Tensor) -> Tensor:
    """Ones in ``target``'s layout, in fresh storage of its carrier's exact class."""
    return Tensor._make(target._carriers[0].placed(target._layout, 1.0), target._layout, 0)

