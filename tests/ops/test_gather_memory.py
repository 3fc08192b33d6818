"""The backward of every gather allocates memory linear in the sizes, not (gathered) x (source).

At n = k = 16,000 a k x n one-hot matrix is 256 million elements; a scatter-add
needs a few arrays of n + k. The peak memory traced by ``tracemalloc`` during
``backward`` (NumPy reports its allocations to it) must stay within
``LIMIT`` elements of 8 bytes per element of n + k, on the carriers whose
allocations it sees: NumPy, array-api-strict (NumPy underneath, through the
standard-only segment sum) and Dask (its graph computed synchronously).
"""

import tracemalloc

import numpy as np
import pytest

import strideweave as sw
import strideweave.array_api as xp

N = K = 16_000
#: peak bytes during backward, per element of n + k, at 8 bytes an element (measured: 0.5 to 5)
LIMIT = 8
RNG = np.random.default_rng(11)
DATA = RNG.standard_normal(N).astype(np.float32)
INDEX = RNG.integers(-N, N, K).astype(np.int32)         # repeats and negative indices
MASK = RNG.random(N) < 0.5
COUNTS = RNG.integers(0, 3, N).astype(np.int32)          # about k values repeated from n
CARRIERS = ["numpy", "array_api_strict", "dask"]


def _index(values, carrier):
    return sw.tensor(values, carrier=carrier)


# name -> function of (x, carrier), x holding DATA (n elements)
GATHERS = {
    "take": lambda x, c: xp.take(x, _index(INDEX, c), axis=0),
    "a[idx]": lambda x, c: x[_index(INDEX, c)],
    "a[mask]": lambda x, c: x[_index(MASK, c)],
    "a[::-1]": lambda x, c: x[::-1],
    "a[i, j]": lambda x, c: xp.reshape(x, (N // 16, 16))[_index(INDEX % (N // 16), c), _index(INDEX % 16, c)],
    "take_along_axis": lambda x, c: xp.take_along_axis(xp.reshape(x, (4, N // 4)),
                                                       _index(np.reshape(INDEX % (N // 4), (4, K // 4)), c), axis=1),
    "repeat": lambda x, c: xp.repeat(x, _index(COUNTS, c)),
}


def _index_add(x, c):
    y = x * 2.0
    y[_index(RNG.permutation(N)[:K // 2].astype(np.int32), c)] += x[:K // 2]
    return y


GATHERS["x[idx] += v"] = _index_add


def _backward_peak(loss, x, carrier):
    """Bytes allocated at the peak of ``loss.backward()`` (and, for Dask, of computing the gradient)."""
    tracemalloc.start()
    try:
        start = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        loss.backward()
        if carrier == "dask":
            import dask
            with dask.config.set(scheduler="synchronous"):
                x.grad.compute()
        return tracemalloc.get_traced_memory()[1] - start
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("carrier", CARRIERS)
@pytest.mark.parametrize("name", list(GATHERS))
def test_backward_memory_is_linear(name, carrier):
    pytest.importorskip({"dask": "dask.array"}.get(carrier, carrier))
    x = sw.tensor(DATA, carrier=carrier)
    out = GATHERS[name](x, carrier)
    loss = xp.sum(out * out)
    peak = _backward_peak(loss, x, carrier)
    assert x.grad is not None and tuple(x.grad.shape) == (N,)
    assert peak < LIMIT * 8 * (N + K), f"{name} on {carrier}: backward peaked at {peak / 2**20:.1f} MiB"
