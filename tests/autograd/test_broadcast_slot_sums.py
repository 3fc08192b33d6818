"""A broadcast view's cotangent reaches its backward as the sums over each storage slot.

A reduction of a broadcast result hands the engine its cotangent compactly;
the view's backward sums over the stride-0 axes without the full cotangent
being made. The gradients equal torch float64 for full and partial sums,
several consumers, broadcasts of broadcasts, a retained or requested
broadcast result, and on every carrier; ``broadcast_to`` then ``sum``
allocates nothing of the broadcast's size in backward.
"""

import numpy as np
import pytest

import strideweave as sw
import strideweave.array_api as xp

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(7)
X = RNG.standard_normal(5).astype(np.float32)
W = RNG.standard_normal((4, 5)).astype(np.float32)

PROGRAMS = {
    "sum": lambda m, x, w: m.sum(m.broadcast_to(x, (4, 5)) * 3),
    "plain sum": lambda m, x, w: m.sum(m.broadcast_to(x, (4, 5))),
    "sum over axis": lambda m, x, w: m.sum(m.sum(m.broadcast_to(x, (4, 5)), axis=0) * w[0]),
    "weighted": lambda m, x, w: m.sum(m.broadcast_to(x, (4, 5)) * w),
    "two consumers": lambda m, x, w: m.sum(m.broadcast_to(x, (4, 5))) + m.sum(m.broadcast_to(x, (4, 5)) * w),
    "shared view": lambda m, x, w: (lambda b: m.sum(b) * 2 + m.sum(b * w))(m.broadcast_to(x, (4, 5))),
    "broadcast of broadcast": lambda m, x, w: m.sum(m.broadcast_to(m.broadcast_to(x, (4, 5)), (3, 4, 5))),
    "column": lambda m, x, w: m.sum(m.broadcast_to(m.reshape(x, (5, 1)), (5, 4)) ** 2),
}


def _torch(name, x, w):
    m = torch
    m.broadcast_to = torch.broadcast_to
    return PROGRAMS[name](m, x, w)


@pytest.mark.parametrize("carrier", ["numpy", "torch", "jax", "array_api_strict"])
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_gradient_matches_torch(name, carrier):
    if carrier != "numpy":
        pytest.importorskip(carrier)
    x = sw.tensor(X, carrier=carrier)
    PROGRAMS[name](xp, x, sw.tensor(W, carrier=carrier)).backward()
    tx = torch.tensor(X.astype(np.float64), requires_grad=True)
    _torch(name, tx, torch.tensor(W.astype(np.float64))).backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-5, atol=1e-5)


def test_retained_broadcast_result_gets_its_slot_sums():
    x = xp.asarray(X)
    b = xp.broadcast_to(x, (4, 5))
    b.retain_grad()
    xp.sum(b * 2).backward()
    np.testing.assert_allclose(b.grad.numpy(), np.full((4, 5), 8.0))  # per slot, at each of its positions
    np.testing.assert_allclose(x.grad.numpy(), np.full(5, 8.0))


def test_requested_broadcast_result_gets_its_slot_sums():
    x = xp.asarray(X)
    b = xp.broadcast_to(x, (4, 5))
    gb, gx = sw.grad(xp.sum(b * 2), [b, x])
    np.testing.assert_allclose(gb.numpy(), np.full((4, 5), 8.0))
    np.testing.assert_allclose(gx.numpy(), np.full(5, 8.0))


def test_broadcast_sum_backward_allocates_nothing_of_the_broadcast_size(monkeypatch):
    n = 300
    x = xp.asarray(RNG.standard_normal(n).astype(np.float32))
    total = xp.sum(xp.broadcast_to(x, (n, n)))
    cls = type(x._carriers[0])
    sizes = []
    for method in ("fresh", "placed"):
        original = getattr(cls, method)

        def counting(self, size, *args, _original=original, **kwargs):
            sizes.append(size if isinstance(size, int) else getattr(size, "cosize", 0))
            return _original(self, size, *args, **kwargs)

        monkeypatch.setattr(cls, method, counting)
    adopt = cls._adopt.__func__

    def counting_adopt(klass, array, *args, **kwargs):
        sizes.append(int(np.prod(getattr(array, "shape", ()))))
        return adopt(klass, array, *args, **kwargs)

    monkeypatch.setattr(cls, "_adopt", classmethod(counting_adopt))
    total.backward()
    np.testing.assert_allclose(x.grad.numpy(), np.full(n, float(n)))
    assert max(sizes, default=0) <= n, f"backward made buffers of {sorted(sizes)[-3:]} elements"
