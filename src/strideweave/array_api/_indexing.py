"""Standard indexing for Tensors: ints, slices of any step, ``...``, ``None``, boolean masks, integer arrays.

Keys a layout can express (ints and slices with a positive step) become
views through ``ops.views.getitem``; everything else (negative steps,
masks, integer arrays) is a gather: the flat C-order positions the key
selects are computed once on the host, and the result is a differentiable
``take`` from the flattened Tensor, so its VJP scatters back (duplicates add).
"""

from __future__ import annotations

import operator
from typing import Any, Sequence

import numpy as np

from .._marks import IdentityMarks
from ..autograd.mode import _state
from ..creation import tensor
from ..dtypes import DType
from ..layout import Shape
from ..operation import Operation, _unique_carriers, result_state, versions_of
from ..ops import reshape as _sw_reshape
from ..ops._broadcasting import sum_to
from ..ops._natural import _to_rev, natural
from ..ops._support import cotangent_for, kind_of
from ..ops.arrays import _c_reshape, take
from ..ops.views import getitem as _view_getitem
from ..ops.views import setitem as _view_setitem
from ..tensor import Tensor

__all__ = ["getitem", "setitem"]

_FLOAT32 = DType.Float32

#: Tensors whose history an unrecorded in-place operator dropped (``t = exp(y); t += 1``): their
#: values still depend on what that history computed from, so writing one into a result is not
#: recorded, and backward then refuses the write wherever a cotangent reaches it.
SEVERED = IdentityMarks()


def _host_key(key: Any, shape: tuple) -> Any:
    """The key with Tensors turned into NumPy arrays, validated against ``shape``."""
    parts = key if isinstance(key, tuple) else (key,)
    out = []
    for part in parts:
        if isinstance(part, Tensor):
            if part.dtype.kind not in ("bool", "int", "uint"):
                raise IndexError(f"an array index must have an integer or boolean dtype, got {part.dtype!r}")
            part = part.numpy()
        elif part is None or part is Ellipsis or isinstance(part, slice):
            pass
        elif isinstance(part, (bool, np.bool_)):
            part = bool(part)
        else:
            try:
                part = operator.index(part)
            except TypeError:
                raise IndexError(f"unsupported index {part!r} ({type(part).__name__}); expected an int, a slice, "
                                 f"..., None, a boolean or integer array") from None
        out.append(part)
    if sum(p is Ellipsis for p in out) > 1:
        raise IndexError(f"an index can only have a single ellipsis, got {key!r}")
    return tuple(out)


def _is_basic(parts: tuple) -> bool:
    return all((type(p) is int) or (isinstance(p, slice) and (p.step is None or p.step > 0)) for p in parts)


def _result_shape(parts: tuple, shape: tuple) -> tuple:
    # NumPy's own rules on a stride-0 stand-in: no allocation, exact errors.
    probe = np.broadcast_to(np.empty((), dtype=np.int8), shape)
    try:
        return probe[parts].shape
    except IndexError as exc:
        raise IndexError(f"index {parts!r} does not fit shape {shape}: {exc}") from None


def _positions(shape: tuple, parts: tuple) -> np.ndarray:
    """The flat C-order positions ``parts`` selects in an array of ``shape``, in the selection's shape."""
    return np.arange(int(np.prod(shape, dtype=np.int64)), dtype=np.int64).reshape(shape)[parts]


def getitem(x: Tensor, key: Any) -> Tensor:
    """``x[key]`` with the Array API's semantics (0-d results for full integer keys)."""
    shape = x._layout.mode_sizes
    parts = _host_key(key, shape)
    out_shape = _result_shape(parts, shape)
    if _is_basic(parts) and len(parts) <= len(shape):
        if not parts:
            return _sw_reshape(x, Shape(shape)) if shape else _sw_reshape(x, Shape(()))
        result = _view_getitem(x, parts if len(parts) > 1 else parts[0])
        if tuple(result._layout.mode_sizes) != out_shape:
            result = _sw_reshape(result, Shape(out_shape))
        return result
    positions = _positions(shape, parts)
    flat = _c_reshape(x, (x.size,), None)
    # int32 positions where they fit: JAX carriers have no 64-bit integers by default.
    flat_positions = np.ascontiguousarray(positions.reshape(-1), dtype=np.int32 if x.size < 2**31 else np.int64)
    index = tensor(flat_positions, carrier=x._carriers[0].kind)
    picked = take(flat, index, axis=0)
    return _c_reshape(picked, tuple(out_shape), None)


def setitem(x: Tensor, key: Any, value: Any) -> None:
    """``x[key] = value``: writes through to ``x``'s storage and bumps its version.

    A key that selects nothing (an all-False mask, an empty slice) writes nothing,
    so it changes no version: graphs recorded before it stay valid. With
    gradients on, a write into a Float32 leaf, or into the result of a node
    whose backward does not read its result, is recorded (``_WrittenValue``):
    that node gets a zero cotangent at the written positions. Other writes
    are not recorded; a node whose backward does not read its result notes
    the positions (``Operation.note_write``) and accepts them only where no
    cotangent reaches, and any other node whose result they changed fails at
    backward.
    """
    shape = x._layout.mode_sizes
    parts = _host_key(key, shape)
    selected = _result_shape(parts, shape)
    if 0 in selected:
        value_shape = value.shape if isinstance(value, Tensor) else ()
        try:
            np.broadcast_shapes(tuple(value_shape), tuple(selected))
        except ValueError:
            raise ValueError(f"cannot assign a value of shape {tuple(value_shape)} to x[{key!r}] "
                             f"(it selects shape {tuple(selected)})") from None
        return
    node = x._ctx
    if _recordable(x, value, node):
        _write_item(x, parts, key, value)
        _WrittenValue.record(x, value, parts, tuple(selected))
        _forget_writes(x._ctx, x._carriers)
        return
    if node is None or node._released or type(node).reads_result:
        _write_item(x, parts, key, value)
        return
    carriers = x._carriers
    before = sum(c._version for c in carriers)
    _write_item(x, parts, key, value)
    mask = np.zeros(tuple(shape), dtype=bool)
    mask[parts] = True
    node.note_write(mask, sum(c._version for c in carriers) - before)


def _recordable(x: Tensor, value: Any, node: Any) -> bool:
    """Whether ``x[key] = value`` is recorded: gradients on, a Float32 ``x`` that is a leaf, the result
    of earlier recorded writes, or the result of a node whose backward does not read its result, and
    a value that is a constant or a Float32 Tensor sharing no storage with ``x`` or an earlier written
    value (the write would change what the node saved)."""
    if not _state.enabled or x._dtype is not _FLOAT32:
        return False
    if node is not None and (node._released or (node.__class__ is not _WrittenValue
                                                and not takes_recorded_write(node, x))):
        return False
    if not isinstance(value, Tensor):
        return node is not None  # a constant into a leaf needs no node
    if value._dtype is not _FLOAT32 or value in SEVERED:
        return False
    taken = list(x._carriers) + ([c for t in node._inputs for c in t._carriers] if node is not None else [])
    return not any(c is t for c in value._carriers for t in taken) and not _reads_storage_of(value, x)


#: Tensors over a result's storage that stand for its values from before a recorded write or
#: update (the input of ``_WrittenValue`` / the update's node that carries the old history).
_BEFORE = IdentityMarks()


def _forget_writes(node: Any, carriers: Sequence[Any]) -> None:
    """A recorded write into ``carriers`` is no change to ``node`` and the history behind it.

    ``node`` is the node of the Tensor just written; through the Tensors that
    stand for its values before each recorded write (``_BEFORE``), its
    history reaches back to the operation that first made it. None of these
    nodes reads those values, and each was recorded for exactly them, so the
    write is taken as seen: their result versions, and their saved versions
    of the standing-in Tensors, move to the current ones. Every other saved
    version is kept, so a write into anything else still fails backward.
    """
    def current(pairs):
        return tuple(c._version if any(c is t for t in carriers) else v for c, v in pairs)

    while node is not None:
        state = node._result_state
        if state is not None:
            node._result_state = (state[0], current(zip(*state)))
        before = next((t for t in node._inputs if t in _BEFORE), None)
        if before is None:
            return
        node._versions = current(zip(_unique_carriers(node._inputs), node._versions))
        node = before._ctx


def takes_recorded_write(history: Operation, target: Tensor) -> bool:
    """Whether a write into ``target``, the result of ``history``, can be recorded over that history.

    The node must not read its result (the write replaces it) and must
    describe ``target``'s values exactly now: no write since it was recorded,
    noted or not (``y.fill_`` leaves a history that fails at backward anyway).
    """
    if history._released or type(history).reads_result or history._written is not None:
        return False
    if history._result_layout != target._layout:
        return False
    state = history._result_state
    return state is None or all(c._version == v for c, v in zip(*state))


#: In-place operators whose update is recorded on a result: their VJPs read neither the target's
#: old values (overwritten) nor, for these, anything but the other operand (a constant here).
_UPDATES_ANY_OTHER = frozenset({"add", "subtract"})
_UPDATES_CONSTANT_OTHER = frozenset({"multiply", "divide"})


def record_update(target: Tensor, other: Any, update: Tensor, history: Any, name: str) -> bool:
    """Make ``target op= other`` (already written into ``target``) the node of ``target``, as torch does.

    ``update`` is ``target op other``, computed and recorded before the write;
    ``history`` was ``target``'s node then and could take a recorded write
    (``takes_recorded_write``, asked before the write). Where the update's
    VJP reads neither ``target``'s old values nor a differentiable ``other``
    (``+=``, ``-=``, ``*=`` and ``/=`` by a constant), the update's node takes ``target`` as its result and a Tensor over
    ``target``'s storage with the old history as its input, which describes
    the values from before the write exactly. Returns whether it did.
    """
    node = update._ctx
    if node is None:
        return False
    if name not in _UPDATES_ANY_OTHER and (name not in _UPDATES_CONSTANT_OTHER or (
            isinstance(other, Tensor) and other._dtype is _FLOAT32)):
        return False
    if not any(t is target for t in node._inputs) or (isinstance(other, Tensor) and _reads_storage_of(other, target)):
        return False
    before = _BEFORE.add(target._alias())
    before._ctx = history
    node._inputs = tuple(before if t is target else t for t in node._inputs)
    node._versions = versions_of(node._inputs)    # after the write, which nothing here reads
    node._result_layout = target._layout
    node._result_state = result_state(target)
    target._ctx = node
    _forget_writes(history, target._carriers)
    return True


def _reads_storage_of(value: Tensor, x: Tensor) -> bool:
    """Whether ``value``'s history saved ``x``'s storage (``x[:] = 2 * x``): recording the write
    would make ``x`` its own ancestor, so such a write stays unrecorded."""
    targets = x._carriers
    seen: set = set()
    pending = [value._ctx]
    while pending:
        node = pending.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        for saved in node._inputs:
            if saved is x or any(c is t for c in saved._carriers for t in targets):
                return True
            pending.append(saved._ctx)
    return False


_UNWRITTEN = -1   # owner of a position no write took: x's values from before the first write
_CONSTANT = -2    # owner of a position last written with a constant


class _WrittenValue(Operation):
    """``x[key] = value``, and the writes into ``x`` after it: ``x`` becomes this node's result.

    The cotangent at the positions each value still holds goes to that value
    (summed where it was broadcast); positions written with a constant pass
    nothing. ``x``'s values from before the first write are constants for a
    leaf; for the result of an operation (``history``) they are that
    result, saved as a Tensor over ``x``'s storage with the operation as its
    node, which gets the cotangent at the positions no write took and a zero
    at the others, exactly torch's rule for writes into a result. So the
    usual way to build an array in Array API code (fill, then write), and
    ``xpx.at(y)[i].set(v)`` into a computed ``y``, differentiate.
    """

    reads_result = False

    @classmethod
    def record(cls, x: Tensor, value: Any, parts: tuple, selected: tuple) -> None:
        node = x._ctx
        if node is None or node.__class__ is not cls:
            history = node
            node = cls()
            node._result_layout = x._layout
            shape = tuple(x._layout.mode_sizes)
            node.context["owner"] = np.full(shape, _UNWRITTEN, dtype=np.int64)  # which write holds each position
            node.context["writes"] = []
            if history is not None:
                before = _BEFORE.add(x._alias())
                before._ctx = history
                node._inputs = (before,)
                node._versions = versions_of(node._inputs)
                node.context["writes"].append(None)
        owner = node.context["owner"]
        if isinstance(value, Tensor):
            index = len(node._inputs)
            node._inputs = node._inputs + (value,)
            node._versions = node._versions + versions_of((value,))
            node.context["writes"].append((_positions(owner.shape, parts), selected))
        else:
            index = _CONSTANT
        owner[parts] = index
        x._ctx = node
        node._result_state = result_state(x)

    def backward(self, gradient: Tensor) -> tuple:
        kind = kind_of(gradient._carriers[0])
        xp = kind.namespace
        owner = self.context["owner"].reshape(-1)
        flat = xp.reshape(natural(gradient, kind), (-1,))
        grads = []
        for index, (value, write) in enumerate(zip(self._inputs, self.context["writes"])):
            if write is None:  # the result the first write went into: the positions no write took
                kept = owner == _UNWRITTEN
                if not kept.any():
                    grads.append(None)
                    continue
                kept_g = flat if kept.all() else xp.where(xp.asarray(kept, device=flat.device), flat,
                                                          xp.zeros_like(flat))
                natural_shape = tuple(self._result_layout.mode_sizes)
                grads.append(cotangent_for(value, _to_rev(xp.reshape(kept_g, natural_shape), value, xp), kind))
                continue
            positions, selected = write
            positions = positions.reshape(-1)
            held = owner[positions] == index  # later writes took the others over
            if not held.any():
                grads.append(None)
                continue
            take_at = np.where(held, positions, 0)
            picked = xp.take(flat, xp.asarray(np.ascontiguousarray(take_at), device=flat.device), axis=0)
            if not held.all():
                picked = xp.where(xp.asarray(held, device=flat.device), picked, xp.zeros_like(picked))
            picked = sum_to(xp, xp.reshape(picked, selected), tuple(value._layout.mode_sizes))
            grads.append(cotangent_for(value, _to_rev(picked, value, xp), kind))
        return tuple(grads)


def _write_item(x: Tensor, parts: tuple, key: Any, value: Any) -> None:
    shape = x._layout.mode_sizes
    if _is_basic(parts) and 0 < len(parts) <= len(shape):
        # A view's window: one write through the layout (nested modes included).
        _view_setitem(x, parts if len(parts) > 1 else parts[0], value)
        return
    if isinstance(value, Tensor):
        host_value = value.numpy()
    elif isinstance(value, (bool, int, float, complex)):
        host_value = value
    else:
        raise TypeError(f"cannot assign {type(value).__name__} {value!r}; expected a Tensor or a Python scalar")
    current = np.array(x.numpy(), copy=True)
    try:
        current[parts] = host_value
    except ValueError as exc:
        raise ValueError(f"cannot assign a value of shape {np.shape(host_value)} to x[{key!r}] "
                         f"(x has shape {shape}): {exc}") from None
    if current.ndim == 0:
        x.fill_(current.item())
    else:
        x.copy_(current)
