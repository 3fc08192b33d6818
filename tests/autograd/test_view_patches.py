"""Many views of one Tensor: their cotangents are added into one buffer, exactly.

Each basic-index view's backward hands the engine the part of the source's
cotangent it touches (a patch); the engine adds every patch for the source
into one buffer instead of filling a source-sized buffer per view. The
gradients equal torch float64, with overlapping views, views of views and
strided views; unstack's backward allocates one source-sized buffer, not one
per slice.
"""

import numpy as np
import pytest

import strideweave as sw
import strideweave.array_api as xp

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(5)
A = RNG.standard_normal((6, 5)).astype(np.float32)
W = RNG.standard_normal((6, 5)).astype(np.float32)


def _parts(m, a):
    t = m.moveaxis(a, 0, 1)
    return [a[0] * 2, a[0], a[1:3], a[:, 1], t[2], a[2, 1:4], a[::2][1], a[-1, 1:4:2]]


def _total(m, a, w):
    total = m.sum(a * w)
    for p in _parts(m, a):
        total = total + m.sum(p * p)
    return total


@pytest.mark.parametrize("carrier", ["numpy", "torch", "jax", "array_api_strict"])
def test_overlapping_views_match_torch(carrier):
    if carrier != "numpy":
        pytest.importorskip(carrier)
    a = sw.tensor(A, carrier=carrier)
    _total(xp, a, sw.tensor(W, carrier=carrier)).backward()
    ta = torch.tensor(A.astype(np.float64), requires_grad=True)
    _total(torch, ta, torch.tensor(W.astype(np.float64))).backward()
    np.testing.assert_allclose(a.grad.numpy(), ta.grad.numpy(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("axis", [0, 1])
def test_unstack_gradient_matches_torch(axis):
    a = xp.asarray(A)
    parts = xp.unstack(a, axis=axis)
    total = xp.sum(parts[0] * 3)
    for p in parts[1:]:
        total = total + xp.sum(p * p)
    total.backward()
    ta = torch.tensor(A.astype(np.float64), requires_grad=True)
    tp = torch.unbind(ta, axis)
    (sum((p * p).sum() for p in tp[1:]) + (tp[0] * 3).sum()).backward()
    np.testing.assert_allclose(np.asarray(a.grad), ta.grad.numpy(), rtol=1e-6, atol=1e-6)


def test_unstack_backward_allocates_one_source(monkeypatch):
    m = 64
    a = xp.asarray(RNG.standard_normal((m, m)).astype(np.float32))
    parts = xp.unstack(a)
    total = xp.sum(parts[0])
    for p in parts[1:]:
        total = total + xp.sum(p)
    cls = type(a._carriers[0])
    fresh, sizes = cls.fresh, []

    def counting(self, n, dtype=None, fill=None):
        sizes.append(n)
        return fresh(self, n, dtype, fill)

    monkeypatch.setattr(cls, "fresh", counting)
    total.backward()
    np.testing.assert_array_equal(np.asarray(a.grad), np.ones((m, m), np.float32))
    # one source-sized buffer for all the slices, not one per slice
    assert sum(sizes) <= 2 * m * m, f"backward allocated {sum(sizes)} elements in {len(sizes)} buffers"


@pytest.mark.parametrize(("shape", "axis"), [((7,), 0), ((3, 4, 5), 0), ((3, 4, 5), 1), ((3, 4, 5), -1), ((1, 2), 0)])
def test_unstack_values_and_gradient(shape, axis):
    values = RNG.standard_normal(shape).astype(np.float32)
    a = xp.asarray(values)
    parts = xp.unstack(a, axis=axis)
    want = [np.take(values, i, axis=axis) for i in range(values.shape[axis])]
    assert len(parts) == len(want)
    for part, expected in zip(parts, want):
        assert part.shape == expected.shape
        np.testing.assert_array_equal(part.detach().numpy(), expected)
    total = xp.sum(parts[0] * 0)
    for i, p in enumerate(parts):
        total = total + xp.sum(p * (i + 1.0))
    total.backward()
    ta = torch.tensor(values.astype(np.float64), requires_grad=True)
    sum(((p * (i + 1.0)).sum() for i, p in enumerate(torch.unbind(ta, axis))), torch.zeros(())).backward()
    np.testing.assert_allclose(np.asarray(a.grad), ta.grad.numpy(), rtol=1e-6)


def test_unstack_of_nested_mode_and_strided_source():
    import strideweave as sw
    values = RNG.standard_normal((4, 6)).astype(np.float32)
    nested = sw.view(sw.tensor(values), sw.Layout(((2, 2), 6), ((6, 12), 1)))
    parts = xp.unstack(nested)
    flat = nested.detach().numpy()
    for i, part in enumerate(parts):
        np.testing.assert_array_equal(part.detach().numpy(), flat[i])
    strided = xp.asarray(values)[::2, 1:]
    for i, part in enumerate(xp.unstack(strided, axis=1)):
        np.testing.assert_array_equal(part.detach().numpy(), values[::2, 1:][:, i])
