"""The Array API's elementwise functions: VJPs against float64 central differences on every carrier.

Each rule is one line of the table in ``strideweave.ops.elementwise``; here
every differentiable one runs ``gradcheck`` (all available carriers) on a
strided layout with holes or a nested broadcast layout, with inputs kept
inside each function's domain and away from its kinks.
"""

import numpy as np
import pytest
from ops_cases import CARRIERS, canonical_like, check, make

import strideweave as sw
from strideweave.ops import elementwise

KINDS = ["holes", "nested_broadcast"]

# name -> (fn, domain of the input); "small" is (-0.9, 0.9), "pos" is (0.5, 2)
UNARY = {
    "positive": (sw.positive, "any"),
    "expm1": (sw.expm1, "any"),
    "log1p": (sw.log1p, "pos"),
    "log2": (sw.log2, "pos"),
    "log10": (sw.log10, "pos"),
    "square": (sw.square, "any"),
    "reciprocal": (sw.reciprocal, "any"),
    "tan": (sw.tan, "small"),
    "asin": (sw.asin, "small"),
    "acos": (sw.acos, "small"),
    "atan": (sw.atan, "any"),
    "sinh": (sw.sinh, "any"),
    "cosh": (sw.cosh, "any"),
    "asinh": (sw.asinh, "any"),
    "acosh": (lambda x: sw.acosh(x + 1.0), "pos"),
    "atanh": (sw.atanh, "small"),
    # piecewise constant: zero gradient (torch's convention); values stay away from the jumps
    "sign": (lambda x: sw.sign(x) * x, "any"),
    "floor": (lambda x: sw.floor(x * 3.0) + x, "any"),
    "ceil": (lambda x: sw.ceil(x * 3.0) * x, "any"),
    "round": (lambda x: sw.round(x * 3.0) * x, "any"),
    "trunc": (lambda x: sw.trunc(x * 3.0) * x, "any"),
}

BINARY = {
    "atan2": (sw.atan2, "any", "any"),
    "hypot": (sw.hypot, "any", "any"),
    "logaddexp": (sw.logaddexp, "any", "any"),
    "copysign": (sw.copysign, "any", "any"),
    "remainder": (sw.remainder, "any", "pos"),
    "floor_divide": (lambda a, b: sw.floor_divide(a, b) * a, "any", "pos"),
    "pow": (sw.pow, "pos", "any"),
}


# Each rule meets one of the two layout kinds (the base that reads them is shared and tested in full elsewhere).
@pytest.mark.parametrize(("name", "kind"), [(name, KINDS[i % 2]) for i, name in enumerate(UNARY)])
def test_unary_rule(name, kind):
    fn, domain = UNARY[name]
    check(fn, [make(kind, seed=7, domain=domain)])


@pytest.mark.parametrize("name", list(BINARY))
def test_binary_rule(name):
    fn, da, db = BINARY[name]
    a = make("nested_broadcast", seed=8, domain=da)
    b = canonical_like(a, seed=9, domain=db)
    check(fn, [a, b])


@pytest.mark.parametrize("name", ["atan2", "hypot", "logaddexp", "copysign", "remainder"])
def test_binary_rule_with_a_scalar(name):
    fn = getattr(sw, name)
    x = make("transposed", seed=10, domain="pos")
    check(lambda t: fn(t, 0.7) + fn(1.3, t), [x])


@pytest.mark.parametrize("carrier", CARRIERS)
def test_forward_values_match_numpy(carrier):
    x = make("holes", seed=11, domain="small", carrier=carrier)
    y = make("transposed", seed=12, domain="small", carrier=carrier)
    xv, yv = x.numpy(), y.numpy()
    for name in ["expm1", "log1p", "tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "atanh", "sign",
                 "floor", "ceil", "round", "trunc", "square", "isnan", "isfinite", "signbit"]:
        np.testing.assert_allclose(getattr(sw, name)(x).numpy(), getattr(np, name if name[0] != "a" or name == "abs"
                                   else "arc" + name[1:])(xv), rtol=1e-6, atol=1e-6, err_msg=name)
    for name, ref in [("atan2", np.arctan2), ("hypot", np.hypot), ("logaddexp", np.logaddexp),
                      ("copysign", np.copysign), ("remainder", np.remainder), ("floor_divide", np.floor_divide),
                      ("nextafter", np.nextafter)]:
        np.testing.assert_allclose(getattr(sw, name)(x, y).numpy(), ref(xv, yv), rtol=1e-6, atol=1e-6, err_msg=name)


def test_ties_split_the_gradient_and_kinks_follow_torch():
    x = sw.tensor([0.0, 2.0, -1.0])
    sw.sum(sw.abs(x) + sw.sign(x) + sw.maximum(x, 2.0)).backward()
    # abs'(0) = 0, sign' = 0, maximum at a tie gives half
    np.testing.assert_allclose(x.grad.numpy(), [0.0, 1.5, -1.0])


def test_non_differentiable_functions_record_nothing():
    a = sw.tensor([1.0, 2.0])
    assert sw.isnan(a).dtype is sw.DType.Bool and sw.isnan(a).autograd_ctx is None
    b = sw.nextafter(a, 3.0)
    sw.sum(b * a).backward()
    np.testing.assert_allclose(a.grad.numpy(), b.numpy())  # nothing flows through nextafter itself
    flags = sw.tensor([True, False])
    assert sw.logical_xor(flags, sw.tensor([True, True])).tolist() == [False, True]
    assert sw.bitwise_left_shift(sw.tensor([1, 2]), 2).tolist() == [4, 8]
    assert sw.floor(sw.tensor([3, -2])).dtype is sw.DType.Int32  # integers pass through


@pytest.mark.parametrize(("call", "message"), [
    (lambda: sw.expm1(sw.tensor([1, 2])), "expm1 expects floating operands, got a Tensor of dtype DType.Int32"),
    (lambda: sw.logical_and(sw.tensor([1.0]), sw.tensor([True])), "logical_and expects boolean operands"),
    (lambda: sw.bitwise_and(sw.tensor([1.0]), 1), "bitwise_and expects integer or boolean operands"),
    (lambda: sw.atan2(1.0, 2.0), "needs at least one Tensor operand"),
])
def test_wrong_dtypes_raise_type_error(call, message):
    with pytest.raises(TypeError, match=message):
        call()


def test_every_rule_is_one_table_entry():
    assert set(elementwise.UNARY_RULES) | set(elementwise.BINARY_RULES) | {"pow"} == set(elementwise.__all__)
    for name in elementwise.__all__:
        assert getattr(sw.ops, name) is getattr(elementwise, name)
