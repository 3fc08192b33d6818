"""Hypothesis strategies and brute-force references for layout tests."""

from __future__ import annotations

import itertools

from hypothesis import strategies as st

from strideweave.layout import Layout


def _mode(extents, depth):
    if depth == 0:
        return extents
    return st.one_of(extents, st.lists(_mode(extents, depth - 1), min_size=1, max_size=3).map(tuple))


def shape_modes(min_extent=0, max_extent=4, max_depth=2, max_rank=3):
    """Top-level tuples of modes, nested up to ``max_depth`` below the top."""
    return st.lists(
        _mode(st.integers(min_extent, max_extent), max_depth - 1), min_size=1, max_size=max_rank
    ).map(tuple)


def _strides_like(draw, mode, max_stride):
    if type(mode) is int:
        return draw(st.integers(0, max_stride))
    return tuple(_strides_like(draw, m, max_stride) for m in mode)


@st.composite
def layouts(draw, min_extent=0, max_extent=4, max_stride=6, max_depth=2, max_rank=3, max_leaves=6):
    shape = draw(shape_modes(min_extent, max_extent, max_depth, max_rank))
    layout = Layout(shape, _strides_like(draw, shape, max_stride))
    if len(layout.leaf_shape) > max_leaves:
        layout = Layout(layout.leaf_shape[:max_leaves], layout.leaf_stride[:max_leaves])
    return layout


def brute_offsets(layout):
    """Offsets of every linear index, from leaves only (first leaf fastest)."""
    ranges = [range(s) for s in reversed(layout.leaf_shape)]
    strides = tuple(reversed(layout.leaf_stride))
    # itertools.product varies the last factor fastest: reversed leaves give colex.
    return [sum(c * d for c, d in zip(crd, strides)) for crd in itertools.product(*ranges)]


def brute_aliasing(layout):
    offs = brute_offsets(layout)
    if len(set(offs)) == len(offs):
        return "injective"
    kept = [(s, d) for s, d in zip(layout.leaf_shape, layout.leaf_stride) if d != 0]
    if kept:
        rest = Layout(tuple(s for s, _ in kept), tuple(d for _, d in kept))
        rest_offs = brute_offsets(rest)
        if len(set(rest_offs)) == len(rest_offs):
            return "broadcast"
        return "overlapping"
    return "broadcast"
