"""The namespace's full reductions are 0-d in one recorded node, on every carrier, with the right gradients.

``xp.sum(x)`` records one Sum node whose input is ``x`` itself and whose
result has shape ``()`` (no reshape node after it); the layout-native
``sw.sum(x)`` keeps its ``(1):(1)`` result. Gradients are checked against
the closed forms, also through a strided (transposed) input.
"""

import numpy as np
import pytest

import strideweave as sw
import strideweave.array_api as xp

X = np.array([[0.5, -1.0, 2.0], [3.0, 1.5, -2.5]], dtype=np.float32)

#: name, reduction, its gradient at X (NumPy, float64)
REDUCTIONS = [
    ("sum", xp.sum, lambda a: np.ones_like(a)),
    ("mean", xp.mean, lambda a: np.full_like(a, 1 / a.size)),
    ("max", xp.max, lambda a: (a == a.max()).astype(np.float64)),
    ("min", xp.min, lambda a: (a == a.min()).astype(np.float64)),
    ("prod", xp.prod, lambda a: np.prod(a) / a),
]


def values(t):
    return np.asarray(t.numpy())


def nodes(t):
    """The recorded chain from ``t`` back to its first input without history, as node class names."""
    chain, node = [], t._ctx
    while node is not None:
        chain.append(type(node).__name__)
        node = node._inputs[0]._ctx if node._inputs else None
    return chain


@pytest.mark.parametrize(("name", "reduce", "gradient"), REDUCTIONS, ids=[r[0] for r in REDUCTIONS])
def test_full_reduction_is_one_zero_d_node(carrier, name, reduce, gradient):
    x = xp.asarray(X, device=carrier)
    out = reduce(x)
    assert out.shape == () and out.layout == sw.Layout((), ())
    assert nodes(out) == [name.title()]
    assert len(out._ctx._inputs) == 1 and out._ctx._inputs[0] is x
    np.testing.assert_allclose(float(out), getattr(np, name)(X.astype(np.float64)), rtol=1e-6)
    out.backward()
    np.testing.assert_allclose(values(x.grad), gradient(X.astype(np.float64)), rtol=1e-6)


@pytest.mark.parametrize(("name", "reduce", "gradient"), REDUCTIONS, ids=[r[0] for r in REDUCTIONS])
def test_full_reduction_of_a_strided_input(carrier, name, reduce, gradient):
    x = xp.asarray(X, device=carrier)
    out = reduce(xp.permute_dims(x, (1, 0)) * 2.0)
    assert out.shape == () and nodes(out)[0] == name.title()
    out.backward()
    expected = 2.0 * gradient(2.0 * X.astype(np.float64))
    np.testing.assert_allclose(values(x.grad), expected, rtol=1e-5)


def test_composite_loss_gradient(carrier):
    x = xp.asarray(X, device=carrier)
    loss = xp.sum(xp.exp(x) * x)
    assert loss.shape == () and nodes(loss) == ["Sum", "Multiply", "Exp"]
    loss.backward()
    a = X.astype(np.float64)
    np.testing.assert_allclose(values(x.grad), np.exp(a) * (1 + a), rtol=1e-5)


def test_keepdims_and_partial_reductions_keep_their_shapes(carrier):
    x = xp.asarray(X, device=carrier)
    kept = xp.sum(x, keepdims=True)
    assert kept.shape == (1, 1) and nodes(kept) == ["Sum"]
    rows = xp.sum(x, axis=1)
    assert rows.shape == (2,) and nodes(rows) == ["Sum"]
    np.testing.assert_allclose(values(rows), X.sum(axis=1), rtol=1e-6)
    every = xp.sum(x, axis=(-1, 0))
    assert every.shape == () and nodes(every) == ["Sum"]


def test_layout_native_full_reduction_keeps_its_one_element_layout(carrier):
    x = sw.tensor(X, carrier=carrier)
    out = sw.sum(x)
    assert out.layout == sw.Layout((1,), (1,)) and nodes(out) == ["Sum"]
    out.backward()
    np.testing.assert_allclose(values(x.grad), np.ones_like(X))


def test_bad_axes_raise_before_anything_is_recorded(carrier):
    x = xp.asarray(X, device=carrier)
    with pytest.raises(IndexError, match="sum: axis 2 is out of range for an array with 2 axes"):
        xp.sum(x, axis=2)
    with pytest.raises(ValueError, match=r"mean: axis \(1, -1\) names an axis twice"):
        xp.mean(x, axis=(1, -1))
    with pytest.raises(TypeError, match=r"max: axis must be an int or a tuple of ints, got 1\.5"):
        xp.max(x, axis=1.5)
    with pytest.raises(IndexError, match="sum: mode 2 is out of range for a Tensor with 2 top-level modes"):
        sw.sum(x, 2)
    assert x.grad is None
