"""Every differentiable row of the elementwise table against torch.autograd in float64: values and gradients.

A row's test is its entry here: the domain its inputs are drawn from and, where
torch spells it differently, torch's function. ``test_every_row_has_an_entry``
fails for a differentiable row that has none. The operands are a strided
Float32 Tensor with holes and, for a binary row, a canonical one broadcast
against it; the gradients are those of ``sum(w * f(...))`` for random ``w``.
"""

import numpy as np
import pytest
from ops_cases import make

import strideweave as sw
from strideweave.ops import elementwise

torch = pytest.importorskip("torch")

# domains: "any" = sign * U(0.3, 1.5), "pos" = U(0.5, 2), "small" = U(-0.9, 0.9)
UNARY = {
    "negative": "any", "positive": "any", "abs": "any", "exp": "any", "exp2": "any", "expm1": "any",
    "log": "pos", "log1p": "pos", "log2": "pos", "log10": "pos", "sqrt": "pos", "square": "any",
    "reciprocal": "any", "sin": "any", "cos": "any", "tan": "small", "asin": "small", "acos": "small",
    "atan": "any", "sinh": "any", "cosh": "any", "tanh": "any", "asinh": "any", "acosh": "pos", "atanh": "small",
    # piecewise constant: zero gradient, as torch's; random values miss the jumps
    "sign": "any", "floor": "any", "ceil": "any", "round": "any", "trunc": "any",
}
BINARY = {
    "add": ("any", "any"), "subtract": ("any", "any"), "multiply": ("any", "any"), "divide": ("any", "any"),
    "power": ("pos", "any"), "maximum": ("any", "any"), "minimum": ("any", "any"), "atan2": ("any", "any"),
    "hypot": ("any", "any"), "logaddexp": ("any", "any"), "copysign": ("any", "any"),
    "remainder": ("any", "pos"), "floor_divide": ("any", "pos"),
}
# torch's function where it is not torch.<name> (torch has no derivative for floor_divide: floor(a / b) is its
# value with torch's zero gradient; acosh's domain is shifted past 1)
TORCH = {"power": torch.pow, "floor_divide": lambda a, b: torch.floor(a / b), "acosh": lambda x: torch.acosh(x + 1.0)}
OURS = {"acosh": lambda x: sw.ops.acosh(x + 1.0)}


def _torch(name):
    return TORCH[name] if name in TORCH else getattr(torch, name)


def _differentiable(rules):
    return [name for name, rule in rules.items() if any(vjp is not None for vjp in rule.vjps())]


def test_every_row_has_an_entry():
    assert sorted(_differentiable(elementwise.UNARY_RULES)) == sorted(UNARY)
    assert sorted(_differentiable(elementwise.BINARY_RULES)) == sorted(BINARY)


def _compare(name, ours, reference, operands):
    arrays = [t.numpy().astype(np.float64) for t in operands]
    w = np.random.default_rng(5).standard_normal(np.broadcast_shapes(*(a.shape for a in arrays)))
    out = ours(*operands)
    sw.sum(out * sw.tensor(w.astype(np.float32))).backward()
    leaves = [torch.tensor(a, requires_grad=True) for a in arrays]
    want = reference(*leaves)
    want.backward(torch.tensor(w))
    np.testing.assert_allclose(out.numpy(), want.detach().numpy(), rtol=2e-6, atol=1e-6, err_msg=f"{name} values")
    for i, (t, leaf) in enumerate(zip(operands, leaves)):
        np.testing.assert_allclose(t.grad.numpy(), leaf.grad.numpy(), rtol=2e-5, atol=1e-5,
                                   err_msg=f"{name} gradient of operand {i}")


@pytest.mark.parametrize("name", list(UNARY))
def test_unary_row_matches_torch(name):
    x = make("holes", seed=21, domain=UNARY[name])
    _compare(name, OURS.get(name, getattr(sw.ops, name)), _torch(name), [x])


@pytest.mark.parametrize("name", list(BINARY))
def test_binary_row_matches_torch(name):
    domain_a, domain_b = BINARY[name]
    a = make("holes", seed=22, domain=domain_a)
    b = sw.Tensor.from_storage(make("canonical", seed=23, domain=domain_b).numpy()[0], sw.Layout(sw.Shape(4)),
                               sw.DType.Float32)
    _compare(name, getattr(sw.ops, name), _torch(name), [a, b])


def test_exp2_on_every_carrier_and_through_numpy():
    # beyond the standard: NumPy's exp2, in strideweave.array_api and through np.exp2 on a Tensor
    import strideweave.array_api as xp
    from strideweave.testing import available_carriers

    values = np.array([-3.0, -0.5, 0.0, 1.5, 10.0], dtype=np.float32)
    for carrier in available_carriers():
        x = xp.asarray(values, device=carrier)
        y = np.exp2(x) if carrier == "numpy" else xp.exp2(x)
        assert isinstance(y, sw.Tensor)
        xp.sum(y).backward()
        np.testing.assert_allclose(y.numpy(), np.exp2(values.astype(np.float64)), rtol=2e-7, err_msg=carrier)
        np.testing.assert_allclose(x.grad.numpy(), np.exp2(values.astype(np.float64)) * np.log(2.0), rtol=2e-7,
                                   err_msg=carrier)
    with pytest.raises(TypeError, match="exp2 expects floating operands"):
        xp.exp2(xp.asarray([1, 2]))
