"""The Array API's axis functions (ops/arrays.py): VJPs against float64 central differences on every carrier,
forward values against NumPy, and the errors the standard asks for.

Inputs use strided, holed and nested layouts (ops_cases.KINDS): the rules
see natural arrays, so this also checks reading any layout and sending
cotangents back into it.
"""

import numpy as np
import pytest
from ops_cases import CARRIERS, check, make

import strideweave as sw

I32 = sw.DType.Int32


def idx(values):
    return sw.tensor(values, I32)


# name -> (fn, layout kind, domain)
CASES = {
    "cumulative_sum": (lambda x: sw.cumulative_sum(x, axis=1), "holes", "any"),
    "cumulative_sum_initial": (lambda x: sw.cumulative_sum(x, axis=0, include_initial=True), "nested", "any"),
    "cumulative_prod": (lambda x: sw.cumulative_prod(x, axis=1), "transposed", "any"),
    "cumulative_prod_initial": (lambda x: sw.cumulative_prod(x, axis=0, include_initial=True), "holes", "any"),
    "sort": (lambda x: sw.sort(x, axis=1), "transposed", "any"),
    "sort_descending": (lambda x: sw.sort(x, axis=0, descending=True), "nested_strided", "any"),
    "take": (lambda x: sw.take(x, idx([3, 0, 3, -1]), axis=1), "holes", "any"),
    "take_along_axis": (lambda x: sw.take_along_axis(x, idx([[0, 0], [1, 3], [2, 2]]), axis=1), "transposed",
                        "any"),
    "flip": (lambda x: sw.flip(x, axis=1) * x, "holes", "any"),
    "roll": (lambda x: sw.roll(x, (1, -2), axis=(0, 1)) * x, "holes", "any"),
    "roll_flat": (lambda x: sw.roll(x, 5), "transposed", "any"),
    "repeat": (lambda x: sw.repeat(x, 2, axis=1), "holes", "any"),
    "repeat_counts": (lambda x: sw.repeat(x, idx([1, 0, 3]), axis=0), "transposed", "any"),
    "repeat_flat": (lambda x: sw.repeat(x, 2), "broadcast", "any"),
    "tile": (lambda x: sw.tile(x, (2, 1, 2)), "holes", "any"),
    "squeeze_expand": (lambda x: sw.squeeze(sw.expand_dims(x, axis=1), axis=1), "nested", "any"),
    "moveaxis": (lambda x: sw.moveaxis(sw.expand_dims(x, axis=-1), 0, -1), "transposed", "any"),
    "tril": (lambda x: sw.tril(x, k=1), "holes", "any"),
    "triu": (lambda x: sw.triu(x, k=-1), "broadcast", "any"),
    "diff": (lambda x: sw.diff(x, axis=1, n=2, prepend=x), "transposed", "any"),
    "var": (lambda x: sw.var(x, axis=1, correction=1), "holes", "any"),
    "std": (lambda x: sw.std(x, axis=(0, 1), keepdims=True), "nested", "any"),
    "std_all": (lambda x: sw.std(x) * x, "transposed", "any"),
    "vecdot": (lambda x: sw.vecdot(x, x * x), "holes", "any"),
}


@pytest.mark.parametrize("name", list(CASES))
def test_gradcheck(name):
    fn, kind, domain = CASES[name]
    check(fn, [make(kind, seed=21, domain=domain)])


def test_cumulative_prod_through_zeros():
    # d/dx_i of prod_{k<=j} x_k when some x_k are zero: the product of the other factors.
    x = sw.tensor([[0.5, 0.0, 1.2, -0.7], [0.0, 0.0, 0.3, 0.9]])
    check(lambda t: sw.cumulative_prod(t, axis=1), [x])


def test_vecdot_broadcasts():
    a = make("holes", seed=22)
    b = sw.tensor([[0.3, -0.5, 0.8, 1.1]])
    check(lambda x, y: sw.vecdot(x, y), [a, b])


def test_take_repeated_indices_accumulate():
    x = sw.tensor([1.0, 2.0, 3.0])
    sw.sum(sw.take(x, idx([2, 2, 0, 2]))).backward()
    np.testing.assert_array_equal(x.grad.numpy(), [1.0, 0.0, 3.0])


@pytest.mark.parametrize("carrier", CARRIERS)
def test_forward_matches_numpy(carrier):
    x = make("transposed", seed=23, carrier=carrier)
    v = x.numpy()
    np.testing.assert_allclose(sw.cumulative_sum(x, axis=0).numpy(), np.cumsum(v, axis=0), rtol=1e-6)
    np.testing.assert_allclose(sw.cumulative_prod(x, axis=1).numpy(), np.cumprod(v, axis=1), rtol=1e-6)
    np.testing.assert_array_equal(sw.sort(x, axis=0).numpy(), np.sort(v, axis=0))
    np.testing.assert_array_equal(sw.argsort(x, axis=1).numpy(), np.argsort(v, axis=1, kind="stable"))
    np.testing.assert_array_equal(sw.argmax(x, axis=0).numpy(), np.argmax(v, axis=0))
    assert int(sw.argmin(x).numpy()) == int(np.argmin(v)) and sw.argmin(x).layout.rank == 0
    np.testing.assert_allclose(sw.var(x, axis=0, correction=1).numpy(), np.var(v, axis=0, ddof=1), rtol=1e-5)
    np.testing.assert_allclose(sw.std(x).numpy(), np.std(v), rtol=1e-5)
    assert sw.std(x).layout.rank == 0
    np.testing.assert_array_equal(sw.tile(x, (2,)).numpy(), np.tile(v, (2,)))
    np.testing.assert_array_equal(sw.repeat(x, 2).numpy(), np.repeat(v, 2))
    np.testing.assert_array_equal(sw.roll(x, 3).numpy(), np.roll(v, 3))
    np.testing.assert_array_equal(sw.diff(x, axis=0).numpy(), np.diff(v, axis=0))
    np.testing.assert_array_equal(sw.moveaxis(x, 0, 1).numpy(), np.moveaxis(v, 0, 1))
    positive = sw.greater(x, 0.0)
    np.testing.assert_array_equal(sw.count_nonzero(positive, axis=1).numpy(), np.count_nonzero(v > 0, axis=1))
    for got, want in zip(sw.nonzero(positive), np.nonzero(v > 0)):
        np.testing.assert_array_equal(got.numpy(), want)


def test_unique_and_searchsorted():
    x = sw.tensor([3, 1, 3, 2, 1])
    values, _indices, inverse, counts = sw.unique_all(x)
    assert values.tolist() == [1, 2, 3] and counts.tolist() == [2, 1, 2]
    assert values.numpy()[inverse.numpy()].tolist() == [3, 1, 3, 2, 1]
    assert sw.unique_values(x).tolist() == [1, 2, 3]
    assert sw.unique_counts(x).counts.tolist() == [2, 1, 2]
    assert sw.unique_inverse(x).inverse_indices.tolist() == inverse.tolist()
    assert sw.searchsorted(sw.tensor([1.0, 2.0, 3.0]), sw.tensor([2.0, 0.5]), side="right").tolist() == [2, 0]


def test_integer_results_are_not_recorded():
    x = sw.tensor([0.3, -0.2, 0.9])
    assert sw.argsort(x).autograd_ctx is None and sw.argmax(x).autograd_ctx is None
    assert sw.sort(x).autograd_ctx is not None


@pytest.mark.parametrize(("call", "error", "message"), [
    (lambda x: sw.cumulative_sum(x), ValueError, "axis is required for an array with 2 axes"),
    (lambda x: sw.sort(x, axis=2), IndexError, "axis 2 is out of range for an array with 2 axes"),
    (lambda x: sw.take(x, idx([0, 4]), axis=1), IndexError, r"out of range for axis 1 of extent 4"),
    (lambda x: sw.take(x, sw.tensor([0.0]), axis=1), TypeError, "indices must have an integer dtype"),
    (lambda x: sw.squeeze(x, axis=0), ValueError, "axis 0 has extent 3 in shape \\(3, 4\\), expected 1"),
    (lambda x: sw.var(sw.tensor([1, 2])), TypeError, "var expects a floating-point Tensor"),
    (lambda x: sw.vecdot(x, sw.tensor([1.0, 2.0])), ValueError, "differ along axis -1"),
    (lambda x: sw.roll(x, (1, 2), axis=0), ValueError, "must be both ints or tuples"),
    (lambda x: sw.repeat(x, -1), ValueError, "repeats must be >= 0"),
    (lambda x: sw.diff(x, prepend=sw.tensor([1.0])), ValueError, "does not fit x of shape \\(3, 4\\)"),
    (lambda x: sw.argmax(x[0:0]), ValueError, "empty array"),
])
def test_bad_input(call, error, message):
    with pytest.raises(error, match=message):
        call(make("canonical"))
