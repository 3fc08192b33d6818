"""Shared inputs for the operation tests: one logical shape, many storage layouts.

Every input is a Float32 Tensor built with ``from_storage`` over a buffer of
random values (holes included), so the same program sees canonical,
transposed, sliced-with-holes, broadcast-aliased and nested-mode layouts.
"""

import numpy as np

import strideweave as sw
from strideweave.testing import available_carriers

CARRIERS = available_carriers()

L, S, St = sw.Layout, sw.Shape, sw.Stride

# name -> (layout, offset, storage length); all flat kinds have logical shape (3, 4)
KINDS = {
    "canonical": (L(S([3, 4])), 0, 12),
    "transposed": (L(S([3, 4]), St([4, 1])), 0, 12),
    "holes": (L(S([3, 4]), St([1, 6])), 2, 26),
    "broadcast": (L(S([3, 4]), St([0, 1])), 1, 6),
    "nested": (L(S([3, [2, 2]])), 0, 12),
    "nested_strided": (L(S([3, [2, 2]]), St([4, [1, 2]])), 1, 13),
    "nested_broadcast": (L(S([3, [2, 2]]), St([1, [0, 3]])), 0, 6),
}
FLAT_KINDS = ["canonical", "transposed", "holes", "broadcast"]
ALL_KINDS = list(KINDS)


def values(n, seed, domain="any"):
    """``n`` float32 values: 'any' = sign * U(0.3, 1.5) (away from 0), 'pos' = U(0.5, 2)."""
    rng = np.random.default_rng(seed)
    if domain == "pos":
        out = rng.uniform(0.5, 2.0, n)
    elif domain == "small":
        out = rng.uniform(-0.9, 0.9, n)
    else:
        out = rng.choice([-1.0, 1.0], n) * rng.uniform(0.3, 1.5, n)
    return out.astype(np.float32)


def make(kind, seed=0, domain="any", carrier="numpy"):
    """A Float32 Tensor of layout kind ``kind`` on ``carrier``."""
    layout, offset, n = KINDS[kind]
    return sw.Tensor.from_storage(values(n, seed, domain), layout, sw.DType.Float32, offset=offset, carrier=carrier)


def canonical_like(t, seed=1, domain="any", carrier="numpy"):
    """A canonical Float32 Tensor with ``t``'s shape and fresh values."""
    layout = sw.Layout.canonical(t.layout.shape)
    return sw.Tensor.from_storage(values(layout.size, seed, domain), layout, sw.DType.Float32, carrier=carrier)


def canonical(shape, seed=2, domain="any", carrier="numpy"):
    layout = sw.Layout.canonical(sw.Shape(shape))
    return sw.Tensor.from_storage(values(layout.size, seed, domain), layout, sw.DType.Float32, carrier=carrier)


def from_numpy(array, carrier="numpy"):
    """A canonical Tensor holding ``array``'s values at the same coordinates."""
    array = np.asarray(array, dtype=np.float32)
    return sw.tensor(array.tolist(), carrier=carrier)


def cotangent_for(fn, inputs, seed=5):
    """Random cotangent values shaped like ``fn(*inputs).numpy()`` (None for a (1,) scalar output)."""
    out = fn(*inputs)
    if out.layout.shape == sw.Shape(1):
        return None
    shape = out.numpy().shape
    return np.random.default_rng(seed).uniform(-1.0, 1.0, shape)


def check(fn, inputs, **kw):
    """gradcheck on every available carrier with a random cotangent."""
    return sw.testing.gradcheck(fn, inputs, cotangent_for(fn, inputs), **kw)
