"""Writes into Dask Tensors and their backward, against torch float64 autograd."""

from __future__ import annotations

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")
torch = pytest.importorskip("torch")

import strideweave as sw  # noqa: E402
import strideweave.array_api as xp  # noqa: E402


@pytest.mark.parametrize("chunks", [2, 3])
def test_masked_write_backward_matches_torch(chunks):
    host = np.random.default_rng(3).standard_normal((2, 3)).astype(np.float32)
    mask = np.array([True, False, True])
    with dask.config.set(scheduler="synchronous"):
        x = sw.tensor(da.from_array(host, chunks=chunks))
        y = xp.asarray(x, copy=True)
        y[..., ~xp.asarray(mask)] = -1.0
        loss = xp.sum(y * x)
        loss.backward()
        got_loss, got_grad = sw.compute(loss, x.grad)

    t = torch.tensor(host.astype(np.float64), requires_grad=True)
    u = t.clone()
    u[..., ~torch.from_numpy(mask)] = -1.0
    want = (u * t).sum()
    want.backward()
    np.testing.assert_allclose(got_loss.numpy(), [want.item()], rtol=1e-5)
    np.testing.assert_allclose(got_grad.numpy(), t.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_a_scalar_written_into_a_one_element_slice_gets_its_gradient():
    # The written value's gradient is a take of one element from a two-element cotangent.
    with dask.config.set(scheduler="synchronous"):
        x0 = sw.tensor(da.from_array(np.array([1.21, -0.549], dtype=np.float32), chunks=2))
        x1 = xp.asarray(np.float32(-0.635), device=x0.device)
        v0 = xp.ones((2,), dtype=x0.dtype, device=x0.device)
        v1 = xp.exp(x1)
        v0[:2:2] = v1
        loss = xp.sum(v0 * v0) + xp.sum(v1 * v1)
        loss.backward()
        got = x1.grad.numpy()
    t = torch.tensor(-0.635, dtype=torch.float64, requires_grad=True)
    u = torch.ones(2, dtype=torch.float64)
    e = torch.exp(t)
    u[:2:2] = e
    ((u * u).sum() + e * e).backward()
    np.testing.assert_allclose(got, t.grad.numpy(), rtol=1e-5)
