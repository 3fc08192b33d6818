"""The elementwise machinery (``ops/_elementwise_rules.py``, ``ops/_elementwise.py``): rule records and
the unit shortcut the base applies.

A rule flagged ``linear_in_g`` writes its VJP as math (``g * y``); for a unit
cotangent the base passes ``Ones`` as ``g``, whose product is the factor itself,
so no product is computed and the factor is never marked as a new buffer.
"""

import operator

import numpy as np
import pytest
from ops_cases import CARRIERS

import strideweave as sw
from strideweave._marks import mark_unit
from strideweave.autograd.cotangents import Ones
from strideweave.ops._elementwise_rules import BinaryRule, UnaryRule, binary_op, unary_op
from strideweave.ops.elementwise import BINARY_RULES, RULES, UNARY_RULES
from strideweave.tensors.tensor import flat_values
from strideweave.tensors.values import kind_of

X0 = np.linspace(0.25, 2.0, 8, dtype=np.float32)


def _flat_node(result):
    node = result.autograd_ctx
    assert node is not None and node.flat
    return node


def _units(carrier, n):
    """A unit cotangent of ``n`` elements in each form the engine hands a flat node."""
    xp = kind_of(sw.tensor(X0, carrier=carrier).carrier).namespace
    return [Ones((n,), xp.float32, xp), mark_unit(xp.ones((n,), dtype=xp.float32))]


@pytest.mark.parametrize("carrier", CARRIERS)
def test_a_linear_rule_hands_back_its_factor_for_a_unit_cotangent(carrier):
    x = sw.tensor(X0, carrier=carrier)
    y = sw.exp(x)
    node = _flat_node(y)
    for g in _units(carrier, X0.size):
        (grad,), (owned,) = node.backward_flat(g)
        assert grad is node.saved          # the result itself: no multiply by the ones
        assert not owned                   # saved values, so the engine must not add into them
    product = _flat_node(x * 3.0)
    for g in _units(carrier, X0.size):
        (grad,), (owned,) = product.backward_flat(g)
        np.testing.assert_array_equal(np.asarray(sw.tensor(grad).numpy()), np.full(X0.size, 3.0, np.float32))
        assert owned


@pytest.mark.parametrize("carrier", CARRIERS)
def test_a_rule_not_linear_in_g_multiplies_a_flagged_unit(carrier):
    x = sw.tensor(X0, carrier=carrier)
    node = _flat_node(sw.log(x))
    g = _units(carrier, X0.size)[1]
    (grad,), (owned,) = node.backward_flat(g)
    assert owned
    np.testing.assert_allclose(np.asarray(sw.tensor(grad).numpy()), 1 / X0, rtol=1e-6)


@pytest.mark.parametrize("carrier", CARRIERS)
def test_a_two_operand_linear_rule_takes_each_factor(carrier):
    a, b = sw.tensor(X0, carrier=carrier), sw.tensor(X0[::-1].copy(), carrier=carrier)
    node = _flat_node(a * b)
    for g in _units(carrier, X0.size):
        (ga, gb), owned = node.backward_flat(g)
        assert ga is flat_values(b) and gb is flat_values(a)  # each the other operand's own buffer
        assert owned == (False, False)


def test_a_rule_flagged_linear_that_returns_g_itself_fails_loudly():
    _, passes_g = unary_op("passes_g", UnaryRule(lambda xp, x: x * 2, vjp=lambda xp, g, y, x: g, linear_in_g=True,
                                                  doc="a test rule"))
    x = sw.tensor(X0)
    with pytest.raises(TypeError, match="PassesG: a rule flagged linear_in_g returned g itself"):
        sw.sum(passes_g(x)).backward()


@pytest.mark.parametrize(("make", "message"), [
    (lambda: UnaryRule(lambda xp, x: x, vjp=None, doc="", reads="y"), "reads names"),
    (lambda: UnaryRule(lambda xp, x: x, vjp=None, doc="", dtypes="real"), "dtypes is 'real'"),
    (lambda: UnaryRule(lambda xp, x: x, vjp=None, doc="", linear_in_g=True), "needs a VJP"),
    (lambda: BinaryRule(lambda xp, a, b: a, vjp_a=None, vjp_b=None, doc="", reads="x"), "reads names"),
    (lambda: BinaryRule(None, vjp_a=None, vjp_b=None, doc=""), "forward must be callable"),
])
def test_rule_records_check_their_fields(make, message):
    with pytest.raises((ValueError, TypeError), match=message):
        make()


def test_rule_fields_past_the_forward_are_keywords():
    with pytest.raises(TypeError):
        UnaryRule(lambda xp, x: x, None, "doc")  # the VJP and flags cannot be given by position
    with pytest.raises(TypeError):
        BinaryRule(lambda xp, a, b: a, None, None, "doc", "own")


def test_the_tables_and_the_node_classes_agree():
    assert set(RULES) == set(UNARY_RULES) | set(BINARY_RULES)
    linear = {name for name, rule in {**UNARY_RULES, **BINARY_RULES}.items() if rule.linear_in_g}
    assert linear == {name for name, op in RULES.items() if op.takes_ones}
    assert RULES["hypot"].keeps_result and RULES["divide"].scalar_vjp_reads_tensor
    assert not RULES["multiply"].scalar_vjp_reads_tensor and RULES["exp"].keeps_result
    op, function = binary_op("first_of", BinaryRule(lambda xp, a, b: a, vjp_a=None, vjp_b=None, doc="a"))
    assert function.__doc__ == "Elementwise a, broadcasting over top-level modes (not differentiable)."
    assert op.__name__ == "FirstOf"


def test_rules_that_read_g_alone_need_no_operand_values():
    # ``reads="g"``: backward hands the VJPs None for both operands, so each must give what it
    # gives with the operands' values.
    xp = np
    rng = np.random.default_rng(3)
    a, b, g = (rng.standard_normal(5).astype(np.float32) for _ in range(3))
    g_only = {name for name, rule in BINARY_RULES.items() if "g" in rule.reads.split()}
    assert {"add", "subtract"} <= g_only
    for name in g_only:
        rule = BINARY_RULES[name]
        y = rule.forward(xp, a, b)
        for vjp in (rule.vjp_a, rule.vjp_b):
            np.testing.assert_array_equal(vjp(xp, g, None, None, None), vjp(xp, g, a, b, y))
    assert not RULES["add"].vjp_reads_operands and RULES["multiply"].vjp_reads_operands


def test_a_broadcast_add_differentiates_without_reading_its_operands():
    x = sw.tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
    row = sw.tensor(np.array([1.0, -2.0, 0.5], np.float32))
    loss = sw.sum((x + row) * (x - row))
    loss.backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.arange(6, dtype=np.float32).reshape(2, 3))
    np.testing.assert_allclose(row.grad.numpy(), -2 * 2 * np.array([1.0, -2.0, 0.5]), rtol=1e-6)


@pytest.mark.parametrize("carrier", CARRIERS)
@pytest.mark.parametrize("name", ["hypot", "logaddexp", "copysign", "add", "maximum"])
def test_a_broadcast_row_of_the_same_size_differentiates_as_torch(carrier, name):
    # ``(2,)`` beside ``(1, 2)``: forward runs on lined-up N-D buffers of the result's size, so a rule
    # that reads its result must read it flat beside the flat cotangent (it broadcast to (2, 2)).
    torch = pytest.importorskip("torch")
    import strideweave.array_api as xp
    a0, b0 = np.array([1.327, -0.217], np.float32), np.array([[0.5, 0.7]], np.float32)
    a, b = xp.asarray(a0, device=carrier), xp.asarray(b0, device=carrier)
    y = getattr(xp, name)(a, b)
    xp.sum(y * y).backward()
    ta, tb = (torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in (a0, b0))
    ty = getattr(torch, name)(ta, tb)
    (ty * ty).sum().backward()
    np.testing.assert_allclose(np.asarray(y.numpy()), ty.detach().numpy(), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(a.grad.numpy()), ta.grad.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(b.grad.numpy()), tb.grad.numpy(), rtol=1e-5, atol=1e-6)



_OPERATORS = {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv}


@pytest.mark.parametrize("symbol", sorted(_OPERATORS))
@pytest.mark.parametrize("reflected", [False, True])
def test_an_operator_row_written_inline_matches_its_rule_and_float64(symbol, reflected):
    # A row written as its operator's symbol: the Tensor operator computes ``values <op> scalar``
    # in its recording step, not through the rule; both, and the gradient, must agree with float64.
    name = next(name for name, rule in BINARY_RULES.items() if rule.infix == symbol)
    op, scalar = _OPERATORS[symbol], 1.75
    f = (lambda v: op(scalar, v)) if reflected else (lambda v: op(v, scalar))
    x = sw.tensor(X0)
    y = f(x)  # the Tensor operator itself
    assert isinstance(y.autograd_ctx, RULES[name])
    expected = RULES[name].compute(np, scalar, X0) if reflected else RULES[name].compute(np, X0, scalar)
    np.testing.assert_array_equal(y.detach().numpy(), expected)
    y.sum().backward()
    x64, step = X0.astype(np.float64), 1e-6
    np.testing.assert_allclose(x.grad.numpy(), (f(x64 + step) - f(x64 - step)) / (2 * step), rtol=1e-5)
