"""Differentiable views: indexing, view, permute, transpose, reshape, broadcast_to.

A view shares its source's carriers and only changes the layout and
offset. Views are linear, so every one of them shares one backward
(``view_cotangent``): it writes the view's cotangent into a zero buffer over
the source's storage window and reads it back through the source layout.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import numpy as np

from ..autograd.cotangents import EVERY, BatchUnsupported, Patch, Request, Unplaced
from ..carriers import carrier_for_array
from ..dtypes import DType
from ..layout import Layout, Shape
from ..layout.order import broadcast_axes
from ..operation import _state, no_grad, record
from ..tensors.broadcasting import broadcast_modes, leaves_of
from ..tensors.creation import tensor
from ..tensors.tensor import Tensor
from ..tensors.values import dense_carrier, kind_of, operand, wrap
from ..tensors.writes import write
from ._args import not_a_tensor
from ._primitive import Primitive
from .manipulation import copy

__all__ = ["broadcast_to", "from_dlpack", "getitem", "permute", "reshape", "slices", "transpose", "view",
           "view_cotangent"]


def view_cotangent(source: Tensor, view_layout: Layout, view_offset: int, gradient: Tensor,
                   owned: bool = False) -> tuple[Tensor, bool]:
    """The cotangent of ``source`` given the cotangent of a view of its storage, and whether it is owned.

    Each storage slot the view addresses receives the view's gradient there
    (the engine has already aggregated a broadcast view, so every position
    of one slot holds the same value). An injective source reads the slots
    back in its own layout; a broadcast source gets the slot value at the
    first logical position of each slot and zero elsewhere, so the engine's
    aggregation for the source restores exactly the slot value. ``owned``:
    the traversal owns ``gradient``, so a cotangent that reinterprets its
    storage is owned too.
    """
    kind = kind_of(source._carriers[0])
    s_layout, s_offset = source._layout, source._offset
    if view_offset == s_offset and view_layout.size == s_layout.size and s_layout.is_compact() \
            and (gradient._layout is view_layout or gradient._layout == view_layout):
        # A permutation of the source's own storage window (transpose, permute, reshape of a
        # dense Tensor), and a cotangent stored exactly in the view's layout: its storage, slot
        # for slot, is the source's cotangent in the source's layout. No zero fill, no scatter.
        g_carrier = dense_carrier(gradient, kind)
        if g_carrier is not None:
            return Tensor._make(g_carrier, s_layout, 0), owned
    return slots_cotangent(source, view_layout, view_offset, operand(gradient, kind))


def slots_cotangent(source: Tensor, view_layout: Layout, view_offset: int, values: Any) -> tuple[Tensor, bool]:
    """``view_cotangent`` from the view's cotangent as a rev array ``values`` (or one broadcasting to it).

    For a broadcast view ``values`` may hold only the sums over each storage
    slot (extent 1 on the stride-0 axes).
    """
    carrier = source._carriers[0]
    kind = kind_of(carrier)
    xp = kind.namespace
    s_layout, s_offset = source._layout, source._offset
    stretched = broadcast_axes(view_layout)
    if stretched:
        # The engine aggregated the cotangent of a broadcast view (equal along its stride-0 axes): one
        # value per storage slot is written, an array of the source's size rather than the view's.
        values = values[tuple(slice(0, 1) if a in stretched else slice(None) for a in range(values.ndim))]
        view_layout = _unstretched(view_layout)
    lo = min(s_offset, view_offset)
    hi = max(s_offset + s_layout.cosize, view_offset + view_layout.cosize)
    buffer = carrier.fresh(hi - lo)
    buffer.scatter_rev(view_layout, view_offset - lo, values)
    if s_layout.is_injective():
        return Tensor._make(buffer, s_layout, s_offset - lo), True
    slots = buffer.gather_rev(s_layout, s_offset - lo)
    rev_shape = s_layout.rev_leaf_shape
    first = None
    for axis in broadcast_axes(s_layout):
        shape = [1] * len(rev_shape)
        shape[axis] = rev_shape[axis]
        is_first = xp.reshape(xp.arange(rev_shape[axis], device=carrier.device) == 0, tuple(shape))
        first = is_first if first is None else first & is_first
    picked = slots if first is None else xp.where(first, slots, xp.zeros_like(slots))
    return wrap(xp.broadcast_to(picked, rev_shape), Layout.canonical(s_layout.shape.modes), kind), False


def _unstretched(layout: Layout) -> Layout:
    """``layout``'s leaves as flat modes, each stride-0 leaf of extent > 1 cut to extent 1."""
    shape = tuple(1 if stride == 0 else extent for extent, stride in zip(layout.leaf_shape, layout.leaf_stride))
    return Layout(shape, tuple(layout.leaf_stride))


def batched_view_cotangent(source: Tensor, view_layout: Layout, view_offset: int, gradient: Tensor) -> Tensor:
    """``view_cotangent`` for a batched cotangent: every batch index gets its own storage window."""
    if not source._layout.is_injective():
        raise BatchUnsupported("batched view backward into a broadcast source")
    carrier = source._carriers[0]
    s_layout, s_offset = source._layout, source._offset
    batch = gradient._layout.mode_sizes[0]
    lo = min(s_offset, view_offset)
    span = max(s_offset + s_layout.cosize, view_offset + view_layout.cosize) - lo
    buffer = carrier.fresh(batch * span)
    batched_view = Layout._trusted((batch, *view_layout._shape_modes), (span, *view_layout._stride_modes))
    buffer.scatter_rev(batched_view, view_offset - lo, operand(gradient, kind_of(carrier)))
    batched_source = Layout._trusted((batch, *s_layout._shape_modes), (span, *s_layout._stride_modes))
    return Tensor._make(buffer, batched_source, s_offset - lo)


_FLOAT32 = DType.Float32


class View(Primitive):
    """A view of the only input; ``saved`` is the view's offset."""

    __slots__ = ()
    composite = False  # forward computes natively, calling no other operation
    supports_batched = True
    reads_result = False
    takes_slot_sums = True
    views_input = True  # a fresh buffer seen through a view stays fresh (``operation.versions_of``)

    def forward(self, x: Tensor, *, layout: Layout, offset: int, options=None) -> Tensor:
        self.saved = offset
        carrier = (x._carrier_tuple or x._materialize())[0]  # the ``_carriers`` property, inlined
        result = Tensor._make(carrier, layout, offset)
        result._dtype = x._dtype
        if offset == 0 and layout._size == carrier._size and layout._is_compact:
            # A permutation of a dense source's whole buffer (transpose, permute, reshape):
            # both read the same storage slot for slot, so one raw cotangent serves both.
            kind = carrier._kind or kind_of(carrier)
            source = x._layout
            # ``flat_capable((x,), kind)`` inlined (the kind is the carrier's own): once per view
            if not kind.cls.keeps_shape and x._offset == 0 and x._blocks is None and source._is_compact \
                    and source._size == carrier._size:
                self.kind = kind
                self.flat = True
        return result

    def backward_flat(self, g: Any, request: Request = EVERY) -> tuple[tuple, tuple]:
        # The view's cotangent in storage order is the source's: handed on as it is, owned if it was.
        return (g,), (request.owned,)

    def pullback(self, gradient: Tensor, request: Request = EVERY) -> tuple[tuple, tuple]:
        source, layout, offset = self._inputs[0], self._result_layout, self.saved
        if gradient.__class__ is Unplaced:  # the sums over each slot of a broadcast result (``takes_slot_sums``)
            return slots_cotangent(source, layout, offset, gradient.values)[:1], (False,)
        if gradient._layout.rank != layout.rank:
            return (batched_view_cotangent(source, layout, offset, gradient),), (False,)
        if request.defer:
            patch = _patch(source, layout, offset, gradient)
            if patch is not None:
                return (patch,), (False,)
        value, owned = view_cotangent(source, layout, offset, gradient, request.owned)
        return (value,), (owned,)


def _patch(source: Tensor, layout: Layout, offset: int, gradient: Tensor) -> Patch | None:
    """The view's cotangent as a ``Patch`` of ``source``'s, where the engine can add it in place.

    Only for a part of a compact source's window (every slot there is the
    source's, so no hole is written) on a carrier written in place; a view of
    the whole window keeps ``view_cotangent``'s copy-free path.
    """
    s_layout, s_offset = source._layout, source._offset
    if layout.size >= s_layout.size or offset < s_offset or offset + layout.cosize > s_offset + s_layout.cosize \
            or not s_layout.is_compact() or not layout.is_injective():
        return None
    carrier = source._carriers[0]
    if carrier.immutable_arrays:
        return None
    return Patch(layout, offset - s_offset, operand(gradient, kind_of(carrier)))


def _make_view(x: Any, layout: Layout, offset: int, name: str) -> Tensor:
    if not isinstance(x, Tensor):
        raise not_a_tensor(name, x)
    if len(x._carrier_tuple or x._materialize()) != 1:  # the ``_carriers`` property, inlined
        if x._blocks is None:
            raise NotImplementedError(f"{name} of a compound Tensor is not supported")
        x = copy(x)
    if x._dtype is _FLOAT32 and _state.enabled:
        # What ``Operation.__call__`` decides for a view of a Float32 Tensor in grad mode, known here:
        # a new node, a new Float32 result, a differentiable input that left no Float32 path.
        node = View()
        return record(node, (x,), node.forward(x, layout=layout, offset=offset), False)
    return View()(x, layout=layout, offset=offset)


# ----- indexing ------------------------------------------------------------------------------------

def _index(value: Any, extent: int, mode: int) -> int:
    index = operator.index(value)
    if not -extent <= index < extent:
        raise IndexError(f"index {index} is out of range for mode {mode} of extent {extent}")
    return index % extent


def _nested_offset(index: int, shape: tuple, stride: tuple) -> int:
    """Offset of a colexicographic index inside a nested mode."""
    offset = 0
    for extent, step in zip(leaves_of(shape), leaves_of(stride)):
        offset += (index % extent) * step
        index //= extent
    return offset


def _single_leaf(shape: tuple, stride: tuple) -> tuple[int, int] | None:
    """A nested mode as one (extent, stride) leaf, when its leaves are contiguous in colex order."""
    pairs = [(e, s) for e, s in zip(leaves_of(shape), leaves_of(stride)) if e != 1]
    if not pairs:
        return 1, 0
    extent, step = pairs[0]
    for e, s in pairs[1:]:
        if s != step * extent:
            return None
        extent *= e
    return extent, step


def _expand_key(key: Any, rank: int) -> tuple:
    """``key`` as a tuple with ``...`` spelled out: one int or slice per top-level mode, ``None``s kept."""
    if not isinstance(key, tuple):
        key = (key,)
    ellipses = [i for i, k in enumerate(key) if k is Ellipsis]
    if len(ellipses) > 1:
        raise IndexError(f"an index can only have a single ellipsis (...), got {key!r}")
    used = sum(1 for k in key if k is not None and k is not Ellipsis)
    if used > rank:
        raise IndexError(f"too many indices: {used} given for a Tensor with {rank} top-level modes")
    fill = (slice(None),) * (rank - used)
    if ellipses:
        i = ellipses[0]
        return key[:i] + fill + key[i + 1:]
    return key + fill


def index_layout(layout: Layout, offset: int, key: Any, *, scalar_rank: int = 1) -> tuple[Layout, int]:
    """Layout and offset of ``tensor[key]`` for a basic key, in one pass.

    ``key`` holds at most one int or slice (step > 0) per top-level mode, one
    ``...`` standing for as many full slices as the other indices leave, and
    ``None``s, each of which inserts an extent-1 mode. An int drops its mode
    (an int into a nested mode is decomposed colexicographically); a slice of
    a nested mode needs its leaves to be one contiguous colexicographic run
    (else ``NotAView``). A key that drops every mode gives rank ``scalar_rank``
    (1: ``(1):(1)``, the layout-native form; 0: the Array API's 0-d).
    """
    rank = layout.rank
    key = _expand_key(key, rank)
    base = offset
    shape_out: list = []
    stride_out: list = []
    inserted: list[int] = []
    sizes, shapes, strides = layout.mode_sizes, layout._shape_modes, layout._stride_modes
    shape: Any  # an int or a nested tuple (IntTuple), told apart below
    stride: Any
    mode = 0
    for k in key:
        if k is None:
            inserted.append(len(shape_out))
            shape_out.append(1)
            stride_out.append(0)
            continue
        shape, stride, extent = shapes[mode], strides[mode], sizes[mode]
        if isinstance(k, slice):
            start, stop, step = k.indices(extent)
            if k.step is not None and k.step <= 0:
                raise ValueError(f"slice step must be > 0 for a view, got {k.step} for mode {mode}")
            count = len(range(start, stop, step))
            if start == 0 and step == 1 and count == extent:
                shape_out.append(shape)
                stride_out.append(stride)
                mode += 1
                continue
            leaf = (shape, stride) if isinstance(shape, int) else _single_leaf(shape, stride)
            if leaf is None:
                raise NotAView(mode)
            offset += start * leaf[1] if count else 0
            shape_out.append(count)
            stride_out.append(leaf[1] * step)
        elif isinstance(k, bool) or not hasattr(k, "__index__"):
            raise TypeError(f"indices must be ints, slices, ... or None, got {k!r} for mode {mode}")
        else:
            index = _index(k, extent, mode)
            offset += index * stride if isinstance(shape, int) else _nested_offset(index, shape, stride)
        mode += 1
    if not shape_out:
        return (Layout(Shape(1), (1,)) if scalar_rank else Layout._trusted((), ())), offset
    result = Layout(tuple(shape_out), tuple(stride_out))
    if inserted:
        result = _canonical_if_equal(result, inserted)
    # An empty result addresses nothing; an index into a mode beside an empty one may point
    # past the end of (empty) storage, so it stays where the indexed Tensor starts.
    return result, (base if result.size == 0 else offset)


def _canonical_if_equal(layout: Layout, inserted: list) -> Layout:
    """``layout`` with canonical strides on its inserted extent-1 modes when every other mode has them.

    Any stride addresses an extent-1 mode; the canonical one keeps a dense
    result on the canonical fast paths (``x[None]`` of a canonical Tensor).
    """
    canonical = Layout.canonical(layout.shape)
    mine, theirs = layout._stride_modes, canonical._stride_modes
    if all(mine[i] == theirs[i] for i in range(len(mine)) if i not in inserted):
        return canonical
    return layout


class NotAView(Exception):
    """A slice of a nested mode whose leaves do not coalesce: no single layout mode addresses it."""


def getitem(x: Tensor, key: Any, *, scalar_rank: int = 1) -> Tensor:
    """``x[key]``: one differentiable view sharing ``x``'s carrier (ints, slices, ``...``, ``None``).

    ``index_layout`` says what the key means. A slice of a nested mode whose
    leaves are not contiguous in colexicographic order has no layout; it is
    taken from a canonical copy instead (like ``reshape``), so it does not
    share ``x``'s carrier.
    """
    try:
        layout, offset = index_layout(x._layout, x._offset, key, scalar_rank=scalar_rank)
    except NotAView:
        dense = copy(x)  # in canonical storage every nested mode is one contiguous run
        layout, offset = index_layout(dense._layout, dense._offset, key, scalar_rank=scalar_rank)
        return _make_view(dense, layout, offset, "indexing")
    return _make_view(x, layout, offset, "indexing")


def slices(x: Tensor, *, scalar_rank: int = 1) -> tuple[Tensor, ...]:
    """``x[0], x[1], ...`` along the first top-level mode, as views; the layout is worked out once."""
    if not isinstance(x, Tensor):
        raise not_a_tensor("slices", x)
    if x._layout.rank == 0:
        raise IndexError("slices needs a Tensor of at least one mode, got a 0-d Tensor")
    if len(x._carrier_tuple or x._materialize()) != 1:
        return tuple(getitem(x, i, scalar_rank=scalar_rank) for i in range(x._layout.mode_sizes[0]))
    layout, offset = index_layout(x._layout, x._offset, 0, scalar_rank=scalar_rank)
    shape, stride = x._layout._shape_modes[0], x._layout._stride_modes[0]
    if isinstance(shape, int) and isinstance(stride, int):
        starts = [offset + i * stride for i in range(shape)]
    else:  # a nested mode: its stride is congruent with its shape
        assert isinstance(shape, tuple)
        assert isinstance(stride, tuple)
        starts = [offset + _nested_offset(i, shape, stride) for i in range(x._layout.mode_sizes[0])]
    return tuple(View()(x, layout=layout, offset=start) for start in starts)


def setitem(x: Tensor, key: Any, value: Any, *, scalar_rank: int = 1) -> None:
    """``x[key] = value``: write through to ``x``'s carrier (one version bump)."""
    with no_grad():
        try:
            layout, offset = index_layout(x._layout, x._offset, key, scalar_rank=scalar_rank)
        except NotAView:
            # No view addresses the slice: edit a canonical copy, then write all of it back.
            dense = copy(x)
            write(getitem(dense, key, scalar_rank=scalar_rank), value, False)
            write(x, dense, False)
            return
        target = _make_view(x, layout, offset, "indexing")
    write(target, value, False)


# ----- layout views ---------------------------------------------------------------------------------

def view(x: Tensor, layout: Layout) -> Tensor:
    """View ``x``'s storage, from its offset, through an arbitrary ``layout``."""
    if not isinstance(layout, Layout):
        raise TypeError(f"view expects a Layout, got {type(layout).__name__}: {layout!r}")
    size = x._carriers[0].size
    if layout.size and x._offset + layout.cosize > size:
        raise ValueError(f"layout {layout} needs offset + cosize = {x._offset} + {layout.cosize} elements "
                         f"but the storage holds {size}")
    return _make_view(x, layout, x._offset, "view")


def permute(x: Tensor, order: Sequence[int]) -> Tensor:
    """Reorder the top-level modes: mode i of the result is mode ``order[i]`` of ``x``."""
    rank = x._layout.rank
    try:
        order = tuple(operator.index(i) % rank if -rank <= operator.index(i) < rank else -1 for i in order)
    except TypeError:
        raise TypeError(f"permute expects a sequence of ints, got {order!r}") from None
    if sorted(order) != list(range(rank)):
        raise ValueError(f"permute order {order!r} is not a permutation of the {rank} top-level modes")
    return _make_view(x, _permuted(x._layout, order), x._offset, "permute")


@lru_cache(maxsize=1024)
def _permuted(layout: Layout, order: tuple) -> Layout:
    shape, stride = layout._shape_modes, layout._stride_modes
    return Layout._trusted(tuple(shape[i] for i in order), tuple(stride[i] for i in order))


def transpose(x: Tensor, order: Sequence[int] | None = None) -> Tensor:
    """Reverse the top-level modes (NumPy's default), or permute them by ``order``."""
    if order is None and isinstance(x, Tensor):
        # The reversal is a permutation of any rank: ``permute``'s checks could not fail (``.T`` per layer).
        return _make_view(x, x._layout._reversed, x._offset, "permute")
    return permute(x, tuple(range(x._layout.rank - 1, -1, -1)) if order is None else order)


def _target_modes(shape: Any) -> tuple:
    return shape.modes if isinstance(shape, Shape) else Shape(shape).modes


def _zeros_like_modes(mode: Any) -> Any:
    return 0 if isinstance(mode, int) else tuple(_zeros_like_modes(m) for m in mode)


def broadcast_to(x: Tensor, shape: Any) -> Tensor:
    """Stretch ``x`` to ``shape`` with stride-0 modes (Array API rule, right-aligned)."""
    target = _target_modes(shape)
    source = x._layout.shape.modes
    if len(source) > len(target) or broadcast_modes(source, target) != target:
        raise ValueError(f"cannot broadcast shape {x.shape} to {Shape(target)}")
    pad = len(target) - len(source)
    strides = []
    for i, mode in enumerate(target):
        mine = source[i - pad] if i >= pad else None
        if mine is None or (mine == 1 and mode != 1):
            strides.append(_zeros_like_modes(mode))
        else:
            strides.append(x._layout.stride.modes[i - pad])
    return _make_view(x, Layout(target, tuple(strides)), x._offset, "broadcast_to")


def _reshape_strides(layout: Layout, new_leaves: tuple) -> list[int] | None:
    """Strides that view ``layout``'s colexicographic sequence with ``new_leaves``, or None."""
    old = [[e, s] for e, s in zip(layout.leaf_shape, layout.leaf_stride) if e != 1]
    strides: list[int] = []
    position = 0
    for extent in new_leaves:
        if extent == 1:
            strides.append(0)
            continue
        if position >= len(old):
            return None
        remaining, step = old[position]
        while remaining < extent:
            # Merge with the next old leaf when it continues this one contiguously.
            if position + 1 >= len(old) or extent % remaining or old[position + 1][1] != step * remaining:
                return None
            position += 1
            remaining *= old[position][0]
            old[position] = [remaining, step]
        if remaining % extent:
            return None
        strides.append(step)
        if remaining == extent:
            position += 1
        else:
            old[position] = [remaining // extent, step * extent]
    return strides


def _restructure(modes: tuple, flat: list[int]) -> tuple:
    out = []
    it = iter(flat)

    def build(mode):
        return next(it) if isinstance(mode, int) else tuple(build(m) for m in mode)

    for mode in modes:
        out.append(build(mode))
    return tuple(out)


def reshape(x: Tensor, shape: Any) -> Tensor:
    """Same values in colexicographic order (first mode fastest) under a new shape.

    A view whenever the layout allows it; otherwise a copy into canonical
    storage followed by a view.
    """
    target = _target_modes(shape)
    canonical = Layout.canonical(target)
    if canonical.size != x._layout.size:
        raise ValueError(f"cannot reshape a Tensor of shape {x.shape} ({x._layout.size} elements) "
                         f"to {Shape(target)} ({canonical.size} elements)")
    if x._layout.is_canonical() and x._blocks is None:
        return _make_view(x, canonical, x._offset, "reshape")
    strides = _reshape_strides(x._layout, leaves_of(target)) if x._blocks is None else None
    if strides is None:
        return _make_view(copy(x), canonical, 0, "reshape")
    return _make_view(x, Layout(target, _restructure(target, strides)), x._offset, "reshape")


def from_dlpack(x: Any) -> Tensor:
    """A Tensor over any object exporting ``__dlpack__`` (no copy where the producer allows).

    A StrideWeave Tensor stays inside StrideWeave: the result views the same
    storage and keeps the history (a differentiable view), so nothing is cut.
    """
    if isinstance(x, Tensor):
        if x._blocks is not None or len(x._carriers) != 1:
            return x._alias()
        return view(x, x._layout)
    try:
        carrier_for_array(x)
    except TypeError:
        return tensor(np.from_dlpack(x))
    return tensor(x)
