"""What a new user coming from NumPy or torch trips over: each gets the behaviour or the message it needs."""

import inspect
import warnings

import numpy as np
import pytest

import strideweave as sw
import strideweave.array_api as xp
from strideweave.testing import available_carriers

CARRIERS = available_carriers()


@pytest.fixture(params=CARRIERS)
def carrier(request):
    return request.param


# ----- t.view(3, 2): torch's view, and t.view(layout) -------------------------------------------------

# (shape, strides) as torch's as_strided reads them over a 24-element buffer, and shapes to view each as.
STRIDED = [
    ((2, 3), (3, 1), [(3, 2), (6,), (-1,), (1, 6), (2, 1, 3), (3, -1)]),  # contiguous
    ((3, 2), (1, 3), [(6,), (3, 2), (3, 1, 2), (1, 3, 2)]),  # a transpose
    ((4, 3), (6, 2), [(12,), (2, 2, 3), (4, 3, 1), (2, 6)]),  # every other column
    ((4, 3), (6, 1), [(12,), (2, 2, 3), (4, 1, 3), (4, 3)]),  # the first columns
    ((2, 4, 3), (12, 1, 4), [(8, 3), (2, 12), (2, 4, 3), (24,)]),  # last two axes permuted
    ((1, 4), (4, 1), [(4,), (2, 2), (4, 1)]),  # an extent-1 axis
    ((3, 4), (0, 1), [(12,), (3, 2, 2), (6, 2)]),  # a broadcast axis
]
CASES = [(shape, strides, target) for shape, strides, targets in STRIDED for target in targets]


@pytest.mark.parametrize("shape,strides,target", CASES, ids=[f"{s}:{st}->{t}" for s, st, t in CASES])
def test_view_with_a_shape_is_torchs_view(carrier, shape, strides, target):
    torch = pytest.importorskip("torch")
    buffer = np.arange(24, dtype=np.float32) * 0.5 - 3.0
    t = sw.Tensor.from_storage(buffer, sw.Layout(sw.Shape(shape), sw.Stride(strides)), carrier=carrier)
    base = torch.tensor(buffer, dtype=torch.float64, requires_grad=True)
    strided = torch.as_strided(base, shape, strides)
    try:
        want = strided.view(target)
    except RuntimeError:
        with pytest.raises(ValueError, match=r"cannot be read in C order[\s\S]*t\.reshape"):
            t.view(*target)
        assert t.reshape(target).tolist() == strided.reshape(target).tolist()  # the copy it points to
        return
    for got in (t.view(*target), t.view(target), t.view(list(target))):
        assert got.shape == tuple(want.shape) and got.tolist() == want.tolist()
        assert got.carrier is t.carrier, "a view shares the storage"
    if 0 in strides:
        return  # a broadcast leaf's gradient is per storage slot (spec), torch's as_strided one is not
    cot = np.random.default_rng(3).standard_normal(tuple(want.shape))
    (want * torch.tensor(cot)).sum().backward()
    (t.view(*target) * xp.asarray(cot.astype(np.float32), device=t.device)).sum().backward()
    expected = torch.as_strided(base.grad, shape, strides).numpy()
    np.testing.assert_allclose(t.grad.numpy(), expected, rtol=1e-6, atol=1e-6)


def test_view_writes_through_and_reads_a_nested_mode_in_c_order(carrier):
    t = sw.Tensor.from_storage(np.arange(12, dtype=np.float32), sw.Layout(sw.Shape([2, 6]), sw.Stride([6, 1])),
                               carrier=carrier)
    v = t.view(3, 4)
    with sw.no_grad():
        v[1, 0] = 100.0
    assert t.tolist()[0][4] == 100.0, "a write through the view lands in t"
    # A top-level mode that is nested: its values flatten colexicographically, and the view reads them so.
    nested = t.view(sw.Layout(sw.Shape([2, [2, 3]]), sw.Stride([6, [1, 2]])))
    host = nested.numpy()
    assert nested.view(12).tolist() == host.reshape(12).tolist()
    assert nested.view(2, 2, 3).tolist() == host.reshape(2, 2, 3).tolist()


def test_view_of_column_major_storage_says_so_and_names_reshape(carrier):
    # sw.tensor stores nested lists in StrideWeave's canonical (column-major) layout: a C-order
    # view of it does not exist, as torch's view of a transposed tensor does not.
    t = sw.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], carrier=carrier)
    assert t.layout == sw.Layout.canonical(sw.Shape([2, 3]))
    with pytest.raises(ValueError, match=r"column-major.*t\.reshape\(3, 2\) gives these values.*sw\.reshape"):
        t.view(3, 2)
    assert t.reshape(3, 2).tolist() == [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]
    assert t.T.view(6).tolist() == [1.0, 4.0, 2.0, 5.0, 3.0, 6.0] and t.T.view(6).carrier is t.carrier


def test_view_through_a_layout_is_unchanged(carrier):
    t = sw.tensor([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], carrier=carrier)
    v = t.view(sw.Layout(sw.Shape([3, 2])))  # canonical: colexicographic
    assert v.tolist() == [[1.0, 4.0], [2.0, 5.0], [3.0, 6.0]] and v.carrier is t.carrier


def test_view_has_a_signature_a_docstring_and_clear_errors():
    assert sw.Tensor.view.__name__ == "view" and "<lambda>" not in repr(sw.Tensor.view)
    assert list(inspect.signature(sw.Tensor.view).parameters) == ["self", "shape"]
    doc = inspect.getdoc(sw.Tensor.view)
    assert "t.view(layout)" in doc and "t.view(3, 2)" in doc and "C order" in doc
    t = sw.tensor([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    with pytest.raises(ValueError, match=r"Tensor.view: cannot reshape a Tensor of shape \(6,\) .* into \(4, 2\)"):
        t.view(4, 2)
    with pytest.raises(TypeError, match="needs a Layout or a shape"):
        t.view()
    for dtype in (np.int32, "int32", xp.int32):
        with pytest.raises(TypeError, match="does not reinterpret .* t.astype"):
            t.view(dtype)
    with pytest.raises(TypeError, match=r"a Layout or a shape .* got 3, 'a'"):
        t.view(3, "a")
    with pytest.raises(TypeError, match=r"hierarchical shape pass a layout"):
        t.view(sw.Shape([2, 3]))
    assert sw.tensor([2.5]).view(()).shape == () and float(sw.tensor([2.5]).view(())) == 2.5
