"""ContentWatch at the carrier level: a write through a native alias bumps the version, and no copy is kept."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

from strideweave.carriers import ContentWatch, NumpyCarrier, one_call, resolve

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


# ----- one digest per public call (``one_call``) ------------------------------------------------------

def _counting_digests(monkeypatch) -> list:
    """Every buffer size NumpyCarrier digests from now on, in order."""
    sizes: list = []
    digest = NumpyCarrier._digest

    def counted(carrier):
        sizes.append(carrier.size)
        return digest(carrier)
    monkeypatch.setattr(NumpyCarrier, "_digest", counted)
    return sizes


def test_unstack_of_a_wrapped_array_digests_it_once(monkeypatch):
    import strideweave.array_api as xp

    host = np.arange(12, dtype=np.float32).reshape(4, 3)
    x = xp.asarray(host)
    sizes = _counting_digests(monkeypatch)
    rows = xp.unstack(x)
    assert len(rows) == 4
    assert sizes == [12]  # four views, each saving the whole buffer: one digest
    loss = rows[0] * 1.0
    for i, row in enumerate(rows[1:], 2):
        loss = loss + row * float(i)
    xp.sum(loss).backward()
    np.testing.assert_array_equal(np.asarray(x.grad.numpy()), np.repeat(np.arange(1, 5, dtype=np.float32), 3)
                                  .reshape(4, 3))


def test_einsum_digests_each_operand_once(monkeypatch):
    import strideweave.array_api as xp

    a_host = np.arange(6, dtype=np.float32).reshape(2, 3)
    b_host = np.arange(12, dtype=np.float32).reshape(3, 4) / 7
    a, b = xp.asarray(a_host), xp.asarray(b_host)
    sizes = _counting_digests(monkeypatch)
    out = xp.einsum("ij,jk->ik", a, b)
    assert sorted(sizes) == [6, 12]
    np.testing.assert_allclose(np.asarray(out.numpy()), a_host.astype(np.float64) @ b_host, rtol=1e-6)


def test_matrix_power_digests_its_operand_once(monkeypatch):
    import strideweave.array_api as xp

    host = (np.arange(9, dtype=np.float32).reshape(3, 3) - 4) / 5
    x = xp.asarray(host)
    sizes = _counting_digests(monkeypatch)
    cube = xp.linalg.matrix_power(x, 3)  # two matmuls, each saving x
    assert sizes == [9]
    h = host.astype(np.float64)
    np.testing.assert_allclose(np.asarray(cube.numpy()), h @ h @ h, rtol=1e-5, atol=1e-6)


def test_a_write_between_two_scoped_calls_fails_only_the_earlier_graph():
    import strideweave.array_api as xp

    host = np.arange(6, dtype=np.float32).reshape(3, 2)
    x = xp.asarray(host)
    first = xp.sum(xp.stack(xp.unstack(x)) * 2.0)
    host[2, 1] = -1.0  # between two calls that each record several nodes over the buffer
    second = xp.sum(xp.stack(xp.unstack(x)) * 3.0)
    second.backward()
    np.testing.assert_array_equal(np.asarray(x.grad.numpy()), np.full((3, 2), 3.0, np.float32))
    with pytest.raises(RuntimeError, match="in-place modification"):
        first.backward()


def _saving_call(n: int, monkeypatch):
    """A watched carrier of ``n`` zeros, a saving call's capture of it, and the digests taken from now on."""
    carrier = NumpyCarrier.from_array(np.zeros(n, dtype=np.float32))
    carrier.watch_external(fresh=True)
    return carrier, lambda: carrier._watch.capture(carrier), _counting_digests(monkeypatch)


def test_a_version_bump_inside_a_call_takes_a_new_digest(monkeypatch):
    carrier, save, sizes = _saving_call(8, monkeypatch)

    @one_call
    def saves_twice_around_a_write():
        save()
        save()  # same call, same version: no digest
        carrier.bump_version()
        save()

    saves_twice_around_a_write()
    assert sizes == [8, 8]
    save()  # outside the call: every saving call digests
    assert sizes == [8, 8, 8]


def test_a_call_that_raises_ends_its_scope_and_nested_calls_share_the_outer_one(monkeypatch):
    _, save, sizes = _saving_call(4, monkeypatch)
    inner = one_call(save)

    @one_call
    def outer():
        inner()
        inner()  # a second call nested in ``outer``: the same scope
        raise ValueError("after saving")

    with pytest.raises(ValueError, match="after saving"):
        outer()
    assert sizes == [4]
    inner()  # a new call: a new scope
    assert sizes == [4, 4]


def test_a_scope_in_one_thread_skips_no_digest_in_another():
    import threading

    native = np.zeros(16, dtype=np.float32)
    carrier = NumpyCarrier.from_array(native)
    carrier.watch_external(fresh=True)
    inside, written = threading.Event(), threading.Event()

    @one_call
    def holds_a_scope_open():
        carrier._watch.capture(carrier)
        inside.set()
        assert written.wait(10)

    worker = threading.Thread(target=holds_a_scope_open)
    worker.start()
    try:
        assert inside.wait(10)
        version = carrier.version
        native[3] = 5.0  # this thread is in no scope: its capture must see the write
        carrier._watch.capture(carrier)
        assert carrier.version == version + 1
    finally:
        written.set()
        worker.join()


# ----- reads of StrideWeave's own hand no view out, so they watch nothing -------------------------------------

def _fresh(values, dtype=None):
    """A Tensor on a buffer nothing outside StrideWeave holds (made from a list): unwatched."""
    import strideweave.array_api as xp

    t = xp.asarray(values, dtype=dtype)
    assert t.carrier._watch is None
    return t


def _pinv_rtol(xp):
    rtol = _fresh(0.1)
    xp.linalg.pinv(_fresh([[1.0, 2.0], [3.0, 4.0]]), rtol=rtol)
    return [rtol]


def _advanced_write(xp):
    import strideweave as sw

    x, index, value = _fresh([1.0, 2.0, 3.0]), _fresh([0, 2]), _fresh([5.0, 6.0])
    with sw.no_grad():
        x[index] = value
    assert x.tolist() == [5.0, 2.0, 6.0]
    return [x, index, value]


def _one(fn, make):
    def run(xp):
        t = make(xp)
        fn(t)
        return [t]
    return run


INTERNAL_READS = {
    "float": _one(float, lambda xp: _fresh([2.5])),
    "int": _one(int, lambda xp: _fresh([3])),
    "bool": _one(bool, lambda xp: _fresh([True])),
    "item": _one(lambda t: t.item(), lambda xp: _fresh([2.5])),
    "tolist": _one(lambda t: t.tolist(), lambda xp: _fresh([2.5, 1.0])),
    "repr": _one(repr, lambda xp: _fresh([2.5, 1.0])),
    "format": _one(lambda t: format(t, ".1f"), lambda xp: _fresh(2.5)),
    "pinv_rtol": _pinv_rtol,
    "complex_real": _one(lambda t: t.__array_namespace__().real(t), lambda xp: _fresh([1 + 2j], xp.complex64)),
    "complex_exp": _one(lambda t: t.__array_namespace__().exp(t), lambda xp: _fresh([1 + 2j], xp.complex64)),
    "any": _one(lambda t: t.__array_namespace__().any(t), lambda xp: _fresh([True, False])),
    "fft": _one(lambda t: t.__array_namespace__().fft.fft(t), lambda xp: _fresh([1.0, 2.0, 3.0, 4.0])),
    "index_tensor": _one(lambda i: _fresh([1.0, 2.0, 3.0])[i], lambda xp: _fresh([0, 2])),
    "advanced_write": _advanced_write,
    "np_allclose": _one(lambda t: np.allclose(t, t), lambda xp: _fresh([1.0, 2.0])),
    "np_gradient_spacing": _one(lambda s: np.gradient(_fresh([1.0, 2.0, 4.0]), s), lambda xp: _fresh([0.0, 1.0, 3.0])),
    "np_quantile_q": _one(lambda q: np.quantile(_fresh([1.0, 2.0, 4.0]), q), lambda xp: _fresh([0.5])),
}


@pytest.mark.parametrize("case", sorted(INTERNAL_READS))
def test_an_internal_read_leaves_the_buffer_unwatched(case, monkeypatch):
    # A read that hands no view of the buffer out (a Python scalar, a string, a copy, a value used
    # and dropped) must not make every later saving call digest a buffer the user never held.
    import strideweave.array_api as xp

    read = INTERNAL_READS[case](xp)
    assert [t.carrier._watch for t in read] == [None] * len(read)
    sizes = _counting_digests(monkeypatch)
    for t in read:
        if t.dtype == xp.float32:
            _ = t * t  # a saving call
    assert sizes == []


def test_to_array_and_numpy_still_watch_what_they_hand_out():
    for export in (lambda t: t.to_array(), lambda t: t.numpy()):
        t = _fresh([1.0, 2.0])
        view = export(t)
        assert t.carrier._watch is not None
        if np.shares_memory(np.asarray(view), t.carrier._array):
            loss = (t * t).sum()
            view[0] = 5.0
            with pytest.raises(RuntimeError, match="in-place modification"):
                loss.backward()


@pytest.mark.parametrize("name", ["real", "imag", "conj"])
def test_a_complex_function_result_owns_its_memory(name):
    import strideweave.array_api as xp

    z = _fresh([1 + 2j, 3 - 4j], xp.complex64)
    out = getattr(xp, name)(z)
    out[0] = 100.0  # NumPy's real and imag are views of the operand: this must not reach z
    assert z.tolist() == [1 + 2j, 3 - 4j]
    assert out.tolist()[1] == getattr(np, name)(np.complex64(3 - 4j))


def test_pinv_backward_uses_the_rtol_it_was_called_with():
    torch = pytest.importorskip("torch")
    import strideweave as sw
    import strideweave.array_api as xp

    host = np.array([[2.0, 0.0], [0.0, 0.5]], np.float32)  # singular values 2 and 0.5
    a = xp.asarray(host.copy())
    rtol = _fresh(0.1)  # cutoff 0.2: both singular values are kept
    loss = xp.sum(xp.linalg.pinv(a, rtol=rtol) * xp.asarray([[1.0, 2.0], [3.0, 4.0]]))
    with sw.no_grad():
        rtol[...] = 0.5  # cutoff 1.0 would drop 0.5; the graph was recorded with 0.1
    loss.backward()
    leaf = torch.tensor(host, dtype=torch.float64, requires_grad=True)
    (torch.linalg.pinv(leaf, rtol=0.1) * torch.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=torch.float64)).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), leaf.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_a_write_outside_a_later_slice_fails_only_the_graph_that_saved_it():
    # Why a saving call on a slice digests the whole buffer (the user guide): the write below lies
    # outside the second slice, yet must be found at the second call, or finding it at the first
    # graph's backward would make the second graph stale too (one version per buffer).
    import strideweave.array_api as xp

    host = np.arange(4, dtype=np.float32)
    x = xp.asarray(host)
    first = xp.sum(x[0:2] * x[0:2])
    host[1] = 5.0
    second = xp.sum(x[2:4] * x[2:4])
    with pytest.raises(RuntimeError, match="in-place modification"):
        first.backward()
    second.backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 0.0, 4.0, 6.0])


def test_storage_of_its_own_is_never_digested(monkeypatch):
    import strideweave as sw
    import strideweave.array_api as xp

    with sw.no_grad():  # a leaf: recorded, the copy would be a node reading the wrapped array
        x = xp.asarray(np.arange(8, dtype=np.float32), copy=True)
    sizes = _counting_digests(monkeypatch)
    loss = xp.sum(x[0:4] * 2.0) + xp.sum(x[4:8] * 3.0)
    loss.backward()
    assert sizes == []
    np.testing.assert_array_equal(x.grad.numpy(), [2.0] * 4 + [3.0] * 4)
