"""Native arrays meeting Tensors: operators, NumPy ufuncs and NumPy functions never leave the graph silently."""

import operator

import numpy as np
import pytest

import strideweave as sw
from strideweave.testing import available_carriers

CARRIERS = available_carriers()
W0 = np.array([[1.5, -2.0], [0.5, 3.0]], np.float32)
V0 = np.array([0.25, -1.0], np.float32)
TYPE_NAMES = {"numpy": "numpy.ndarray", "torch": "torch.Tensor", "jax": "jax.Array",
              "array_api_strict": "array_api_strict.Array"}
OPERATORS = [operator.add, operator.sub, operator.mul, operator.truediv, operator.pow, operator.matmul,
             operator.lt, operator.ge, operator.eq, operator.ne]


@pytest.fixture(params=CARRIERS)
def carrier(request):
    return request.param


def _native(values, carrier):
    """A native array of ``carrier``'s own library holding ``values``."""
    return sw.tensor(values, carrier=carrier).to_array()


def _expected(op, a, b):
    return op(np.asarray(a, np.float32), np.asarray(b, np.float32))


# ----- operators -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("op", OPERATORS, ids=lambda op: op.__name__)
def test_an_array_of_the_tensors_own_library_is_a_constant(carrier, op):
    W = sw.tensor(W0, carrier=carrier)
    v = _native(V0, carrier)
    pairs = [(W, v, W0, V0)]
    if carrier != "array_api_strict":  # array_api_strict's own operators refuse any other array type
        pairs.append((v, W, V0, W0))
    for a, b, a0, b0 in pairs:
        got = op(a, b)
        assert type(got) is sw.Tensor, f"{op.__name__} gave a {type(got).__name__}"
        assert type(got.carrier) is type(W.carrier)
        np.testing.assert_allclose(got.numpy(), _expected(op, a0, b0), rtol=1e-6)


def test_gradients_flow_to_the_tensor_only(carrier):
    W = sw.tensor(W0, carrier=carrier)
    v, m = _native(V0, carrier), _native(W0 * 2.0, carrier)
    loss = (W @ v).sum() + (W * m).sum() + (W - v).sum()
    if carrier != "array_api_strict":
        loss = loss + (v @ W).sum() + (m / (W + 10.0)).sum()
    loss.backward()
    expected = np.outer(np.ones(2), V0) + W0 * 2.0 + 1.0
    if carrier != "array_api_strict":
        expected = expected + np.outer(V0, np.ones(2)) - (W0 * 2.0) / (W0 + 10.0) ** 2
    np.testing.assert_allclose(W.grad.numpy(), expected, rtol=1e-5)


def test_a_numpy_users_matrix_vector_products_stay_in_the_graph():
    W = sw.tensor(W0, carrier="numpy")
    for product in (W @ np.ones(2, np.float32), np.ones(2, np.float32) @ W, W * np.ones(2, np.float32)):
        assert type(product) is sw.Tensor and product.autograd_ctx is not None


@pytest.mark.parametrize("op", [operator.add, operator.mul, operator.matmul, operator.lt],
                         ids=lambda op: op.__name__)
def test_an_array_of_another_library_is_refused_by_name(carrier, op):
    W = sw.tensor(W0, carrier=carrier)
    for other in CARRIERS:
        if other == carrier:
            continue
        v = _native(V0, other)
        with pytest.raises(TypeError, match=rf"{TYPE_NAMES[other]}.*xp\.asarray\(a, device=t\.device\)"):
            op(W, v)
        with pytest.raises(TypeError, match="xp.asarray" if other != "array_api_strict" else "Tensor"):
            op(v, W)  # never a native array: either StrideWeave's refusal or the other library's own


def test_the_fix_named_by_the_refusal_works(carrier):
    W = sw.tensor(W0, carrier=carrier)
    v = sw.array_api.asarray(np.asarray(V0), device=W.device)
    np.testing.assert_allclose((W @ v).numpy(), W0 @ V0, rtol=1e-6)


def test_torch_on_the_left_reaches_the_reflected_operator():
    torch = pytest.importorskip("torch")
    W = sw.tensor(W0, carrier="torch")
    for got, expected in ((torch.tensor(V0) * W, V0 * W0), (torch.tensor(V0) @ W, V0 @ W0),
                          (torch.tensor(V0) - W, V0 - W0)):
        assert type(got) is sw.Tensor
        np.testing.assert_allclose(got.numpy(), expected, rtol=1e-6)


def test_in_place_numpy_write_of_a_tensor_is_refused():
    a = np.ones(2, np.float32)
    with pytest.raises(TypeError, match="out="):
        a += sw.tensor(V0, carrier="numpy")
    np.testing.assert_array_equal(a, np.ones(2))


# ----- NumPy ufuncs and functions ------------------------------------------------------------------------

def test_numpy_ufuncs_run_strideweaves_recorded_ops(carrier):
    x = sw.tensor(W0, carrier=carrier)
    for ufunc, expected in ((np.exp, np.exp(W0)), (np.tanh, np.tanh(W0)), (np.absolute, np.abs(W0)),
                            (np.square, W0 ** 2), (np.negative, -W0), (np.arctan, np.arctan(W0))):
        got = ufunc(x)
        assert type(got) is sw.Tensor and type(got.carrier) is type(x.carrier), ufunc.__name__
        np.testing.assert_allclose(got.numpy(), expected, rtol=1e-6, err_msg=ufunc.__name__)
    got = np.maximum(x, 0.0)
    np.testing.assert_allclose(got.numpy(), np.maximum(W0, 0.0))
    (np.exp(x) * np.power(x, 2.0)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.exp(W0) * W0 ** 2 + np.exp(W0) * 2 * W0, rtol=1e-5)


def test_numpy_ufuncs_without_a_counterpart_are_refused(carrier):
    x = sw.tensor(W0, carrier=carrier)
    for call in (lambda: np.cbrt(x), lambda: np.add.reduce(x), lambda: np.multiply.outer(x, x),
                 lambda: np.exp(x, out=np.empty((2, 2), np.float32)), lambda: np.add(x, x, dtype=np.float64)):
        with pytest.raises(TypeError, match=r"strideweave\.array_api"):
            call()


def test_numpy_functions_run_the_methods_of_numpys_meaning(carrier):
    x = sw.tensor(W0, carrier=carrier)
    cases = [
        (np.sum(x), W0.sum()), (np.sum(x, axis=0), W0.sum(axis=0)),
        (np.mean(x, axis=1, keepdims=True), W0.mean(axis=1, keepdims=True)), (np.max(x), W0.max()),
        (np.amin(x, 0), W0.min(0)), (np.std(x, ddof=1), W0.std(ddof=1)), (np.prod(x, 1), W0.prod(1)),
        (np.argmax(x), W0.argmax()), (np.cumsum(x), W0.cumsum()),
        (np.reshape(x, (4, 1)), W0.reshape(4, 1)), (np.reshape(x, -1), W0.reshape(-1)),
        (np.transpose(x), W0.T), (np.ravel(x), W0.ravel()), (np.squeeze(np.reshape(x, (1, 4))), W0.ravel()),
        (np.concatenate([x, x], axis=1), np.concatenate([W0, W0], axis=1)), (np.stack([x, x]), np.stack([W0, W0])),
        (np.where(x > 0, x, 0.0), np.where(W0 > 0, W0, 0.0)), (np.clip(x, -1.0, 1.0), np.clip(W0, -1.0, 1.0)),
        (np.round(x), np.round(W0)), (np.tensordot(x, x, axes=1), np.tensordot(W0, W0, axes=1)),
        (np.expand_dims(x, 1), np.expand_dims(W0, 1)), (np.broadcast_to(x, (3, 2, 2)), np.broadcast_to(W0, (3, 2, 2))),
        (np.flip(x, axis=0), np.flip(W0, axis=0)), (np.flip(x), np.flip(W0)),
    ]
    for got, expected in cases:
        assert type(got) is sw.Tensor
        np.testing.assert_allclose(got.numpy(), expected, rtol=1e-6)
    assert np.shape(x) == (2, 2) and np.ndim(x) == 2 and np.size(x) == 4
    assert np.allclose(x, W0) and np.array_equal(x, W0) and not np.allclose(x, W0 + 1)
    np.sum(np.exp(x) * x).backward()
    np.testing.assert_allclose(x.grad.numpy(), np.exp(W0) * (W0 + 1.0), rtol=1e-5)


def test_numpy_functions_without_a_counterpart_are_refused(carrier):
    x = sw.tensor(W0, carrier=carrier)
    for call, name in ((lambda: np.linalg.norm(x), "np.linalg.norm"), (lambda: np.dot(x, x), "np.dot"),
                       (lambda: np.unique(x), "np.unique"), (lambda: np.where(x > 0), "np.where"),
                       (lambda: np.round(x, 2), "np.round")):
        with pytest.raises(TypeError, match=rf"{name}.*t\.numpy\(\)"):
            call()
