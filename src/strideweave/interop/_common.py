"""Shared pieces of the bridges: output checks, cotangents from native arrays, one multi-output VJP."""

from __future__ import annotations

import contextlib
from typing import Any, Callable, Sequence

from ..autograd.functional import grad
from ..operation import is_grad_enabled, set_grad_enabled
from ..carriers import transfer
from ..tensors.creation import tensor as _wrap, zeros
from ..dtypes import DType
from ..layout import Layout
from ..operation import Operation
from ..ops import reshape
from ..tensors.tensor import Tensor

__all__ = ["fn_name", "as_outputs", "natural_shape", "cotangent_for", "vjp", "grad_mode"]


def fn_name(fn: Callable) -> str:
    """A readable name for ``fn`` in error messages."""
    return getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn)


@contextlib.contextmanager
def grad_mode(enabled: bool):
    """StrideWeave's graph construction set to ``enabled`` inside the block, restored after it."""
    previous = is_grad_enabled()
    set_grad_enabled(enabled)
    try:
        yield
    finally:
        set_grad_enabled(previous)


def as_outputs(result: Any, where: str) -> tuple[tuple[Tensor, ...], bool]:
    """``(outputs, single)`` for what a StrideWeave function returned: one Tensor or a tuple / list of them."""
    if isinstance(result, Tensor):
        return (result,), True
    if isinstance(result, (tuple, list)) and result and all(isinstance(r, Tensor) for r in result):
        return tuple(result), False
    if isinstance(result, (tuple, list)):
        bad = next((r for r in result if not isinstance(r, Tensor)), None)
        detail = "an empty sequence" if not result else f"a sequence holding a {type(bad).__name__}"
    else:
        detail = f"a {type(result).__name__}"
    raise TypeError(f"{where} must return a strideweave Tensor or a tuple of Tensors, got {detail}: {result!r:.200}")


def natural_shape(t: Tensor) -> tuple[int, ...]:
    """The shape of ``t.to_array()``: one axis per top-level mode (nested modes flattened)."""
    layout = t.layout
    return tuple(layout[i].size for i in range(layout.rank))


def cotangent_for(target: Tensor, values: Any, where: str) -> Tensor:
    """``values`` (a native array with ``target``'s natural shape) as a cotangent StrideWeave accepts for ``target``.

    The cotangent lives on ``target``'s carrier, moved there by DLPack when
    needed, and has ``target``'s layout (the canonical one for a broadcast
    target), as the spec requires. It wraps ``values`` without copying when
    their strides already give that layout; otherwise one copy lays them out.
    """
    expected = natural_shape(target)
    shape = tuple(int(e) for e in values.shape)
    if shape != expected:
        raise ValueError(f"{where}: cotangent has shape {shape}, expected {expected} (the output's shape)")
    kind = target.carrier.kind
    wrapped = _wrap(transfer(values, kind))
    if wrapped.dtype is not DType.Float32:
        raise TypeError(f"{where}: cotangent has dtype {wrapped.dtype!r}, expected Float32")
    layout = target.layout
    wanted = layout if layout.is_injective() else Layout.canonical(layout.shape)
    if wrapped.layout == wanted:
        return wrapped
    if wrapped.layout.shape != wanted.shape:  # nested modes: a colexicographic reshape matches to_array's flattening
        wrapped = reshape(wrapped, wanted.shape)
        if wrapped.layout == wanted:
            return wrapped
    return zeros(wanted.shape, carrier=kind, layout=wanted).copy_(wrapped)


class _Join(Operation):
    """Joins several outputs under one node, so one traversal carries all their cotangents."""

    def forward(self, *outputs, options=None):
        return zeros((1,), carrier=outputs[0].carrier.kind)

    def backward(self, gradient):
        return self.context["cotangents"]


def vjp(outputs: Sequence[Tensor], inputs: Sequence[Tensor], cotangents: Sequence[Tensor | None]) -> list:
    """Gradients of ``sum_k <outputs[k], cotangents[k]>`` for each input (None where unreached).

    Runs one StrideWeave traversal and keeps the graph, so the native
    library decides when it is released (torch's ``retain_graph``).
    """
    live = [(o, c) for o, c in zip(outputs, cotangents) if c is not None and o.is_differentiable()]
    if not live or not inputs:
        return [None] * len(inputs)
    if len(live) == 1:
        output, cotangent = live[0]
        return list(grad(output, list(inputs), cotangent, retain_graph=True))
    with grad_mode(True):
        join = _Join()
        joined = join(*[o for o, _ in live])
    join.context["cotangents"] = tuple(c for _, c in live)
    seed = zeros((1,), carrier=joined.carrier.kind).fill_(1.0)
    return list(grad(joined, list(inputs), seed, retain_graph=True))
