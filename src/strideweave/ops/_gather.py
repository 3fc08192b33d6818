"""Gathers and their scatter-adds on natural arrays: the shared pieces of take, take_along_axis, repeat.

Every gather's VJP sends each cotangent element back to the one position it
was read from, adding where several were read from one position. That is a
segment sum (``carriers.segment_sum``: the library's own scatter-add, or a
sort-based one from the standard's functions), so a backward costs as the
forward does: the index arrays here are as long as the gathered values, and
nothing is as large as (values gathered) x (positions read from).
"""

from __future__ import annotations

import math

from ..carriers import segment_sum

__all__ = ["along_add", "index_add", "repeat_positions", "take_along"]


def _device(array):
    return getattr(array, "device", None)


def _ids(xp, indices, n, total):
    """``indices`` into an extent ``n`` counted from 0 (negative ones from the end), in an integer
    dtype that holds every combined position below ``total``."""
    dtype = xp.int32 if total < 2**31 else xp.int64
    if indices.dtype != dtype:
        indices = xp.astype(indices, dtype)
    return xp.where(indices < 0, indices + n, indices)


def index_add(xp, g, indices, n, axis):
    """The VJP of ``take(x, indices, axis=axis)`` with ``x.shape[axis] == n``: slice ``j`` of ``g``
    along ``axis`` added at position ``indices[j]`` of an array like ``g`` but ``n`` long there."""
    moved = xp.moveaxis(g, axis, 0) if axis else g
    rest = tuple(moved.shape[1:])
    inner = math.prod(rest)
    ids = _ids(xp, indices, n, n * inner)
    if inner != 1:
        # Element (j, r) of the moved cotangent goes to flat position indices[j] * inner + r.
        within = xp.arange(inner, dtype=ids.dtype, device=_device(ids))
        ids = xp.reshape(ids[:, None] * inner + within[None, :], (-1,))
    out = xp.reshape(segment_sum(xp, xp.reshape(moved, (-1,)), ids, n * inner), (n, *rest))
    return xp.moveaxis(out, 0, axis) if axis else out


def _rows(xp, indices, n, axis):
    """``indices`` (axis moved last) as flat positions in the rows of an array ``n`` long there, and
    the shape of the leading axes."""
    moved = xp.moveaxis(indices, axis, -1)
    batch = tuple(moved.shape[:-1])
    rows = math.prod(batch)
    ids = _ids(xp, moved, n, rows * n)
    starts = xp.arange(rows, dtype=ids.dtype, device=_device(ids)) * n
    return xp.reshape(xp.reshape(ids, (rows, moved.shape[-1])) + starts[:, None], (-1,)), batch


def along_add(xp, g, indices, n, axis):
    """The VJP of ``take_along_axis(x, indices, axis=axis)`` with ``x.shape[axis] == n``, before any
    broadcast axes are summed: ``g`` (the result's shape) added along ``axis`` at ``indices``."""
    if tuple(indices.shape) != tuple(g.shape):
        indices = xp.broadcast_to(indices, tuple(g.shape))
    ids, batch = _rows(xp, indices, n, axis)
    flat = xp.reshape(xp.moveaxis(g, axis, -1), (-1,))
    out = xp.reshape(segment_sum(xp, flat, ids, math.prod(batch) * n), (*batch, n))
    return xp.moveaxis(out, -1, axis)


def take_along(xp, a, indices, axis):
    """``xp.take_along_axis``, or on a namespace without it (dask.array) one ``take`` from the flattened
    array at each index's row-major position."""
    if hasattr(xp, "take_along_axis"):
        return xp.take_along_axis(a, indices, axis=axis)
    shape = [p if q == 1 else q for p, q in zip(a.shape, indices.shape)]  # the other axes broadcast
    n, shape[axis] = a.shape[axis], indices.shape[axis]
    indices = xp.broadcast_to(indices, tuple(shape))
    shape[axis] = n
    a = xp.broadcast_to(a, tuple(shape))
    ids, batch = _rows(xp, indices, n, axis)
    picked = xp.take(xp.reshape(xp.moveaxis(a, axis, -1), (-1,)), ids, axis=0)
    return xp.moveaxis(xp.reshape(picked, (*batch, indices.shape[axis])), -1, axis)


def repeat_positions(xp, counts, n):
    """``repeat(arange(n), counts)``: the source position of each slice ``repeat`` puts out."""
    try:
        return xp.repeat(xp.arange(n, device=_device(counts)), counts, axis=0)
    except NotImplementedError:  # dask.array repeats by one integer only: output j comes from the
        ends = xp.cumulative_sum(counts)  # first position whose running count passes j
        total = int(ends[-1]) if n else 0
        return xp.searchsorted(ends, xp.arange(total, dtype=ends.dtype, device=_device(counts)), side="right")
