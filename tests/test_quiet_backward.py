"""Backward at a domain boundary gives torch's inf and NaN gradients, without NumPy warnings."""

import warnings

import numpy as np
import pytest

import strideweave as sw
from strideweave.testing import available_carriers

CARRIERS = available_carriers()

# (function, its torch counterpart's name, inputs with boundary points)
UNARY = [("log", [0.0, 1.0]), ("log1p", [-1.0, 0.5]), ("log2", [0.0, 2.0]), ("log10", [0.0, 2.0]),
         ("sqrt", [0.0, 4.0]), ("reciprocal", [0.0, 2.0]), ("asin", [1.0, -1.0, 0.5]), ("acos", [1.0, -1.0, 0.5]),
         ("acosh", [1.0, 2.0]), ("atanh", [1.0, -1.0, 0.5]), ("atan", [1e30, 1.0]), ("asinh", [1e30, 1.0])]
# The last field: which operands' gradients equal torch's (all of them: singular points take torch's
# subgradient, tests/correctness/test_singular_points.py).
BINARY = [("divide", [1.0, 0.0, 0.0], [0.0, 0.0, 2.0], (0, 1)),
          ("power", [0.0, 0.0, 2.0], [0.5, -1.0, 2.0], (0, 1)),
          ("power", [0.0, 2.0], [0.5, 2.0], (0, 1)),
          ("atan2", [0.0, 1.0], [0.0, 2.0], (0, 1)),
          ("hypot", [0.0, 3.0], [0.0, 4.0], (0, 1)),
          ("remainder", [1.0, 5.0], [0.0, 3.0], (0, 1))]


def _torch_grads(name, *values):
    torch = pytest.importorskip("torch")
    names = {"asin": "asin", "acos": "acos", "acosh": "acosh", "atanh": "atanh", "atan": "atan", "asinh": "asinh",
             "power": "pow", "atan2": "atan2", "hypot": "hypot", "remainder": "remainder"}
    leaves = [torch.tensor(v, dtype=torch.float32, requires_grad=True) for v in values]
    getattr(torch, names.get(name, name))(*leaves).sum().backward()
    return [leaf.grad.numpy() for leaf in leaves]


def _quiet_grads(name, carrier, *values):
    leaves = [sw.tensor(np.array(v, np.float32), carrier=carrier) for v in values]
    with np.errstate(all="ignore"):  # the forward pass is the caller's computation (atanh(1) = inf)
        loss = sw.sum(getattr(sw, name)(*leaves))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        loss.backward()
    return [leaf.grad.numpy() for leaf in leaves]


@pytest.mark.parametrize("carrier", CARRIERS)
@pytest.mark.parametrize(("name", "values"), UNARY, ids=[u[0] for u in UNARY])
def test_unary_rule_at_its_boundary(name, values, carrier):
    (got,) = _quiet_grads(name, carrier, values)
    (want,) = _torch_grads(name, values)
    np.testing.assert_allclose(got, want, rtol=1e-6, equal_nan=True)


@pytest.mark.parametrize("carrier", CARRIERS)
@pytest.mark.parametrize(("name", "a", "b", "like_torch"), BINARY, ids=[f"{b[0]}{i}" for i, b in enumerate(BINARY)])
def test_binary_rule_at_its_boundary(name, a, b, like_torch, carrier):
    got = _quiet_grads(name, carrier, a, b)
    want = _torch_grads(name, a, b)
    for i in like_torch:
        np.testing.assert_allclose(got[i], want[i], rtol=1e-6, equal_nan=True)
    if name == "atan2":
        assert got[0][0] == 0 and got[1][0] == 0  # torch's zero at the origin, not 0 / 0


def test_warnings_outside_backward_are_left_alone():
    # The rules silence NumPy only while they run: the caller's own NumPy code still warns.
    sw.sum(sw.sqrt(sw.tensor([0.0, 1.0]))).backward()
    with pytest.warns(RuntimeWarning, match="divide by zero"):
        np.float32(1.0) / np.zeros(1, np.float32)


@pytest.mark.parametrize("carrier", CARRIERS)
def test_backward_through_an_infinite_cotangent_and_a_constant_std_is_quiet(carrier):
    import strideweave.array_api as xp

    x = sw.tensor(np.zeros(3, np.float32), carrier=carrier)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        (xp.linalg.vector_norm(x) * 2.0).backward()        # norm at 0: an infinite-times-zero product
        xp.std(x * 1.0).backward()                           # 0/0 in var's VJP at a constant input
    assert x.grad.shape == (3,)


@pytest.mark.parametrize("carrier", CARRIERS)
def test_batched_grad_is_as_quiet_as_one_cotangent_at_a_time(carrier):
    # sqrt's VJP at 0 is an infinite cotangent; the product's VJP multiplies it by 0. The vectorised
    # batched traversal runs the rules under the same error state as backward() and unbatched grad.
    torch = pytest.importorskip("torch")
    values = np.array([1.0, 2.0, 3.0], np.float32)
    t = sw.tensor(values, carrier=carrier)
    leaf = torch.tensor(values, dtype=torch.float64, requires_grad=True)
    want = torch.autograd.grad(torch.sqrt(leaf * 0.0), [leaf], torch.ones(3, dtype=torch.float64))[0].numpy()
    cotangents = sw.Tensor.from_storage(np.ones(6, np.float32), sw.Layout((2, 3), (3, 1)), carrier=carrier)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        (single,) = sw.grad(sw.sqrt(t * 0.0), [t], sw.tensor(np.ones(3, np.float32), carrier=carrier))
        (batched,) = sw.grad(sw.sqrt(t * 0.0), [t], cotangents, batched=True)
    np.testing.assert_array_equal(single.numpy(), want)
    np.testing.assert_array_equal(batched.numpy(), np.stack([want, want]))
