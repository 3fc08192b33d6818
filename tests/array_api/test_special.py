"""``xp.special``: SciPy's special functions on Tensors differentiate, against torch.special in float64."""

import numpy as np
import pytest

import strideweave as sw
import strideweave.array_api as xp

torch = pytest.importorskip("torch")

_X = np.random.default_rng(3).uniform(0.1, 0.9, (3, 4)).astype(np.float32)
_UNARY = ["erf", "erfc", "expit", "logit", "ndtr", "log_ndtr", "ndtri", "entr", "gammaln", "digamma"]


def _grad_of(carrier, program):
    x = sw.tensor(_X.copy(), carrier=carrier)
    out = program(x * 1.0)
    xp.sum(out).backward()
    return out, x.grad.numpy()


def _torch_grad(program):
    t = torch.tensor(_X.astype(np.float64), requires_grad=True)
    out = program(t)
    out.sum().backward()
    return out.detach().numpy(), t.grad.numpy()


@pytest.mark.parametrize("name", _UNARY)
def test_unary_special_functions_match_torch_special(carrier, name):
    out, grad = _grad_of(carrier, getattr(xp.special, name))
    want_out, want_grad = _torch_grad(getattr(torch.special, name))
    assert out.dtype is xp.float32 and out.autograd_ctx is not None
    np.testing.assert_allclose(out.numpy(), want_out, rtol=2e-5, atol=2e-6)
    np.testing.assert_allclose(grad, want_grad, rtol=2e-4, atol=2e-5)


@pytest.mark.parametrize("name", ["xlogy", "xlog1py"])
def test_binary_special_functions_match_torch_special(carrier, name):
    _, grad = _grad_of(carrier, lambda y: getattr(xp.special, name)(y, y + 0.5))
    _, want = _torch_grad(lambda t: getattr(torch.special, name)(t, t + 0.5))
    np.testing.assert_allclose(grad, want, rtol=2e-4, atol=2e-5)


def _central(function, eps=1e-6):
    import scipy.special as ssp

    x = _X.astype(np.float64)
    grad = np.zeros_like(x)
    for index in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[index] += eps
        down[index] -= eps
        grad[index] = (function(ssp, up).sum() - function(ssp, down).sum()) / (2 * eps)
    return grad


@pytest.mark.parametrize("program", [
    lambda s, y: s.binom(y * 5 + 3, y + 1),
    lambda s, y: s.betainc(2.0, 3.0, y),
    lambda s, y: s.betaincc(2.0, 3.0, y),
], ids=["binom", "betainc", "betaincc"])
def test_functions_torch_lacks_match_central_differences(carrier, program):
    _, grad = _grad_of(carrier, lambda y: program(xp.special, y))
    np.testing.assert_allclose(grad, _central(program), rtol=1e-3, atol=1e-4)


def test_betainc_refuses_a_gradient_for_its_parameters(carrier):
    x = sw.tensor(_X.copy(), carrier=carrier)
    a = xp.asarray(2.0, device=x.device) * 1.0
    out = xp.special.betainc(a, 3.0, x)
    with pytest.raises(NotImplementedError, match="with respect to a or b"):
        xp.sum(out).backward()
    assert x.grad is None


def test_scipy_special_dispatches_to_the_namespace(carrier):
    pytest.importorskip("scipy")
    import os

    assert os.environ.get("SCIPY_ARRAY_API") == "1"   # set by tests/conftest.py before SciPy's import
    import scipy.special

    x = sw.tensor(_X.copy(), carrier=carrier)
    y = x * 2.0                               # a Tensor with history: NumPy would refuse it
    out = scipy.special.erf(y)
    assert isinstance(out, sw.Tensor) and out.autograd_ctx is not None
    xp.sum(out).backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * 2 / np.sqrt(np.pi) * np.exp(-(2 * _X) ** 2), rtol=1e-5)
