"""Pure index arithmetic shared by every carrier (no backend, only numpy).

Everything here works on *rev* leaf tuples: ``rs`` (extents) and ``rt``
(strides) are a layout's ``leaf_shape`` / ``leaf_stride`` reversed, so axis
``k`` of a rev array is leaf ``n - 1 - k`` and canonical storage is plain C
order.  Results are plain tuples or numpy arrays; carriers turn them into
native objects and cache those.  ``place_through`` alone builds native arrays,
through whichever array module its caller passes.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, NamedTuple

import numpy as np

_INT32_MAX = 2**31 - 1


class ViewPlan(NamedTuple):
    """How to read a layout with Array API view operations only.

    Applied as ``buf[start:stop]`` -> ``reshape(dims)`` -> ``[index]`` ->
    ``permute_dims(perm)`` -> ``reshape(shape1)`` -> ``broadcast_to(rs)``;
    a ``None`` field means "skip this step".
    """

    start: int
    stop: int
    dims: tuple[int, ...] | None
    # The field name shadows tuple.index; it reads as "the indexing key".
    index: tuple[Any, ...] | None  # type: ignore[assignment]
    perm: tuple[int, ...] | None
    shape1: tuple[int, ...] | None
    bcast: bool


def inverse_of(plan: ViewPlan) -> tuple[tuple[int, ...] | None, tuple[int, ...], tuple[tuple[int, int], ...]]:
    """How to undo a plan's ``[index]`` and ``permute_dims`` steps when placing values.

    Returns the inverse permutation (or None), the axes an integer index
    dropped (re-insert them in order) and the zero padding per axis of
    ``plan.dims`` that restores what the index cut away.
    """
    inverse = None
    if plan.perm is not None:
        positions = [0] * len(plan.perm)
        for position, axis in enumerate(plan.perm):
            positions[axis] = position
        inverse = tuple(positions)
    dropped: list[int] = []
    widths: list[tuple[int, int]] = []
    if plan.index is not None and plan.dims is not None:
        for axis, (extent, index) in enumerate(zip(plan.dims, plan.index)):
            if isinstance(index, slice):
                start, stop, _ = index.indices(extent)
                widths.append((start, extent - stop))
            else:
                dropped.append(axis)
                widths.append((index, extent - 1 - index))
    return inverse, tuple(dropped), tuple(widths)


def place_plan(rs: tuple, rt: tuple, injective: bool) -> ViewPlan | None:
    """The read recipe whose inverse places values at ``(rs, rt)`` from offset 0, or None.

    None when the layout is not injective or empty (``injective`` false) or
    has no reshape/slice/permute recipe without broadcasting: such layouts are
    placed by a scatter instead.
    """
    if not injective:
        return None
    room = 1 + sum(e * s for e, s in zip(rs, rt))  # whole rows; the tail is cut off by ``place_through``
    plan = view_plan(rs, rt, 0, room)
    return None if plan is None or plan.bcast else plan


def place_through(lib, values, plan: ViewPlan, rs: tuple, cosize: int, native):
    """The inverse of ``plan``'s read: a 1-D buffer of ``cosize`` holding ``values`` (holes zero).

    Built from dense operations of ``lib``, a module with ``asarray``,
    ``broadcast_to``, ``reshape``, ``transpose``, ``expand_dims`` and ``pad``
    (``jax.numpy``, ``dask.array``): reshape, inverse permute, zero padding.
    ``values`` broadcasts to the rev leaf shape ``rs``.
    """
    a = lib.broadcast_to(lib.asarray(values, dtype=native), rs)
    inverse, dropped, widths = inverse_of(plan)
    if plan.shape1 is not None:
        a = lib.reshape(a, tuple(extent for extent in rs if extent != 1))
    if inverse is not None:
        a = lib.transpose(a, inverse)
    for axis in dropped:
        a = lib.expand_dims(a, axis)
    if any(w != (0, 0) for w in widths):
        a = lib.pad(a, widths)
    a = lib.reshape(a, (-1,))
    if plan.start or cosize > plan.stop:
        a = lib.pad(a, (plan.start, max(0, cosize - plan.stop)))
    return a[:cosize] if plan.stop > cosize else a  # only zero padding lies past the last addressed element


@lru_cache(maxsize=4096)
def view_plan(rs: tuple, rt: tuple, offset: int, n: int) -> ViewPlan | None:
    """A reshape + slice + permute + broadcast recipe, or ``None`` if none exists.

    Extent-1 leaves are dropped (re-inserted by a reshape), stride-0 leaves are
    dropped (restored by ``broadcast_to``), the rest are sorted by decreasing
    stride.  They form a view of a C-ordered reshape of a window of the buffer
    exactly when each stride divides the next larger one and each leaf fits
    inside the next larger stride (``e_j * s_j <= s_{j-1}``), which also rules
    out overlap.  The window must lie inside the ``n``-element buffer; when the
    natural window (starting at ``offset``) runs past the end, it is shifted
    left so that the data sits at the end of each row, provided the mixed-radix
    digits of the shift keep every slice in bounds.  Size-0 layouts are the
    caller's job.
    """
    nd = len(rs)
    keep = [ax for ax in range(nd) if rs[ax] != 1 and rt[ax] != 0]
    bcast = any(rs[ax] != 1 and rt[ax] == 0 for ax in range(nd))
    order = sorted(keep, key=lambda ax: -rt[ax])
    strides = [rt[ax] for ax in order]
    exts = [rs[ax] for ax in order]
    m = len(order)
    shape1 = tuple(rs[ax] if (rs[ax] != 1 and rt[ax] != 0) else 1 for ax in range(nd))
    if m == 0:
        # every leaf is extent-1 or stride-0: one element, reshaped and broadcast
        return ViewPlan(offset, offset + 1, None, None, None,
                        shape1 if shape1 != (1,) else None, bcast)
    for j in range(m - 1):  # divisibility chain and no overlap
        if strides[j] % strides[j + 1] or exts[j + 1] * strides[j + 1] > strides[j]:
            return None
    length = exts[0] * strides[0]
    if offset + length <= n:
        start = offset
    elif n >= length:
        start = n - length
    else:
        return None
    delta = offset - start
    dims = [exts[0]] + [strides[j - 1] // strides[j] for j in range(1, m)]
    index = [slice(None)]
    for j in range(1, m):
        c = (delta // strides[j]) % dims[j]
        if c + exts[j] > dims[j]:
            return None
        index.append(slice(c, c + exts[j]) if (c or exts[j] != dims[j]) else slice(None))
    if strides[-1] > 1:
        dims.append(strides[-1])
        index.append(delta % strides[-1])
    elif delta % strides[-1]:
        return None
    if len(dims) == 1 and start == offset:
        dims_t, index_t = None, None  # buf[start:stop] already is the array
    else:
        dims_t = tuple(dims)
        index_t = tuple(index) if any(i != slice(None) for i in index) else None
    # result axes follow `order`; the rev array wants them in axis order
    perm: tuple[int, ...] | None = tuple(order.index(ax) for ax in sorted(keep))
    if perm == tuple(range(m)):
        perm = None
    cur_shape = tuple(rs[ax] for ax in sorted(keep))
    return ViewPlan(start, start + length, dims_t, index_t, perm,
                    shape1 if shape1 != cur_shape else None, bcast)


def flat_index(rs: tuple, rt: tuple, offset: int, small: bool = False) -> np.ndarray:
    """Buffer offsets of a rev array's elements, flattened in C order.

    ``small=True`` returns int32 when every offset fits (JAX prefers it).
    """
    idx = np.full(rs, offset, dtype=np.int64)
    nd = len(rs)
    for ax in range(nd):
        if rs[ax] > 1 and rt[ax]:
            shape = [1] * nd
            shape[ax] = rs[ax]
            idx += (np.arange(rs[ax], dtype=np.int64) * rt[ax]).reshape(shape)
    idx = idx.reshape(-1)
    if small and (idx.size == 0 or int(idx.max()) <= _INT32_MAX):
        idx = idx.astype(np.int32)
    return idx


def cosize_of(rs: tuple, rt: tuple) -> int:
    """Largest offset + 1 of leaves ``rs:rt`` (0 when the size is 0)."""
    if 0 in rs:
        return 0
    return 1 + sum((e - 1) * s for e, s in zip(rs, rt))


def write_maps(rs: tuple, rt: tuple, offset: int):
    """Gather maps for writing through pure Array API ops (no index setitem).

    Returns ``(lo, hi, last, mask, every, k)`` over the buffer window
    ``[lo, hi)``: ``last[p]`` is the position (in the flattened rev values,
    C order) of the last value landing on window slot ``p``, ``mask[p]``
    whether any lands there, and ``every`` (shape ``(hi - lo) * k``) lists all
    positions landing on each slot, padded with the sentinel ``size`` (which
    points at an appended zero).  ``k`` is the largest multiplicity.
    """
    size = int(np.prod(rs, dtype=np.int64))
    lo, hi = offset, offset + cosize_of(rs, rt)
    pos = flat_index(rs, rt, 0)
    w = hi - lo
    src = np.arange(size, dtype=np.int64)
    last = np.full(w, -1, dtype=np.int64)
    np.maximum.at(last, pos, src)
    mask = last >= 0
    last[~mask] = size
    counts = np.bincount(pos, minlength=w)
    k = int(counts.max()) if w else 1
    if k <= 1:
        return lo, hi, last, mask, last, 1
    order = np.argsort(pos, kind="stable")
    sorted_pos = pos[order]
    first = np.searchsorted(sorted_pos, sorted_pos, side="left")
    rank = np.arange(size, dtype=np.int64) - first
    every = np.full((w, k), size, dtype=np.int64)
    every[sorted_pos, rank] = order
    return lo, hi, last, mask, every.reshape(-1), k


def broadcast_ok(shape: tuple, target: tuple) -> bool:
    """Whether an array of ``shape`` broadcasts to exactly ``target``."""
    if len(shape) > len(target):
        return False
    for a, b in zip(reversed(shape), reversed(target)):
        if a != b and a != 1:
            return False
    return True
