"""Writes made through a wrapped native array, behind StrideWeave's back, never give a silent wrong gradient."""

import numpy as np
import pytest

import strideweave as sw

IN_PLACE = "in-place modification"


def _values(t):
    return np.asarray(t.numpy(), dtype=np.float64)


# Small buffers are snapshotted as bytes, large ones as an array compared block by block.
SIZES = pytest.mark.parametrize("n", [2, 70_000], ids=["small", "large"])


def _host(n):
    return np.linspace(1.0, 2.0, n, dtype=np.float32)


@SIZES
def test_numpy_host_write_after_forward_is_detected(n):
    host = _host(n)
    x = sw.tensor(host)
    loss = sw.sum(x * x)
    host[-1] = 7.0
    with pytest.raises(RuntimeError, match=IN_PLACE):
        loss.backward()
    assert x.grad is None


@SIZES
def test_numpy_host_write_before_forward_is_used(n):
    host = _host(n)
    x = sw.tensor(host)
    first = sw.sum(x * x)
    first.backward()
    host[-1] = 7.0                      # after the traversal: a new forward sees the new value
    x.grad = None
    second = sw.sum(x * x)
    second.backward()
    np.testing.assert_array_equal(_values(x.grad), 2.0 * host)


@SIZES
def test_numpy_write_between_two_forwards_invalidates_only_the_first(n):
    host = _host(n)
    x = sw.tensor(host)
    stale = sw.sum(x * x)
    host[-1] = 5.0
    fresh = sw.sum(x * x)
    fresh.backward()
    np.testing.assert_array_equal(_values(x.grad), 2.0 * host)
    with pytest.raises(RuntimeError, match=IN_PLACE):
        stale.backward()


def test_numpy_write_through_to_array_view_is_detected():
    x = sw.tensor([1.0, 2.0, 3.0])
    y = sw.exp(x)                       # exp saves its result for backward
    loss = sw.sum(y * 1.0)
    view = y.to_array()
    if np.shares_memory(view, y.carrier.array):
        view[0] = 100.0
        with pytest.raises(RuntimeError, match=IN_PLACE):
            loss.backward()


def test_nan_values_are_not_mistaken_for_writes():
    host = np.array([np.nan, 2.0], np.float32)
    x = sw.tensor(host)
    loss = sw.sum(x * 3.0)
    loss.backward()
    np.testing.assert_array_equal(_values(x.grad), [3.0, 3.0])


def test_read_only_numpy_arrays_need_no_watch():
    host = np.array([1.0, 2.0], np.float32)
    host.flags.writeable = False
    x = sw.tensor(host)
    assert x.carrier._watch is None
    sw.sum(x * x).backward()
    np.testing.assert_array_equal(_values(x.grad), [2.0, 4.0])


def test_read_only_view_of_writable_memory_is_still_watched():
    base = np.array([1.0, 2.0], np.float32)
    view = base[:]
    view.flags.writeable = False
    x = sw.tensor(view)
    loss = sw.sum(x * x)
    base[0] = 7.0                       # the memory changes through the writable base
    with pytest.raises(RuntimeError, match=IN_PLACE):
        loss.backward()
    assert x.grad is None


def test_read_only_view_of_immutable_bytes_needs_no_watch():
    x = sw.tensor(np.frombuffer(np.array([1.0, 2.0], np.float32).tobytes(), np.float32))
    assert x.carrier._watch is None
    sw.sum(x * x).backward()
    np.testing.assert_array_equal(_values(x.grad), [2.0, 4.0])


def test_from_storage_host_write_is_detected():
    host = np.arange(6, dtype=np.float32)
    x = sw.Tensor.from_storage(host, sw.Layout(sw.Shape([2, 3])))
    loss = sw.sum(x * x)
    host[4] = -1.0
    with pytest.raises(RuntimeError, match=IN_PLACE):
        loss.backward()


def test_torch_in_place_write_is_detected():
    torch = pytest.importorskip("torch")
    host = torch.tensor([1.0, 2.0])
    x = sw.tensor(host)
    loss = sw.sum(x * x)
    host.add_(1)
    with pytest.raises(RuntimeError, match=IN_PLACE):
        loss.backward()
    assert x.grad is None


def test_torch_write_through_a_view_of_the_wrapped_tensor_is_detected():
    torch = pytest.importorskip("torch")
    base = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    x = sw.tensor(base)
    loss = sw.sum(x * x)
    base[1].mul_(2)                     # views share torch's version counter
    with pytest.raises(RuntimeError, match=IN_PLACE):
        loss.backward()


def test_torch_public_mutation_bumps_version_once():
    pytest.importorskip("torch")
    x = sw.zeros(4, carrier="torch")
    before = x.carrier.version
    x[1] = 3.0
    x.add_(1.0)
    assert x.carrier.version == before + 2


def test_array_api_strict_host_write_is_detected():
    xp = pytest.importorskip("array_api_strict")
    host = xp.asarray([1.0, 2.0], dtype=xp.float32)
    x = sw.tensor(host)
    loss = sw.sum(x * x)
    host[0] = 7.0
    with pytest.raises(RuntimeError, match=IN_PLACE):
        loss.backward()


def test_jax_arrays_cannot_change_behind_the_carrier():
    jnp = pytest.importorskip("jax.numpy")
    host = jnp.asarray([1.0, 2.0], dtype=jnp.float32)
    x = sw.tensor(host)
    loss = sw.sum(x * x)
    host = host.at[0].set(7.0)          # a new array; the wrapped one is unchanged
    loss.backward()
    np.testing.assert_array_equal(_values(x.grad), [2.0, 4.0])


def test_numpy_write_through_a_gathered_view_of_a_result_is_detected():
    x = sw.tensor(np.array([1.0, 2.0, 3.0], np.float32))
    y = sw.exp(x)
    loss = sw.sum(y * y)
    view = y.carrier.gather(y.layout)   # canonical layout: a view of the result's buffer
    assert np.shares_memory(view, y.carrier.array)
    view[2] = 0.0
    with pytest.raises(RuntimeError, match=IN_PLACE):
        loss.backward()
    assert x.grad is None
