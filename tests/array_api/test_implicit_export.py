"""Implicit export of a graph Tensor is refused; explicit conversions stay; leaves export freely.

Another library computing on ``np.asarray(t)`` or on ``t.__dlpack__()`` would
cut the gradient silently, so a Tensor with an autograd node (or a wider
value computed from one) raises TypeError saying ``t.detach()``, as torch
refuses ``np.asarray`` of a tensor that requires grad. On every carrier.
"""

import numpy as np
import pytest

import strideweave as sw
import strideweave.array_api as xp
from strideweave.carriers import missing_wide_types, resolve

torch = pytest.importorskip("torch")

IMPLICIT = {
    "np.asarray": np.asarray,
    "np.array": np.array,
    "np.from_dlpack": np.from_dlpack,
    "torch.from_dlpack": torch.from_dlpack,
    "np.asarray of a list": lambda t: np.asarray([t, t]),
}


def _graph(carrier):
    x = xp.asarray([1.0, 2.0, 3.0], device=carrier)
    return x, x * 2.0


@pytest.mark.parametrize("how", sorted(IMPLICIT))
def test_implicit_export_of_a_graph_tensor_is_refused(carrier, how):
    _x, y = _graph(carrier)
    with pytest.raises(TypeError, match=r"autograd node \(Multiply\).*t\.detach\(\)"):
        IMPLICIT[how](y)
    np.testing.assert_array_equal(np.asarray(IMPLICIT[how](y.detach())).reshape(-1)[:3], [2.0, 4.0, 6.0])


def test_torch_refuses_the_same():
    t = torch.tensor([1.0, 2.0], requires_grad=True) * 2
    with pytest.raises(RuntimeError, match="detach"):
        np.asarray(t)


@pytest.mark.parametrize("how", sorted(IMPLICIT))
def test_leaves_export_freely(carrier, how):
    x = xp.asarray([1.0, 2.0, 3.0], device=carrier)
    out = np.asarray(IMPLICIT[how](x))
    np.testing.assert_array_equal(out.reshape(-1)[:3], [1.0, 2.0, 3.0])


def test_explicit_conversions_stay(carrier):
    _, y = _graph(carrier)
    assert y.numpy().tolist() == [2.0, 4.0, 6.0]
    native = y.to_array()
    assert tuple(native.shape) == (3,) and sw.tensor(native).numpy().tolist() == [2.0, 4.0, 6.0]
    assert y.tolist() == [2.0, 4.0, 6.0]
    total = xp.sum(y)
    assert total.item() == 12.0 and float(total) == 12.0 and int(total) == 12 and bool(total)


def test_a_wide_value_computed_from_a_graph_is_refused_and_from_leaves_is_not(carrier):
    wide = sw.DType.Float16 if "float64" in missing_wide_types(resolve(carrier)) else xp.float64
    x, y = _graph(carrier)
    with pytest.raises(TypeError, match=r"is DType.Float(64|16), computed from a Float32 Tensor that became"):
        np.asarray(xp.astype(y, wide) + 1)
    assert np.asarray(xp.astype(x, wide)).tolist() == [1.0, 2.0, 3.0]
    assert np.asarray(xp.astype(y, wide).detach()).tolist() == [2.0, 4.0, 6.0]


def test_from_dlpack_inside_strideweave_keeps_the_history(carrier):
    x, y = _graph(carrier)
    for convert in (xp.from_dlpack, sw.from_dlpack):
        z = convert(y)
        assert not z.is_leaf and z.shape == y.shape and z.numpy().tolist() == [2.0, 4.0, 6.0]
        assert z.carrier is y.carrier  # the same storage
    xp.sum(xp.from_dlpack(y) * x).backward()
    np.testing.assert_allclose(x.grad.numpy(), [4.0, 8.0, 12.0])
    t = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64, requires_grad=True)
    ((t * 2) * t).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy())
