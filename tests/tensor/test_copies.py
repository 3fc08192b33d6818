"""copy.copy, copy.deepcopy and pickle: copies in fresh storage on the same carrier (docs/api.md section 4, "Copies").

``copy.copy`` and ``copy.deepcopy`` are ``xp.asarray(t, copy=True)``: a recorded copy of a Float32
Tensor under grad mode, a fresh leaf otherwise; ``pickle`` stores values and loads a leaf.
"""

import copy
import pickle

import numpy as np
import pytest

import strideweave as sw
from strideweave.testing import available_carriers

CARRIERS = available_carriers()
VALUES = np.array([[1.5, -2.0, 3.25], [4.0, 0.5, -6.0]], np.float32)
COPIES = {"copy.copy": copy.copy, "copy.deepcopy": copy.deepcopy,
          "pickle": lambda t: pickle.loads(pickle.dumps(t))}


@pytest.fixture(params=CARRIERS)
def carrier(request):
    return request.param


def _inputs(carrier):
    plain = sw.tensor(VALUES, carrier=carrier)
    return {
        "row-major": plain,
        "strided view": sw.tensor(np.ascontiguousarray(VALUES.T), carrier=carrier).T.detach(),
        "nested modes": sw.reshape(sw.tensor(np.arange(12, dtype=np.float32), carrier=carrier),
                                   sw.Shape([[2, 3], 2])).detach(),
        "int32": sw.tensor(VALUES.astype(np.int32), carrier=carrier),
        "bool": sw.tensor(VALUES > 0, carrier=carrier),
        "0-d": sw.array_api.asarray(2.5, device=carrier),
    }


@pytest.mark.parametrize("how", COPIES)
def test_copies_are_fresh_and_on_the_same_carrier(carrier, how):
    for label, t in _inputs(carrier).items():
        before = t.numpy().copy()
        out = COPIES[how](t)
        assert type(out) is sw.Tensor, label
        assert type(out.carrier) is type(t.carrier) and out.carrier.kind == t.carrier.kind, label
        assert out.dtype == t.dtype and out.layout.shape == t.layout.shape, label
        # a recorded copy of a differentiable Tensor (its gradient reaches t), a leaf otherwise
        assert out.is_leaf is (how == "pickle" or not out.is_differentiable()), label
        np.testing.assert_array_equal(out.numpy(), before, err_msg=label)
        assert out.carrier is not t.carrier, label
        # fresh storage: a write to the copy leaves the original alone
        out.fill_(False if out.dtype == sw.DType.Bool else 0)
        np.testing.assert_array_equal(t.numpy(), before, err_msg=label)


def test_a_multi_subtensor_tensor_copies_block_by_block(carrier):
    a = sw.tensor(VALUES[:, :1], carrier=carrier)
    b = sw.tensor(VALUES[:, 1:], carrier=carrier)
    t = sw.Tensor.from_subtensors([a, b], mode=1)
    for how, fn in COPIES.items():
        out = fn(t)
        assert len(out.subtensors) == 2, how
        np.testing.assert_array_equal(out.numpy(), VALUES, err_msg=how)
        assert all(x.carrier is not y.carrier for x, y in zip(out.subtensors, t.subtensors)), how


def test_a_tensor_with_history_copies_differentiably(carrier):
    x = sw.tensor(VALUES, carrier=carrier)
    y = x * 2.0
    for how in ("copy.copy", "copy.deepcopy"):
        out = COPIES[how](y)
        assert not out.is_leaf and out.carrier is not y.carrier, how
        (out * out).sum().backward(retain_graph=True)
    np.testing.assert_allclose(x.grad.numpy(), 2 * 8.0 * VALUES, rtol=1e-6)   # twice d(4 x^2)/dx
    view = sw.tensor(VALUES, carrier=carrier)[0]  # a view of a leaf copies differentiably too
    assert not copy.deepcopy(view).is_leaf
    with sw.no_grad():
        assert copy.deepcopy(y).is_leaf
    np.testing.assert_array_equal(copy.deepcopy(y.detach()).numpy(), VALUES * 2)


def test_pickle_stores_the_values_of_a_tensor_with_history_as_a_leaf_as_in_torch(carrier):
    torch = pytest.importorskip("torch")
    reference = pickle.loads(pickle.dumps(torch.tensor(VALUES, requires_grad=True) * 2.0))
    x = sw.tensor(VALUES, carrier=carrier)
    out = pickle.loads(pickle.dumps(sw.exp(x) * 2.0))
    assert reference.is_leaf and reference.grad_fn is None
    assert out.is_leaf and out.autograd_ctx is None
    np.testing.assert_allclose(out.numpy(), np.exp(VALUES) * 2.0, rtol=1e-6)
    (out * 3.0).sum().backward()  # a leaf of its own: the gradient stops there
    assert x.grad is None
    np.testing.assert_allclose(out.grad.numpy(), np.full(VALUES.shape, 3.0))


def test_deepcopy_copies_grad_and_pickle_does_not_as_in_torch(carrier):
    torch = pytest.importorskip("torch")
    w = torch.tensor(VALUES, requires_grad=True)
    (w * w).sum().backward()
    x = sw.tensor(VALUES, carrier=carrier)
    (x * x).sum().backward()
    with sw.no_grad():  # a leaf copy, as torch's deepcopy of a leaf (under grad mode it is a recorded copy)
        twin = copy.deepcopy(x)
    loaded = pickle.loads(pickle.dumps(x))
    torch_twin, torch_loaded = copy.deepcopy(w), pickle.loads(pickle.dumps(w))
    assert torch_twin.grad is not None and torch_loaded.grad is None
    np.testing.assert_allclose(twin.grad.numpy(), torch_twin.grad.numpy())
    assert twin.grad.carrier is not x.grad.carrier
    assert loaded.grad is None
    with pytest.warns(UserWarning, match="not a leaf"):  # under grad mode the copy is a result, as in torch
        assert copy.copy(x).grad is None


def test_deepcopy_keeps_shared_tensors_shared(carrier):
    x = sw.tensor(VALUES, carrier=carrier)
    pair = copy.deepcopy([x, x])
    assert pair[0] is pair[1] and pair[0] is not x


def test_pickle_keeps_the_device():
    jax = pytest.importorskip("jax")
    x = sw.tensor(VALUES, carrier="jax")
    out = pickle.loads(pickle.dumps(x))
    assert out.carrier.kind.device == jax.devices()[0]
