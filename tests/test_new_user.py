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


@pytest.mark.parametrize(("shape", "strides", "target"), CASES, ids=[f"{s}:{st}->{t}" for s, st, t in CASES])
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
        with pytest.raises(TypeError, match=r"does not reinterpret .* t\.astype"):
            t.view(dtype)
    with pytest.raises(TypeError, match=r"a Layout or a shape .* got 3, 'a'"):
        t.view(3, "a")
    with pytest.raises(TypeError, match=r"hierarchical shape pass a layout"):
        t.view(sw.Shape([2, 3]))
    assert sw.tensor([2.5]).view(()).shape == () and float(sw.tensor([2.5]).view(())) == 2.5


# ----- native arrays as gradients ---------------------------------------------------------------------

def _native_arrays():
    arrays = [("numpy.ndarray", np.ones(2, dtype=np.float32))]
    try:
        import torch
        arrays.append(("torch.Tensor", torch.ones(2)))
    except ImportError:
        pass
    try:
        import jax.numpy as jnp
        arrays.append(("jax.Array", jnp.ones(2)))
    except ImportError:
        pass
    return arrays


@pytest.mark.parametrize(("name", "native"), _native_arrays(), ids=[n for n, _ in _native_arrays()])
def test_a_native_gradient_is_named_with_its_conversion(name, native):
    x = xp.asarray([1.0, 2.0])
    v = x * 2.0
    with pytest.raises(TypeError, match=rf"gradient must be a StrideWeave Tensor, got a {name}: .*"
                                        rf"xp\.asarray\(g, device=t\.device\).*sw\.tensor\(g\)"):
        v.backward(native)
    assert x.grad is None, "nothing was accumulated"
    with pytest.raises(TypeError, match=rf"cotangents must be a StrideWeave Tensor, got a {name}"):
        sw.grad(v, [x], native)
    v.backward(xp.asarray(native, device=v.device))  # the conversion the message names works
    assert x.grad.tolist() == [2.0, 2.0]


# ----- .grad of a non-leaf ----------------------------------------------------------------------------

def test_reading_grad_of_a_result_warns_as_torch_does(carrier):
    with sw.set_default_carrier(carrier):
        w = sw.random.normal([3], seed=0) * 0.1  # the usual cause: the initialisation made w a result
    loss = xp.sum(w * w)
    loss.backward()
    with pytest.warns(UserWarning, match=r"not a leaf[\s\S]*retain_grad\(\)[\s\S]*sw\.random\.normal") as caught:
        assert w.grad is None
    assert caught[0].filename == __file__, "the warning points at the line that read .grad"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        # No warning where the answer is what the reader wants: a leaf, a retained result, a set .grad.
        with sw.no_grad():
            p = sw.random.normal([3], seed=0, carrier=carrier) * 0.1
        r = p * 2.0
        r.retain_grad()
        xp.sum(r * r).backward()
        assert p.grad is not None and r.grad is not None
        q = p * 3.0
        q.grad = xp.ones_like(q)
        assert q.grad is not None and p.detach().grad is None


def test_the_library_never_reads_grad_of_a_result(carrier):
    # Every gradient path the tools take, with the warning an error: the library reads no non-leaf's .grad.
    from strideweave import testing

    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        x = xp.asarray(np.array([0.5, -1.0, 2.0], np.float32), device=carrier)
        y = xp.tanh(x) * x
        y2 = y * 1.0
        xp.sum(y2).backward(retain_graph=True)
        sw.grad(xp.sum(y2), [x, y], xp.asarray(1.0, device=carrier))
        testing.gradcheck(lambda t: xp.sum(xp.tanh(t) * t), [np.array([0.5, -1.0], np.float32)], carriers=[carrier])
        testing.assert_carriers_agree(lambda t: xp.sum(xp.tanh(t) * t), [np.array([0.5, -1.0], np.float32)])
        repr(y), str(y), y.tolist(), y.detach().numpy()
        import copy
        copy.copy(x), copy.deepcopy(x)


# ----- torch's requires_grad --------------------------------------------------------------------------

def test_requires_grad_explains_the_model():
    t = sw.tensor([1.0, 2.0])
    for attempt in (lambda: t.requires_grad, lambda: t.requires_grad_(), lambda: setattr(t, "requires_grad", True)):
        with pytest.raises(AttributeError, match=r"has no attribute 'requires_grad_?'.*every Float32 Tensor is "
                                                 r"differentiable.*this one is,.*sw\.no_grad\(\).*t\.detach\(\)"):
            attempt()
    assert not hasattr(t, "requires_grad"), "code probing for torch's attribute keeps working"
    assert getattr(t, "requires_grad", "absent") == "absent"
    with pytest.raises(AttributeError, match=r"this one is not \(it is DType.Int32\)"):
        sw.tensor([1, 2]).requires_grad  # noqa: B018
    with pytest.raises(TypeError, match=r"unexpected keyword argument 'requires_grad' \(requires_grad=True\): "
                                        r"in StrideWeave every Float32 Tensor is differentiable.*sw\.no_grad"):
        sw.tensor([1.0], requires_grad=True)
    with pytest.raises(TypeError, match="requires_grad=False"):
        sw.tensor([1.0], requires_grad=False)


# ----- NumPy's axis= in the layout-native reductions -----------------------------------------------------

REDUCTIONS = {"sum": np.sum, "mean": np.mean, "max": np.max, "min": np.min, "prod": np.prod}


@pytest.mark.parametrize("name", REDUCTIONS)
@pytest.mark.parametrize("axis", [0, 1, -1, (0, 1), None, ()])
@pytest.mark.parametrize("keepdims", [False, True])
def test_sw_reductions_take_numpys_axis_with_numpys_result(carrier, name, axis, keepdims):
    torch = pytest.importorskip("torch")
    host = np.array([[1.5, -2.0, 3.25], [4.0, 0.5, -6.0]], np.float32)
    x = sw.tensor(host, carrier=carrier)
    got = getattr(sw, name)(x, axis=axis, keepdims=keepdims)
    want = REDUCTIONS[name](host, axis=axis, keepdims=keepdims)
    assert got.shape == want.shape
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)
    assert got.shape == getattr(xp, name)(x, axis=axis, keepdims=keepdims).shape
    # The gradient, against torch.autograd in float64.
    ref = torch.tensor(host, dtype=torch.float64, requires_grad=True)
    dims = tuple(range(2)) if axis is None else ((axis,) if isinstance(axis, int) else axis)
    if name in ("max", "min"):
        out = getattr(torch, "amax" if name == "max" else "amin")(ref, dim=dims, keepdim=keepdims) if dims else ref
    elif name == "prod":
        out = ref
        for d in sorted((d % 2 for d in dims), reverse=True):
            out = out.prod(dim=d, keepdim=keepdims)
    else:
        out = getattr(torch, name)(ref, dim=dims, keepdim=keepdims) if dims else ref * 1.0
    cot = np.random.default_rng(5).standard_normal(want.shape)
    (out * torch.tensor(cot)).sum().backward()
    xp.sum(got * xp.asarray(cot.astype(np.float32), device=got.device)).backward()
    np.testing.assert_allclose(x.grad.numpy(), ref.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_modes_stays_layout_native_and_axis_with_modes_is_refused():
    x = sw.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    assert sw.sum(x).shape == (1,) and sw.sum(x, modes=(0, 1)).shape == (1,) and sw.sum(x, axis=None).shape == ()
    assert sw.sum(x, 0).tolist() == sw.sum(x, axis=0).tolist() == [5.0, 7.0, 9.0]
    with pytest.raises(TypeError, match="modes=0 and axis=1: modes= is StrideWeave's keyword, axis= NumPy's"):
        sw.sum(x, 0, axis=1)
    with pytest.raises(IndexError, match="axis"):
        sw.mean(x, axis=2)
    assert "axis=" in inspect.getdoc(sw.max) and "0-d" in inspect.getdoc(sw.max)


# ----- len() of a 0-d Tensor --------------------------------------------------------------------------

def test_len_of_a_0d_tensor_is_numpys_type_error(carrier):
    with pytest.raises(TypeError, match="len\\(\\) of unsized object"):
        len(xp.asarray(2.0, device=carrier))
    with pytest.raises(TypeError, match="len\\(\\) of unsized object"):
        len(np.array(2.0))  # NumPy's own words, for the record
    assert len(xp.ones((3, 2), device=carrier)) == 3 and len(xp.ones((0,), device=carrier)) == 0


# ----- notes in messages that apply ---------------------------------------------------------------------

def test_a_plain_shape_mismatch_has_no_nested_mode_note(carrier):
    with pytest.raises(ValueError) as err:
        xp.ones((2, 3), device=carrier) + xp.ones((3, 2), device=carrier)
    message = str(err.value)
    assert "(2,3) and (3,2)" in message and "extent 2 against 3" in message and "nested" not in message
    with pytest.raises(ValueError, match=r"mode \(2,3\) against 6 \(a nested mode broadcasts only"):
        sw.ones(sw.Shape([2, [2, 3]]), carrier=carrier) + sw.ones(sw.Shape([2, 6]), carrier=carrier)


def test_backward_on_a_float64_tensor_says_to_cast(carrier):
    x = sw.tensor(np.array([1.0, 2.0]), carrier=carrier)  # NumPy's default float64, kept
    if carrier == "jax" and x.dtype == sw.DType.Float32:
        return  # JAX without x64 stores 64-bit requests in 32 bits (docs/api.md section 8): nothing to cast
    assert x.dtype == sw.DType.Float64
    with pytest.raises(RuntimeError, match=r"Float64.*only Float32 is differentiable.*dtype=sw\.DType\.Float32.*"
                                           r"xp\.asarray\(a, dtype=xp\.float32\)"):
        x.backward(sw.ones_like(x) if hasattr(sw, "ones_like") else xp.ones_like(x))
    with pytest.raises(RuntimeError, match=r"Float64.*float32"):
        xp.sum(x * 2.0).backward()
    # The fix it names works.
    y = sw.tensor(np.array([1.0, 2.0]), dtype=sw.DType.Float32, carrier=carrier)
    xp.sum(y * 2.0).backward()
    assert y.grad.tolist() == [2.0, 2.0]


# ----- the README's install instructions ------------------------------------------------------------------

def test_readme_says_what_the_torch_pin_does_and_how_to_get_the_cpu_wheel():
    import pathlib

    from packaging.specifiers import SpecifierSet

    root = pathlib.Path(__file__).resolve().parents[1]
    readme = (root / "README.md").read_text()
    quick_start = 'pip install -q torch==2.13.0 && pip install -q -e ".[all]"'
    assert readme.count(quick_start) == 2, "the quick-start commands (CI runs them) stay as they are"
    assert "never resolves a CUDA build" not in readme
    assert "pip install -q torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu" in readme
    assert "CUDA build" in readme
    # The claim the README makes about the CPU wheel: the quick start's pin accepts it, so pip keeps it.
    assert SpecifierSet("==2.13.0").contains("2.13.0+cpu")
    assert "--index-url https://download.pytorch.org/whl/cpu" in (root / "docs" / "user-guide.md").read_text()


# ----- device="cpu" ------------------------------------------------------------------------------------

def test_the_string_cpu_is_numpys_and_torch_device_cpu_is_torchs():
    torch = pytest.importorskip("torch")
    assert type(xp.ones(2, device="cpu").carrier) is sw.NumpyCarrier
    assert type(xp.ones(2, device=torch.device("cpu")).carrier) is sw.TorchCarrier
    assert type(xp.asarray([1.0], device="cpu").carrier) is sw.NumpyCarrier
    with sw.set_default_carrier("torch"):
        assert type(xp.ones(2, device="cpu").carrier) is sw.TorchCarrier
    if "jax" in CARRIERS:
        with sw.set_default_carrier("jax"):
            assert type(xp.ones(2, device="cpu").carrier) is sw.NumpyCarrier
    text = (__import__("pathlib").Path(__file__).resolve().parents[1] / "docs" / "array-api.md").read_text()
    assert 'device="cpu"` and `device=torch.device("cpu")` are different requests' in text
