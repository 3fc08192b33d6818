"""Multi-subtensor Tensors whose blocks live on different carriers: blockwise forward, refused autograd."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("dask.array")
torch = pytest.importorskip("torch")

import strideweave as sw  # noqa: E402

F32 = np.float32


@pytest.fixture(autouse=True)
def sync():
    import dask

    with dask.config.set(scheduler="synchronous"):
        yield


def _mixed(mode=0):
    """A (7, 3) Tensor (or (3, 7) for mode 1): rows 0-1 on torch, 2-4 on numpy, 5-6 on Dask."""
    host = np.arange(21, dtype=F32).reshape(7, 3) / 10
    pieces = [host[0:2], host[2:5], host[5:7]]
    if mode == 1:
        host, pieces = host.T.copy(), [p.T.copy() for p in pieces]
    blocks = [sw.tensor(pieces[0], carrier="torch"), sw.tensor(pieces[1], carrier="numpy"),
              sw.tensor(pieces[2], carrier="dask")]
    return host, sw.Tensor.from_subtensors(blocks, mode)


CLASSES = [sw.TorchCarrier, sw.NumpyCarrier, sw.DaskCarrier]


@pytest.mark.parametrize("mode", [0, 1])
def test_elementwise_operations_run_block_by_block_on_each_carrier(mode):
    host, x = _mixed(mode)
    other_host = np.linspace(-1, 1, host.size, dtype=F32).reshape(host.shape)
    other = sw.tensor(other_host)  # one numpy Tensor, sliced per block
    row = sw.tensor(np.array([1.0, 2.0, 3.0] if mode == 0 else [[1.0], [2.0], [3.0]], F32))  # broadcasts
    for out, want in ((sw.exp(x) * 2.0, np.exp(host) * 2),
                      (x + other, host + other_host),
                      (other - x, other_host - host),
                      (x * row, host * row.numpy()),
                      (sw.maximum(x, x), host)):
        assert [type(c) for c in out.carriers] == CLASSES
        assert out.shape == host.shape
        np.testing.assert_allclose(out.numpy(), want, rtol=1e-6)


def test_two_multi_subtensor_operands_pair_their_blocks():
    host, x = _mixed()
    y = x * x
    out = x + y
    assert [type(c) for c in out.carriers] == CLASSES
    np.testing.assert_allclose(out.numpy(), host + host * host, rtol=1e-6)


def test_other_operations_need_execution_options():
    host, x = _mixed()
    with pytest.raises(TypeError, match="ExecutionOptions"):
        sw.sum(x)
    total = sw.sum(x, options=sw.ExecutionOptions(carrier="numpy"))
    np.testing.assert_allclose(total.numpy(), [host.sum()], rtol=1e-5)


def test_autograd_entry_points_refuse_a_multi_subtensor_result():
    _host, x = _mixed()
    y = sw.tanh(x)
    before = [b.grad for b in x.subtensors]
    with pytest.raises(NotImplementedError):
        y.backward(sw.ones((7, 3)))
    with pytest.raises(NotImplementedError):
        sw.grad(y, [x.subtensors[0]], sw.ones((7, 3)))
    assert [b.grad for b in x.subtensors] == before


def test_compute_evaluates_the_dask_blocks_only():
    host, x = _mixed()
    (done,) = sw.compute(sw.exp(x))
    assert [type(c) for c in done.carriers] == [sw.TorchCarrier, sw.NumpyCarrier, sw.NumpyCarrier]
    np.testing.assert_allclose(done.numpy(), np.exp(host), rtol=1e-6)
