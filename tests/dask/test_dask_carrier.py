"""The "dask" carrier: lazy forward and backward, evaluation with sw.compute, layouts as Dask operations.

Most checks run on Dask's synchronous scheduler (fast, in-process, and able to
count how often a chunk function runs); the distributed path is covered by the
spec suite (2-worker LocalCluster, see the root conftest) and by the
lost-worker test below, which starts its own cluster of worker processes.
"""

from __future__ import annotations

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")

import strideweave as sw  # noqa: E402

F32 = np.float32


def _refuse(*args, **kwargs):
    raise AssertionError("a Dask graph was computed")


@pytest.fixture
def sync():
    with dask.config.set(scheduler="synchronous"):
        yield


def _design(rows=12, cols=5, chunk=4, seed=0):
    host = np.random.default_rng(seed).standard_normal((rows, cols)).astype(F32)
    return host, da.from_array(host, chunks=(chunk, cols))


def test_forward_and_backward_compute_nothing():
    _host, X = _design()
    x = sw.tensor(X)
    w = sw.tensor(da.from_array(np.linspace(-1, 1, 5, dtype=F32)))
    with dask.config.set(scheduler=_refuse):
        loss = sw.sum(sw.tanh(x @ w) * sw.transpose(x)[1])
        loss.backward()
        assert isinstance(w.grad.carrier, sw.DaskCarrier)
        assert isinstance(w.grad.carrier.array, da.Array)
        assert isinstance(x.grad.carrier.array, da.Array)


def test_gradients_match_numpy(sync):
    host, X = _design()
    wh = np.linspace(-1, 1, 5, dtype=F32)
    x, w = sw.tensor(X), sw.tensor(da.from_array(wh))
    loss = sw.sum(sw.tanh(x @ w))
    loss.backward()
    got_loss, got_w, got_x = sw.compute(loss, w.grad, x.grad)
    t = np.tanh(host.astype(np.float64) @ wh)
    np.testing.assert_allclose(got_loss.numpy(), [t.sum()], rtol=1e-5)
    np.testing.assert_allclose(got_w.numpy(), host.T @ (1 - t ** 2), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(got_x.numpy(), np.outer(1 - t ** 2, wh), rtol=1e-4, atol=1e-6)
    assert type(got_w.carrier) is sw.NumpyCarrier and got_w.layout == w.grad.layout


def test_matrix_product_of_row_major_operands_differentiates(sync):
    # Dask multiplies in natural order, keeping a row-chunked result (Matmul's ``_ROWS`` backward).
    host, X = _design()
    wh = np.random.default_rng(1).standard_normal((5, 3)).astype(F32)
    x, w = sw.tensor(X), sw.tensor(da.from_array(wh))
    sw.sum(sw.tanh(x @ w)).backward()
    got_x, got_w = sw.compute(x.grad, w.grad)
    t = np.tanh(host.astype(np.float64) @ wh)
    np.testing.assert_allclose(got_w.numpy(), host.T @ (1 - t ** 2), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(got_x.numpy(), (1 - t ** 2) @ wh.T, rtol=1e-4, atol=1e-5)


def test_compute_evaluates_shared_work_once(sync):
    calls = []

    def counted(block):
        if block.size:  # Dask also calls it once on an empty block to learn the result type
            calls.append(block.shape)
        return block

    _host, X = _design()
    x = sw.tensor(X.map_blocks(counted, dtype=F32))
    w = sw.tensor(da.from_array(np.ones(5, F32)))
    loss = sw.sum(x @ w)
    loss.backward()
    sw.compute(loss, w.grad, x @ w)
    assert len(calls) == X.numblocks[0]  # each chunk of x produced once for all three results


def test_compute_reads_only_the_window_a_view_addresses(sync):
    t = sw.tensor(da.arange(100, dtype=F32, chunks=10))
    (part,) = sw.compute(t[40:45])
    np.testing.assert_array_equal(part.numpy(), np.arange(40, 45))
    assert part.carrier.size == 5 and part.offset == 0
    same = sw.tensor(np.ones(3, F32))
    assert sw.compute(same)[0] is same  # eager Tensors come back as they are
    with pytest.raises(TypeError, match="strideweave Tensors"):
        sw.compute(np.ones(3))


@pytest.mark.parametrize("make", [
    lambda t: sw.transpose(t),
    lambda t: t[1:3],
    lambda t: sw.broadcast_to(t[0:1], (4, 5)),
    lambda t: sw.reshape(t, (5, 12)),
])
def test_structured_layouts_are_dask_operations_without_take(make, sync):
    _host, X = _design()
    t = sw.tensor(X)
    view = make(t)
    values = view.to_array()
    assert t.carrier._cache is None  # no index array was built
    layers = " ".join(values.__dask_graph__().layers)
    assert "take" not in layers
    np.testing.assert_array_equal(np.asarray(values), view.numpy())


def test_other_layouts_gather_with_take_and_scatter_adds_duplicates(sync):
    base = np.arange(8, dtype=F32)
    t = sw.Tensor.from_storage(da.from_array(base, chunks=3), sw.Layout(sw.Shape([4, 2]), sw.Stride([1, 1])))
    np.testing.assert_array_equal(t.numpy(), [[0, 1], [1, 2], [2, 3], [3, 4]])
    assert t.carrier._cache  # an overlapping layout is read through an index array
    carrier = sw.DaskCarrier.allocate(5, sw.DType.Float32)
    carrier.scatter_add(sw.Layout(sw.Shape([4, 2]), sw.Stride([1, 1])), 0, np.ones((4, 2), F32))
    np.testing.assert_array_equal(sw.DaskCarrier.to_numpy(carrier.array), [1, 2, 2, 2, 1])
    assert carrier.version == 1


def test_chunks_of_a_read_are_no_larger_than_the_source_chunks(sync):
    _host, X = _design(rows=40, cols=6, chunk=8)
    t = sw.tensor(X)
    for view in (t, sw.transpose(t), t[8:32]):
        values = view.rev_array()
        largest = max(np.prod(c) for c in _block_shapes(values))
        assert largest <= 8 * 6, (view.layout, values.chunks)


def _block_shapes(a):
    import itertools

    return itertools.product(*a.chunks)


def test_writes_build_a_new_graph_and_bump_the_version(sync):
    t = sw.tensor(da.zeros(6, dtype=F32, chunks=2))
    before = t.carrier.array
    name = before.name
    t[2] = 5.0
    assert t.carrier.version == 1 and t.carrier.array is not before and before.name == name
    np.testing.assert_array_equal(t.numpy(), [0, 0, 5, 0, 0, 0])
    np.testing.assert_array_equal(np.asarray(before), np.zeros(6))  # earlier graphs keep their values


def test_a_write_through_the_wrapped_dask_array_invalidates_the_graph(sync):
    native = da.from_array(np.ones(4, F32), chunks=2)
    x = sw.tensor(native)
    y = sw.sum(x * x)
    x.carrier.array[0] = 3.0  # a setitem behind the carrier's back changes the graph name
    with pytest.raises(RuntimeError, match="in-place"):
        y.backward()


def test_unknown_chunk_sizes_are_refused_with_the_fix():
    x = da.from_array(np.arange(6, dtype=F32), chunks=3)
    unknown = x[x > 2]
    with pytest.raises(ValueError, match=r"unknown chunk sizes.*compute_chunk_sizes"):
        sw.tensor(unknown)


def test_mixed_dask_and_eager_operands_need_execution_options(sync):
    a = sw.tensor(da.from_array(np.arange(3, dtype=F32)))
    b = sw.tensor(np.ones(3, F32))
    with pytest.raises(TypeError, match=r"DaskCarrier.*NumpyCarrier.*ExecutionOptions"):
        sw.add(a, b)
    c = sw.multiply(a, b, options=sw.ExecutionOptions(carrier="dask"))
    assert type(c.carrier) is sw.DaskCarrier
    sw.sum(c).backward()
    assert type(a.grad.carrier) is sw.DaskCarrier and type(b.grad.carrier) is sw.NumpyCarrier
    np.testing.assert_array_equal(b.grad.numpy(), [0, 1, 2])


def test_the_dask_extra_is_named_when_missing(monkeypatch):
    import builtins

    from strideweave.carriers import dask_carrier

    real_import = builtins.__import__

    def no_dask(name, *args, **kwargs):
        if name.startswith(("dask", "array_api_compat.dask")):
            raise ImportError(f"No module named {name!r}")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(dask_carrier, "xp_dask", None)
    monkeypatch.setattr(builtins, "__import__", no_dask)
    with pytest.raises(ImportError, match=r"strideweave\[dask\]"):
        dask_carrier._load()


def _kill_worker(block):
    import os

    if block.size:  # not when Dask probes the function on an empty block in this process
        os._exit(1)
    return block


def test_a_lost_worker_is_named_and_leaves_grad_alone():
    distributed = pytest.importorskip("distributed")
    with (
        dask.config.set({"distributed.scheduler.allowed-failures": 0}),
        distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=":0") as cluster,
        distributed.Client(cluster),
    ):
            w = sw.tensor(da.from_array(np.ones(4, F32), chunks=2))
            sw.sum(w * w).backward()
            grad = w.grad
            doomed = sw.tensor(da.from_array(np.ones(4, F32), chunks=2).map_blocks(_kill_worker, dtype=F32))
            with pytest.raises(RuntimeError, match=r"lost a worker.*KilledWorker"):
                sw.compute(w.grad, doomed)
            assert w.grad is grad
    with dask.config.set(scheduler="synchronous"):  # the lazy gradient still evaluates elsewhere
        np.testing.assert_array_equal(sw.compute(w.grad)[0].numpy(), [2, 2, 2, 2])


@pytest.mark.parametrize("op", ["add", "hypot"])
def test_a_chunked_vector_broadcast_against_a_transposed_matrix(sync, op):
    # The vector is read as (3, 1) by a blockwise layer; Dask's optimiser once dropped blocks when it
    # fused that layer's extent-1 axis into an operation that broadcasts it over two chunks.
    h0 = np.random.default_rng(2).standard_normal((3, 3)).astype(F32)
    h1 = np.random.default_rng(3).standard_normal(3).astype(F32)
    x0, x1 = sw.tensor(da.from_array(h0, chunks=2)), sw.tensor(da.from_array(h1, chunks=2))
    out = getattr(sw.array_api, op)(x0.mT, x1)
    loss = sw.sum(out * out)
    loss.backward()
    got, grad = sw.compute(out, x1.grad)
    want = getattr(np, op)(h0.T.astype(np.float64), h1)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-5)
    slope = np.ones_like(want) if op == "add" else h1 / want
    np.testing.assert_allclose(grad.numpy(), (2 * want * slope).sum(axis=0), rtol=1e-4)


def test_a_reshape_dask_refuses_goes_through_one_axis(sync):
    # (3, 2, 3) to (2, 9) neither merges nor splits axes evenly: dask.array.reshape raises NotImplementedError.
    host = np.random.default_rng(4).standard_normal((3, 2, 3)).astype(F32)
    x = sw.tensor(da.from_array(host, chunks=2))
    out = sw.array_api.reshape(sw.array_api.tanh(x), (2, 9))
    loss = sw.sum(out * sw.tensor(da.from_array(np.arange(18, dtype=F32).reshape(2, 9))))
    loss.backward()
    got, grad = sw.compute(out, x.grad)
    np.testing.assert_allclose(got.numpy(), np.tanh(host.astype(np.float64)).reshape(2, 9), rtol=1e-5)
    slope = 1 - np.tanh(host.astype(np.float64)) ** 2
    np.testing.assert_allclose(grad.numpy(), slope * np.arange(18).reshape(3, 2, 3), rtol=1e-4, atol=1e-6)
