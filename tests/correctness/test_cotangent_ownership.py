"""Cotangents are never shared mutable state, and every .grad owns its storage."""

import numpy as np

import strideweave as sw


def _values(t):
    return np.asarray(t.numpy(), dtype=np.float64)


def _shares_storage(a, b):
    return any(ca is cb for ca in a.carriers for cb in b.carriers)


class SameForBoth(sw.Operation):
    """y = a + b whose backward returns one cotangent object for both inputs."""

    def forward(self, a, b, options=None):
        return a + b

    def backward(self, gradient):
        return (gradient, gradient)


class WritesIntoGradient(sw.Operation):
    """y = 2 x whose backward scales its gradient in place before returning it."""

    def forward(self, x, options=None):
        return x * 2.0

    def backward(self, gradient):
        gradient.fill_(0.0)
        gradient.add_(2.0)
        return (gradient,)


def test_two_leaves_never_share_one_grad(carrier):
    a = sw.tensor([1.0, 2.0], carrier=carrier)
    b = sw.tensor([3.0, 4.0], carrier=carrier)
    x = sw.tensor([0.5, 0.5], carrier=carrier)
    middle = SameForBoth()(a, b)
    total = middle * x + middle * 3.0           # two contributions reach ``middle``
    total.backward(sw.ones(2, carrier=carrier))
    assert a.grad is not b.grad
    assert not _shares_storage(a.grad, b.grad)
    a.grad.fill_(-1.0)
    np.testing.assert_array_equal(_values(b.grad), [3.5, 3.5])


def test_retained_grad_and_leaf_grad_do_not_share(carrier):
    a = sw.tensor([1.0, 2.0], carrier=carrier)
    hidden = a * 1.0
    hidden.retain_grad()
    out = SameForBoth()(hidden, hidden)
    out.backward(sw.ones(2, carrier=carrier))
    assert not _shares_storage(hidden.grad, a.grad)


def test_custom_backward_writing_into_its_gradient_corrupts_nothing(carrier):
    x = sw.tensor([1.0, 2.0, 3.0], carrier=carrier)
    hidden = x * x                                      # saves x
    hidden.retain_grad()
    out = WritesIntoGradient()(hidden)
    seed = sw.tensor([5.0, 6.0, 7.0], carrier=carrier)
    out.backward(seed)
    np.testing.assert_array_equal(_values(seed), [5.0, 6.0, 7.0])           # the caller's cotangent
    np.testing.assert_array_equal(_values(x), [1.0, 2.0, 3.0])              # saved values
    np.testing.assert_array_equal(_values(hidden.grad), [2.0, 2.0, 2.0])    # what backward returned
    np.testing.assert_array_equal(_values(x.grad), [4.0, 8.0, 12.0])


def test_custom_backward_gets_a_private_cotangent_after_a_unit_seed(carrier):
    x = sw.tensor([1.0, 2.0], carrier=carrier)
    w = sw.tensor([3.0, 4.0], carrier=carrier)
    out = sw.sum(WritesIntoGradient()(x * w))
    out.backward()
    np.testing.assert_array_equal(_values(x), [1.0, 2.0])
    np.testing.assert_array_equal(_values(w), [3.0, 4.0])
    np.testing.assert_array_equal(_values(x.grad), [6.0, 8.0])


def test_grad_results_own_their_storage(carrier):
    a = sw.tensor([1.0, 2.0], carrier=carrier)
    b = sw.tensor([3.0, 4.0], carrier=carrier)
    x = sw.tensor([0.5, 0.5], carrier=carrier)
    middle = SameForBoth()(a, b)
    total = middle * x + middle * 3.0
    ga, gb = sw.grad(total, [a, b], sw.ones(2, carrier=carrier))
    assert not _shares_storage(ga, gb)
    np.testing.assert_array_equal(_values(ga), _values(gb))


def test_broadcast_sums_take_further_contributions(carrier):
    # b's cotangents from the two broadcasting adds are sums made for b alone; the
    # engine adds the later ones into the first in place where the library allows.
    x0 = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)
    b0 = np.array([0.5, -0.25, 1.0, 2.0], dtype=np.float32)
    x = sw.tensor(x0, carrier=carrier)
    b = sw.tensor(b0, carrier=carrier)
    loss = sw.sum(sw.tanh(x + b)) + sw.sum((x * 3.0 + b) * 0.5) + sw.sum(b * 2.0)
    loss.backward()
    t = np.tanh(x0.astype(np.float64) + b0)
    np.testing.assert_allclose(_values(b.grad), (1 - t * t).sum(axis=0) + 3 * 0.5 + 2.0, rtol=1e-5)
    np.testing.assert_allclose(_values(x.grad), (1 - t * t) + 1.5, rtol=1e-5)
    assert not _shares_storage(b.grad, x.grad)
