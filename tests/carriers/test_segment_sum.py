"""The segment sum (scatter-add) every gather's backward uses: native per library, sort-based elsewhere.

``carriers.segment_sum(xp, values, segments, n)`` dispatches on the namespace
to the carrier class's own (``np.add.at``, ``index_add_``, ``.at[].add``, Dask's
``bincount``); ``ArrayAPICarrier.segment_sum`` is the form written with the
standard's functions alone (sort, a segmented doubling scan, searchsorted),
checked here on every backend's namespace. References are ``np.add.at`` in
float64 / complex128.
"""

import numpy as np
import pytest

from strideweave.carriers import ArrayAPICarrier, segment_sum

# (number of values, number of segments, how the segments are drawn)
SHAPES = [(0, 4, "random"), (40, 7, "random"), (300, 1000, "random"),
          (257, 3, "one long run"), (64, 64, "distinct"), (50, 9, "sorted")]


def _draw(k, n, how, seed=0):
    rng = np.random.default_rng(seed)
    if how == "one long run":
        segments = np.full(k, 1)
        segments[::50] = 2
    elif how == "distinct":
        segments = rng.permutation(n)[:k]
    else:
        segments = rng.integers(0, n, k)
        if how == "sorted":
            segments = np.sort(segments)
    values = rng.uniform(-2, 2, k)
    return values, segments


def _reference(values, segments, n):
    out = np.zeros(n, dtype=np.result_type(values.dtype, np.float64))
    np.add.at(out, segments, values)
    return out


@pytest.mark.parametrize("generic", [False, True], ids=["library", "standard-only"])
@pytest.mark.parametrize(("k", "n", "how"), SHAPES)
def test_duplicates_accumulate_and_empty_segments_are_zero(backend, generic, k, n, how):
    values, segments = _draw(k, n, how)
    xp = backend.kind.namespace
    fn = (lambda *a: ArrayAPICarrier.segment_sum(xp, *a)) if generic else (lambda *a: segment_sum(xp, *a))
    wide = () if backend.name.endswith("jax") else ((np.float32, np.int64),)  # JAX stores int64 only in x64 mode
    for dtype, index in ((np.float32, np.int32), *wide, (np.complex64, np.int32)):
        v = values.astype(dtype)
        if dtype is np.complex64:
            v = v + 1j * values[::-1].astype(np.float32)
        out = fn(backend.native(v), backend.native(segments.astype(index)), n)
        got = backend.to_np(out)
        assert got.shape == (n,) and got.dtype == dtype
        np.testing.assert_allclose(got, _reference(v, segments, n), rtol=1e-5, atol=1e-5)


def test_the_standard_only_form_adds_within_one_segment_only():
    # A small segment after a large one keeps its digits: no difference of two large prefix sums.
    import array_api_strict as xp
    values = np.array([1e8, 1e8, 1e-3, 2e-3, 1e8], dtype=np.float64)
    segments = np.array([0, 0, 1, 1, 2])
    out = ArrayAPICarrier.segment_sum(xp, xp.asarray(values), xp.asarray(segments), 3)
    np.testing.assert_array_equal(np.asarray(out), [2e8, 3e-3, 1e8])


def test_integer_values_sum_exactly_on_every_path(backend):
    values, segments = np.arange(30), np.arange(30) % 4
    want = np.bincount(segments, weights=values, minlength=6).astype(np.int64)
    for fn in (segment_sum, ArrayAPICarrier.segment_sum):
        out = fn(backend.kind.namespace, backend.native(values.astype(np.int32)),
                 backend.native(segments.astype(np.int32)), 6)
        np.testing.assert_array_equal(backend.to_np(out), want)


def test_dask_sums_by_blocks_without_computing():
    da = pytest.importorskip("dask.array")
    import array_api_compat.dask.array as xp
    values, segments = _draw(500, 37, "random", seed=3)
    v = da.from_array(values.astype(np.float32), chunks=64)
    s = da.from_array(segments.astype(np.int32), chunks=100)  # other chunks than the values'
    out = segment_sum(xp, v, s, 37)
    assert isinstance(out, da.Array) and out.shape == (37,) and out.dtype == np.float32
    np.testing.assert_allclose(out.compute(), _reference(values, segments, 37), rtol=1e-5, atol=1e-5)
    c = v + 1j * v[::-1]
    out = segment_sum(xp, xp.astype(c, xp.complex64), s, 37)
    np.testing.assert_allclose(out.compute(), _reference(c.compute(), segments, 37), rtol=1e-5, atol=1e-5)
