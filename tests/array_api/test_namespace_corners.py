"""Corners of the namespace that library code reaches: comparisons that must not raise, 0-d Tensors as
fill values and bounds, where ``asarray`` puts a native array, what a native operand is told, the
implicit cotangent of ``sw.grad``, ``ExecutionOptions(device=...)`` and the accumulation dtypes.

Values and gradients are compared with NumPy or torch in float64, on every available carrier.
"""

import numpy as np
import pytest

import strideweave as sw
import strideweave.array_api as xp

torch = pytest.importorskip("torch")

_DTYPES = [xp.bool, xp.int8, xp.int16, xp.int32, xp.int64, xp.uint8, xp.uint16, xp.uint32, xp.uint64,
           xp.float32, xp.float64, xp.complex64, xp.complex128]
_ODD = ["a: b, c", ",", "(", "", "no-such-dtype", [1], {}, {"a": 1}, set(), None, 3, 2.5, object(),
        [("a", "f4")], ("f4", 2), np.ones(2), xp, sw.DType.Floating]


def _float64(t):
    return torch.tensor(np.asarray(t.numpy(), dtype=np.float64), dtype=torch.float64, requires_grad=True)


# ----- == never raises --------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", _DTYPES, ids=str)
def test_a_dtype_compared_with_anything_is_false_never_an_error(dtype):
    for other in _ODD:
        assert (dtype == other) is False and (dtype != other) is True
        assert (dtype.kind == other) is False and (dtype.kind != other) is True
        if not isinstance(other, np.ndarray):  # NumPy compares an array with anything elementwise
            assert (other == dtype) is False and (other != dtype) is True
    # what it does equal still holds
    assert dtype == dtype.name and dtype == np.dtype(dtype.name) and dtype.kind == np.dtype(dtype.name).kind


def test_a_dtype_spec_numpy_cannot_parse_is_not_a_dtype():
    # NumPy parses any string as a dtype spec and raises ValueError or SyntaxError on these; a dtype
    # argument still gets the TypeError that lists the dtypes.
    with pytest.raises(TypeError, match=r"dtype must be a dtype.*'a: b, c'.*float32"):
        xp.astype(xp.asarray([1.0]), "a: b, c")
    assert xp.isdtype(xp.float32, "real floating") and xp.float32 not in [",", "a: b, c"]


# ----- 0-d Tensors as fill values and linspace bounds --------------------------------------------

def test_full_takes_a_0d_tensor_and_differentiates_through_it(carrier):
    s = xp.asarray(1.5, device=carrier)
    w = xp.asarray(np.arange(6.0).reshape(2, 3), dtype=xp.float32, device=carrier)
    filled = xp.full((2, 3), s)
    assert filled.shape == (2, 3) and filled.dtype == xp.float32 and type(filled.carrier) is type(s.carrier)
    xp.sum(filled * w).backward()
    ts = _float64(s)
    (torch.full((2, 3), 1.0, dtype=torch.float64) * ts * torch.arange(6.0, dtype=torch.float64).reshape(2, 3)) \
        .sum().backward()
    np.testing.assert_allclose(filled.numpy(), np.full((2, 3), 1.5))
    np.testing.assert_allclose(s.grad.numpy(), ts.grad.numpy())
    assert xp.full_like(w, s).numpy().tolist() == [[1.5] * 3] * 2
    assert xp.full(2, xp.asarray(3, device=carrier), dtype=xp.float32).numpy().tolist() == [3.0, 3.0]


def test_full_refuses_a_fill_value_with_axes(carrier):
    with pytest.raises(ValueError, match=r"full: fill_value must be a scalar or a 0-d array.*\(2,\)"):
        xp.full(3, xp.asarray([1.0, 2.0], device=carrier))


@pytest.mark.parametrize("endpoint", [True, False])
@pytest.mark.parametrize("num", [0, 1, 2, 7])
def test_linspace_between_0d_tensors_matches_numpy_and_torch(carrier, num, endpoint):
    start, stop = xp.asarray(-1.25, device=carrier), xp.asarray(3.5, device=carrier)
    out = xp.linspace(start, stop, num, endpoint=endpoint)
    assert out.dtype == xp.float32 and type(out.carrier) is type(start.carrier) and out.shape == (num,)
    np.testing.assert_allclose(out.numpy(), np.linspace(-1.25, 3.5, num, endpoint=endpoint), rtol=1e-6, atol=1e-6)
    if endpoint and num > 1:
        assert out.numpy()[0] == -1.25 and out.numpy()[-1] == 3.5  # both ends exact
    weights = np.arange(1.0, num + 1.0)
    xp.sum(out * xp.asarray(weights, dtype=xp.float32, device=carrier)).backward()
    ta, tb = _float64(start), _float64(stop)
    steps = num - 1 if endpoint else num
    t = torch.arange(num, dtype=torch.float64) / steps if steps > 0 else torch.zeros(num, dtype=torch.float64)
    ((ta + (tb - ta) * t) * torch.tensor(weights)).sum().backward()
    np.testing.assert_allclose(start.grad.numpy(), ta.grad.numpy(), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(stop.grad.numpy(), tb.grad.numpy(), rtol=1e-6, atol=1e-6)


def test_linspace_with_one_tensor_bound(carrier):
    stop = xp.asarray(2.0, device=carrier)
    out = xp.linspace(0, stop, 5)
    np.testing.assert_allclose(out.numpy(), np.linspace(0, 2.0, 5))
    xp.sum(out).backward()
    assert stop.grad.numpy().tolist() == 2.5  # sum of the fractions 0, 1/4, ..., 1
    with pytest.raises(ValueError, match=r"linspace: start must be a scalar or a 0-d array"):
        xp.linspace(xp.asarray([0.0], device=carrier), 1.0, 3)


# ----- where asarray puts a native array ---------------------------------------------------------

def test_a_numpy_array_given_no_device_lands_on_the_default_carrier(carrier):
    values = np.array([1.0, 2.0, 3.0], dtype=np.float32)
    with sw.set_default_carrier(carrier):
        default = type(xp.asarray([0.0]).carrier)
        a = xp.asarray(values)
        assert type(a.carrier) is default and a.dtype == xp.float32
        assert (a + xp.asarray([1.0, 1.0, 1.0])).numpy().tolist() == [2.0, 3.0, 4.0]  # no mix of carriers
        kept = xp.asarray(values, device="numpy")
        assert type(kept.carrier) is sw.NumpyCarrier and type(sw.tensor(values).carrier) is sw.NumpyCarrier


def test_an_array_of_another_library_stays_on_its_own_carrier(carrier):
    values = np.array([1.0, 2.0, 3.0], dtype=np.float32)
    with sw.set_default_carrier(carrier):
        native = torch.tensor(values)
        a = xp.asarray(native)
        assert type(a.carrier) is sw.TorchCarrier
        native[0] = 7.0  # wrapped without copying
        assert a.numpy().tolist() == [7.0, 2.0, 3.0]


def test_a_numpy_array_moved_to_the_default_carrier_shares_its_memory():
    values = np.array([1.0, 2.0], dtype=np.float32)
    with sw.set_default_carrier("torch"):
        a = xp.asarray(values)
        values[0] = 7.0
        assert type(a.carrier) is sw.TorchCarrier and a.numpy().tolist() == [7.0, 2.0]


# ----- a native array where a Tensor is expected -------------------------------------------------

@pytest.mark.parametrize("native", ["torch", "numpy"])
def test_a_native_operand_is_named_by_its_library_with_the_fix(native):
    a = torch.ones(2) if native == "torch" else np.ones(2)
    name = "torch.Tensor" if native == "torch" else "numpy.ndarray"
    for call in (xp.tanh, lambda v: xp.add(v, v), xp.sum, lambda v: xp.astype(v, xp.float64)):
        with pytest.raises(TypeError, match=rf"got {name}\b.*xp\.asarray\(a\)"):
            call(a)


# ----- sw.grad without cotangents ----------------------------------------------------------------

@pytest.mark.parametrize("shape", [(), (1,)])
def test_grad_of_a_scalar_needs_no_cotangent(carrier, shape):
    w = xp.asarray([0.5, -1.0, 2.0], device=carrier)
    loss = xp.reshape(xp.sum(xp.tanh(w) * w), shape)
    (g,) = sw.grad(loss, [w])
    tw = _float64(w)
    (torch.tanh(tw) * tw).sum().backward()
    np.testing.assert_allclose(g.numpy(), tw.grad.numpy(), rtol=1e-6)
    assert w.grad is None  # grad() leaves .grad alone


def test_grad_without_cotangent_refuses_a_non_scalar(carrier):
    w = xp.asarray([0.5, -1.0], device=carrier)
    with pytest.raises(TypeError, match=r"grad\(\) without cotangents needs a scalar output.*\(2\):\(1\)"):
        sw.grad(w * w, [w])
    with pytest.raises(TypeError, match=r"batched=True\) needs cotangents"):
        sw.grad(xp.sum(w * w), [w], batched=True)


# ----- ExecutionOptions(device=...) --------------------------------------------------------------

def test_a_device_without_a_carrier_runs_on_the_operands_carrier_there(carrier):
    w = xp.asarray([1.0, 2.0], device=carrier)
    out = sw.multiply(w, w, options=sw.ExecutionOptions(device=w.device))
    assert type(out.carrier) is type(w.carrier) and out.device == w.device
    assert out.numpy().tolist() == [1.0, 4.0]


def test_an_unknown_device_raises_naming_it(carrier):
    w = xp.asarray([1.0, 2.0], device=carrier)
    with pytest.raises(ValueError, match="no-such-device"):
        sw.multiply(w, w, options=sw.ExecutionOptions(device="no-such-device"))
    if carrier != "array_api_strict":  # a namespace that takes any device string is asked when it runs
        with pytest.raises(ValueError, match="no-such-device"):
            sw.ExecutionOptions(carrier=carrier, device="no-such-device")


# ----- accumulation dtypes -----------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [xp.uint8, xp.uint16, xp.int8, xp.bool, xp.uint64], ids=str)
def test_sums_and_products_of_small_integers_widen_as_the_standard_says(carrier, dtype):
    default = xp.__array_namespace_info__().default_dtypes(device=xp.asarray(0, device=carrier).device)["integral"]
    expected = default if dtype.kind in ("int", "bool") else {32: xp.uint32, 64: xp.uint64}[default.bits]
    values = np.array([1, 0, 3] if dtype == xp.bool else [3, 200 if dtype.bits > 8 else 100, 7], dtype=dtype.name)
    x = xp.asarray(values, device=carrier)  # uint64 moved onto JAX without x64 narrows to uint32, as jnp does
    wide = values.astype(expected.name)
    for got, want in ((xp.sum(x), wide.sum()), (xp.prod(x), wide.prod()),
                      (xp.cumulative_sum(x, include_initial=True), np.concatenate([[0], np.cumsum(wide)])),
                      (xp.cumulative_prod(x), np.cumprod(wide))):
        assert got.dtype == expected, (got.dtype, expected)
        assert got.numpy().tolist() == want.tolist()


# ----- floor division where an operand is infinite -------------------------------------------------

def test_floor_divide_by_or_of_infinity_gives_the_standards_values(carrier):
    inf = float("inf")
    # float64 values (narrowed to float32 on JAX without x64, as jnp.asarray narrows them)
    a = xp.asarray(np.array([inf, inf, -inf, -inf, 1.0, -1.0, 1.0, -1.0, 7.0, -7.5]), device=carrier)
    b = xp.asarray(np.array([2.0, -2.0, 2.0, -2.0, -inf, inf, inf, -inf, 2.0, 2.0]), device=carrier)
    # floor(a / b) in float64: the standard's special cases (NumPy's own // gives nan and -1.0 here)
    expected = np.floor(a.numpy() / b.numpy())
    for got in (xp.floor_divide(a, b), a // b):
        np.testing.assert_array_equal(got.numpy(), expected)
        np.testing.assert_array_equal(np.signbit(got.numpy()), np.signbit(expected))  # -0.0 where it should be
    scalar = (xp.asarray(inf, device=carrier) // 2.0, 1.0 // xp.asarray([-inf], device=carrier))
    assert scalar[0].numpy().tolist() == inf and np.signbit(scalar[1].numpy()[0])
    x = xp.asarray(np.array([inf, 5.0]), device=carrier)
    with sw.no_grad():
        x //= 2.0
    assert x.numpy().tolist() == [inf, 2.0]
    assert (xp.asarray([5, -5], device=carrier) // 2).numpy().tolist() == [2, -3]  # integers unchanged


def test_a_zero_remainder_takes_the_sign_of_the_divisor(carrier):
    a = xp.asarray(np.array([-0.0, 0.0, 4.0, -4.0, 5.5, -5.5]), device=carrier)
    b = xp.asarray(np.array([2.0, -2.0, -2.0, 2.0, 2.0, -2.0]), device=carrier)
    expected = np.remainder(a.numpy(), b.numpy())  # NumPy's zeros follow the divisor, as the standard says
    for got in (xp.remainder(a, b), a % b):
        np.testing.assert_array_equal(got.numpy(), expected)
        np.testing.assert_array_equal(np.signbit(got.numpy()), np.signbit(expected))
    assert np.signbit((xp.asarray(np.array([0.0]), device=carrier) % -2.0).numpy()).tolist() == [True]
    x = xp.asarray([0.5, 2.5, -1.0], device=carrier)
    xp.sum(xp.remainder(x, 1.0) * x).backward()  # still differentiable: d/dx (x mod 1) * x = (x mod 1) + x
    tx = _float64(x)
    (torch.remainder(tx, 1.0) * tx).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-6)
