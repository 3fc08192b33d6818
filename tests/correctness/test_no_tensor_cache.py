"""No cache keyed on a Tensor: operations read the values a Tensor holds now, and keep no Tensor alive.

The axis functions (``cumulative_sum``, ``sort``, ``flip``, ``std``, norms,
...) read their operands through ``ops._natural.natural``; a cache there
served the values from before a write (seen on JAX, whose carrier replaces
its buffer on write) and held up to 1,024 Tensors and their storage.
"""

import gc
import weakref

import numpy as np
import pytest

import strideweave.array_api as xp


def test_cumulative_sum_after_a_write_reads_the_new_values(carrier):
    x = xp.asarray(np.arange(8, dtype=np.float32).reshape(4, 2), device=carrier)
    np.testing.assert_array_equal(xp.cumulative_sum(x, axis=0)[3].numpy(), [12.0, 16.0])
    x[3, :] = 100.0
    np.testing.assert_array_equal(xp.cumulative_sum(x, axis=0)[3].numpy(), [106.0, 109.0])


@pytest.mark.parametrize("name", ["sort", "flip", "std", "vector_norm", "cumulative_prod", "take"])
def test_axis_functions_after_a_write_read_the_new_values(carrier, name):
    fns = {
        "sort": lambda x: xp.sort(x, axis=0),
        "flip": lambda x: xp.flip(x, axis=0),
        "std": lambda x: xp.std(x, axis=0),
        "vector_norm": lambda x: xp.linalg.vector_norm(x, axis=0),
        "cumulative_prod": lambda x: xp.cumulative_prod(x, axis=0),
        "take": lambda x: xp.take(x, xp.asarray([3, 0], device=x.device), axis=0),
    }
    ref = {
        "sort": lambda a: np.sort(a, axis=0),
        "flip": lambda a: np.flip(a, axis=0),
        "std": lambda a: np.std(a, axis=0),
        "vector_norm": lambda a: np.linalg.norm(a, axis=0),
        "cumulative_prod": lambda a: np.cumprod(a, axis=0),
        "take": lambda a: np.take(a, [3, 0], axis=0),
    }
    a = np.arange(1, 9, dtype=np.float32).reshape(4, 2)
    x = xp.asarray(a.copy(), device=carrier)
    np.testing.assert_allclose(fns[name](x).numpy(), ref[name](a), rtol=1e-6)
    x[3, :] = -5.0
    a[3, :] = -5.0
    np.testing.assert_allclose(fns[name](x).numpy(), ref[name](a), rtol=1e-6)


_PROGRAMS = {
    "cumulative_sum": lambda x: xp.cumulative_sum(x, axis=0),
    "sort backward": lambda x: xp.sum(xp.sort(x, axis=0) * 2.0).backward(),
    "std": lambda x: xp.std(x, axis=0),
    "flip": lambda x: xp.flip(x, axis=1),
    "vector_norm backward": lambda x: xp.linalg.vector_norm(x).backward(),
    "view": lambda x: x[..., None, ::2],
    "mask backward": lambda x: xp.sum(x[x > 2.0]).backward(),
    "matmul backward": lambda x: xp.sum(x.T @ x).backward(),
    "constant write": lambda x: x.__setitem__((..., 0), 1.0),
}


@pytest.mark.parametrize("name", list(_PROGRAMS))
def test_an_operation_keeps_no_tensor_alive(carrier, name):
    x = xp.asarray(np.arange(8, dtype=np.float32).reshape(4, 2), device=carrier)
    tensor_ref, carrier_ref = weakref.ref(x), weakref.ref(x._carriers[0])
    _PROGRAMS[name](x)
    del x
    gc.collect()
    assert tensor_ref() is None, f"{name} kept its input Tensor alive"
    assert carrier_ref() is None, f"{name} kept its input's carrier alive"


def test_natural_has_no_cache():
    from strideweave.ops import _natural

    assert not hasattr(_natural.natural, "cache_info")
