"""Slicing a nested mode gives the same values whatever the storage layout.

When the nested mode's leaves are contiguous the slice is a view; otherwise
it is read from a canonical copy, and assignment writes through with one
version bump.
"""

import numpy as np
import pytest

import strideweave as sw

CARRIERS = ["numpy", "torch", "jax", "array_api_strict"]
SHAPE = sw.Shape([[2, 3], 4])
LAYOUTS = {"canonical": sw.Layout(SHAPE), "row_major": sw.Layout(SHAPE, sw.Stride([[12, 4], 1]))}


@pytest.fixture(params=CARRIERS)
def carrier(request):
    pytest.importorskip({"numpy": "numpy", "torch": "torch", "jax": "jax",
                         "array_api_strict": "array_api_strict"}[request.param])
    return request.param


def _tensor(name, carrier):
    layout = LAYOUTS[name]
    storage = np.arange(24, dtype=np.float32)
    return sw.Tensor.from_storage(storage, layout, carrier=carrier)


@pytest.mark.parametrize("name", sorted(LAYOUTS))
def test_nested_slice_reads_the_same_values_in_every_layout(name, carrier):
    t = _tensor(name, carrier)
    np.testing.assert_array_equal(t[1:5, 2].numpy(), t.numpy()[1:5, 2])
    np.testing.assert_array_equal(t[0:6:2, 1:3].numpy(), t.numpy()[0:6:2, 1:3])


@pytest.mark.parametrize("name", sorted(LAYOUTS))
def test_nested_slice_assignment_writes_through_once(name, carrier):
    t = _tensor(name, carrier)
    expected = t.numpy().copy()
    expected[1:5, 2] = [-1, -2, -3, -4]
    before = t.carrier.version
    with sw.no_grad():  # an update of the leaf t (a Float32 Tensor into a leaf, docs/api.md section 4)
        t[1:5, 2] = sw.tensor([-1.0, -2.0, -3.0, -4.0], carrier=carrier)
    np.testing.assert_array_equal(t.numpy(), expected)
    assert t.carrier.version == before + 1


@pytest.mark.parametrize("name", sorted(LAYOUTS))
def test_nested_slice_is_differentiable(name, carrier):
    t = _tensor(name, carrier)
    piece = t[1:5, 2]
    (piece * piece).sum().backward()
    expected = np.zeros((6, 4), np.float32)
    expected[1:5, 2] = 2 * t.numpy()[1:5, 2]
    np.testing.assert_array_equal(t.grad.numpy(), expected)
    assert t.grad.layout == t.layout
