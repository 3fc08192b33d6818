"""ContentWatch at the carrier level: a write through a native alias bumps the version, and no copy is kept."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

from strideweave.carriers import ContentWatch, NumpyCarrier, resolve

WATCHED = ["numpy", "array_api_strict"]  # torch counts versions itself; JAX arrays are immutable


def _native(name, values):
    if name == "numpy":
        return values  # the caller keeps the very array, as a user who wraps it does
    xp = pytest.importorskip("array_api_strict")
    return xp.asarray(values)


def _write(native, value):
    native[1] = value  # in place, for numpy and array_api_strict alike


@pytest.mark.parametrize("name", WATCHED)
@pytest.mark.parametrize("n", [16, 1 << 10, 1 << 16])
def test_a_write_through_the_wrapped_array_bumps_the_version_once(name, n):
    native = _native(name, np.arange(n, dtype=np.float32))
    carrier = resolve(name).from_array(native)
    carrier.watch_external()
    watch = carrier._watch
    assert isinstance(watch, ContentWatch)
    version = carrier.version
    watch.capture(carrier)
    assert carrier.version == version  # unchanged contents: no bump
    _write(native, -1.0)
    watch.capture(carrier)
    assert carrier.version == version + 1
    watch.capture(carrier)
    assert carrier.version == version + 1  # the new contents are now the reference


@pytest.mark.parametrize("name", WATCHED)
def test_verify_finds_a_write_after_the_last_capture(name):
    native = _native(name, np.zeros(8, dtype=np.float32))
    carrier = resolve(name).from_array(native)
    carrier.watch_external()
    version = carrier.version
    ContentWatch.begin_traversal()
    carrier._watch.verify(carrier)
    assert carrier.version == version
    _write(native, 3.0)
    ContentWatch.begin_traversal()
    carrier._watch.verify(carrier)
    assert carrier.version == version + 1


def test_nan_and_its_own_bits_are_no_write():
    a = np.array([np.nan, 1.0, -0.0], dtype=np.float32)
    carrier = NumpyCarrier.from_array(a)
    carrier.watch_external()
    version = carrier.version
    a[0] = a[0]  # the same NaN bits written back
    carrier._watch.capture(carrier)
    assert carrier.version == version
    a[2] = 0.0  # another bit pattern, though equal as a number: a write
    carrier._watch.capture(carrier)
    assert carrier.version == version + 1


def test_a_strided_wrapped_buffer_is_watched():
    base = np.arange(20, dtype=np.float64)
    carrier = NumpyCarrier.from_array(base[::2])
    carrier.watch_external()
    version = carrier.version
    base[1] = 99.0  # between the carrier's elements: not its contents
    carrier._watch.capture(carrier)
    assert carrier.version == version
    base[2] = 99.0
    carrier._watch.capture(carrier)
    assert carrier.version == version + 1


def test_the_watch_keeps_no_copy_of_a_large_writable_array():
    a = np.ones(1 << 22, dtype=np.float32)  # 16 MiB
    carrier = NumpyCarrier.from_array(a)
    tracemalloc.start()
    try:
        carrier.watch_external()
        carrier._watch.capture(carrier)
        ContentWatch.begin_traversal()
        carrier._watch.verify(carrier)
        _current, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert carrier._watch is not None
    assert peak < a.nbytes // 100, f"the watch allocated {peak} bytes for a {a.nbytes}-byte buffer"


@pytest.mark.parametrize("name", WATCHED)
def test_a_fresh_wrap_takes_its_first_digest_at_the_first_saving_call(name):
    import strideweave as sw

    native = _native(name, np.arange(4, dtype=np.float32))
    x = sw.tensor(native)
    _write(native, 7.0)  # before anything saved x: no graph can describe the old values
    y = sw.sum(x * x)
    (g,) = sw.grad(y, [x], sw.ones((1,), carrier=name))
    np.testing.assert_allclose(np.asarray(g.detach()), 2 * np.array([0, 7, 2, 3], np.float32))
    z = sw.sum(x * x)
    _write(native, 9.0)  # after z's graph saved x
    with pytest.raises(RuntimeError, match="in-place modification"):
        sw.grad(z, [x], sw.ones((1,), carrier=name))


@pytest.mark.parametrize("name", WATCHED)
def test_a_write_between_two_saving_calls_fails_only_the_earlier_graph(name):
    import strideweave as sw

    native = _native(name, np.arange(4, dtype=np.float32))
    x = sw.tensor(native)
    first = sw.sum(x * x)
    _write(native, 5.0)
    second = sw.sum(x * 3.0)
    (g,) = sw.grad(second, [x], sw.ones((1,), carrier=name))
    np.testing.assert_allclose(np.asarray(g.detach()), np.full(4, 3.0, np.float32))
    with pytest.raises(RuntimeError, match="in-place modification"):
        sw.grad(first, [x], sw.ones((1,), carrier=name))
