"""Random programs x layouts x dtypes x carriers, differentiated and compared with torch.autograd.

Each program draws Float32 leaves in a random storage order (canonical,
row-major, with holes, broadcast), integer and boolean constants that
promotion must fold in, and a chain of operations over a growing pool (so
intermediates are shared). The same program runs in torch; every leaf's
.grad must agree. CI runs a small budget; ``pytest --soak`` runs thousands.
"""

import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import strideweave as sw

torch = pytest.importorskip("torch")

CARRIERS = ["numpy", "torch", "jax", "array_api_strict"]
SHAPE = (3, 4)
LAYOUTS = {
    "canonical": (sw.Layout(sw.Shape([3, 4])), 0, 12),
    "row_major": (sw.Layout(sw.Shape([3, 4]), sw.Stride([4, 1])), 0, 12),
    "holes": (sw.Layout(sw.Shape([3, 4]), sw.Stride([1, 5])), 1, 20),
    "broadcast": (sw.Layout(sw.Shape([3, 4]), sw.Stride([0, 1])), 0, 4),
}

# name -> (strideweave fn, torch fn, arity)
OPS = {
    "add": (lambda a, b: a + b, lambda a, b: a + b, 2),
    "mul": (lambda a, b: a * b, lambda a, b: a * b, 2),
    "sub_scalar": (lambda a: 1.5 - a, lambda a: 1.5 - a, 1),
    "div": (lambda a, b: a / (b * b + 1.0), lambda a, b: a / (b * b + 1.0), 2),
    "tanh": (sw.tanh, torch.tanh, 1),
    "exp_small": (lambda a: sw.exp(0.2 * a), lambda a: torch.exp(0.2 * a), 1),
    "maximum": (sw.maximum, torch.maximum, 2),
    "row_sum": (lambda a: sw.sum(a, modes=(1,), keepdims=True), lambda a: a.sum(1, keepdim=True), 1),
    "transpose_twice": (lambda a: sw.transpose(sw.transpose(a) * 0.5), lambda a: (a.T * 0.5).T, 1),
    "times_int": (lambda a, k: a * k, lambda a, k: a * k, "int"),
    "plus_bool": (lambda a, m: a + m, lambda a, m: a + m, "bool"),
    "np_scalar": (lambda a: a * np.float64(0.75), lambda a: a * 0.75, 1),
}


@st.composite
def programs(draw):
    leaves = [draw(st.sampled_from(sorted(LAYOUTS))) for _ in range(draw(st.integers(1, 3)))]
    steps = [(draw(st.sampled_from(sorted(OPS))), draw(st.integers(0, 10**6)), draw(st.integers(0, 10**6)))
             for _ in range(draw(st.integers(1, 7)))]
    return leaves, steps, draw(st.integers(0, 2**16)), draw(st.sampled_from(CARRIERS))


def _leaf_storage(kind, rng):
    _, offset, n = LAYOUTS[kind]
    return rng.uniform(-1.5, 1.5, offset + n).astype(np.float32)


def _logical(storage, kind):
    layout, offset, _ = LAYOUTS[kind]
    return np.array([[storage[offset + layout(i, j)] for j in range(SHAPE[1])] for i in range(SHAPE[0])])


def _run(steps, pool, constants, index):
    for name, p, q in steps:
        fn, _, arity = OPS[name][index], None, OPS[name][2]
        a = pool[p % len(pool)]
        if arity == 1:
            pool.append(fn(a))
        elif arity == 2:
            pool.append(fn(a, pool[q % len(pool)]))
        else:
            pool.append(fn(a, constants[arity]))
    return pool[-1]


#: a CI-sized budget; ``pytest --soak`` runs thousands of programs
EXAMPLES = 3000 if os.environ.get("STRIDEWEAVE_SOAK") else 40


@given(programs())
@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_random_programs_match_torch(program):
    leaves, steps, seed, carrier = program
    rng = np.random.default_rng(seed)
    storages = [_leaf_storage(kind, rng) for kind in leaves]
    ints = rng.integers(-3, 4, SHAPE).astype(np.int32)
    mask = rng.random(SHAPE) < 0.5

    sw_leaves = [sw.Tensor.from_storage(s, LAYOUTS[k][0], offset=LAYOUTS[k][1], carrier=carrier)
                 for s, k in zip(storages, leaves)]
    sw_constants = {"int": sw.tensor(ints, carrier=carrier) if carrier != "numpy" else sw.tensor(ints),
                    "bool": sw.tensor(mask, carrier=carrier)}
    sw.sum(_run(steps, list(sw_leaves), sw_constants, 0)).backward()

    torch_leaves = [torch.tensor(_logical(s, k), requires_grad=True) for s, k in zip(storages, leaves)]
    torch_constants = {"int": torch.tensor(ints), "bool": torch.tensor(mask)}
    _run(steps, list(torch_leaves), torch_constants, 1).sum().backward()

    for kind, mine, theirs in zip(leaves, sw_leaves, torch_leaves):
        if theirs.grad is None:  # the program never used this leaf
            assert mine.grad is None
            continue
        want = theirs.grad.numpy()
        assert mine.grad.dtype is sw.DType.Float32
        got = np.asarray(mine.grad.numpy(), np.float64)
        if kind == "broadcast":
            # A broadcast leaf's gradient holds each storage slot's total at every position it addresses.
            want = np.broadcast_to(want.sum(axis=0, keepdims=True), SHAPE)
        np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-5)

