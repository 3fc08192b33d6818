"""Layout algebra: each operation's defining property on every coordinate."""

from __future__ import annotations

import itertools

import pytest
from _layout_strategies import brute_aliasing, brute_offsets, layouts
from hypothesis import given, settings
from hypothesis import strategies as st

from strideweave.layout import Layout
from strideweave.layout.algebra import coalesce, complement, composition, flatten, logical_divide


def extended(a):
    """``a`` as CuTe extends it: coalesced, with the last mode unbounded."""
    c = a.coalesce()
    shapes, strides = c.leaf_shape, c.leaf_stride

    def f(i):
        off = 0
        for s, d in zip(shapes[:-1], strides[:-1]):
            off += (i % s) * d
            i //= s
        return off + i * strides[-1]

    return f


# ----- flatten / coalesce ------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(layouts())
def test_flatten_preserves_function(layout):
    flat = layout.flatten()
    assert flat == flatten(layout)
    assert flat.depth == 1 and flat.rank == len(layout.leaf_shape)
    assert [flat(i) for i in range(flat.size)] == [layout(i) for i in range(layout.size)]


@settings(max_examples=200, deadline=None)
@given(layouts())
def test_coalesce_preserves_function(layout):
    c = layout.coalesce()
    assert c == coalesce(layout)
    assert c.size == layout.size and c.depth == 1
    assert [c(i) for i in range(c.size)] == [layout(i) for i in range(layout.size)]
    assert c.coalesce() == c  # nothing left to merge
    if c.rank > 1:
        assert 1 not in c.leaf_shape
        for (s0, d0), d1 in zip(zip(c.leaf_shape, c.leaf_stride), c.leaf_stride[1:]):
            assert s0 * d0 != d1 or s0 == 0


@pytest.mark.parametrize(
    ("layout", "expected"),
    [
        (Layout((2, (1, 6)), (1, (6, 2))), Layout((12,), (1,))),
        (Layout((4, 2), (2, 1)), Layout((4, 2), (2, 1))),
        (Layout((1, 1), (3, 5)), Layout((1,), (0,))),
        (Layout((2, 1, 3), (0, 9, 0)), Layout((6,), (0,))),
        (Layout(((2, 2), 3), ((3, 6), 12)), Layout((12,), (3,))),
    ],
)
def test_coalesce_examples(layout, expected):
    assert layout.coalesce() == expected


# ----- composition ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        # Examples from the CuTe layout-algebra documentation.
        (Layout((6, 2), (8, 2)), Layout((4, 3), (3, 1)), Layout(((2, 2), 3), ((24, 2), 8))),
        (Layout(20, 2), Layout((5, 4), (4, 1)), Layout((5, 4), (8, 2))),
        (Layout((10, 2), (16, 4)), Layout((5, 4), (1, 5)), Layout((5, (2, 2)), (16, (80, 4)))),
        (Layout((4, 3), (1, 10)), 4, Layout((4,), (1,))),
        (Layout((4, 3), (1, 10)), Layout(6, 2), Layout([[2, 3]], [[2, 10]])),
        (Layout((4, 3), (3, 5)), Layout(3, 0), Layout(3, 0)),
    ],
)
def test_composition_examples(a, b, expected):
    assert a.composition(b) == expected == composition(a, b)


def test_composition_by_mode_tiler():
    a = Layout((12, (4, 8)), (59, (13, 1)))
    r = a.composition((Layout(3, 4), Layout(8, 2)))
    assert r == Layout((3, (2, 4)), (236, (26, 1)))
    assert a.composition((None, Layout(8, 2)))[0] == a[0]
    assert a.composition((3,)) == Layout((3, (4, 8)), (59, (13, 1)))
    with pytest.raises(ValueError):
        a.composition((1, 1, 1))


@pytest.mark.parametrize(
    ("a", "b"),
    [
        (Layout((2, 3), (1, 10)), Layout(3, 1)),  # shape divisibility
        (Layout((3, 4), (1, 10)), Layout(3, 2)),  # stride divisibility
        (Layout((3, 0), (1, 3)), Layout(2, 1)),  # empty a
        # Each leaf of b alone is fine, but 1 + 2 carries out of a's first
        # mode: a(3) == 1 while a(1) + a(2) == 0 (CuTe returns (2,2):(0,0)).
        (Layout((3, 2), (0, 1)), Layout((2, 2), (1, 2))),
    ],
)
def test_composition_preconditions(a, b):
    with pytest.raises(ValueError):
        a.composition(b)


def test_composition_rejects_bad_types():
    with pytest.raises(TypeError):
        Layout(4).composition(2.0)
    with pytest.raises(TypeError):
        Layout(4).composition(True)
    with pytest.raises(ValueError):
        Layout(4).composition(-1)


def _check_composition(a, b):
    try:
        r = a.composition(b)
    except ValueError:
        return False
    f = extended(a)
    assert r.rank == b.rank and r.mode_sizes == b.mode_sizes
    for i in range(b.size):
        assert r(i) == f(b(i))
        if b(i) < a.size:
            assert r(i) == a(b(i))
    return True


def test_composition_exhaustive_small():
    # Every flat a with extents 1..4, strides 1..5 (two modes), against every
    # b = s:d with s, d small: either a ValueError or the exact function.
    ok = 0
    for sa in itertools.product(range(1, 5), repeat=2):
        for da in itertools.product(range(1, 6), repeat=2):
            a = Layout(sa, da)
            for s in range(9):
                for d in range(9):
                    ok += _check_composition(a, Layout(s, d))
    assert ok > 5000  # the property was checked, not skipped


@settings(max_examples=200, deadline=None)
@given(layouts(min_extent=1), layouts(min_extent=1, max_stride=4))
def test_composition_random(a, b):
    _check_composition(a, b)


# ----- complement ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("a", "m", "expected"),
    [
        # Examples from the CuTe layout-algebra documentation.
        (Layout(4, 1), 24, Layout(6, 4)),
        (Layout(6, 4), 24, Layout(4, 1)),
        (Layout((4, 6), (1, 4)), 24, Layout(1, 0)),
        (Layout(4, 2), 24, Layout((2, 3), (1, 8))),
        (Layout((2, 4), (1, 6)), 24, Layout(3, 2)),
        (Layout((2, 2), (1, 6)), 24, Layout((3, 2), (2, 12))),
        (Layout((4, 2), (0, 1)), 8, Layout(4, 2)),  # stride-0 leaves are filtered, as in CuTe
    ],
)
def test_complement_examples(a, m, expected):
    assert a.complement(m) == expected == complement(a, m)


def test_complement_default_and_errors():
    assert Layout(4, 2).complement() == Layout(4, 2).complement(Layout(4, 2).cosize)
    with pytest.raises(ValueError):
        Layout((4, 2), (1, 1)).complement(8)  # overlapping
    with pytest.raises(ValueError):
        Layout((2, 2), (3, 2)).complement(8)  # injective, but the gaps are no layout
    with pytest.raises(ValueError):
        Layout((3, 0)).complement(8)
    with pytest.raises(ValueError):
        Layout(4).complement(-1)
    with pytest.raises(TypeError):
        Layout(4).complement(2.5)


@settings(max_examples=200, deadline=None)
@given(layouts(min_extent=1), st.integers(1, 60))
def test_complement_properties(a, m):
    try:
        r = a.complement(m)
    except ValueError:
        # Only layouts whose sorted leaves are not stride-divisible fail; an
        # overlapping layout always does.
        return
    assert a.aliasing() != "overlapping"
    assert brute_aliasing(r) == "injective"
    a_offs, r_offs = set(brute_offsets(a)), set(brute_offsets(r))
    assert a_offs & r_offs == {0}
    # (A, R) with A's stride-0 leaves dropped is a bijection onto [0, n), n >= m.
    kept = [(s, d) for s, d in zip(a.leaf_shape, a.leaf_stride) if d != 0]
    both = Layout(tuple(s for s, _ in kept) + r.leaf_shape, tuple(d for _, d in kept) + r.leaf_stride)
    assert sorted(brute_offsets(both)) == list(range(both.size))
    assert both.size >= m
    assert list(r.leaf_stride) == sorted(r.leaf_stride)


def test_complement_fails_for_overlapping():
    n = 0
    for shape in itertools.product(range(1, 4), repeat=2):
        for stride in itertools.product(range(5), repeat=2):
            a = Layout(shape, stride)
            if a.aliasing() == "overlapping":
                n += 1
                with pytest.raises(ValueError):
                    a.complement(16)
    assert n > 0


# ----- logical_divide ----------------------------------------------------------------------


def test_logical_divide_examples():
    # Examples from the CuTe layout-algebra documentation.
    a = Layout((4, 2, 3), (2, 1, 8))
    assert a.logical_divide(Layout(4, 2)) == Layout(((2, 2), (2, 3)), ((4, 1), (2, 8)))
    b = Layout((9, (4, 8)), (59, (13, 1)))
    tiler = (Layout(3, 3), Layout((2, 4), (1, 8)))
    assert b.logical_divide(tiler) == Layout(((3, 3), ((2, 4), (2, 2))), ((177, 59), ((13, 2), (26, 1))))
    assert logical_divide(Layout(8), 2) == Layout((2, 4), (1, 2))
    with pytest.raises(ValueError):
        Layout(4).logical_divide((2, 2))


@settings(max_examples=200, deadline=None)
@given(layouts(min_extent=1), layouts(min_extent=1, max_stride=4, max_rank=2))
def test_logical_divide_is_composition_with_complement(a, t):
    try:
        r = a.logical_divide(t)
    except ValueError:
        return
    c = t.complement(a.size)
    tile = (t.shape.modes[0], t.stride.modes[0]) if t.rank == 1 else (t.shape.modes, t.stride.modes)
    rest = (c.shape.modes[0], c.stride.modes[0]) if c.rank == 1 else (c.shape.modes, c.stride.modes)
    b = Layout((tile[0], rest[0]), (tile[1], rest[1]))
    assert r == a.composition(b)
    assert r.rank == 2 and r.mode_sizes == (t.size, c.size)
    f = extended(a)
    assert [r(i) for i in range(r.size)] == [f(b(i)) for i in range(b.size)]
    if r.size == a.size:
        # (tile, rest) is a bijection onto [0, size(a)): a permutation of a.
        assert sorted(brute_offsets(r)) == sorted(brute_offsets(a))
