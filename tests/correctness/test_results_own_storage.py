"""A result that is no view keeps its values when its operand is written afterwards.

NumPy's ``flip`` and ``reshape`` return views; a result adopted from one
would be a second carrier over the operand's memory, whose writes neither
version counts: the result changes silently, and backward reads the new
values. The views the contract names (basic indexing, ``reshape`` where the
layout allows, ``permute_dims``, ``expand_dims``, ``squeeze``) share one
carrier and are not listed here.
"""

import numpy as np
import pytest

import strideweave as sw
import strideweave.array_api as xp

_COPIES = {
    "flip": lambda a: xp.flip(a),
    "flip of a reshape": lambda a: xp.flip(xp.reshape(a, (-1,))),
    "roll": lambda a: xp.roll(a, 1),
    "moveaxis": lambda a: xp.moveaxis(a, 0, -1) if a.ndim else xp.flip(a),
    "sort": lambda a: xp.sort(xp.reshape(a, (-1,))),
    "cumulative_sum": lambda a: xp.cumulative_sum(xp.reshape(a, (-1,))),
    "take": lambda a: xp.take(xp.reshape(a, (-1,)), xp.asarray([0], device=a.device)),
    "tile": lambda a: xp.tile(a, (1,) * a.ndim),
    "concat": lambda a: xp.concat([xp.reshape(a, (-1,))]),
    "astype": lambda a: xp.astype(a, a.dtype),
}
_SHAPES = [(), (1,), (3,), (2, 3)]


@pytest.mark.parametrize("shape", _SHAPES, ids=str)
@pytest.mark.parametrize("name", list(_COPIES))
def test_a_copy_keeps_its_values_after_a_write_into_its_operand(carrier, name, shape):
    values = np.arange(1, 1 + int(np.prod(shape)), dtype=np.float32).reshape(shape)
    x = xp.asarray(values, device=carrier)
    y = _COPIES[name](x * 1.5)  # a result as operand: its buffer may be handed on as it is
    leaf_y = _COPIES[name](x)
    before, leaf_before = np.asarray(y.numpy()).copy(), np.asarray(leaf_y.numpy()).copy()
    with sw.no_grad():
        x[...] = -7.0
    np.testing.assert_array_equal(np.asarray(leaf_y.numpy()), leaf_before)
    np.testing.assert_array_equal(np.asarray(y.numpy()), before)


def test_a_flip_of_a_written_result_keeps_torch_values_and_never_a_silent_gradient(carrier):
    """The soak's reproducer: ``flip`` of a 1-element reshape was a second carrier over ``v0``."""
    torch = pytest.importorskip("torch")
    x = xp.asarray(np.float32(1.536), device=carrier)
    v0 = xp.hypot(x, x)
    v2 = xp.flip(xp.reshape(v0, (-1,)))
    v0 += x
    t = torch.tensor(1.536, dtype=torch.float64, requires_grad=True)
    w0 = torch.hypot(t, t)
    w2 = torch.flip(w0.reshape(-1), (0,))
    w0 = w0 + t
    np.testing.assert_allclose(np.asarray(v2.numpy()), w2.detach().numpy(), rtol=1e-6)
    ((w0 * w0).sum() + (w2 * w2).sum()).backward()
    loss = xp.sum(v0 * v0) + xp.sum(v2 * v2)
    try:
        loss.backward()
    except sw.InPlaceModificationError:
        # flip saved v0's storage before the write and the write cannot reach it: the spec's refusal
        assert x.grad is None
        return
    np.testing.assert_allclose(float(x.grad.numpy()), float(t.grad), rtol=1e-5)
