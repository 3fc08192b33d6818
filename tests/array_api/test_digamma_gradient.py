"""digamma's derivative (trigamma) from the standard's functions equals torch's and SciPy's polygamma(1, .)."""

import numpy as np
import pytest

import strideweave as sw
import strideweave.array_api as xp
from strideweave.array_api.special import _trigamma

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(3)
POINTS = np.concatenate([RNG.uniform(1e-3, 30, 400), -RNG.uniform(0, 30, 400), RNG.uniform(30, 1e6, 50),
                         [0.5, 1.0, 1e-8, -1e-8, -2.5, -14.00001, 1e30]])
POLES = np.array([0.0, -1.0, -2.0, -7.0])


@pytest.mark.parametrize("namespace", ["numpy", "array_api_strict"])
def test_trigamma_matches_torch_float64(namespace):
    ns = pytest.importorskip(namespace)
    got = np.asarray(_trigamma(ns, ns.asarray(POINTS)))
    want = torch.special.polygamma(1, torch.tensor(POINTS)).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-8)  # torch's own float64 trigamma is good to ~5e-10
    scipy_special = pytest.importorskip("scipy.special")
    np.testing.assert_allclose(got, scipy_special.polygamma(1, POINTS), rtol=1e-13)
    assert np.all(np.isposinf(np.asarray(_trigamma(ns, ns.asarray(POLES)))))


@pytest.mark.parametrize("carrier", ["numpy", "array_api_strict"])  # (torch and JAX carriers: their own polygamma)
def test_digamma_gradient_matches_torch(carrier):
    if carrier != "numpy":
        pytest.importorskip(carrier)
    values = POINTS[np.abs(POINTS) < 50].astype(np.float32)
    x = sw.tensor(values, carrier=carrier)
    xp.sum(xp.special.digamma(x)).backward()
    tx = torch.tensor(values.astype(np.float64), requires_grad=True)
    torch.special.digamma(tx).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=2e-5)
