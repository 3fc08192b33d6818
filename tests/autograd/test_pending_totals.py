"""One pending total per Tensor, whatever form its contributions take.

Contributions reach a Tensor as raw buffers (from nodes that ran flat),
cotangent Tensors (views, reductions, matmul) or values still to be placed;
in every order they must add up to torch's float64 gradient, and no .grad
may share memory with another .grad, a saved value or the caller's arrays.
"""

import itertools

import numpy as np
import pytest

import strideweave as sw

torch = pytest.importorskip("torch")

CARRIERS = ["numpy", "torch", "jax", "array_api_strict"]

X0 = (np.arange(12, dtype=np.float32).reshape(3, 4) - 5.0) / 7.0
W0 = np.linspace(-1.0, 1.0, 8, dtype=np.float32).reshape(4, 2)

# name -> (StrideWeave term, torch term), each a scalar of x (3 x 4) and w (4 x 2).
TERMS = {
    "flat": (lambda x, w: sw.sum(x * 2.0 + x * x), lambda x, w: torch.sum(x * 2.0 + x * x)),
    "slice": (lambda x, w: sw.sum(x[1:, :] * 3.0), lambda x, w: torch.sum(x[1:, :] * 3.0)),
    "strided": (lambda x, w: sw.sum(x[:, ::2]), lambda x, w: torch.sum(x[:, ::2])),
    "matmul": (lambda x, w: sw.sum(x @ w), lambda x, w: torch.sum(x @ w)),
    "transpose": (lambda x, w: sw.sum(sw.transpose(x) * 2.0), lambda x, w: torch.sum(x.T * 2.0)),
    "reduce_all": (lambda x, w: sw.array_api.sum(x, axis=(0, 1)), lambda x, w: torch.sum(x, dim=(0, 1))),
    "reduce_rows": (lambda x, w: sw.sum(sw.array_api.sum(x, axis=1) ** 2),
                    lambda x, w: torch.sum(torch.sum(x, dim=1) ** 2)),
}

# The flat term before and after every other kind, then several kinds at once.
ORDERS = [pair for other in TERMS if other != "flat" for pair in (("flat", other), (other, "flat"))]
ORDERS += [("slice", "matmul", "flat", "reduce_all"), ("reduce_all", "flat", "strided", "transpose")]


@pytest.fixture(params=CARRIERS)
def carrier(request):
    pytest.importorskip({"numpy": "numpy", "torch": "torch", "jax": "jax",
                         "array_api_strict": "array_api_strict"}[request.param])
    return request.param


def _values(t):
    return np.asarray(t.numpy(), dtype=np.float64)


def _memory(t):
    """``t``'s storage as a NumPy array sharing its memory, or None where arrays are immutable (JAX)."""
    array = t.carrier.array
    if isinstance(array, np.ndarray):
        return array
    module = type(array).__module__
    if module.startswith("torch"):
        return array.detach().numpy()
    if module.startswith("array_api_strict"):
        return array._array
    return None


def _assert_private(tensors, arrays=()):
    """No two of ``tensors`` (gradients) share memory with each other or with ``arrays``."""
    memories = [m for m in (_memory(t) for t in tensors) if m is not None]
    for a, b in itertools.combinations(memories, 2):
        assert not np.shares_memory(a, b)
    for m in memories:
        for array in arrays:
            assert not np.shares_memory(m, array)


def _torch_leaves():
    return (torch.tensor(X0, dtype=torch.float64, requires_grad=True),
            torch.tensor(W0, dtype=torch.float64, requires_grad=True))


@pytest.mark.parametrize("order", ORDERS, ids="+".join)
def test_contributions_of_every_form_in_either_order_match_torch(carrier, order):
    x_user, w_user = X0.copy(), W0.copy()
    x, w = sw.tensor(x_user, carrier=carrier), sw.tensor(w_user, carrier=carrier)
    loss = None
    for name in order:
        term = TERMS[name][0](x, w)
        loss = term if loss is None else loss + term
    loss.backward()

    tx, tw = _torch_leaves()
    sum(TERMS[name][1](tx, tw) for name in order).backward()
    np.testing.assert_allclose(_values(x.grad), tx.grad.numpy(), rtol=1e-5, atol=1e-6)
    if "matmul" in order:
        np.testing.assert_allclose(_values(w.grad), tw.grad.numpy(), rtol=1e-5, atol=1e-6)
    else:
        assert w.grad is None
    np.testing.assert_array_equal(x_user, X0)
    np.testing.assert_array_equal(w_user, W0)
    _assert_private([g for g in (x.grad, w.grad) if g is not None], [x_user, w_user])


def test_a_retained_intermediate_reached_twice_and_traversed_twice(carrier):
    x_user, w_user = X0.copy(), W0.copy()
    x, w = sw.tensor(x_user, carrier=carrier), sw.tensor(w_user, carrier=carrier)
    h = sw.tanh(x) * 1.5
    h.retain_grad()
    y = h * h + h                                  # flat: raw buffers reach h
    loss = sw.sum(y[1:, :]) + sw.sum(h @ w) + sw.sum(h * 3.0) + sw.array_api.sum(h, axis=(0, 1))
    loss.backward(retain_graph=True)
    loss.backward()

    tx, tw = _torch_leaves()
    th = torch.tanh(tx) * 1.5
    th.retain_grad()
    ty = th * th + th
    t_loss = torch.sum(ty[1:, :]) + torch.sum(th @ tw) + torch.sum(th * 3.0) + torch.sum(th)
    t_loss.backward(retain_graph=True)
    t_loss.backward()
    for ours, theirs in ((h, th), (x, tx), (w, tw)):
        np.testing.assert_allclose(_values(ours.grad), theirs.grad.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(x_user, X0)
    np.testing.assert_array_equal(w_user, W0)
    _assert_private([h.grad, x.grad, w.grad], [x_user, w_user, _memory(h)] if _memory(h) is not None
                    else [x_user, w_user])


def test_a_supplied_cotangent_split_between_flat_and_view_consumers_is_left_alone(carrier):
    seed_user = np.linspace(0.5, 2.0, 12, dtype=np.float32).reshape(3, 4)
    x = sw.tensor(X0.copy(), carrier=carrier)
    h = x * 2.0
    h.retain_grad()
    out = h + h                                      # the seed's buffer goes to h twice
    out.backward(sw.tensor(seed_user, carrier=carrier))
    np.testing.assert_array_equal(seed_user, np.linspace(0.5, 2.0, 12, dtype=np.float32).reshape(3, 4))
    np.testing.assert_allclose(_values(h.grad), 2.0 * seed_user, rtol=1e-6)
    np.testing.assert_allclose(_values(x.grad), 4.0 * seed_user, rtol=1e-6)
    _assert_private([h.grad, x.grad], [seed_user])


def test_functional_grad_of_a_tensor_requested_twice_hands_out_two_buffers(carrier):
    x = sw.tensor(X0.copy(), carrier=carrier)
    w = sw.tensor(W0.copy(), carrier=carrier)
    h = sw.tanh(x)
    loss = sw.sum(h * h) + sw.sum(h[:, 1:]) + sw.sum(h @ w)
    gx1, gx2, gh = sw.grad(loss, [x, x, h], sw.ones(1, carrier=carrier))

    tx, tw = _torch_leaves()
    th = torch.tanh(tx)
    th.retain_grad()
    (torch.sum(th * th) + torch.sum(th[:, 1:]) + torch.sum(th @ tw)).backward()
    for ours in (gx1, gx2):
        np.testing.assert_allclose(_values(ours), tx.grad.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(_values(gh), th.grad.numpy(), rtol=1e-5, atol=1e-6)
    _assert_private([gx1, gx2, gh])
    assert x.grad is None and w.grad is None
