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


@pytest.mark.parametrize("carrier", [*CARRIERS, "dask"])
@pytest.mark.parametrize(("shape", "stride"), [
    ((300, 256), (1, 310)),           # rows with holes between them: the inverse recipe pads
    ((2, (128, 300)), (1, (2, 512))),  # a hierarchical mode and a tail past the last row
], ids=["padded-rows", "hierarchical"])
def test_large_placed_layouts_match_a_reference(carrier, shape, stride):
    # From 65536 elements up JAX places through one jitted recipe; Dask always builds it from dense ops.
    pytest.importorskip({"array_api_strict": "array_api_strict", "dask": "dask.array"}.get(carrier, carrier))
    layout = sw.Layout(shape, stride)
    assert layout.is_injective() and layout.size >= 1 << 16
    values = np.random.default_rng(0).standard_normal(layout.size).astype(np.float32)
    like = sw.tensor([0.0], carrier=carrier).carrier
    rev = like.namespace.reshape(sw.tensor(values, carrier=carrier).carrier.array, layout.rev_leaf_shape)
    placed = like.placed(layout, rev)
    assert type(placed) is type(like) and placed.size == layout.cosize
    out = np.zeros(layout.cosize, np.float32)
    out[_offsets(layout)] = _natural_flat(layout, values)
    np.testing.assert_array_equal(type(placed).to_numpy(placed.array), out)


def _offsets(layout):
    """Buffer offset of each element of the natural leaf array, in C order (vectorised)."""
    grids = np.meshgrid(*(np.arange(e) for e in layout.leaf_shape), indexing="ij")
    return sum(g * s for g, s in zip(grids, layout.leaf_stride)).reshape(-1)


def _natural_flat(layout, values):
    rev = values.reshape(layout.rev_leaf_shape)
    return rev.transpose(tuple(range(rev.ndim - 1, -1, -1))).reshape(-1)
