"""Creation functions allocate their result once (no full-size staging copy on the host) and never digest it."""

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


# Buffers the namespace allocates itself are never digested (docs/user-guide.md, "Writes that bypass
# StrideWeave"): no one outside StrideWeave holds their memory.
MADE_HERE = {
    "zeros": lambda: xp.zeros((64, 3)),
    "ones": lambda: xp.ones(64),
    "full": lambda: xp.full((8, 8), 2.5),
    "zeros_like": lambda: xp.zeros_like(xp.ones(64)),
    "arange": lambda: xp.arange(64.0),
    "linspace": lambda: xp.linspace(0.0, 1.0, 64),
    "eye": lambda: xp.eye(8),
    "asarray(list)": lambda: xp.asarray([[1.0, 2.0], [3.0, 4.0]]),
    "asarray(float)": lambda: xp.asarray(1.5),
}


@pytest.mark.parametrize("make", MADE_HERE.values(), ids=MADE_HERE.keys())
def test_a_buffer_the_namespace_made_is_not_digested_when_saved(make, monkeypatch):
    from strideweave.carriers import NumpyCarrier

    x = make()
    if type(x.carrier) is not NumpyCarrier:
        pytest.skip("the default carrier is not NumPy's")
    digests = []
    digest = NumpyCarrier._digest
    monkeypatch.setattr(NumpyCarrier, "_digest", lambda carrier: digests.append(carrier) or digest(carrier))
    loss = xp.sum(x * x)
    loss.backward()
    assert digests == []
    np.testing.assert_allclose(np.asarray(x.grad), 2 * np.asarray(x, dtype=np.float64), rtol=1e-6)
    held = x.carrier.array  # the buffer handed out: from now on it is watched
    loss = xp.sum(x * x)
    held[...] = 4.0
    with pytest.raises(RuntimeError, match="in-place modification"):
        loss.backward()


def test_asarray_of_memory_lent_by_another_object_stays_watched():
    host = np.arange(4, dtype=np.float32)
    x = xp.asarray(memoryview(host))  # NumPy reads the memoryview in place: host's memory
    loss = xp.sum(x * x)
    host[0] = 9.0
    with pytest.raises(RuntimeError, match="in-place modification"):
        loss.backward()


@pytest.mark.parametrize("gather", [lambda x, i: xp.take(x, i, axis=0), lambda x, i: xp.take_along_axis(x, i, axis=0)],
                         ids=["take", "take_along_axis"])
def test_an_index_array_read_for_its_range_check_stays_unwatched(gather, monkeypatch):
    from strideweave.carriers import NumpyCarrier

    x, index = xp.arange(6.0), xp.asarray([4, 1, 1])
    if type(index.carrier) is not NumpyCarrier:
        pytest.skip("the default carrier is not NumPy's")
    gather(x, index)  # reads the indices on the host, hands nothing out
    digests = []
    digest = NumpyCarrier._digest
    monkeypatch.setattr(NumpyCarrier, "_digest", lambda carrier: digests.append(carrier) or digest(carrier))
    loss = xp.sum(gather(x, index) * 2.0)
    loss.backward()
    assert digests == []
    np.testing.assert_array_equal(np.asarray(x.grad), [0.0, 4.0, 0.0, 0.0, 2.0, 0.0])
    with pytest.raises(IndexError, match="out of range"):
        gather(x, xp.asarray([6]))
