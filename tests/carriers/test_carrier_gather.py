"""gather / gather_rev against a brute-force reference on every carrier."""

from __future__ import annotations

import numpy as np
import pytest
from carrier_refs import ref_gather, ref_gather_rev
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from strideweave.carriers import _indexing
from strideweave.layout import Layout, Shape, Stride

# (shape modes, stride modes or None for canonical, offset)
CASES = {
    "canonical": ([4, 3], None, 0),
    "canonical-offset": ([4, 3], None, 2),
    "canonical-nested": ([2, [4, 3]], None, 1),
    "canonical-extent1": ([4, 1, 2], None, 0),
    "transposed": ([4, 3], [3, 1], 0),
    "sliced-holes": ([2, 3], [1, 8], 5),
    "column-at-end": ([4], [3], 2),
    "rows-at-end": ([2, 2], [1, 4], 9),
    "strided-1d": ([5], [2], 1),
    "broadcast-inner": ([4, 3], [0, 1], 0),
    "broadcast-outer": ([3, 4], [1, 0], 2),
    "broadcast-all": ([3, 2], [0, 0], 4),
    "nested": ([2, [3, 2]], [6, [1, 3]], 0),
    "nested-permuted": ([[2, 3], 4], [[12, 4], 1], 3),
    "overlapping": ([4, 2], [1, 1], 0),
    "overlap-broadcast": ([3, 2, 2], [1, 1, 0], 1),
    "extent1-odd-strides": ([1, 4, 1], [7, 1, 3], 2),
    "single": ([1], [1], 3),
    "nested-single": ([[1]], [[5]], 0),
    "permuted-3d": ([2, 3, 4], [12, 1, 3], 0),
    "size0-a": ([0, 3], [1, 0], 0),
    "size0-b": ([3, 0], [1, 3], 4),
}


def _layout(case):
    shape, stride, offset = CASES[case]
    layout = Layout(Shape(shape)) if stride is None else Layout(Shape(shape), Stride(stride))
    return layout, offset


@pytest.mark.parametrize("extra", [0, 3], ids=["tight", "roomy"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_gather_matches_reference(backend, case, extra):
    layout, offset = _layout(case)
    n = offset + layout.cosize + extra
    buf = np.arange(100, 100 + n, dtype=np.float32)
    carrier = backend.carrier(buf)
    rev = backend.to_np(carrier.gather_rev(layout, offset))
    nat = backend.to_np(carrier.gather(layout, offset))
    assert rev.shape == layout.leaf_shape[::-1]
    assert nat.shape == layout.leaf_shape
    np.testing.assert_array_equal(rev, ref_gather_rev(buf, layout, offset))
    np.testing.assert_array_equal(nat, ref_gather(buf, layout, offset))
    assert carrier.version == 0  # reads never bump


def test_canonical_rev_is_a_reshape(backend):
    layout = Layout(Shape([2, [4, 3]]))
    buf = np.arange(30, dtype=np.float32)
    carrier = backend.carrier(buf)
    got = backend.to_np(carrier.gather_rev(layout, 3))
    np.testing.assert_array_equal(got, buf[3:27].reshape(3, 4, 2))


def test_gather_int_dtype(backend):
    from strideweave.dtypes import DType
    layout = Layout(Shape([3, 2]), Stride([2, 7]))
    buf = np.arange(20, dtype=np.int32)
    carrier = backend.carrier(buf)
    assert carrier.dtype == DType.Int32
    np.testing.assert_array_equal(backend.to_np(carrier.gather(layout, 1)), ref_gather(buf, layout, 1))


def test_numpy_gather_is_a_view():
    from strideweave.carriers import NumpyCarrier
    buf = np.arange(12, dtype=np.float32)
    c = NumpyCarrier.from_array(buf)
    v = c.gather_rev(Layout(Shape([4, 3]), Stride([3, 1])), 0)
    assert np.shares_memory(v, buf) and not v.flags.writeable
    assert np.shares_memory(c.gather_rev(Layout(Shape([4, 3])), 0), buf)


def test_torch_gather_is_a_view():
    torch = pytest.importorskip("torch")
    from strideweave.carriers import TorchCarrier
    buf = torch.arange(24, dtype=torch.float32)[::2]  # a strided 1-D buffer
    c = TorchCarrier.from_array(buf)
    layout = Layout(Shape([2, 3]), Stride([1, 4]))
    v = c.gather(layout, 1)
    assert v.untyped_storage().data_ptr() == buf.untyped_storage().data_ptr()
    np.testing.assert_array_equal(v.numpy(), ref_gather(buf.numpy(), layout, 1))


# ----- the view recipe itself -------------------------------------------------------


@pytest.mark.parametrize("case", ["transposed", "sliced-holes", "column-at-end", "rows-at-end",
                                  "broadcast-inner", "nested", "permuted-3d", "extent1-odd-strides"])
def test_view_plan_exists_for_sliceable_layouts(case):
    # a plan needs whole rows of the outermost stride inside the buffer: give it room
    layout, offset = _layout(case)
    rs, rt = layout.leaf_shape[::-1], layout.leaf_stride[::-1]
    assert _indexing.view_plan(rs, rt, offset, offset + layout.cosize + 8) is not None


@pytest.mark.parametrize("case", ["overlapping", "overlap-broadcast"])
def test_view_plan_refuses_overlap(case):
    layout, offset = _layout(case)
    rs, rt = layout.leaf_shape[::-1], layout.leaf_stride[::-1]
    assert _indexing.view_plan(rs, rt, offset, offset + layout.cosize) is None


def test_take_index_is_cached_and_bounded(backend):
    from strideweave.carriers import base
    carrier = backend.carrier(np.arange(64, dtype=np.float32))
    overlap = Layout(Shape([4, 2]), Stride([1, 1]))
    for off in range(base._CACHE_LIMIT + 5):
        carrier.gather_rev(overlap, off)
    assert carrier._cache is None or len(carrier._cache) <= base._CACHE_LIMIT


# ----- random layouts -----------------------------------------------------------------


@st.composite
def layouts(draw):
    """Random (possibly nested) layouts with small extents and strides, plus an offset."""
    rank = draw(st.integers(1, 3))
    shape, stride = [], []
    for _ in range(rank):
        if draw(st.booleans()):
            k = draw(st.integers(1, 2))
            shape.append([draw(st.integers(0, 3)) for _ in range(k)])
            stride.append([draw(st.integers(0, 7)) for _ in range(k)])
        else:
            shape.append(draw(st.integers(0, 4)))
            stride.append(draw(st.integers(0, 7)))
    return Layout(Shape(shape), Stride(stride)), draw(st.integers(0, 4)), draw(st.integers(0, 3))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=layouts())
def test_gather_random_layouts(backend, data):
    layout, offset, extra = data
    n = offset + layout.cosize + extra
    buf = np.arange(1, n + 1, dtype=np.float32)
    carrier = backend.carrier(buf)
    np.testing.assert_array_equal(backend.to_np(carrier.gather_rev(layout, offset)),
                                  ref_gather_rev(buf, layout, offset))
    np.testing.assert_array_equal(backend.to_np(carrier.gather(layout, offset)),
                                  ref_gather(buf, layout, offset))


@settings(max_examples=300, deadline=None)
@given(data=layouts())
def test_view_plan_random_layouts(data):
    """The pure recipe, applied with numpy, equals the reference whenever it exists."""
    layout, offset, extra = data
    if layout.size == 0:
        return
    n = offset + layout.cosize + extra
    buf = np.arange(n)
    rs, rt = layout.leaf_shape[::-1], layout.leaf_stride[::-1]
    plan = _indexing.view_plan(rs, rt, offset, n)
    if plan is None:
        return  # the take path; covered by the carrier tests
    a = buf[plan.start:plan.stop]
    assert plan.stop <= n
    if plan.dims is not None:
        a = a.reshape(plan.dims)
    if plan.index is not None:
        a = a[plan.index]
    if plan.perm is not None:
        a = a.transpose(plan.perm)
    if plan.shape1 is not None:
        a = a.reshape(plan.shape1)
    if plan.bcast:
        a = np.broadcast_to(a, rs)
    np.testing.assert_array_equal(a, ref_gather_rev(buf, layout, offset))


@pytest.mark.parametrize("step", [2, -1], ids=["strided", "reversed"])
def test_numpy_wrapped_strided_buffer(step):
    """from_array keeps a non-contiguous 1-D view as is; reads and writes go through it."""
    from strideweave.carriers import NumpyCarrier
    base = np.arange(40, dtype=np.float32)
    buf = base[::step]
    c = NumpyCarrier.from_array(buf)
    for layout in (Layout(Shape([2, 3]), Stride([1, 4])), Layout(Shape([4, 2]), Stride([1, 1]))):
        np.testing.assert_array_equal(c.gather(layout, 1), ref_gather(buf.copy(), layout, 1))
    c.scatter_add(Layout(Shape([3, 2]), Stride([1, 1])), 0, 1.0)
    c.scatter(Layout(Shape(2), Stride(5)), 10, 0.5)
    want = np.arange(40, dtype=np.float32)[::step].copy()
    np.add.at(want, [0, 1, 2, 1, 2, 3], 1.0)
    want[[10, 15]] = 0.5
    np.testing.assert_array_equal(buf, want)
