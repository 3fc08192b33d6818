"""Shared pieces of the bridges: wrapping native arrays, output checks, cotangents from native arrays, one VJP.

A bridge pays its per-call costs on every step of a training loop, so what
depends only on an array's shape, strides, dtype and device (its carrier
kind and layout) is looked up once and kept (``wrap_native``), a torch
tensor passed again reuses the wrap of its previous call (``held_wrap``),
cotangents are laid out natively from facts kept per output layout, and the
VJP runs one engine traversal without the public entry point's repeated
checks (the bridge built its arguments).
"""

from __future__ import annotations

import functools
import sys
import weakref
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from ..autograd.cotangents import gradient_layout
from ..autograd.functional import _refuse_higher_order, _run
from ..carriers import transfer
from ..carriers.base import WRITE_REFUSALS
from ..dtypes import DType
from ..errors import Float32RuleError, LeafWriteError
from ..layout import Layout
from ..layout.order import row_major
from ..operation import Operation, is_grad_enabled, set_grad_enabled
from ..ops import reshape
from ..tensors.creation import tensor as _wrap
from ..tensors.creation import wrap_native as _wrap_array
from ..tensors.creation import wrapped_torch, zeros
from ..tensors.tensor import Tensor, lost_precision_origin

__all__ = [
    "argument_name",
    "array_arguments",
    "as_outputs",
    "cotangent_from_native",
    "fn_name",
    "grad_mode",
    "held_wrap",
    "lost_precision",
    "placed",
    "refuse_lost_precision",
    "refused_writes",
    "vjp",
    "wrap_native",
    "wrap_torch",
]


def fn_name(fn: Callable) -> str:
    """A readable name for ``fn`` in error messages."""
    return getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn)


class grad_mode:
    """StrideWeave's graph construction set to ``enabled`` inside the block, restored after it.

    A class rather than a ``contextlib`` generator: every bridge call enters
    one, and a generator-based manager costs a microsecond more each time.
    """

    __slots__ = ("enabled", "previous")

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled

    def __enter__(self) -> None:
        self.previous = is_grad_enabled()
        set_grad_enabled(self.enabled)

    def __exit__(self, *exc) -> None:
        set_grad_enabled(self.previous)


def array_arguments(args: tuple, kwargs: dict, array_type: type | tuple[type, ...]) -> tuple[list, list]:
    """``(keys, arrays)``: the arguments of ``array_type``, positional ones by index, then keywords by name.

    Keyword arrays are inputs like positional ones (differentiated, wrapped),
    as a ``torch.autograd.Function`` user would expect of them.
    """
    # Loops, not comprehensions or a predicate: every bridge call runs this, and each of those is a Python call.
    keys: list = []
    arrays: list = []
    for i, a in enumerate(args):
        if isinstance(a, array_type):
            keys.append(i)
            arrays.append(a)
    if kwargs:
        for k, a in kwargs.items():
            if isinstance(a, array_type):
                keys.append(k)
                arrays.append(a)
    return keys, arrays


def placed(args: tuple, kwargs: dict, keys: Sequence, values: Sequence) -> tuple[list, dict]:
    """``args`` and ``kwargs`` with ``values`` in the places ``keys`` name (``array_arguments``' keys)."""
    args_out = list(args)
    kwargs_out = dict(kwargs) if kwargs else kwargs
    for key, value in zip(keys, values):
        if key.__class__ is int:
            args_out[key] = value
        else:
            kwargs_out[key] = value
    return args_out, kwargs_out


def argument_name(key: int | str) -> str:
    """``argument 0`` or ``keyword argument 'w'``, for a key of ``array_arguments``."""
    return f"argument {key}" if key.__class__ is int else f"keyword argument {key!r}"


class refused_writes:
    """Inside the block, a write into the storage of ``tensors`` raises ``LeafWriteError`` (``message(i)``
    for the i-th), before anything is written: a bridge lends its caller's arrays to ``fn`` read-only.
    ``indices``, when given, names the only positions of ``tensors`` refused.

    A class rather than a ``contextlib`` generator, as ``grad_mode``: the torch bridge enters one per call.
    The block registers itself as the refusal of each carrier (``WRITE_REFUSALS``), called with the carrier.
    """

    __slots__ = ("added", "carriers", "message")

    def __init__(self, tensors: Sequence[Tensor], message: Callable[[int], str],
                 indices: Sequence[int] | None = None) -> None:
        carriers = {}
        for i in range(len(tensors)) if indices is None else indices:
            for c in tensors[i]._carriers:
                carriers[id(c)] = i
        self.carriers = carriers
        self.message = message

    def __enter__(self) -> None:
        # A carrier already refused (the same tensor passed twice, or by another call) keeps its first entry.
        added = []
        for key in self.carriers:
            if WRITE_REFUSALS.setdefault(key, self) is self:
                added.append(key)
        self.added = added

    def __exit__(self, *exc) -> None:
        for key in self.added:
            WRITE_REFUSALS.pop(key, None)

    def __call__(self, carrier: Any) -> LeafWriteError:
        return LeafWriteError(self.message(self.carriers[id(carrier)]))


def lost_precision(output: Tensor) -> str | None:
    """Where a floating ``output`` that is not Float32 left Float32 (``lost_precision_origin``), if it did.

    Such an output depends on a Float32 Tensor through a value that cannot carry
    a gradient; None for Float32, integer and bool outputs and for floating ones
    computed from no Float32 Tensor (their gradient is a true zero).
    """
    if output._dtype is DType.Float32 or output._dtype.kind not in ("float", "complex"):
        return None
    return lost_precision_origin(output)


def refuse_lost_precision(outputs: Sequence[Tensor] | Mapping[int, Tensor], indices: Sequence[int], where: str) -> None:
    """``Float32RuleError`` when a cotangent reached output ``k`` (of ``indices``) that left Float32.

    The bridges' side of the Float32 rule: StrideWeave's own ``backward`` on
    such a value raises, so a native cotangent arriving there must too, instead
    of the bridge dropping it and handing back a partial gradient.
    """
    for k in indices:
        origin = lost_precision(outputs[k])
        if origin is not None:
            raise Float32RuleError(
                f"{where}: backward reached output {k} ({outputs[k].dtype!r}), computed from a Float32 Tensor "
                f"that {origin}; only Float32 is differentiable, so no gradient flows through that output: keep "
                "fn's computation in float32 (cast its float64 inputs with xp.astype(y, xp.float32)) to "
                "differentiate through it, or detach the output where its gradient should be zero")


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


def wrap_native(array: Any) -> Tensor:
    """``sw.tensor(array)`` for a concrete native array: the same Tensor, watched the same way, cheaper.

    NumPy arrays go straight to ``sw.tensor``'s cached wrap (its argument
    checks left out); for torch tensors the carrier kind and layout come from
    a cache keyed on shape, strides, dtype and device, and the storage is one
    view of the tensor's memory; anything else goes through ``sw.tensor``.
    """
    if isinstance(array, np.ndarray):
        return _wrap_array(array) if array.ndim else _scalar(_wrap_array(array))
    torch = sys.modules.get("torch")
    if torch is None or not isinstance(array, torch.Tensor):
        return _wrap(array) if array.ndim else _scalar(_wrap(array))
    return wrap_torch(array, torch.Tensor)


def wrap_torch(array: Any, tensor_type: type) -> Tensor:
    """``wrap_native`` for a tensor the caller knows is a ``torch.Tensor`` (``tensor_type``)."""
    wrapped = wrapped_torch(array, tensor_type)
    if wrapped is None:  # (torch counts its versions: nothing to watch)
        return _wrap(array) if array.ndim else _scalar(_wrap(array))
    return wrapped


_SCALAR_LAYOUT = Layout._trusted((), ())


def _scalar(wrapped: Tensor) -> Tensor:
    """A 0-d argument as a 0-d Tensor, as ``xp.asarray`` makes it (``sw.tensor`` lays a scalar out with shape
    ``(1,)``, which would change what ``fn`` computes from it: its reductions, broadcasts and result shapes)."""
    return Tensor._make(wrapped._carriers[0], _SCALAR_LAYOUT, wrapped._offset)


#: id(torch tensor) -> (weak reference, data pointer, dtype, shape, strides, device, Tensor): the view
#: ``held_wrap`` made of a tensor at its last call. Torch tensors only: their carrier reads torch's own version
#: counter, so a write between calls is seen by the old view exactly as by a new one.
_HELD: dict = {}
_HELD_LIMIT = 4096


def _forget(ref, key=None) -> None:
    entry = _HELD.get(key)
    if entry is not None and entry[0] is ref:
        del _HELD[key]


def held_wrap(array: Any, tensor_type: type) -> Tensor:
    """``wrap_torch(array)``, handing out the Tensor of ``array``'s previous call again where that is the same.

    A bridge called in a loop on the same parameters wraps them once: the
    Tensor is reused while ``array`` is the same object over the same memory
    (data pointer) with the same shape, strides, dtype and device, and the
    Tensor is still a plain leaf (no history, no ``.grad``, not retaining
    one). The caller makes sure one call does not receive the same Tensor
    twice (``wrap_torch`` for repeats).
    """
    entry = _HELD.get(id(array))
    if entry is not None:
        # Compared one by one, cheapest first, rather than as one built key: this runs per argument and call.
        ref, pointer, dtype, shape, stride, device, wrapped = entry
        if (ref() is array and wrapped._ctx is None and wrapped._grad is None and not wrapped._retains_grad
                and array.dtype is dtype and array.shape == shape and array.stride() == stride
                and array.device == device):
            try:
                if array.data_ptr() == pointer:
                    return wrapped
            except RuntimeError:  # a tensor without storage
                pass
    wrapped = wrapped_torch(array, tensor_type)
    if wrapped is None:  # a tensor sw.tensor lays out itself (0-d, empty, a foreign dtype): never held
        return wrap_torch(array, tensor_type)
    if len(_HELD) >= _HELD_LIMIT:
        _HELD.clear()
    try:
        _HELD[id(array)] = (weakref.ref(array, functools.partial(_forget, key=id(array))), array.data_ptr(),
                            array.dtype, array.shape, array.stride(), array.device, wrapped)
    except (TypeError, RuntimeError):  # not weakly referable, or no storage: wrapped afresh at every call
        pass
    return wrapped


def cotangent_from_native(target: Tensor, values: Any, where: str) -> Tensor:
    """``values`` (a native array with ``target``'s natural shape) as a cotangent StrideWeave accepts for ``target``.

    The cotangent lives on ``target``'s carrier, moved there by DLPack when
    needed, and has ``target``'s layout (the canonical one for a broadcast
    target), as the spec requires. It wraps ``values`` without copying when
    their strides already give that layout; otherwise one copy lays them out.
    """
    expected = target.shape
    if values.shape != expected:
        shape = tuple(int(e) for e in values.shape)
        if shape != expected:
            raise ValueError(f"{where}: cotangent has shape {shape}, expected {expected} (the output's shape)")
    fast = _float32_native_cotangent(target, values)
    if fast is not None:
        return fast
    wanted = gradient_layout(target)
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
    with grad_mode(False):  # a cotangent is a value: laid out by an update, never a recorded write
        # Any: Tensor's in-place methods are attached at import (``_methods.py``)
        buffer: Any = zeros(wanted.shape, carrier=kind, layout=wanted)
        return buffer.copy_(wrapped)


#: output Layout -> (wanted layout, its shape and strides, cosize, compact, C-ordered) for the cotangents
#: ``_float32_native_cotangent`` lays out; False for the layouts left to the generic path (nested or empty modes)
_COTANGENT_PLANS: dict[Layout, Any] = {}
_COTANGENT_PLANS_LIMIT = 1024


def _cotangent_plan(target: Tensor):
    layout = target._layout
    shape = layout._shape_modes
    plan: Any
    if not shape or 0 in shape or not all(type(e) is int for e in shape):
        plan = False
    else:
        wanted = gradient_layout(target)
        plan = (wanted, shape, wanted._stride_modes, wanted.cosize, wanted.is_compact(),
                wanted._stride_modes == row_major(layout.mode_sizes)._stride_modes)
    if len(_COTANGENT_PLANS) >= _COTANGENT_PLANS_LIMIT:
        _COTANGENT_PLANS.clear()
    _COTANGENT_PLANS[layout] = plan
    return plan


def _float32_native_cotangent(target: Tensor, values: Any) -> Tensor | None:
    """The float32 NumPy / torch cotangent ``values`` (of ``target``'s natural shape) on ``target``'s own kind,
    in the layout ``cotangent_from_native`` promises; None for every other case, which that function handles.

    A native copy when the strides differ: the same values and layout the
    generic path's recorded-write machinery would give, in one library call.
    """
    layout = target._layout
    plan = _COTANGENT_PLANS.get(layout)
    if plan is None:
        plan = _cotangent_plan(target)
    carriers = target._carriers
    if plan is False or len(carriers) != 1:
        return None
    wanted, shape, strides, cosize, compact, c_ordered = plan
    kind = carriers[0].kind
    if isinstance(values, np.ndarray):
        if values.dtype != np.float32 or kind.cls.backend != "numpy":
            return None
        item = values.itemsize
        if tuple(s // item if s % item == 0 else None for s in values.strides) == strides:
            wrapped = wrap_native(values)
            if wrapped.layout == wanted:
                return wrapped
        flat = (np.empty if compact else np.zeros)(cosize, np.float32)
        np.ndarray(shape, np.float32, flat, 0, tuple(s * 4 for s in strides))[...] = values
    else:
        torch = sys.modules.get("torch")
        if (torch is None or not isinstance(values, torch.Tensor) or values.dtype != torch.float32
                or kind.cls.backend != "torch" or values.device != kind.device):
            return None
        given = values.stride()
        if given == strides:
            wrapped = wrap_torch(values, torch.Tensor)
            if wrapped._layout == wanted:
                return wrapped
        # (torch's contiguous() returns a contiguous tensor itself)
        if (c_ordered or (compact and not any(given))) and not values.is_contiguous():
            # One library call for the copy where C order is the wanted order, or where every stride is 0 (a
            # sum's cotangent arrives so expanded), whose one value reads the same in any order.
            flat = (values.detach() if values.requires_grad else values).contiguous().view(-1)
            return Tensor._from_raw(flat, wanted, kind, DType.Float32)
        flat = (torch.empty if compact else torch.zeros)(cosize, dtype=torch.float32, device=values.device)
        flat.as_strided(shape, strides).copy_(values.detach() if values.requires_grad else values)
    if compact:  # fresh storage nobody else holds: its carrier is made only if something asks for it
        return Tensor._from_raw(flat, wanted, kind, DType.Float32)
    return Tensor._make(kind.cls._adopt(flat, kind.namespace, kind.device, kind), wanted, 0)


class _Join(Operation):
    """Joins several outputs under one node, so one traversal carries all their cotangents."""

    # No keyword arguments besides ``options``: narrower than Operation.forward on purpose.
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
    ``cotangent_from_native``, so ``sw.grad``'s argument checks are left out; its
    refusal of higher-order requests (an output that depends on an earlier
    traversal's gradient and misses an input) runs only when an input is
    unreached, the one case in which it can refuse.
    """
    live = []
    for o, c in zip(outputs, cotangents):
        if c is not None and o._dtype is DType.Float32:
            live.append((o, c))
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
        # Any: Tensor's in-place methods are attached at import (``_methods.py``)
        seed: Any = zeros((1,), carrier=output.carrier.kind)
        cotangent = seed.fill_(1.0)
    grads = _run(output, cotangent, inputs, retain_graph)
    for g in grads:
        if g is None:
            _refuse_higher_order(output, inputs)
            break
    return grads
