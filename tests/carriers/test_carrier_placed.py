"""``Carrier.placed`` builds fresh storage holding values at a layout, zeros in the holes.

JAX builds it from dense ops (reshape, transpose, pad) instead of a scatter;
every carrier must agree with the NumPy result for every injective layout.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import strideweave as sw

CARRIERS = ["numpy", "torch", "jax", "array_api_strict"]


@st.composite
def injective_layouts(draw):
    rank = draw(st.integers(1, 3))
    shape, stride = [], []
    for _ in range(rank):
        if draw(st.booleans()):
            extents = tuple(draw(st.integers(1, 3)) for _ in range(2))
            shape.append(extents)
            stride.append(tuple(draw(st.integers(0, 12)) for _ in extents))
        else:
            shape.append(draw(st.integers(1, 4)))
            stride.append(draw(st.integers(0, 12)))
    layout = sw.Layout(tuple(shape), tuple(stride))
    if not layout.is_injective():
        layout = sw.Layout.canonical(layout.shape)
    return layout


def _reference(layout, values):
    out = np.zeros(layout.cosize, np.float32)
    rev = values.reshape(layout.rev_leaf_shape)
    natural = rev.transpose(tuple(range(rev.ndim - 1, -1, -1)))
    for index in np.ndindex(*layout.leaf_shape):
        out[sum(i * s for i, s in zip(index, layout.leaf_stride))] = natural[index]
    return out


@pytest.mark.parametrize("carrier", CARRIERS)
@settings(max_examples=40, deadline=None)
@given(layout=injective_layouts(), seed=st.integers(0, 2**16))
def test_placed_matches_a_reference_scatter(carrier, layout, seed):
    pytest.importorskip({"numpy": "numpy", "torch": "torch", "jax": "jax",
                         "array_api_strict": "array_api_strict"}[carrier])
    values = np.random.default_rng(seed).standard_normal(layout.size).astype(np.float32)
    like = sw.tensor([0.0], carrier=carrier).carrier
    native = sw.tensor(values, carrier=carrier).carrier.array
    placed = like.placed(layout, like.namespace.reshape(native, layout.rev_leaf_shape))
    assert type(placed) is type(like)
    assert placed.size == layout.cosize
    np.testing.assert_array_equal(type(placed).to_numpy(placed.array), _reference(layout, values))
