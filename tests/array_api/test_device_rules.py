"""Devices name their carrier; 0-d Tensors made without ``device=`` join their partner; other mixes raise.

``x.device`` resolves back to x's own carrier whatever the default carrier
is; a scalar as library code writes it (``xp.asarray(2.0)``) meets a Tensor
on any carrier, as torch lets a 0-d CPU tensor meet a CUDA one; every other
mix raises TypeError naming both carriers and the fix. On every carrier,
under every default carrier.
"""

import numpy as np
import pytest

import strideweave as sw
import strideweave.array_api as xp
from strideweave.testing import available_carriers

torch = pytest.importorskip("torch")

CARRIERS = available_carriers()


def _class(t):
    return type(t.carrier)


@pytest.mark.parametrize("default", CARRIERS)
def test_device_resolves_back_to_its_own_carrier(carrier, default):
    with sw.set_default_carrier(default):
        x = xp.asarray([1.0, 2.0], device=carrier)
        y = xp.asarray([3.0, 4.0], device=x.device)
        assert _class(y) is _class(x) and y.carrier.namespace is x.carrier.namespace
        assert y.device == x.device and xp.zeros(2, device=x.device).carrier.kind == x.carrier.kind
        xp.sum((x + y) * x).backward()
        assert x.grad.numpy().tolist() == [5.0, 8.0] and _class(x.grad) is _class(x)


def test_a_numpy_array_given_no_device_lands_on_the_default_carrier_without_a_copy():
    # The standard's device=None is the default device for anything not already a Tensor: a NumPy
    # array meets the Tensors xp.asarray made from Python values (SciPy mixes both).
    with sw.set_default_carrier("torch"):
        values = np.array([1.0, 2.0], dtype=np.float32)
        a = xp.asarray(values)
        assert _class(a) is sw.TorchCarrier
        values[0] = 5.0  # host memory shared through DLPack: no copy
        b = a + xp.asarray([10.0, 20.0])
        assert _class(b) is sw.TorchCarrier and b.numpy().tolist() == [15.0, 22.0]
        # naming the carrier, or sw.tensor, keeps the array on its own library's carrier
        kept = xp.asarray(values, device="numpy")
        assert _class(kept) is sw.NumpyCarrier and _class(sw.tensor(values)) is sw.NumpyCarrier
        assert _class(kept + xp.asarray([1.0, 1.0], device=kept.device)) is sw.NumpyCarrier
        # a bare "cpu" still means the default carrier, as before
        assert _class(xp.asarray([1.0], device="cpu")) is sw.TorchCarrier


@pytest.mark.parametrize("default", CARRIERS)
@pytest.mark.parametrize("make", ["asarray", "asarray dtype", "full", "numpy 0-d"])
def test_a_scalar_made_without_device_joins_its_partner(carrier, default, make):
    with sw.set_default_carrier(default):
        x = xp.asarray([1.0, 2.0, 3.0], device=carrier)
        s = {"asarray": lambda: xp.asarray(2.0), "asarray dtype": lambda: xp.asarray(2, dtype=xp.float32),
             "full": lambda: xp.full((), 2.0),
             "numpy 0-d": lambda: xp.asarray(np.asarray(2.0, dtype=np.float32))}[make]()
        out = x * s + s
        assert _class(out) is _class(x)
        assert out.numpy().tolist() == [4.0, 6.0, 8.0]
        assert (s - x).numpy().tolist() == [1.0, 0.0, -1.0] and _class(xp.where(x > 1, x, s)) is _class(x)
        xp.sum(out).backward()
    t = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64, requires_grad=True)
    u = torch.tensor(2.0, dtype=torch.float64, requires_grad=True)
    (t * u + u).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy())
    np.testing.assert_allclose(s.grad.numpy(), u.grad.numpy())
    assert _class(x.grad) is _class(x) and _class(s.grad) is _class(s)  # each gradient on its own carrier


def test_zeros_and_ones_made_without_device_join_too(carrier):
    x = xp.asarray([1.0, 2.0], device=carrier)
    assert (x * xp.ones(()) + xp.zeros(())).numpy().tolist() == [1.0, 2.0]
    assert _class(xp.stack([x[0], xp.zeros(())])) is _class(x)


def _other(carrier):
    return next(c for c in CARRIERS if c != carrier)


def test_other_mixes_raise_naming_both_carriers_and_the_fix(carrier):
    other = _other(carrier)
    x = xp.asarray([1.0, 2.0], device=carrier)
    for y in (xp.asarray([3.0, 4.0], device=other), xp.asarray(3.0, device=other), xp.asarray([3.0], device=other)):
        with pytest.raises(TypeError, match=r"different carriers \(\w+Carrier on .* and \w+Carrier on .*\).*"
                                            r"to_device.*options=ExecutionOptions"):
            x + y


def test_to_device_is_differentiable_and_the_gradient_comes_home(carrier):
    other = _other(carrier)
    x = xp.asarray([1.0, 2.0, 3.0], device=carrier)
    y = xp.asarray([4.0, 5.0, 6.0], device=other)
    moved = (x * x).to_device(y.device)
    assert _class(moved) is _class(y) and not moved.is_leaf
    xp.sum(moved * y + xp.asarray(x, device=y.device)).backward()
    t = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64, requires_grad=True)
    ((t * t) * torch.tensor([4.0, 5.0, 6.0], dtype=torch.float64) + t).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy())
    assert _class(x.grad) is _class(x)


def test_info_default_device_names_the_default_carrier(carrier):
    with sw.set_default_carrier(carrier):
        device = xp.__array_namespace_info__().default_device()
        assert _class(xp.asarray([1.0], device=device)) is _class(xp.asarray([1.0]))
