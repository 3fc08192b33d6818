"""Shape, Stride and Layout: validation, canonical layouts, evaluation, aliasing."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from _layout_strategies import brute_aliasing, brute_offsets, layouts, shape_modes
from hypothesis import given, settings

from strideweave.layout import Layout, Shape, Stride
from strideweave.layout import aliasing as aliasing_module
from strideweave.layout.int_tuple import crd2idx, depth, idx2crd, leaves, product

# ----- Shape / Stride validation ----------------------------------------------------


@pytest.mark.parametrize("cls", [Shape, Stride])
@pytest.mark.parametrize(
    ("bad", "exc", "fragment"),
    [
        (True, TypeError, "True"),
        ([2, False], TypeError, "False"),
        (2.0, TypeError, "2.0"),
        ([2, [3.5]], TypeError, "3.5"),
        ("4", TypeError, "'4'"),
        ({4}, TypeError, "{4}"),
        (None, TypeError, "None"),
        (np.array([1, 2]), TypeError, "ndarray"),
        (np.bool_(True), TypeError, "True"),
        (-1, ValueError, "-1"),
        ([2, [3, -4]], ValueError, "-4"),
        ([2, []], ValueError, "empty"),
        ([[()]], ValueError, "empty"),
    ],
)
def test_modes_reject_bad_input(cls, bad, exc, fragment):
    with pytest.raises(exc) as info:
        cls(bad)
    assert fragment in str(info.value)
    assert cls.__name__ in str(info.value)


def test_shape_normalisation():
    assert Shape(4) == Shape([4]) == Shape((4,))
    assert Shape(4).modes == (4,)
    assert Shape([2, [4, 3]]).modes == (2, (4, 3))
    assert Shape([[1]]).modes == ((1,),)
    assert Shape(0).modes == (0,)
    assert Shape(np.int64(5)).modes == (5,)
    assert type(Shape([np.int32(2), [np.uint8(3)]]).modes[1][0]) is int
    assert Shape(Shape([2, [4, 3]])) == Shape([2, [4, 3]])
    with pytest.raises(TypeError, match="Stride"):
        Shape(Stride([1]))
    with pytest.raises(TypeError, match="Shape"):
        Stride(Shape([1]))


def test_shape_container_protocol():
    s = Shape([2, [4, 3], 5])
    assert len(s) == 3
    assert list(s) == [2, (4, 3), 5]
    assert s[1] == (4, 3) and s[-1] == 5
    with pytest.raises(IndexError):
        s[3]
    assert s.leaves == (2, 4, 3, 5)
    assert s.size == 120
    assert s.rank == 3 and s.depth == 2
    with pytest.raises(AttributeError):
        s._modes = (1,)


def test_shape_value_semantics():
    assert Shape([2, 3]) != Stride([2, 3])
    assert hash(Shape([2, 3])) == hash(Shape((2, 3)))
    assert len({Shape([2, 3]), Shape((2, 3)), Stride([2, 3])}) == 2
    assert Shape([1, 1]) != Shape([[1, 1]])
    assert str(Shape([2, [4, 3]])) == "(2,(4,3))"
    assert repr(Shape([2, [4, 3]])) == "Shape((2, (4, 3)))"
    assert repr(Stride(4)) == "Stride((4,))"
    for value in (Shape([2, [4, 3]]), Stride(4), Shape([[1]])):
        assert eval(repr(value)) == value
        assert pickle.loads(pickle.dumps(value)) == value


# ----- Layout construction ---------------------------------------------------------


def test_layout_congruence_and_types():
    with pytest.raises(ValueError, match="congruent"):
        Layout([2, 3], [1])
    with pytest.raises(ValueError, match="congruent"):
        Layout([2, [3, 4]], [1, 2])
    with pytest.raises(ValueError, match="congruent"):
        Layout([[4]], [4])
    with pytest.raises(TypeError):
        Layout(Stride([2]), [1])
    with pytest.raises(TypeError):
        Layout([2], Shape([1]))
    with pytest.raises(TypeError):
        Layout([2.5], [1])
    with pytest.raises(ValueError):
        Layout([2], [-1])
    assert Layout(Shape([4, 2]), Stride([1, 4])) == Layout((4, 2), (1, 4))
    with pytest.raises(AttributeError):
        Layout(4).size = 3


@pytest.mark.parametrize(
    ("shape", "stride"),
    [
        ((4, 2), (1, 4)),
        ((2, (4, 3)), (1, (2, 8))),
        ((4, 1, 2), (1, 4, 4)),
        ((4,), (1,)),
        (((1,),), ((1,),)),
        ((3, 0, 2), (1, 3, 0)),
        (((2, 2), (3, (1, 2))), ((1, 2), (4, (12, 12)))),
    ],
)
def test_canonical_examples(shape, stride):
    expected = Layout(Shape(shape), Stride(stride))
    assert Layout.canonical(shape) == expected
    assert Layout.canonical(Shape(shape)) == expected
    assert Layout(shape) == expected
    assert expected.is_canonical()


def test_canonical_is_cached_and_checked():
    assert Layout.canonical((2, (4, 3))) is Layout.canonical(Shape([2, [4, 3]]))
    with pytest.raises(TypeError):
        Layout.canonical(Stride([1]))
    with pytest.raises(ValueError):
        Layout.canonical([2, []])
    assert not Layout((4, 2), (2, 1)).is_canonical()


@settings(max_examples=150, deadline=None)
@given(shape_modes(min_extent=1))
def test_canonical_is_compact_and_injective(shape):
    layout = Layout.canonical(shape)
    assert layout.is_injective() and layout.is_compact()
    assert sorted(brute_offsets(layout)) == list(range(layout.size))
    assert brute_offsets(layout) == list(range(layout.size))  # colex order is storage order


def test_derived_facts():
    layout = Layout((2, (4, 3), 1), (1, (2, 8), 0))
    assert layout.rank == 3 and layout.depth == 2
    assert Layout((4, 2)).depth == 1
    assert Layout((((2,),),)).depth == 3
    assert layout.size == 24 and layout.cosize == 24
    assert layout.leaf_shape == (2, 4, 3, 1)
    assert layout.leaf_stride == (1, 2, 8, 0)
    assert layout.mode_sizes == (2, 12, 1)
    assert layout.mode_leaf_counts == (1, 2, 1)
    assert layout.shape == Shape([2, [4, 3], 1]) and layout.stride == Stride([1, [2, 8], 0])
    empty = Layout((3, 0), (5, 1))
    assert empty.size == 0 and empty.cosize == 0
    assert Layout((3, 2), (0, 0)).cosize == 1
    assert Layout((4, 3), (3, 5)).cosize == 20


def test_trusted_matches_validated():
    fast = Layout._trusted((2, (4, 3)), (1, (2, 8)))
    assert fast == Layout.canonical((2, (4, 3)))
    assert fast.size == 24 and fast.leaf_stride == (1, 2, 8)
    assert hash(fast) == hash(Layout.canonical((2, (4, 3))))


# ----- evaluation --------------------------------------------------------------------


def test_call_linear_and_coordinates():
    layout = Layout((2, (4, 3)), (1, (2, 8)))
    assert [layout(i) for i in range(24)] == list(range(24))
    assert layout(1, (2, 1)) == 1 + 4 + 8
    assert layout((1, (2, 1))) == 13
    assert layout(1, 6) == 1 + 2 * 2 + 8  # 6 decomposes colex in (4,3) as (2,1)
    assert layout(np.int64(5)) == 5
    strided = Layout((4, 2), (2, 1))
    assert [strided(i) for i in range(8)] == [0, 2, 4, 6, 1, 3, 5, 7]
    assert strided(3, 1) == 7
    one = Layout([[2, 3]], [[3, 1]])
    assert one((1, 2)) == 5 and one(3) == 1 + 3  # rank 1: tuple is mode 0's coordinate


@pytest.mark.parametrize(
    ("args", "exc"),
    [
        ((24,), IndexError),
        ((-1,), IndexError),
        ((2, 0), IndexError),
        ((0, 12), IndexError),
        ((0, (4, 0)), IndexError),
        ((0, (0, -1)), IndexError),
        ((), TypeError),
        ((0, 0, 0), TypeError),
        ((1.0,), TypeError),
        ((True,), TypeError),
        (("1",), TypeError),
        (((0, 1), 0), TypeError),
        ((0, (1, 2, 0)), TypeError),
        ((0, (1.0, 0)), TypeError),
    ],
)
def test_call_rejects(args, exc):
    with pytest.raises(exc):
        Layout((2, (4, 3)), (1, (2, 8)))(*args)


def test_rank0_layout():
    # The 0-d layout: no modes, one coordinate (the empty one) at offset 0.
    layout = Layout(Shape(()), Stride(()))
    assert Shape([]) == Shape(()) and Shape(()).modes == () and Shape(()).size == 1
    assert (layout.rank, layout.size, layout.cosize, layout.depth) == (0, 1, 1, 1)
    assert layout() == 0 and layout(0) == 0
    assert layout.mode_sizes == () and layout.leaf_shape == () and layout.rev_leaf_shape == ()
    assert layout.is_compact() and layout.is_canonical() and Layout.canonical(()) == layout
    assert str(layout) == "():()" and eval(repr(layout)) == layout
    assert layout.flatten() == layout
    with pytest.raises(IndexError):
        layout(1)
    with pytest.raises(ValueError, match="not congruent"):
        Layout((), (1,))


def test_call_empty_layout():
    with pytest.raises(IndexError):
        Layout((3, 0))(0)


def test_getitem():
    layout = Layout((2, (4, 3)), (1, (2, 8)))
    assert layout[0] == Layout((2,), (1,))
    assert layout[1] == Layout((4, 3), (2, 8))
    assert layout[-1] == layout[1]
    assert layout[0:1] == Layout((2,), (1,))
    assert [str(m) for m in layout] == ["(2):(1)", "(4,3):(2,8)"]
    with pytest.raises(IndexError):
        layout[2]
    with pytest.raises(IndexError):
        layout[5:]


@settings(max_examples=200, deadline=None)
@given(layouts())
def test_call_matches_brute_force(layout):
    assert [layout(i) for i in range(layout.size)] == brute_offsets(layout)
    shape, stride = layout.shape.modes, layout.stride.modes
    for i in range(layout.size):
        crd = idx2crd(i, shape)
        assert layout(*crd) == layout(i) == crd2idx(crd, shape, stride) == crd2idx(i, shape, stride)
    assert layout.size == product(shape) == len(brute_offsets(layout))
    assert layout.cosize == (max(brute_offsets(layout)) + 1 if layout.size else 0)


@settings(max_examples=200, deadline=None)
@given(shape_modes(min_extent=1))
def test_idx2crd_crd2idx_round_trip(shape):
    canon = Layout.canonical(shape).stride.modes
    for i in range(product(shape)):
        crd = idx2crd(i, shape)
        assert leaves(crd) and len(leaves(crd)) == len(leaves(shape))
        assert all(0 <= c < s for c, s in zip(leaves(crd), leaves(shape)))
        assert crd2idx(crd, shape, canon) == i


def test_int_tuple_helpers():
    assert depth(3) == 0 and depth((3,)) == 1 and depth((2, (4, 3))) == 2
    assert leaves(((1, (2,)), 3)) == (1, 2, 3)
    assert idx2crd(7, (2, (4, 3))) == (1, (3, 0))


# ----- aliasing ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("shape", "stride", "kind", "compact"),
    [
        ((2, 2), (3, 2), "injective", False),
        ((4, 2), (1, 1), "overlapping", False),
        ((4, (2, 3)), (1, (0, 4)), "broadcast", False),
        ((4, 2), (0, 1), "broadcast", False),
        ((4,), (0,), "broadcast", False),
        ((4, 2), (2, 1), "injective", True),
        ((4, 1), (1, 0), "injective", True),
        ((3, 0), (0, 0), "injective", True),
        ((3, 3), (2, 3), "injective", False),
        ((3, 2), (2, 4), "overlapping", False),
        ((2, 3, 2), (0, 2, 3), "broadcast", False),
        ((2, 3, 2), (0, 2, 4), "overlapping", False),
        ((3, 3), (3, 2), "injective", False),
    ],
)
def test_aliasing_examples(shape, stride, kind, compact):
    layout = Layout(shape, stride)
    assert layout.aliasing() == kind == brute_aliasing(layout)
    assert layout.is_injective() == (kind == "injective")
    assert layout.is_compact() == compact


@settings(max_examples=400, deadline=None)
@given(layouts())
def test_aliasing_matches_brute_force(layout):
    kind = brute_aliasing(layout)
    assert layout.aliasing() == kind
    assert layout.is_injective() == (kind == "injective")
    offs = brute_offsets(layout)
    assert layout.is_compact() == (sorted(offs) == list(range(layout.size)))


@pytest.mark.parametrize(
    ("shape", "stride", "kind"),
    [
        ((3, 3), (2, 3), "injective"),
        ((3, 3, 50, 50), (2, 3, 11, 550), "injective"),
        ((3, 2, 2), (2, 3, 5), "overlapping"),
        ((3, 2, 2, 4), (2, 3, 5, 0), "overlapping"),
        ((3, 3, 4), (2, 3, 0), "broadcast"),
    ],
)
def test_aliasing_exact_fallback(monkeypatch, shape, stride, kind):
    # No fast test decides these: the offsets must be enumerated.
    calls = []
    original = aliasing_module._injective_exact
    monkeypatch.setattr(aliasing_module, "_injective_exact", lambda modes: calls.append(1) or original(modes))
    layout = Layout(shape, stride)
    assert layout.aliasing() == kind == brute_aliasing(layout)
    assert calls


# ----- value semantics -------------------------------------------------------------


def test_layout_equality_is_exact():
    assert Layout(Shape([1, 1]), Stride([1, 1])) != Layout(Shape(1), Stride(1))
    assert Layout((4, 2)) == Layout((4, 2), (1, 4))
    assert Layout((4, 2)) != Layout((4, 2), (1, 5))
    assert Layout([[4]]) != Layout([4])
    assert Layout(4) != Shape(4)
    assert len({Layout((4, 2)), Layout(Shape([4, 2]), Stride([1, 4])), Layout((2, 4))}) == 2


@pytest.mark.parametrize(
    ("layout", "text"),
    [
        (Layout((4, 2)), "(4,2):(1,4)"),
        (Layout((2, (4, 3))), "(2,(4,3)):(1,(2,8))"),
        (Layout(4), "(4):(1)"),
        (Layout([[1]], [[0]]), "((1)):((0))"),
    ],
)
def test_str_and_repr(layout, text):
    assert str(layout) == text
    assert eval(repr(layout)) == layout
    assert pickle.loads(pickle.dumps(layout)) == layout


def test_repr_format():
    assert repr(Layout((4, 2))) == "Layout(Shape((4, 2)), Stride((1, 4)))"


@settings(max_examples=100, deadline=None)
@given(layouts())
def test_repr_round_trip_random(layout):
    again = eval(repr(layout))
    assert again == layout and hash(again) == hash(layout) and str(again) == str(layout)
