"""Facts about a layout's memory order, derived once and cached on the Layout instance.

A layout is *dense* when it maps its coordinates one to one onto ``[0, size)``
(canonical, row-major, any permutation of the modes). Elementwise results keep
the storage order of their dense operands (NumPy's ``order='K'``), so a
program on C-ordered arrays never pays a transpose. Values in a dense layout's
storage order are the rev array with its axes permuted slowest stride first
(``storage_perm``); flattening that in C order is the buffer.

Layouts are immutable values, so each fact lives in a slot of the instance
(``Layout.__slots__``) instead of a global cache keyed on layouts.
"""

from __future__ import annotations

import itertools

from .layout import Layout, derived_slot

__all__ = ["batched_layout", "broadcast_axes", "row_major", "storage_perm", "storage_shape"]

_set = object.__setattr__


def row_major(shape: tuple[int, ...]) -> Layout:
    """The compact layout whose storage is a C-ordered array of ``shape`` (last mode fastest)."""
    strides: list[int] = []
    step = 1
    for extent in reversed(shape):
        strides.append(step)
        step *= extent
    return Layout._trusted(tuple(shape), tuple(reversed(strides)))


def storage_perm(layout: Layout) -> tuple[int, ...] | None:
    """Rev-axis permutation that puts a dense ``layout``'s storage in C order; None when none is needed.

    Extent-1 leaves may sit anywhere (they do not move memory), so a layout
    whose non-trivial leaves already run slowest first in rev order needs none.
    """
    return layout._storage_perm


def _storage_perm(layout: Layout) -> tuple[int, ...] | None:
    extents = layout.rev_leaf_shape
    strides = layout.leaf_stride[::-1]
    moving = [stride for extent, stride in zip(extents, strides) if extent > 1]
    if all(x > y for x, y in itertools.pairwise(moving)):
        return None
    return tuple(sorted(range(len(extents)), key=lambda axis: -strides[axis] if extents[axis] > 1 else 0))


def storage_shape(layout: Layout) -> tuple[int, ...]:
    """The rev leaf shape of a dense ``layout`` with its axes in storage order (C order is its buffer)."""
    return layout._storage_shape


def _storage_shape(layout: Layout) -> tuple[int, ...]:
    perm = layout._storage_perm
    rev = layout.rev_leaf_shape
    return rev if perm is None else tuple(rev[axis] for axis in perm)


def broadcast_axes(layout: Layout) -> tuple[int, ...]:
    """Rev axes of ``layout``'s stride-0 leaves of extent > 1 (the ones broadcast aliasing comes from)."""
    return layout._broadcast_axes


def _broadcast_axes(layout: Layout) -> tuple[int, ...]:
    return tuple(axis for axis, (extent, stride) in enumerate(zip(layout.rev_leaf_shape, layout.leaf_stride[::-1]))
                 if stride == 0 and extent > 1)


derived_slot("_storage_perm", _storage_perm)
derived_slot("_storage_shape", _storage_shape)
derived_slot("_broadcast_axes", _broadcast_axes)
# The last batch extent asked for (none yet: -1); a traversal asks for one extent many times.
derived_slot("_batched", lambda layout: (-1, None))


def batched_layout(single: Layout, count: int) -> Layout:
    """``single`` with a prepended leaf batch mode of extent ``count`` and stride ``single.cosize``.

    The last batch extent asked for is kept on ``single`` (a traversal asks
    for one extent many times).
    """
    known, batched = single._batched
    if known == count:
        return batched
    batched = Layout._trusted((count, *single._shape_modes), (single.cosize, *single._stride_modes))
    _set(single, "_batched", (count, batched))
    return batched
