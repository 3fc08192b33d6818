"""Broadcast operators whose buffers line up with the result's storage order, recorded in one step."""

import numpy as np
import pytest

import strideweave as sw


@pytest.mark.parametrize("symbol", ["+", "-", "*", "/", "**"])
@pytest.mark.parametrize("case", ["row", "column", "full second", "column-major full", "leading 1"])
def test_a_broadcast_operator_whose_buffers_line_up_matches_torch(symbol, case):
    """The one-step recording of ``x @ W + b``'s broadcast (``ops._lined_up``): values and both gradients."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(5)
    full = rng.uniform(0.5, 2.0, (3, 4)).astype(np.float32)
    small = {"row": (4,), "column": (3, 1), "full second": (4,), "column-major full": (4,),
             "leading 1": (1, 4)}[case]
    part = rng.uniform(0.5, 2.0, small).astype(np.float32)
    if case == "column-major full":
        big = sw.Tensor.from_storage(np.asfortranarray(full).ravel(order="F"), sw.Layout.canonical((3, 4)))
    else:
        big = sw.tensor(full)
    other = sw.tensor(part)
    first, second = (other, big) if case == "full second" else (big, other)
    apply = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
             "/": lambda a, b: a / b, "**": lambda a, b: a ** b}[symbol]
    out = apply(first, second)
    assert out.autograd_ctx.flat  # recorded on the raw buffers, as the general forward records it
    (out * out).sum().backward()
    t_first, t_second = (torch.tensor(np.asarray(t.numpy(), np.float64), requires_grad=True) for t in (first, second))
    t_out = apply(t_first, t_second)
    (t_out * t_out).sum().backward()
    np.testing.assert_allclose(out.numpy(), t_out.detach().numpy(), rtol=1e-6)
    assert first.grad.layout == first.layout and second.grad.layout == second.layout
    np.testing.assert_allclose(first.grad.numpy(), t_first.grad.numpy(), rtol=2e-5)
    np.testing.assert_allclose(second.grad.numpy(), t_second.grad.numpy(), rtol=2e-5)


def test_a_lined_up_broadcast_still_refuses_a_write_into_a_saved_operand():
    a, b = sw.tensor(np.ones((2, 3), np.float32)), sw.tensor(np.arange(3, dtype=np.float32))
    out = (a * b).sum()
    b.fill_(2.0)
    with pytest.raises(sw.InPlaceModificationError, match="Multiply"):
        out.backward()
    with pytest.raises(ValueError, match="do not broadcast"):
        a + sw.tensor(np.ones(2, np.float32))


@pytest.mark.parametrize("symbol", ["+", "*", "/"])
@pytest.mark.parametrize("shapes", [((3, 4), (4,)), ((3, 1), (1, 4)), ((2, 3, 4), (3, 1)), ((3, 4), (1, 1))])
@pytest.mark.parametrize("seed", ["unit", "values"])
def test_a_flat_broadcast_backward_sums_each_gradient_to_its_operand(symbol, shapes, seed):
    """Backward of a flat node whose operands broadcast (one or both), under a unit and a general cotangent."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(7)
    values = [rng.uniform(0.5, 2.0, shape).astype(np.float32) for shape in shapes]
    a, b = (sw.tensor(v) for v in values)
    apply = {"+": lambda x, y: x + y, "*": lambda x, y: x * y, "/": lambda x, y: x / y}[symbol]
    out = apply(a, b)
    assert out.autograd_ctx.flat
    t_a, t_b = (torch.tensor(v.astype(np.float64), requires_grad=True) for v in values)
    t_out = apply(t_a, t_b)
    if seed == "unit":
        out.sum().backward()
        t_out.sum().backward()
    else:
        (out * out).sum().backward()
        (t_out * t_out).sum().backward()
    for mine, theirs in ((a, t_a), (b, t_b)):
        assert mine.grad.shape == mine.shape
        np.testing.assert_allclose(mine.grad.numpy(), theirs.grad.numpy(), rtol=2e-5)
