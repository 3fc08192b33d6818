"""Building Tensors: sw.tensor, native arrays, from_storage, constants, ranges, random, from_subtensors."""

import numpy as np
import pytest

import strideweave as sw
from strideweave.testing import available_carriers

CARRIERS = available_carriers()
CLASSES = {"numpy": sw.NumpyCarrier, "torch": sw.TorchCarrier, "jax": sw.JaxCarrier,
           "array_api_strict": sw.ArrayAPICarrier, "dask": sw.DaskCarrier}


@pytest.fixture(params=CARRIERS)
def carrier(request):
    return request.param


# ----- sw.tensor from Python data ----------------------------------------------------------------


def test_tensor_from_lists(carrier):
    t = sw.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], carrier=carrier)
    assert type(t.carrier) is CLASSES[carrier]
    assert t.dtype == sw.DType.Float32
    assert t.shape == (2, 3)
    assert t.layout == sw.Layout.canonical(sw.Shape([2, 3]))
    for i in range(2):
        for j in range(3):
            assert t[i, j].item() == [[1, 2, 3], [4, 5, 6]][i][j]
    assert t.tolist() == [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
    assert sw.tensor([[1, 2], [3, 4]], carrier=carrier).dtype == sw.DType.Int32
    assert sw.tensor([True, False], carrier=carrier).dtype == sw.DType.Bool
    assert sw.tensor([1, 2], sw.DType.Float32, carrier=carrier).dtype == sw.DType.Float32
    scalar = sw.tensor(2.5, carrier=carrier)
    assert scalar.layout == sw.Layout(sw.Shape(1), sw.Stride(1)) and scalar.item() == 2.5


def test_tensor_bad_data():
    with pytest.raises((TypeError, ValueError)):
        sw.tensor([[1.0, 2.0], [3.0]])
    with pytest.raises(TypeError):
        sw.tensor(["a", "b"])


# ----- sw.tensor from native arrays -----------------------------------------------------------------


def test_tensor_wraps_numpy_without_copy():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = sw.tensor(a)
    assert type(t.carrier) is sw.NumpyCarrier and t.dtype == sw.DType.Float32
    t[0, 1] = 9.0
    assert a[0, 1] == 9.0
    t.fill_(1.5)
    assert (a == 1.5).all()
    # a transposed (non-contiguous) NumPy view is still wrapped without copying
    b = np.zeros((3, 4), dtype=np.float32).T
    tb = sw.tensor(b)
    tb[3, 1] = 7.0
    assert b[3, 1] == 7.0
    assert sw.tensor(np.arange(3, dtype=np.int64)).dtype == sw.DType.Int64


def test_tensor_wraps_torch_without_copy():
    if "torch" not in CARRIERS:
        pytest.skip("torch not installed")
    import torch

    a = torch.zeros(2, 3)
    t = sw.tensor(a)
    assert type(t.carrier) is sw.TorchCarrier
    t[1, 2] = 5.0
    assert a[1, 2].item() == 5.0
    sliced = torch.zeros(4, 6)[1:, ::2]
    ts = sw.tensor(sliced)
    ts[0, 1] = 3.0
    assert sliced[0, 1].item() == 3.0
    assert ts.numpy().shape == (3, 3)


def test_tensor_from_jax_and_strict_keeps_values():
    for name in ("jax", "array_api_strict"):
        if name not in CARRIERS:
            continue
        xp = __import__("jax.numpy", fromlist=["x"]) if name == "jax" else __import__(name)
        a = xp.reshape(xp.arange(6, dtype=xp.float32), (2, 3))
        t = sw.tensor(a)
        assert type(t.carrier) is CLASSES[name]
        assert t.numpy().tolist() == np.arange(6.0).reshape(2, 3).tolist()


def test_tensor_native_to_other_carrier_copies(carrier):
    a = np.arange(4, dtype=np.float32)
    t = sw.tensor(a, carrier=carrier)
    assert type(t.carrier) is CLASSES[carrier]
    if carrier != "numpy":
        t[0] = 100.0
        assert a[0] == 0.0
    assert t.numpy().tolist()[1:] == [1.0, 2.0, 3.0]


# ----- from_storage -------------------------------------------------------------------------------------


def test_from_storage_stride0_holes_offset(carrier):
    storage = [float(v) for v in range(20)]
    b = sw.Tensor.from_storage(storage, sw.Layout(sw.Shape([3, 4]), sw.Stride([0, 1])), carrier=carrier)
    assert b.numpy().tolist() == [[0, 1, 2, 3]] * 3
    h = sw.Tensor.from_storage(storage, sw.Layout(sw.Shape([3, 2]), sw.Stride([1, 6])), offset=2, carrier=carrier)
    assert h.numpy().tolist() == [[2, 8], [3, 9], [4, 10]]
    assert h.offset == 2 and h.carrier.size == 20
    n = sw.Tensor.from_storage(storage, sw.Layout(sw.Shape([2, [2, 3]]), sw.Stride([1, [2, 4]])), carrier=carrier)
    assert n.numpy().tolist() == [[0, 2, 4, 6, 8, 10], [1, 3, 5, 7, 9, 11]]
    assert type(h.carrier) is CLASSES[carrier]


def test_from_storage_native_shares_memory():
    buf = np.zeros(10, dtype=np.float32)
    t = sw.Tensor.from_storage(buf, sw.Layout(sw.Shape([2, 2]), sw.Stride([1, 4])), offset=1)
    t[1, 1] = 3.0
    assert buf[6] == 3.0


def test_from_storage_short_storage_names_sizes(carrier):
    with pytest.raises(ValueError) as info:
        sw.Tensor.from_storage([1.0] * 10, sw.Layout(sw.Shape([3, 4])), offset=1, carrier=carrier)
    message = str(info.value)
    assert "10" in message and "12" in message
    with pytest.raises(ValueError):
        sw.Tensor.from_storage([1.0] * 10, sw.Layout(sw.Shape([3, 4]), sw.Stride([1, 3])), carrier=carrier)
    with pytest.raises(TypeError):
        sw.Tensor.from_storage([1.0] * 10, (3, 4), carrier=carrier)


# ----- constants, ranges, random ----------------------------------------------------------------------


def test_zeros_ones_full_arange(carrier):
    z = sw.zeros((2, 3), carrier=carrier)
    assert z.dtype == sw.DType.Float32 and z.numpy().tolist() == [[0.0] * 3] * 2
    assert type(z.carrier) is CLASSES[carrier]
    o = sw.ones([2, [2, 2]], sw.DType.Int32, carrier=carrier)
    assert o.dtype == sw.DType.Int32 and o.layout.shape == sw.Shape([2, [2, 2]]) and o.numpy().tolist() == [[1] * 4] * 2
    f = sw.full((3,), 2.5, carrier=carrier)
    assert f.numpy().tolist() == [2.5, 2.5, 2.5]
    laid = sw.full((2, 3), 1.0, carrier=carrier, layout=sw.Layout(sw.Shape([2, 3]), sw.Stride([3, 1])))
    assert laid.layout.stride == sw.Stride([3, 1]) and laid.numpy().tolist() == [[1.0] * 3] * 2
    assert sw.arange(5, carrier=carrier).numpy().tolist() == [0, 1, 2, 3, 4]
    assert sw.arange(1, 7, 2, carrier=carrier).numpy().tolist() == [1, 3, 5]
    assert sw.arange(0.0, 1.0, 0.25, carrier=carrier).numpy().tolist() == [0.0, 0.25, 0.5, 0.75]


def test_random_equal_across_carriers():
    ref_n = sw.random.normal((3, 4), seed=7).numpy()
    ref_u = sw.random.uniform((2, [2, 2]), seed=7).numpy()
    assert ref_n.dtype == np.float32 and ref_n.shape == (3, 4)
    assert (ref_u >= 0).all() and (ref_u < 1).all()
    for name in CARRIERS:
        n = sw.random.normal((3, 4), seed=7, carrier=name)
        assert type(n.carrier) is CLASSES[name]
        np.testing.assert_array_equal(n.numpy(), ref_n)
        np.testing.assert_array_equal(sw.random.uniform((2, [2, 2]), seed=7, carrier=name).numpy(), ref_u)
    assert not np.array_equal(sw.random.normal((3, 4), seed=8).numpy(), ref_n)


# ----- from_subtensors --------------------------------------------------------------------------------------


def test_from_subtensors():
    blocks = [sw.tensor([[1.0, 2.0], [3.0, 4.0]], carrier=CARRIERS[0]),
              sw.tensor([[5.0, 6.0]], carrier=CARRIERS[-1])]
    t = sw.Tensor.from_subtensors(blocks, mode=0)
    assert t.shape == (3, 2)
    assert len(t.subtensors) == 2 and t.subtensors[0] is blocks[0]
    assert t.carriers == (blocks[0].carrier, blocks[1].carrier)
    with pytest.raises(ValueError):
        _ = t.carrier
    assert t.numpy().tolist() == [[1, 2], [3, 4], [5, 6]]
    doubled = sw.multiply(t, 2.0, options=sw.ExecutionOptions(carrier="numpy"))
    assert doubled.numpy().tolist() == [[2, 4], [6, 8], [10, 12]]
    total = sw.sum(t, options=sw.ExecutionOptions(carrier="numpy"))
    assert total.item() == 21.0
    cols = sw.Tensor.from_subtensors([sw.ones((2, 1)), sw.zeros((2, 2))], mode=1)
    assert cols.numpy().tolist() == [[1, 0, 0], [1, 0, 0]]
    with pytest.raises(NotImplementedError):
        sw.grad(t, [blocks[0]], sw.ones((3, 2)))


def test_from_subtensors_validation():
    a = sw.ones((2, 2))
    with pytest.raises(ValueError):
        sw.Tensor.from_subtensors([a, sw.ones((2, 3))], mode=0)  # other mode differs
    with pytest.raises(ValueError):
        sw.Tensor.from_subtensors([a, sw.ones((2, 2), sw.DType.Int32)])  # dtype differs
    with pytest.raises(ValueError):
        sw.Tensor.from_subtensors([])
    with pytest.raises(TypeError):
        sw.Tensor.from_subtensors([a, [[1.0, 2.0]]])
    with pytest.raises(ValueError):
        sw.Tensor.from_subtensors([a, sw.Tensor.from_subtensors([a, a])])


# ----- attributes ------------------------------------------------------------------------------------------------


def test_attributes(carrier):
    t = sw.Tensor.from_storage([0.0] * 30, sw.Layout(sw.Shape([3, [2, 2]]), sw.Stride([1, [6, 12]])), offset=3,
                               carrier=carrier)
    assert t.layout == sw.Layout(sw.Shape([3, [2, 2]]), sw.Stride([1, [6, 12]]))
    assert t.layout.shape == sw.Shape([3, [2, 2]]) and t.shape == (3, 4)
    assert t.dtype == sw.DType.Float32
    assert t.offset == 3
    assert t.carriers == (t.carrier,)
    assert t.subtensors == (t,)
    assert t.size == 12
    assert t.device == t.carrier.device
    assert t.is_differentiable() and t.grad is None and t.autograd_ctx is None
    assert not sw.zeros((2,), sw.DType.Int32, carrier=carrier).is_differentiable()
