"""Shared pieces of the bridges: wrapping native arrays, output checks, cotangents from native arrays, one VJP.

A bridge pays its per-call costs on every step of a training loop, so what
depends only on an array's shape, strides, dtype and device (its carrier
kind and layout) is looked up once and kept (``wrap_native``), cotangents
are laid out natively, and the VJP runs one engine traversal without the
public entry point's repeated checks (the bridge built its arguments).
"""

from __future__ import annotations

import contextlib
import sys
from typing import Any, Callable, Sequence

import numpy as np

from ..autograd.functional import _refuse_higher_order, _run
from ..carriers import kind_for_array, transfer
from ..dtypes import DType
from ..layout import Layout
from ..operation import Operation, is_grad_enabled, set_grad_enabled
from ..ops import reshape
from ..tensors.creation import tensor as _wrap, zeros
from ..tensors.tensor import Tensor

__all__ = ["fn_name", "as_outputs", "wrap_native", "cotangent_for", "vjp", "grad_mode"]


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


#: (array type, dtype, shape, strides, device) -> (kind, layout, span, order) for NumPy arrays and torch
#: tensors; None for the arrays ``sw.tensor`` lays out otherwise (0-d, empty, negative or odd strides)
_WRAPS: dict = {}
_WRAPS_LIMIT = 1024


def _wrap_plan(array: Any, key: tuple, numpy: bool):
    shape = key[2]
    if not shape or 0 in shape:
        plan = None
    else:
        if numpy:
            item = array.itemsize
            strides = array.strides
            plan = None if any(s < 0 or s % item for s in strides) else tuple(s // item for s in strides)
        else:
            plan = tuple(array.stride())
        if plan is not None:
            span = 1 + sum((e - 1) * s for e, s in zip(shape, plan))
            size = int(np.prod(shape))
            # memory order as one view: a reshape of a C- (or, transposed, F-) contiguous array
            order = None
            if numpy and span == size:
                order = "C" if array.flags.c_contiguous else "F" if array.flags.f_contiguous else None
            plan = (kind_for_array(array), Layout(shape, plan), span, order)
    if len(_WRAPS) >= _WRAPS_LIMIT:
        _WRAPS.clear()
    _WRAPS[key] = plan
    return plan


def _plan(key: tuple, array: Any, numpy: bool):
    """The cached wrap plan for ``key``, made on first sight (None: ``sw.tensor`` lays the array out)."""
    plan = _WRAPS.get(key)
    if plan is None and key not in _WRAPS:
        plan = _wrap_plan(array, key, numpy)
    return plan


def wrap_native(array: Any) -> Tensor:
    """``sw.tensor(array)`` for a concrete native array: the same Tensor, watched the same way, cheaper.

    For NumPy arrays and torch tensors the carrier kind and layout come from
    a cache keyed on shape, strides, dtype and device, and the storage is one
    view of the array's memory; anything else goes through ``sw.tensor``.
    """
    if type(array) is np.ndarray:  # subclasses (np.matrix) reshape differently
        plan = _plan((np.ndarray, array.dtype, array.shape, array.strides, None), array, True)
        if plan is None:
            return _wrap(array)
        kind, layout, span, order = plan
        if order == "C":
            storage = array.reshape(-1)
        elif order == "F":
            storage = array.T.reshape(-1)
        else:
            storage = np.lib.stride_tricks.as_strided(array, shape=(span,), strides=(array.itemsize,))
    else:
        torch = sys.modules.get("torch")
        if torch is None or not isinstance(array, torch.Tensor):
            return _wrap(array)
        plan = _plan((torch.Tensor, array.dtype, tuple(array.shape), array.stride(), array.device), array, False)
        if plan is None:
            return _wrap(array)
        kind, layout, span, _ = plan
        storage = array.detach().as_strided((span,), (1,), array.storage_offset())
    carrier = kind.cls._adopt(storage, kind.namespace, kind.device, kind)
    carrier.watch_external()  # the caller still holds the array, as with ``sw.tensor``
    return Tensor._make(carrier, layout, 0)


def cotangent_for(target: Tensor, values: Any, where: str) -> Tensor:
    """``values`` (a native array with ``target``'s natural shape) as a cotangent StrideWeave accepts for ``target``.

    The cotangent lives on ``target``'s carrier, moved there by DLPack when
    needed, and has ``target``'s layout (the canonical one for a broadcast
    target), as the spec requires. It wraps ``values`` without copying when
    their strides already give that layout; otherwise one copy lays them out.
    """
    expected = target.shape
    shape = tuple(int(e) for e in values.shape)
    if shape != expected:
        raise ValueError(f"{where}: cotangent has shape {shape}, expected {expected} (the output's shape)")
    layout = target.layout
    wanted = layout if layout.is_injective() else Layout.canonical(layout.shape)
    fast = _native_cotangent(target, values, wanted)
    if fast is not None:
        return fast
    kind = target.carrier.kind
    wrapped = _wrap(transfer(values, kind))
    if wrapped.dtype is not DType.Float32:
        raise TypeError(f"{where}: cotangent has dtype {wrapped.dtype!r}, expected Float32")
    if wrapped.layout == wanted:
        return wrapped
    if wrapped.layout.shape != wanted.shape:  # nested modes: a colexicographic reshape matches to_array's flattening
        wrapped = reshape(wrapped, wanted.shape)
        if wrapped.layout == wanted:
            return wrapped
    return zeros(wanted.shape, carrier=kind, layout=wanted).copy_(wrapped)


def _native_cotangent(target: Tensor, values: Any, wanted: Layout) -> Tensor | None:
    """The float32 NumPy / torch cotangent ``values`` on ``target``'s own kind, in ``wanted`` (a layout of
    ``target``'s natural shape, one leaf per mode); None for every other case, which ``cotangent_for`` handles.

    A native copy when the strides differ: the same values and layout the
    generic path's recorded-write machinery would give, in one library call.
    """
    shape = wanted._shape_modes
    if not all(type(e) is int for e in shape) or not shape or 0 in shape:
        return None
    kind = target.carrier.kind
    strides = wanted._stride_modes
    if isinstance(values, np.ndarray):
        if values.dtype != np.float32 or kind.cls.backend != "numpy":
            return None
        item = values.itemsize
        if tuple(s // item if s % item == 0 else None for s in values.strides) == strides:
            wrapped = wrap_native(values)
            if wrapped.layout == wanted:
                return wrapped
        flat = (np.empty if wanted.is_compact() else np.zeros)(wanted.cosize, np.float32)
        np.ndarray(shape, np.float32, flat, 0, tuple(s * 4 for s in strides))[...] = values
    else:
        torch = sys.modules.get("torch")
        if (torch is None or not isinstance(values, torch.Tensor) or values.dtype != torch.float32
                or kind.cls.backend != "torch" or values.device != kind.device):
            return None
        if tuple(values.stride()) == strides:
            wrapped = wrap_native(values)
            if wrapped.layout == wanted:
                return wrapped
        flat = (torch.empty if wanted.is_compact() else torch.zeros)(wanted.cosize, dtype=torch.float32,
                                                                    device=values.device)
        flat.as_strided(shape, strides).copy_(values.detach())
    return Tensor._make(kind.cls._adopt(flat, kind.namespace, kind.device, kind), wanted, 0)


class _Join(Operation):
    """Joins several outputs under one node, so one traversal carries all their cotangents."""

    def forward(self, *outputs, options=None):
        return zeros((1,), carrier=outputs[0].carrier.kind)

    def backward(self, gradient):
        return self.context["cotangents"]


def vjp(outputs: Sequence[Tensor], inputs: Sequence[Tensor], cotangents: Sequence[Tensor | None],
        retain_graph: bool = True) -> list:
    """Gradients of ``sum_k <outputs[k], cotangents[k]>`` for each input (None where unreached).

    Runs one StrideWeave traversal, by default keeping the graph so the
    native library decides when it is released (torch's ``retain_graph``).
    ``inputs`` are Float32 leaves and ``cotangents`` come from
    ``cotangent_for``, so ``sw.grad``'s argument checks are left out; its
    refusal of higher-order requests (an output that depends on an earlier
    traversal's gradient and misses an input) runs only when an input is
    unreached, the one case in which it can refuse.
    """
    live = [(o, c) for o, c in zip(outputs, cotangents) if c is not None and o.is_differentiable()]
    if not live or not inputs:
        return [None] * len(inputs)
    inputs = tuple(inputs)
    if len(live) == 1:
        output, cotangent = live[0]
    else:
        with grad_mode(True):
            join = _Join()
            output = join(*[o for o, _ in live])
        join.context["cotangents"] = tuple(c for _, c in live)
        cotangent = zeros((1,), carrier=output.carrier.kind).fill_(1.0)
    grads = _run(output, cotangent, inputs, retain_graph)
    if any(g is None for g in grads):
        _refuse_higher_order(output, inputs)
    return grads
