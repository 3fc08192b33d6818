"""Random programs with shared subexpressions, broadcasting and views: gradients match torch.autograd.

Each program draws a short sequence of operations over a growing pool of
values (so intermediates are reused, giving shared subgraphs and repeated
inputs) and differentiates the sum of the last value. The same program runs
in torch; every leaf's .grad must agree.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import strideweave as sw

torch = pytest.importorskip("torch")

SHAPES = [(2, 3), (3,), (1, 3), (2, 1)]


def _reverse(t):
    """torch's counterpart of sw.transpose: reverse every dimension."""
    return t.permute(*reversed(range(t.dim())))

# name -> (strideweave fn, torch fn, arity)
OPS = {
    "add": (lambda a, b: a + b, lambda a, b: a + b, 2),
    "sub": (lambda a, b: a - b, lambda a, b: a - b, 2),
    "mul": (lambda a, b: a * b, lambda a, b: a * b, 2),
    "div": (lambda a, b: a / (b * b + 1.0), lambda a, b: a / (b * b + 1.0), 2),
    "tanh": (sw.tanh, torch.tanh, 1),
    "sin": (sw.sin, torch.sin, 1),
    "scale": (lambda a: 0.5 * a - 0.25, lambda a: 0.5 * a - 0.25, 1),
    "keepsum": (lambda a: sw.sum(a, modes=(0,), keepdims=True), lambda a: a.sum(0, keepdim=True), 1),
    "maximum": (sw.maximum, torch.maximum, 2),
    "transpose_back": (lambda a: sw.transpose(sw.transpose(a) * 1.5), lambda a: _reverse(_reverse(a) * 1.5), 1),
    "mean_keep": (lambda a: sw.mean(a, modes=(a.layout.rank - 1,), keepdims=True),
                  lambda a: a.mean(a.dim() - 1, keepdim=True), 1),
    "exp_small": (lambda a: sw.exp(0.1 * a), lambda a: torch.exp(0.1 * a), 1),
}


@st.composite
def programs(draw):
    leaves = [draw(st.sampled_from(SHAPES)) for _ in range(draw(st.integers(1, 3)))]
    steps = []
    for _ in range(draw(st.integers(1, 8))):
        name = draw(st.sampled_from(sorted(OPS)))
        arity = OPS[name][2]
        steps.append((name, [draw(st.integers(0, 10**6)) for _ in range(arity)]))
    return leaves, steps, draw(st.integers(0, 2**16)), draw(st.booleans())


def _run(leaves, steps, values, make, ops_index):
    pool = [make(v) for v in values]
    inputs = list(pool)
    for name, picks in steps:
        fn = OPS[name][ops_index]
        operands = [pool[p % len(pool)] for p in picks]
        pool.append(fn(*operands))
    return inputs, pool[-1]


@settings(max_examples=60, deadline=None)
@given(programs())
def test_random_program_gradients_match_torch(program):
    leaves, steps, seed, transposed_storage = program
    rng = np.random.default_rng(seed)
    values = [rng.uniform(0.5, 1.5, shape).astype(np.float32) for shape in leaves]

    def make_sw(v):
        # Either canonical storage or C-ordered (row-major) storage: same values.
        return sw.tensor(np.ascontiguousarray(v) if transposed_storage else np.asfortranarray(v))

    sw_inputs, sw_out = _run(leaves, steps, values, make_sw, 0)
    torch_inputs, torch_out = _run(leaves, steps, values,
                                   lambda v: torch.tensor(v, requires_grad=True), 1)
    sw_out.sum().backward()
    torch_out.sum().backward()
    for mine, theirs in zip(sw_inputs, torch_inputs):
        expected = np.zeros(theirs.shape, np.float32) if theirs.grad is None else theirs.grad.numpy()
        actual = np.zeros(theirs.shape, np.float32) if mine.grad is None else mine.grad.numpy()
        np.testing.assert_allclose(actual, expected, rtol=2e-5, atol=2e-6)
        if mine.grad is not None:
            assert mine.grad.layout == mine.layout
