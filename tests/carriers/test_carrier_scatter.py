"""scatter / scatter_add (natural and rev) against brute force, and version rules."""

from __future__ import annotations

import numpy as np
import pytest
from carrier_refs import offsets_rev, ref_gather_rev, ref_scatter_add_rev, ref_scatter_rev
from hypothesis import HealthCheck, given, settings
from test_carrier_gather import CASES, _layout, layouts

from strideweave.dtypes import DType
from strideweave.layout import Layout, Shape, Stride

INJECTIVE = sorted(c for c in CASES if _layout(c)[0].aliasing() == "injective")
ALL = sorted(CASES)


def _values(layout, seed=0):
    """Small integer-valued float32 values (sums are exact in any order)."""
    rng = np.random.default_rng(seed)
    return rng.integers(-5, 6, size=layout.leaf_shape[::-1]).astype(np.float32)


@pytest.mark.parametrize("case", INJECTIVE)
def test_scatter_rev_injective(backend, case):
    layout, offset = _layout(case)
    buf = np.arange(offset + layout.cosize + 2, dtype=np.float32)
    vals = _values(layout)
    c = backend.carrier(buf)
    c.scatter_rev(layout, offset, backend.native(vals))
    np.testing.assert_array_equal(backend.to_np(c.array), ref_scatter_rev(buf, layout, offset, vals))
    assert c.version == 1


@pytest.mark.parametrize("case", INJECTIVE)
def test_scatter_natural_equals_rev(backend, case):
    layout, offset = _layout(case)
    buf = np.zeros(offset + layout.cosize + 1, dtype=np.float32)
    vals = _values(layout, 1)
    a, b = backend.carrier(buf), backend.carrier(buf)
    a.scatter_rev(layout, offset, backend.native(vals))
    b.scatter(layout, offset, backend.native(np.ascontiguousarray(vals.T)))
    np.testing.assert_array_equal(backend.to_np(a.array), backend.to_np(b.array))


@pytest.mark.parametrize("case", ALL)
def test_scatter_add_rev_accumulates(backend, case):
    layout, offset = _layout(case)
    buf = np.arange(offset + layout.cosize + 2, dtype=np.float32)
    vals = _values(layout, 2)
    c = backend.carrier(buf)
    c.scatter_add_rev(layout, offset, backend.native(vals))
    np.testing.assert_array_equal(backend.to_np(c.array), ref_scatter_add_rev(buf, layout, offset, vals))
    assert c.version == 1


@pytest.mark.parametrize("case", ["broadcast-inner", "overlapping", "overlap-broadcast", "canonical"])
def test_scatter_add_natural_and_scalar(backend, case):
    layout, offset = _layout(case)
    buf = np.zeros(offset + layout.cosize, dtype=np.float32)
    vals = _values(layout, 3)
    c = backend.carrier(buf)
    c.scatter_add(layout, offset, backend.native(np.ascontiguousarray(vals.T)))
    c.scatter_add(layout, offset, 2.0)
    want = ref_scatter_add_rev(ref_scatter_add_rev(buf, layout, offset, vals), layout, offset, 2.0)
    np.testing.assert_array_equal(backend.to_np(c.array), want)
    assert c.version == 2


def test_scatter_add_duplicates_multiplicity(backend):
    """(4,2):(1,1) hits offsets 1..3 twice; a stride-0 mode hits one offset 5 times."""
    c = backend.carrier(np.zeros(6, dtype=np.float32))
    c.scatter_add(Layout(Shape([4, 2]), Stride([1, 1])), 0, 1.0)
    np.testing.assert_array_equal(backend.to_np(c.array), [1, 2, 2, 2, 1, 0])
    c.scatter_add(Layout(Shape(5), Stride(0)), 5, backend.native(np.arange(5, dtype=np.float32)))
    np.testing.assert_array_equal(backend.to_np(c.array), [1, 2, 2, 2, 1, 10])


def test_scatter_broadcast_agreeing_values(backend):
    layout = Layout(Shape([3, 4]), Stride([1, 0]))  # rev shape (4, 3); values agree along axis 0
    c = backend.carrier(np.zeros(5, dtype=np.float32))
    c.scatter_rev(layout, 1, backend.native(np.array([7, 8, 9], dtype=np.float32)))
    np.testing.assert_array_equal(backend.to_np(c.array), [0, 7, 8, 9, 0])


def test_scatter_broadcastable_values_and_scalars(backend):
    layout = Layout(Shape([2, 3]), Stride([1, 4]))
    c = backend.carrier(np.zeros(12, dtype=np.float32))
    c.scatter(layout, 1, backend.native(np.array([1, 2, 3], dtype=np.float32)))  # natural (2,3) <- (3,)
    want = np.zeros(12, np.float32)
    want[[1, 2, 5, 6, 9, 10]] = [1, 1, 2, 2, 3, 3]
    np.testing.assert_array_equal(backend.to_np(c.array), want)
    c.scatter(layout, 1, 4.0)
    want[[1, 2, 5, 6, 9, 10]] = 4
    np.testing.assert_array_equal(backend.to_np(c.array), want)
    assert c.version == 2


def test_scatter_from_own_gather_aliasing(backend):
    """Writing a view of the same buffer into it (shifted) must read before writing."""
    c = backend.carrier(np.arange(8, dtype=np.float32))
    src = c.gather(Layout(Shape(6)), 0)
    c.scatter(Layout(Shape(6)), 2, src)
    np.testing.assert_array_equal(backend.to_np(c.array), [0, 1, 0, 1, 2, 3, 4, 5])
    src = c.gather(Layout(Shape(6)), 2)
    c.scatter_add(Layout(Shape(6)), 0, src)
    np.testing.assert_array_equal(backend.to_np(c.array), [0, 2, 2, 4, 6, 8, 4, 5])


def test_int_carrier_scatter_add(backend):
    c = backend.carrier(np.arange(6, dtype=np.int32))
    c.scatter_add(Layout(Shape([3, 2]), Stride([1, 1])), 0, 1)
    np.testing.assert_array_equal(backend.to_np(c.array), [1, 3, 4, 4, 4, 5])
    assert c.dtype == DType.Int32


def test_size0_write_bumps_and_changes_nothing(backend):
    c = backend.carrier(np.arange(3, dtype=np.float32))
    c.scatter(Layout(Shape([0, 2])), 3, 1.0)
    c.scatter_add(Layout(Shape([2, 0])), 3, 1.0)
    np.testing.assert_array_equal(backend.to_np(c.array), [0, 1, 2])
    assert c.version == 2


# ----- version and failure atomicity ---------------------------------------------


def test_version_bumps_once_per_mutation(backend):
    layout = Layout(Shape([2, 2]))
    c = backend.carrier(np.zeros(4, dtype=np.float32))
    assert c.version == 0
    c.gather(layout, 0)
    c.gather_rev(layout, 0)
    assert c.version == 0
    c.scatter(layout, 0, 1.0)
    c.scatter_rev(layout, 0, 1.0)
    c.scatter_add(layout, 0, 1.0)
    c.scatter_add_rev(layout, 0, 1.0)
    assert c.version == 4
    c.replace(backend.native(np.ones(4, dtype=np.float32)))
    assert c.version == 5
    c.bump_version()
    assert c.version == 6


@pytest.mark.parametrize("method", ["scatter", "scatter_rev", "scatter_add", "scatter_add_rev"])
def test_failed_writes_change_nothing(backend, method):
    layout = Layout(Shape([2, 3]))
    buf = np.arange(6, dtype=np.float32)
    c = backend.carrier(buf)
    write = getattr(c, method)
    with pytest.raises(ValueError, match=r"cosize 6.*offset 1.*7.*6"):
        write(layout, 1, 1.0)
    with pytest.raises(ValueError, match=r"\(4,\)"):
        write(layout, 0, backend.native(np.ones(4, dtype=np.float32)))
    with pytest.raises(ValueError, match="offset"):
        write(layout, -1, 1.0)
    with pytest.raises(TypeError, match="offset"):
        write(layout, 0.5, 1.0)
    with pytest.raises(TypeError, match="'x'"):
        write(layout, 0, "x")
    assert c.version == 0
    np.testing.assert_array_equal(backend.to_np(c.array), buf)


def test_failed_reads_and_replace(backend):
    c = backend.carrier(np.arange(6, dtype=np.float32))
    with pytest.raises(ValueError, match="holds only 6"):
        c.gather(Layout(Shape([2, 3]), Stride([1, 3])), 2)
    with pytest.raises(ValueError, match="6 elements"):
        c.replace(backend.native(np.ones(5, dtype=np.float32)))
    with pytest.raises(TypeError, match="Float32"):
        c.replace(backend.native(np.ones(6, dtype=np.int32)))
    assert c.version == 0


def test_scatter_add_rejects_bool_and_bad_scalars(backend):
    c = backend.carrier(np.zeros(3, dtype=bool))
    with pytest.raises(TypeError, match="numeric"):
        c.scatter_add(Layout(Shape(3)), 0, True)
    ints = backend.carrier(np.zeros(3, dtype=np.int32))
    with pytest.raises(TypeError, match=r"1\.5"):
        ints.scatter(Layout(Shape(3)), 0, 1.5)
    assert c.version == 0 and ints.version == 0


# ----- random layouts ---------------------------------------------------------------


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=layouts())
def test_writes_random_layouts(backend, data):
    layout, offset, extra = data
    n = offset + layout.cosize + extra
    buf = np.arange(n, dtype=np.float32)
    vals = _values(layout, n)
    c = backend.carrier(buf)
    c.scatter_add_rev(layout, offset, backend.native(vals))
    want = ref_scatter_add_rev(buf, layout, offset, vals)
    np.testing.assert_array_equal(backend.to_np(c.array), want)
    # scatter: every target ends up holding one of the values written to it
    c.scatter_rev(layout, offset, backend.native(vals))
    got = backend.to_np(c.array)
    idx = offsets_rev(layout, offset).reshape(-1)
    for pos in set(idx.tolist()):
        assert got[pos] in vals.reshape(-1)[idx == pos]
    untouched = np.setdiff1d(np.arange(n), idx)
    np.testing.assert_array_equal(got[untouched], want[untouched])
    if layout.is_injective():
        np.testing.assert_array_equal(backend.to_np(c.gather_rev(layout, offset)), vals)
    assert c.version == 2
    np.testing.assert_array_equal(backend.to_np(c.gather_rev(layout, offset)),
                                  ref_gather_rev(got, layout, offset))
