"""The Dask task graph of a gradient over a row-chunked design matrix, against the same gradient by hand.

The workloads of ``benchmarks/distributed.py`` at a small size: the graph's
shape depends on the number of chunks, not on their size. StrideWeave's
graph may differ from the hand-written one only by what its autograd form
adds: no rechunk (the full reduction's cotangent comes in the chunks of the
values it was reduced from), no reshape of the design matrix to 1-D and
back, no transposed read of it (a row-major operand of a matrix product is
read as its buffer in natural shape), and after Dask's optimisation no more
tasks than by hand.
"""

from __future__ import annotations

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")

import strideweave as sw  # noqa: E402

F32 = np.float32
CHUNKS, ROWS, FEATURES = 8, 16, 5


@pytest.fixture(autouse=True)
def sync():
    with dask.config.set(scheduler="synchronous"):
        yield


def _data():
    """X (row chunks, generated chunk by chunk), 0/1 targets y and weights w, as the benchmark makes them."""
    rng = da.random.default_rng(0)
    n = CHUNKS * ROWS
    X = rng.standard_normal((n, FEATURES), chunks=(ROWS, FEATURES), dtype=F32)
    y = (rng.random(n, chunks=ROWS) < 0.5).astype(F32)
    w = da.from_array(np.linspace(-0.5, 0.5, FEATURES, dtype=F32))
    return X, y, w


def _by_hand(workload, X, y, w):
    n = X.shape[0]
    z = X @ w
    if workload == "logistic":
        r = 1.0 / (1.0 + da.exp(-z)) - y
    else:
        r = z - y
    scale = {"least_squares": 1.0, "mean_of_squares": 2.0, "logistic": 1.0}[workload]
    return (X.T @ r) * F32(scale / n)


def _strideweave(workload, X, y, w):
    n = X.shape[0]
    Xt, yt, wt = sw.tensor(X), sw.tensor(y), sw.tensor(w)
    z = Xt @ wt
    if workload == "least_squares":
        r = z - yt
        loss = sw.sum(r * r) * (0.5 / n)
    elif workload == "mean_of_squares":
        loss = sw.mean((z - yt) ** 2)
    else:
        loss = sw.mean(sw.log(1.0 + sw.exp(z)) - yt * z)
    loss.backward()
    assert wt.grad.carrier.size == FEATURES and wt.grad.offset == 0  # the buffer is the gradient
    return wt.grad.carrier.array


def _optimised_tasks(array):
    (optimised,) = dask.optimize(array)
    return len(optimised.__dask_graph__())


WORKLOADS = ["least_squares", "mean_of_squares", "logistic"]


@pytest.mark.parametrize("workload", WORKLOADS)
def test_the_gradient_matches_the_hand_written_one(workload):
    X, y, w = _data()
    np.testing.assert_allclose(np.asarray(_strideweave(workload, X, y, w)),
                               np.asarray(_by_hand(workload, X, y, w)), rtol=2e-5, atol=1e-6)


@pytest.mark.parametrize("workload", WORKLOADS)
def test_the_reduction_cotangent_needs_no_rechunk(workload):
    X, y, w = _data()
    layers = _strideweave(workload, X, y, w).__dask_graph__().layers
    assert not [name for name in layers if name.startswith("rechunk")]


@pytest.mark.parametrize("workload", WORKLOADS)
def test_the_design_matrix_is_read_without_a_reshape(workload):
    X, y, w = _data()
    graph = _strideweave(workload, X, y, w).__dask_graph__()
    readers = [name for name in graph.layers if X.name in graph.dependencies[name]]
    assert readers and not [name for name in readers if name.startswith("reshape")], readers


@pytest.mark.parametrize("workload", WORKLOADS)
def test_the_optimised_graph_has_no_more_tasks_than_by_hand(workload):
    X, y, w = _data()
    ours = _optimised_tasks(_strideweave(workload, X, y, w))
    hand = _optimised_tasks(_by_hand(workload, X, y, w))
    assert ours <= hand, (ours, hand)


# ----- several output columns: X @ W with W of shape (features, k) --------------------------------------

def _columns_data(k):
    """X as in ``_data``, targets Y (n, k) in the same row chunks, and weights W (features, k), row-major."""
    rng = da.random.default_rng(1)
    n = CHUNKS * ROWS
    X = rng.standard_normal((n, FEATURES), chunks=(ROWS, FEATURES), dtype=F32)
    Y = rng.standard_normal((n, k), chunks=(ROWS, k), dtype=F32)
    W = da.from_array(np.linspace(-0.5, 0.5, FEATURES * k, dtype=F32).reshape(FEATURES, k))
    return X, Y, W


def _columns_by_hand(X, Y, W):
    return (X.T @ (X @ W - Y)) * F32(1.0 / X.shape[0])


def _columns_strideweave(X, Y, W):
    n = X.shape[0]
    Xt, Yt, Wt = sw.tensor(X), sw.tensor(Y), sw.tensor(W)
    R = Xt @ Wt - Yt
    loss = sw.sum(R * R) * (0.5 / n)
    loss.backward()
    assert Wt.grad.carrier.size == W.size and Wt.grad.offset == 0 and Wt.grad.layout == Wt.layout
    return Wt.grad


@pytest.mark.parametrize("k", [1, 3, 10])
def test_several_output_columns_match_the_hand_written_gradient(k):
    X, Y, W = _columns_data(k)
    got = _columns_strideweave(X, Y, W).numpy()
    want = np.asarray(_columns_by_hand(X, Y, W))
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=1e-6)
    Xh, Yh, Wh = (np.asarray(a, dtype=np.float64) for a in (X, Y, W))
    np.testing.assert_allclose(got, Xh.T @ (Xh @ Wh - Yh) / Xh.shape[0], rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("k", [1, 3, 10])
def test_several_output_columns_cost_no_more_tasks_than_by_hand(k):
    X, Y, W = _columns_data(k)
    ours = _columns_strideweave(X, Y, W).carrier.array
    assert not [name for name in ours.__dask_graph__().layers if name.startswith("rechunk")]
    hand = _optimised_tasks(_columns_by_hand(X, Y, W))
    assert _optimised_tasks(ours) <= hand, (_optimised_tasks(ours), hand)


@pytest.mark.parametrize("k", [1, 3])
def test_a_product_over_row_chunks_keeps_them(k):
    X, _, W = _columns_data(k)
    Z = sw.tensor(X) @ sw.tensor(W)
    assert Z.layout == sw.Layout((X.shape[0], k), (k, 1))  # row-major, as X is
    shaped = Z.carrier.shaped((X.shape[0], k))
    assert shaped.chunks == ((ROWS,) * CHUNKS, (k,))
    assert Z.carrier.array.chunks == ((ROWS * k,) * CHUNKS,)
    np.testing.assert_allclose(Z.numpy(), np.asarray(X) @ np.asarray(W), rtol=1e-5, atol=1e-6)


def test_a_product_with_a_transposed_operand_is_still_right():
    # Not row-major: the rev-array route, whatever the storage.
    X, _, W = _columns_data(3)
    Xt, Wt = sw.tensor(X), sw.tensor(W)
    Z = sw.transpose(Wt) @ sw.transpose(Xt)  # (3, n)
    sw.sum(Z * Z).backward()
    Xh, Wh = np.asarray(X, np.float64), np.asarray(W, np.float64)
    np.testing.assert_allclose(Z.numpy(), (Xh @ Wh).T, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(Wt.grad.numpy(), 2 * Xh.T @ (Xh @ Wh), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(Xt.grad.numpy(), 2 * (Xh @ Wh) @ Wh.T, rtol=1e-4, atol=1e-4)


def test_the_gradient_of_the_design_matrix_through_several_columns():
    X, Y, W = _columns_data(3)
    Xt, Wt = sw.tensor(X), sw.tensor(W)
    R = Xt @ Wt - sw.tensor(Y)
    sw.sum(R * R).backward()
    Xh, Yh, Wh = (np.asarray(a, dtype=np.float64) for a in (X, Y, W))
    np.testing.assert_allclose(Xt.grad.numpy(), 2 * (Xh @ Wh - Yh) @ Wh.T, rtol=1e-4, atol=1e-5)


def test_a_write_through_the_buffer_is_read_back_not_the_array_it_was_wrapped_as():
    host = np.arange(12, dtype=F32).reshape(4, 3)
    x = sw.tensor(da.from_array(host, chunks=(2, 3)))
    x.carrier.array[0] = 100.0  # behind the carrier's back: the 1-D buffer changes
    want = host.copy()
    want[0, 0] = 100.0
    np.testing.assert_array_equal(x.numpy(), want)
    np.testing.assert_array_equal(sw.transpose(x).numpy(), want.T)


def test_a_write_to_the_wrapped_object_leaves_the_tensor_alone():
    host = np.arange(12, dtype=F32).reshape(4, 3)
    native = da.from_array(host, chunks=(2, 3))
    x = sw.tensor(native)
    native[1, 1] = -1.0  # Dask arrays are values: the Tensor keeps the graph it wrapped
    np.testing.assert_array_equal(x.numpy(), host)
    np.testing.assert_array_equal(sw.transpose(x).numpy(), host.T)


@pytest.mark.parametrize(("shape", "chunks"), [((6, 4), (2, 4)), ((4, 3, 5), (2, 3, 5)), ((4, 3, 5), (1, 2, 5))])
def test_views_of_a_wrapped_array_read_its_values(shape, chunks):
    host = np.arange(np.prod(shape), dtype=F32).reshape(shape)
    x = sw.tensor(da.from_array(host, chunks=chunks))
    reversed_axes = tuple(range(len(shape)))[::-1]
    for view, want in ((x, host), (sw.permute(x, reversed_axes), host.transpose(reversed_axes)),
                       (sw.permute(x, (1, 0, *reversed_axes[:-2])), np.moveaxis(host, 1, 0)),
                       (x[1:3], host[1:3]),
                       (sw.reshape(x, (host.size,)), host.reshape(-1, order="F"))):  # colexicographic
        np.testing.assert_array_equal(view.numpy(), want)


HOST = np.arange(12, dtype=F32).reshape(4, 3)


@pytest.mark.parametrize(("loss", "want"), [
    (lambda x: sw.sum(x * x), 2 * HOST),
    (lambda x: sw.mean(x), np.full_like(HOST, 1 / 12)),
    (lambda x: sw.array_api.sum(x * x), 2 * HOST),  # a 0-d result
    (lambda x: sw.array_api.mean(sw.exp(x / 10)), np.exp(HOST / 10) / 120),
])
def test_a_full_reduction_cotangent_comes_in_the_chunks_of_its_input(loss, want):
    x = sw.tensor(da.from_array(HOST, chunks=(2, 3)))
    loss(x).backward()
    grad = x.grad.carrier.array
    assert grad.chunks == x.carrier.array.chunks
    assert not [name for name in grad.__dask_graph__().layers if name.startswith("rechunk")]
    np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-6)


@pytest.fixture
def computed(monkeypatch):
    """The arrays ``sw.compute`` hands to Dask, recorded."""
    from strideweave.tensors import compute as compute_module

    seen = []
    real = compute_module.compute_arrays

    def recording(arrays):
        seen.extend(arrays)
        return real(arrays)

    monkeypatch.setattr(compute_module, "compute_arrays", recording)
    return seen


def test_computing_a_wrapped_matrix_or_its_gradient_needs_no_reshape_to_1d(computed):
    host = np.random.default_rng(1).standard_normal((8, 3)).astype(F32)
    wh = np.array([0.5, -1.0, 2.0], F32)
    native = da.from_array(host, chunks=(2, 3))
    x, w = sw.tensor(native), sw.tensor(da.from_array(wh))
    sw.sum(sw.tanh(x @ w)).backward()
    got_x, got_grad = sw.compute(x, x.grad)
    assert computed[0].name == native.name  # the wrapped array itself: no task added
    assert computed[1].shape == host.shape and not computed[1].name.startswith("reshape")
    np.testing.assert_array_equal(got_x.numpy(), host)
    t = np.tanh(host.astype(np.float64) @ wh)
    np.testing.assert_allclose(got_grad.numpy(), np.outer(1 - t ** 2, wh), rtol=1e-5, atol=1e-6)
    assert got_x.layout == x.layout and got_grad.layout == x.grad.layout


def test_a_write_through_a_placed_gradient_is_computed():
    host = np.ones((4, 3), F32)
    x = sw.tensor(da.from_array(host, chunks=(2, 3)))
    sw.sum(x * x).backward()
    x.grad.carrier.array[0] = 7.0  # behind the carrier's back
    want = 2 * host
    want[0, 0] = 7.0
    np.testing.assert_array_equal(sw.compute(x.grad)[0].numpy(), want)
    np.testing.assert_array_equal(sw.compute(x.grad[1:3])[0].numpy(), want[1:3])  # a window: a slice
