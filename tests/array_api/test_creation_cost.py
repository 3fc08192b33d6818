"""Creation functions allocate their result once: no full-size staging copy on the host."""

import tracemalloc

import numpy as np
import pytest

import strideweave.array_api as xp


@pytest.mark.parametrize("dtype", [None, xp.int64, xp.float64])
def test_arange_peak_memory_is_one_result(dtype):
    n = 1 << 18
    xp.arange(8, dtype=dtype)  # warm caches outside the trace
    tracemalloc.start()
    try:
        out = xp.arange(n, dtype=dtype)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    np.testing.assert_array_equal(np.asarray(out), np.arange(n))
    assert peak < 1.5 * n * 8, f"arange({n}) peaked at {peak} bytes, more than one {n * 8}-byte result"
