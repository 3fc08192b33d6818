"""One case per differentiable operation (elementwise, reduction, linalg, manipulation, view).

Each ``fn`` uses StrideWeave; each ``ref`` is the same math against the Array
API namespace ``xp`` (run by torch.autograd and jax.vjp). Value ranges keep
non-smooth operations (abs, maximum, where, clip, max) away from their kinks,
so central differences are meaningful.
"""

from __future__ import annotations

import numpy as np

import strideweave as sw

from ..catalogue import MATMUL, SMOOTH, Case
from ..inputs import InputSpec as In
from ..native import reshape_colex, stop_gradient

M = In((4, 6), nested=((2, 2), (2, 3)))           # a matrix input with a nested alternative
POS = In((4, 6), low=0.5, high=2.0, nested=((2, 2), (2, 3)))
AWAY = In((4, 6), low=0.2, high=1.0, signed=True, nested=((2, 2), (2, 3)))
R = In((3, 4), nested=(3, (2, 2)))                  # reduction input


def _unary(name, fn, ref, spec=M, tol=SMOOTH, **kw):
    return Case(name, "elementwise", fn, (spec,), tol, ref=ref, **kw)


def _binary(name, fn, ref, a=M, b=M, tol=SMOOTH, **kw):
    return Case(name, "elementwise", fn, (a, b), tol, ref=ref, **kw)


ELEMENTWISE = [
    _unary("negative", lambda x: sw.negative(x), lambda xp, x: -x),
    _unary("exp", lambda x: sw.exp(x), lambda xp, x: xp.exp(x)),
    _unary("log", lambda x: sw.log(x), lambda xp, x: xp.log(x), POS),
    _unary("sqrt", lambda x: sw.sqrt(x), lambda xp, x: xp.sqrt(x), POS),
    _unary("sin", lambda x: sw.sin(x * 2.0), lambda xp, x: xp.sin(x * 2.0)),
    _unary("cos", lambda x: sw.cos(x * 2.0), lambda xp, x: xp.cos(x * 2.0)),
    _unary("tanh", lambda x: sw.tanh(x * 2.0), lambda xp, x: xp.tanh(x * 2.0)),
    _unary("abs", lambda x: sw.abs(x), lambda xp, x: xp.abs(x), AWAY),
    _unary("power_scalar", lambda x: x ** 3 + x ** 0.5, lambda xp, x: x ** 3 + x ** 0.5, POS),
    _unary("rpow_scalar", lambda x: 2.0 ** x, lambda xp, x: 2.0 ** x),
    _unary("scalar_arith", lambda x: (2.0 - x) / (x + 3.0) * 0.5 - 1.0 / x,
           lambda xp, x: (2.0 - x) / (x + 3.0) * 0.5 - 1.0 / x, AWAY),
    _unary("clip", lambda x: sw.clip(x, -0.5, 0.5) * x, lambda xp, x: xp.clip(x, -0.5, 0.5) * x),
    Case("clip_tensor_bounds", "elementwise", lambda x, lo, hi: sw.clip(x, lo, hi),
         (M, In((4, 6), low=-0.6, high=-0.1, nested=((2, 2), (2, 3))), In((6,), low=0.1, high=0.6, nested=((2, 3),))),
         SMOOTH,
         ref=lambda xp, x, lo, hi: xp.minimum(xp.maximum(x, lo), hi), note="Tensor bounds, hi broadcast"),
    _unary("astype", lambda x: sw.astype(x, x.dtype) * 2.0, lambda xp, x: xp.astype(x, xp.float32) * 2.0,
           note="astype to the input's own dtype (Float32; Float64 under central differences): "
                "a cast to another dtype leaves the differentiable graph"),
    _unary("copy", lambda x: sw.copy(x) * x, lambda xp, x: x * x),
    _unary("detach", lambda x: x * sw.detach(x) + x, lambda xp, x: x * stop_gradient(xp, x) + x,
           fd=False, fd_note="detach cuts the graph on purpose; central differences see through it"),
    _binary("add", lambda x, y: sw.add(x, y), lambda xp, x, y: x + y),
    _binary("subtract", lambda x, y: sw.subtract(x, y), lambda xp, x, y: x - y),
    _binary("multiply", lambda x, y: sw.multiply(x, y), lambda xp, x, y: x * y),
    _binary("divide", lambda x, y: sw.divide(x, y), lambda xp, x, y: x / y, b=AWAY),
    _binary("power", lambda x, y: sw.power(x, y), lambda xp, x, y: x ** y, a=POS),
    _binary("maximum", lambda x, y: sw.maximum(x, y), lambda xp, x, y: xp.maximum(x, y)),
    _binary("minimum", lambda x, y: sw.minimum(x, y), lambda xp, x, y: xp.minimum(x, y)),
    _binary("where", lambda x, y: sw.where(x > 0.0, x * y, y - x),
            lambda xp, x, y: xp.where(x > 0.0, x * y, y - x), a=AWAY),
    _binary("multiply_broadcast", lambda x, y: x * y, lambda xp, x, y: x * y,
            a=In((3, 4)), b=In((4,)), note="y (4,) broadcasts against x (3, 4)"),
    _binary("add_broadcast_keepdims", lambda x, y: x + y, lambda xp, x, y: x + y,
            a=In((3, 1)), b=In((1, 4)), note="(3,1) + (1,4) -> (3,4)"),
]


REDUCTION = [
    Case("sum_all", "reduction", lambda x: sw.sum(x), (R,), SMOOTH, ref=lambda xp, x: xp.sum(x)),
    Case("sum_mode", "reduction", lambda x: sw.sum(x, modes=(0,)), (R,), SMOOTH,
         ref=lambda xp, x: xp.sum(x, axis=0)),
    Case("sum_keepdims", "reduction", lambda x: sw.sum(x, modes=(1,), keepdims=True) * x, (R,), SMOOTH,
         ref=lambda xp, x: xp.sum(x, axis=1, keepdims=True) * x),
    Case("mean", "reduction", lambda x: sw.mean(x, modes=(1,)), (R,), SMOOTH,
         ref=lambda xp, x: xp.mean(x, axis=1)),
    Case("mean_all", "reduction", lambda x: sw.mean(x), (R,), SMOOTH, ref=lambda xp, x: xp.mean(x)),
    Case("max_all", "reduction", lambda x: sw.max(x), (R,), SMOOTH, ref=lambda xp, x: xp.max(x),
         note="broadcast variant: the maximum is tied across aliases of one slot"),
    Case("max_mode", "reduction", lambda x: sw.max(x, modes=(0,)), (R,), SMOOTH,
         ref=lambda xp, x: xp.max(x, axis=0)),
    Case("min_mode", "reduction", lambda x: sw.min(x, modes=(1,), keepdims=True), (R,), SMOOTH,
         ref=lambda xp, x: xp.min(x, axis=1, keepdims=True)),
    Case("sum_modes", "reduction", lambda x: sw.sum(x, modes=(0, 2)), (In((2, 3, 4)),), SMOOTH,
         ref=lambda xp, x: xp.sum(x, axis=(0, 2))),
    Case("max_modes_keepdims", "reduction", lambda x: sw.max(x, modes=(0, 2), keepdims=True), (In((2, 3, 4)),),
         SMOOTH, ref=lambda xp, x: xp.max(x, axis=(0, 2), keepdims=True)),
    Case("prod_with_zeros", "reduction", lambda x: sw.prod(x, modes=(1,)),
         (In((3, 4), low=0.5, high=1.5, signed=True, pins=(((0, 1), 0.0), ((1, 0), 0.0), ((1, 3), 0.0))),),
         SMOOTH, ref=lambda xp, x: xp.prod(x, axis=1), variants=("canonical", "transposed", "holes"),
         note="row 0 has one exact zero (its gradient is the product of the others), row 1 two"),
    Case("prod", "reduction", lambda x: sw.prod(x, modes=(1,)),
         (In((3, 4), low=0.5, high=1.5, signed=True, nested=(3, (2, 2))),), SMOOTH,
         ref=lambda xp, x: xp.prod(x, axis=1)),
]


LINALG = [
    Case("matmul", "linalg", lambda a, b: a @ b,
         (In((6, 4), nested=((2, 3), 4)), In((4, 6), nested=(4, (3, 2)))), MATMUL, ref=lambda xp, a, b: a @ b),
    Case("matmul_batched", "linalg", lambda a, b: sw.matmul(a, b), (In((2, 3, 4)), In((4, 2))), MATMUL,
         ref=lambda xp, a, b: xp.matmul(a, b), note="batch mode broadcasts against a plain matrix"),
    Case("matvec", "linalg", lambda a, v: a @ v, (In((3, 4)), In((4,))), MATMUL, ref=lambda xp, a, v: a @ v),
    Case("matmul_nested_contraction", "linalg", lambda a, b: a @ b, (In((3, (2, 2))), In(((2, 2), 5))), MATMUL,
         ref=lambda xp, a, b: a @ b, note="the contracted mode is nested (2,2) on both sides"),
    Case("tensordot", "linalg", lambda a, b: sw.tensordot(a, b, modes=2), (In((3, 4, 2)), In((4, 2, 5))), MATMUL,
         ref=lambda xp, a, b: xp.tensordot(a, b, axes=2)),
    Case("tensordot_modes", "linalg", lambda a, b: sw.tensordot(a, b, modes=((0,), (1,))),
         (In((3, 4)), In((5, 3))), MATMUL, ref=lambda xp, a, b: xp.tensordot(a, b, axes=((0,), (1,)))),
]


MANIPULATION = [
    Case("concat", "manipulation", lambda x, y: sw.concat([x, y, x], mode=0), (In((2, 4)), In((3, 4))), SMOOTH,
         ref=lambda xp, x, y: xp.concat([x, y, x], axis=0), note="x appears twice: contributions add"),
    Case("concat_mode1", "manipulation", lambda x, y: sw.concat([x, y], mode=1), (In((3, 2)), In((3, 4))),
         SMOOTH, ref=lambda xp, x, y: xp.concat([x, y], axis=1)),
    Case("stack", "manipulation", lambda x, y: sw.stack([x, y], mode=1), (R, R), SMOOTH,
         ref=lambda xp, x, y: xp.stack([x, y], axis=1)),
]

_VIEW_IDX = np.array([[0, 8, 16], [5, 13, 21]])  # colex positions picked by the view below


VIEW = [
    Case("index_slice", "view", lambda x: x[1:4, 0:6:2] * x[0:3, 1:6:2],
         (M,), SMOOTH, ref=lambda xp, x: x[1:4, 0:6:2] * x[0:3, 1:6:2], variants=("canonical", "transposed",
                                                                                  "holes", "broadcast")),
    Case("index_int", "view", lambda x: x[2] * x[0] + sw.sum(x[:, 1]), (In((3, 4)),), SMOOTH,
         ref=lambda xp, x: x[2, :] * x[0, :] + xp.sum(x[:, 1])),
    Case("index_nested", "view", lambda x: x[4] + x[1:5, 2], (In(((2, 3), 4)),), SMOOTH,
         ref=lambda xp, x: x[4, :] + x[1:5, 2], note="an int and a slice into a nested (2,3) mode"),
    Case("view_layout", "view", lambda x: x.view(sw.Layout(sw.Shape([2, 3]), sw.Stride([5, 8]))),
         (In((4, 6)),), SMOOTH,
         ref=lambda xp, x: xp.take(reshape_colex(xp, x, (24,)), xp.asarray(_VIEW_IDX.reshape(-1)), axis=0)
         .reshape((2, 3)),
         variants=("canonical",),
         note="view(layout) reinterprets storage, so only the canonical variant is the reference's math"),
    Case("permute", "view", lambda x: sw.permute(x, (2, 0, 1)), (In((2, 3, 4)),), SMOOTH,
         ref=lambda xp, x: xp.permute_dims(x, (2, 0, 1))),
    Case("transpose", "view", lambda x, y: sw.transpose(x) @ y, (In((4, 3)), In((4, 2))), MATMUL,
         ref=lambda xp, x, y: xp.permute_dims(x, (1, 0)) @ y),
    Case("reshape", "view", lambda x: sw.reshape(x, (3, 8)) * 2.0, (In((4, 6)),), SMOOTH,
         ref=lambda xp, x: reshape_colex(xp, x, (3, 8)) * 2.0,
         note="reshape is colexicographic (first mode fastest); a view or a copy depending on the layout"),
    Case("broadcast_to", "view", lambda x, y: sw.broadcast_to(x, (3, 4)) * y, (In((4,)), In((3, 4))), SMOOTH,
         ref=lambda xp, x, y: xp.broadcast_to(x, (3, 4)) * y),
]

CASES: list[Case] = ELEMENTWISE + REDUCTION + LINALG + MANIPULATION + VIEW
