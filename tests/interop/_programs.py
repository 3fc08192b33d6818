"""Seeded random programs, each written once for StrideWeave and once against the Array API.

A program draws a few steps (elementwise, broadcasting, matmul, keepdims
reductions) over two (3, 4) inputs ``x``, ``y`` and two parameters ``w``
(4, 4) and ``v`` (4,). ``sw_program`` runs it with StrideWeave,
``xp_program`` with any Array API namespace (torch through array-api-compat,
jax.numpy), so each direction of a bridge can be checked against the other
library's own autodiff.
"""

from __future__ import annotations

import random

import numpy as np

import strideweave as sw

SHAPES = [(3, 4), (3, 4), (4, 4), (4,)]

# name -> (StrideWeave form, Array API form); unary steps take one pool value, binary two.
UNARY = {
    "tanh": (sw.tanh, lambda xp, a: xp.tanh(a)),
    "sin": (sw.sin, lambda xp, a: xp.sin(a)),
    "square": (lambda a: a * a, lambda xp, a: a * a),
    "half": (lambda a: 0.5 * a, lambda xp, a: 0.5 * a),
    "center": (lambda a: a - 0.25 * sw.sum(a, modes=(1,), keepdims=True),
               lambda xp, a: a - 0.25 * xp.sum(a, axis=1, keepdims=True)),
}
BINARY = {
    "add": (lambda a, b: a + b, lambda xp, a, b: a + b),
    "sub": (lambda a, b: a - b, lambda xp, a, b: a - b),
    "mul": (lambda a, b: a * b, lambda xp, a, b: a * b),
}
PARAM = {
    "matmul_w": (lambda a, w, v: a @ w, lambda xp, a, w, v: xp.matmul(a, w)),
    "scale_v": (lambda a, w, v: a * v, lambda xp, a, w, v: a * v),
}


def draw(seed: int, steps: int = 5) -> list[tuple]:
    """The steps of program ``seed``: (kind, name, operand pool indices)."""
    rng = random.Random(seed)
    plan = []
    size = 2
    for _ in range(steps):
        kind = rng.choice(["unary", "binary", "param"])
        if kind == "unary":
            plan.append((kind, rng.choice(sorted(UNARY)), (rng.randrange(size),)))
        elif kind == "binary":
            plan.append((kind, rng.choice(sorted(BINARY)), (rng.randrange(size), rng.randrange(size))))
        else:
            plan.append((kind, rng.choice(sorted(PARAM)), (rng.randrange(size),)))
        size += 1
    return plan


def _run(plan, x, y, w, v, pick):
    pool = [x, y]
    tables = {"unary": UNARY, "binary": BINARY, "param": PARAM}
    for kind, name, operands in plan:
        step = pick(tables[kind][name])
        args = [pool[i] for i in operands]
        pool.append(step(*args, w, v) if kind == "param" else step(*args))
    return pool[-1], pool[-3]


def sw_program(seed: int, outputs: int = 1):
    """Program ``seed`` written with StrideWeave: ``f(x, y, w, v)``."""
    plan = draw(seed)

    def f(x, y, w, v):
        last, earlier = _run(plan, x, y, w, v, lambda forms: forms[0])
        return last if outputs == 1 else (last, earlier)
    return f


def xp_program(seed: int, outputs: int = 1):
    """Program ``seed`` against the Array API: ``f(x, y, w, v)`` on torch tensors or JAX arrays."""
    import array_api_compat

    plan = draw(seed)

    def f(x, y, w, v):
        xp = array_api_compat.array_namespace(x)
        last, earlier = _run(plan, x, y, w, v, lambda forms: (lambda *a: forms[1](xp, *a)))
        return last if outputs == 1 else (last, earlier)
    return f


def inputs(seed: int) -> list[np.ndarray]:
    """float32 values for ``x, y, w, v`` (modest scale keeps every program well conditioned)."""
    rng = np.random.default_rng(seed)
    return [(0.7 * rng.standard_normal(shape)).astype(np.float32) for shape in SHAPES]
