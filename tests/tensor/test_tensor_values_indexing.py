"""Reading values out, indexing, coordinate/slice assignment and in-place mutation."""

import numpy as np
import pytest

import strideweave as sw
from strideweave.testing import available_carriers

CARRIERS = available_carriers()


@pytest.fixture(params=CARRIERS)
def carrier(request):
    return request.param


def grid(carrier, layout=None, offset=0, n=None):
    """Values 0..size-1 at canonical coordinates, stored through ``layout``."""
    if layout is None:
        return sw.tensor(np.arange(12.0).reshape(3, 4, order="F").tolist(), carrier=carrier)
    return sw.Tensor.from_storage([float(v) for v in range(n)], layout, offset=offset, carrier=carrier)


# ----- values out --------------------------------------------------------------------------------------


def test_to_array_numpy_tolist_item(carrier):
    t = sw.Tensor.from_storage([float(v) for v in range(20)], sw.Layout(sw.Shape([2, [2, 2]]), sw.Stride([1, [4, 8]])),
                               offset=1, carrier=carrier)
    expected = [[1, 5, 9, 13], [2, 6, 10, 14]]
    native = t.to_array()
    assert tuple(native.shape) == (2, 4)
    assert sw.tensor(native).numpy().tolist() == expected
    assert t.numpy().tolist() == expected and isinstance(t.numpy(), np.ndarray)
    assert np.asarray(t).tolist() == expected
    assert np.asarray(t, dtype=np.float64).dtype == np.float64
    assert t.tolist() == expected
    assert t[1, 2].item() == 10.0 and isinstance(t[1, 2].item(), float)
    assert sw.tensor([3], carrier=carrier).item() == 3
    with pytest.raises(ValueError):
        t.item()


def test_dlpack_round_trip(carrier):
    t = sw.tensor([[1.0, 2.0], [3.0, 4.0]], carrier=carrier)
    back = sw.from_dlpack(t)
    assert back.numpy().tolist() == [[1.0, 2.0], [3.0, 4.0]]
    host = np.from_dlpack(t)
    assert host.tolist() == [[1.0, 2.0], [3.0, 4.0]]
    wrapped = sw.from_dlpack(np.arange(4, dtype=np.float32))
    assert wrapped.numpy().tolist() == [0, 1, 2, 3]


def test_torch_dlpack_shares_memory():
    if "torch" not in CARRIERS:
        pytest.skip("torch not installed")
    import torch

    t = sw.tensor(torch.zeros(3))
    native = torch.from_dlpack(t)
    t[1] = 4.0
    assert native[1].item() == 4.0


# ----- indexing -------------------------------------------------------------------------------------------


LAYOUTS = {
    "canonical": (None, 0, None),
    "transposed": (sw.Layout(sw.Shape([3, 4]), sw.Stride([4, 1])), 0, 12),
    "holes": (sw.Layout(sw.Shape([3, 4]), sw.Stride([1, 6])), 2, 26),
}


@pytest.mark.parametrize("kind", list(LAYOUTS))
def test_int_and_slice_indexing(carrier, kind):
    t = grid(carrier, *LAYOUTS[kind])
    ref = t.numpy()
    row = t[1]
    assert row.shape == (4,) and row.numpy().tolist() == ref[1].tolist()
    assert row.carrier is t.carrier
    col = t[:, 2]
    assert col.shape == (3,) and col.numpy().tolist() == ref[:, 2].tolist()
    for key in [(slice(1, 3),), (slice(None, None, 2), slice(1, 4, 2)), (slice(0, 3), slice(3, 10)),
                (slice(2, 1),), (-1, slice(None))]:
        view = t[key]
        assert view.carrier is t.carrier
        assert view.numpy().tolist() == ref[key].tolist()
    assert t[-1, -1].item() == ref[-1, -1]
    assert t[2, 3].layout.size == 1


def test_index_errors(carrier):
    t = grid(carrier)
    with pytest.raises(IndexError):
        t[3]
    with pytest.raises(IndexError):
        t[0, 4]
    with pytest.raises(IndexError):
        t[-4]
    with pytest.raises(IndexError):
        t[0, 0, 0]
    assert t[::-1].numpy().tolist() == t.numpy()[::-1].tolist()  # any step (Array API), through a gather
    with pytest.raises(ValueError):
        t[::0]


def test_nested_mode_int_indexing_is_colexicographic(carrier):
    # mode 1 is (2, 3): int j decomposes as (j % 2, j // 2)
    layout = sw.Layout(sw.Shape([2, [2, 3]]), sw.Stride([1, [2, 4]]))
    t = grid(carrier, layout, 0, 12)
    for i in range(2):
        for j in range(6):
            assert t[i, j].item() == layout(i, (j % 2, j // 2))
    assert t[1].numpy().tolist() == [1, 3, 5, 7, 9, 11]
    assert t[:, 3].numpy().tolist() == [6, 7]
    with pytest.raises(IndexError):
        t[0, 6]


# ----- assignment and in-place ops --------------------------------------------------------------------------


def test_setitem_writes_through_and_bumps_version_once(carrier):
    t = grid(carrier, *LAYOUTS["holes"])
    source = t[1:3]  # a view sharing the carrier
    version = t.carrier.version
    t[1, 2] = -1.0
    assert t.carrier.version == version + 1
    assert t[1, 2].item() == -1.0 and source[0, 2].item() == -1.0
    version = t.carrier.version
    with sw.no_grad():  # a Float32 Tensor into a leaf: an update only under no_grad (docs/api.md section 4)
        t[0:2, 1] = sw.tensor([10.0, 20.0], carrier=carrier)
    assert t.carrier.version == version + 1
    assert t[:, 1].numpy().tolist()[:2] == [10.0, 20.0]
    version = t.carrier.version
    t[2] = 5.0
    assert t.carrier.version == version + 1
    assert t[2].numpy().tolist() == [5.0] * 4
    # the holes are untouched
    host = _host(t)
    assert host[0] == 0.0 and host[1] == 1.0 and host[5] == 5.0


def _host(t):
    return sw.Tensor.from_storage(t.carrier.array, sw.Layout(sw.Shape(t.carrier.size))).numpy()


def test_setitem_shape_mismatch_writes_nothing(carrier):
    t = grid(carrier)
    before = t.numpy().copy()
    version = t.carrier.version
    with pytest.raises(ValueError):
        t[0:2, 0] = sw.tensor([1.0, 2.0, 3.0], carrier=carrier)
    assert t.carrier.version == version
    np.testing.assert_array_equal(t.numpy(), before)
    with pytest.raises(IndexError):
        t[5, 0] = 1.0


def test_fill_copy_add_inplace(carrier):
    t = grid(carrier, *LAYOUTS["transposed"])
    version = t.carrier.version
    assert t.fill_(2.0) is t
    assert t.carrier.version == version + 1 and t.numpy().tolist() == [[2.0] * 4] * 3
    src = sw.tensor(np.arange(12.0).reshape(3, 4).tolist(), carrier=carrier)
    with sw.no_grad():  # Float32 Tensors into a leaf: updates only under no_grad (docs/api.md section 4)
        t.copy_(src)
        assert t.carrier.version == version + 2 and t.numpy().tolist() == src.numpy().tolist()
        t.add_(sw.ones((4,), carrier=carrier))  # broadcast source
    assert t.carrier.version == version + 3
    assert t.numpy().tolist() == (np.arange(12.0).reshape(3, 4) + 1).tolist()
    t.add_(1.0)
    assert t.numpy()[0, 0] == 2.0
    with pytest.raises(ValueError) as info:
        t.copy_(sw.ones((2, 4), carrier=carrier))
    assert "(3,4)" in str(info.value) and "(2,4)" in str(info.value)
    with pytest.raises(ValueError):
        t.add_(sw.ones((3, 3), carrier=carrier))
    assert t.numpy()[0, 0] == 2.0


def test_inplace_writes_into_a_result_are_recorded_and_leaves_are_updated(carrier):
    x = sw.tensor([1.0, 2.0, 3.0], carrier=carrier)
    y = x * 2.0
    node = y.autograd_ctx
    y.add_(1.0)
    y.fill_(3.0)
    y.copy_(x * 1.0)
    y[0] = 5.0
    assert y.autograd_ctx is not node   # the writes are recorded, as torch records them
    leaf = sw.tensor([1.0, 2.0], carrier=carrier)
    with pytest.raises(RuntimeError, match=r"sw\.no_grad"):
        leaf.add_(leaf)                 # a Float32 Tensor into a leaf: refused outside no_grad
    with sw.no_grad():
        leaf.add_(leaf)
    leaf[0:1] = 4.0                     # a constant into a leaf: an update
    with sw.no_grad():
        leaf.copy_(sw.tensor([4.0, 5.0], carrier=carrier))
    assert leaf.autograd_ctx is None and leaf.grad is None
    (y * sw.tensor([1.0, 2.0, 3.0], carrier=carrier)).sum().backward()
    assert x.grad.numpy().tolist() == [0.0, 2.0, 3.0]   # y[0] is a constant, y[1:] copies x


def test_mutation_after_forward_invalidates_graph(carrier):
    x = sw.tensor([1.0, 2.0, 3.0], carrier=carrier)
    loss = sw.sum(x * x)
    x[1] = 0.0
    with pytest.raises(RuntimeError):
        loss.backward()
    assert x.grad is None
