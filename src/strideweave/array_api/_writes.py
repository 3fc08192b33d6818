"""In-place writes recorded as torch.autograd records them.

``y op= v``, ``y[key] = v``, ``y.fill_(c)``, ``y.copy_(v)`` and ``y.add_(v)``
on a Tensor whose storage has an autograd history write the new values
into ``y``'s storage and give that storage's owner (the *base*: ``y``
itself, or the result ``y`` is a view of) a new node, ``WrittenValue``:
the cotangent at the written positions goes to the new values, the rest
to the base's values from before the write, which keep their history.
``y`` continues as a view of the rebased base.

What the write's own backward needs from before the write is kept: every
node recorded for the new values that saved the overwritten storage and
reads values at backward is given a copy of that storage from before the
write (torch's ``original_self``); nodes that only route cotangents (views,
``y + v``) keep the storage and take the write as seen. A node recorded
earlier that saved the storage, and a node whose backward reads its own
overwritten result (``exp``), still fail at backward with the spec's
in-place message.

On a leaf (and a view of one) the write rule decides (docs/api.md section 4):
a constant updates it; a Float32 Tensor written into a fresh buffer (made by
``zeros``, ``empty``, ... and read by no recorded operation yet,
``Carrier._unread``) is recorded, with the buffer's old values as
constants; a Float32 Tensor written into any other leaf raises before
anything is written. Under ``no_grad`` every write is an update. Nothing
drops a history silently.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .. import ops as _ops
from ..dtypes import DType
from ..errors import LeafWriteError
from ..operation import Operation, _state, no_grad
from ..ops.written import WrittenValue
from ..tensors.tensor import _LOST_PRECISION, Tensor, lost_precision_origin
from ..tensors.writes import check_fits
from ..tensors.writes import write as write_storage
from ._native_operands import constant
from ._write_plan import _Plan, _shares, base_of, positions_in, rebase_view

__all__ = ["add_", "copy_", "fill_", "inplace_operator", "recorded_setitem"]

_FLOAT32 = DType.Float32

#: Operators whose node reads neither operand's values for the target's old values:
#: ``y + v`` and ``y - v`` always, ``y * c`` and ``y / c`` for a constant ``c``.
_ROUTES_ONLY = frozenset({"add", "subtract"})
_ROUTES_ONLY_BY_CONSTANT = frozenset({"multiply", "divide"})


def _unravel(positions: np.ndarray, shape: Any) -> tuple:
    """``np.unravel_index`` of flat positions, also into a 0-d base, which NumPy refuses: there a 0-d
    boolean index takes the one position (a view of it holds at most one element) or none."""
    if len(shape) == 0:
        return (np.bool_(positions.size > 0),)
    return np.unravel_index(positions, shape)


def _float32_tensor(value: Any) -> bool:
    return isinstance(value, Tensor) and value._dtype is _FLOAT32


def recorded(base: Tensor, value: Any) -> bool | None:
    """The write rule (docs/api.md section 4) for writing ``value`` into storage whose owner is ``base``:
    True (recorded), False (an update), or None (refused: a Float32 Tensor into a leaf that is no
    fresh buffer; the caller checks shapes first, then raises ``refusal``)."""
    if not _state.enabled:
        return False  # under no_grad every write is an update
    if base._ctx is not None:
        return True  # a result, or a view of one: the history continues through the write
    if not _float32_tensor(value):
        return False  # a constant updates a leaf
    if base._dtype is _FLOAT32 and all(c._unread for c in base._carriers):
        return True  # a fresh buffer becomes the result of the write
    return None


def refusal(target: Tensor, base: Tensor) -> LeafWriteError:
    """The error for a Float32 Tensor written into a leaf that is no fresh buffer (nothing is written)."""
    carrier = type(base._carriers[0]).__name__
    what = "the leaf" if target is base else "a view of the leaf"
    if base._dtype is _FLOAT32:
        why = ("a leaf that is not a fresh buffer (one made by zeros, empty, full, ... that no recorded "
               "operation has read yet) cannot become the result of a write, as torch refuses an in-place "
               "write into a leaf that requires grad")
    else:
        why = "only Float32 is differentiable, so the write cannot be recorded in a leaf of another dtype"
    return LeafWriteError(
        f"an in-place write of a Float32 Tensor into {what} Tensor of shape {tuple(base.shape)} "
        f"({base._dtype!r}, {carrier}) would drop the written value's gradient history: {why}. For an "
        f"update (an optimiser step), write under `with sw.no_grad():`; in code that should differentiate "
        f"through the write, write into a copy (`x = xp.asarray(x, copy=True)`) or compute out of place "
        f"(`x = x - m`)")


def check_selected(value: Any, selected: tuple) -> None:
    """ValueError when ``value`` does not broadcast to the ``selected`` shape of ``x[key] = value``."""
    if not isinstance(value, Tensor):
        return
    value_shape = tuple(value.shape)
    while len(value_shape) > len(selected) and value_shape[0] == 1:
        value_shape = value_shape[1:]  # leading ones broadcast away, as NumPy assigns them
    try:
        fits = len(value_shape) <= len(selected) and np.broadcast_shapes(value_shape, selected) == selected
    except ValueError:
        fits = False
    if not fits:
        raise ValueError(f"cannot assign a value of shape {tuple(value.shape)} to elements of shape {selected}")


def _check_write(target: Tensor, value: Any) -> None:
    """The shape errors of ``fill_`` / ``copy_`` / ``add_``, raised before a refusal, as the write raises them."""
    if isinstance(value, Tensor):
        check_fits(target, value)


def _commit(plan: _Plan, target: Tensor, value: Any, write: Callable[[], None], parts: tuple | None,
            selected: tuple) -> None:
    """Write, then make ``value`` at ``parts`` of the base the base's new history."""
    base = plan.base
    write()
    plan.settle()
    if parts is None:
        parts = (Ellipsis,) if target is base else _unravel(positions_in(base, target), base.shape)
    WrittenValue.record(base, value, parts, selected, plan.history, merge=not plan.references)
    rebase_view(target, base)
    plan.rebase_views()


def _routing_for(name: str, other: Any, result: Tensor):
    """Which saved Tensors the node of ``result = target op other`` only routes cotangents for."""
    node = result._ctx
    routes_target = name in _ROUTES_ONLY or (
        name in _ROUTES_ONLY_BY_CONSTANT and not (isinstance(other, Tensor) and other._dtype is _FLOAT32))

    def routing(candidate: Operation, index: int) -> bool:
        return candidate is node and index == 0 and routes_target
    return routing


def _no_routing(node: Operation, index: int) -> bool:
    """No node of this write routes cotangents beyond what its class says (``_write_plan._routes_only``)."""
    return False


def _check_update(name: str, target: Tensor, result: Tensor) -> None:
    if result.shape != target.shape:
        raise ValueError(f"in-place {name}: the result shape {result.shape} differs from the target's "
                         f"shape {target.shape}")
    if result.dtype is not target.dtype:
        raise TypeError(f"in-place {name}: the result dtype {result.dtype!r} differs from the target's "
                        f"dtype {target.dtype!r}")


def _updated(target: Tensor, base: Tensor, write: Callable[[], None]) -> None:
    """An unrecorded write (an update): ``target`` keeps being a view of ``base`` afterwards."""
    write()
    if target is not base and target._ctx is not None and _state.enabled:
        rebase_view(target, base)  # its old view node saved the storage just written


def _record(target: Tensor, base: Tensor, value: Any, write: Callable[[], None], *,
            parts: tuple | None = None, selected: tuple | None = None,
            routing: Callable[[Operation, int], bool] = _no_routing) -> None:
    if isinstance(value, Tensor) and _shares(value, base._carriers):
        value = _ops.copy(value)  # an overlapping source is read before anything is written
    plan = _Plan(base)
    plan.detach_references(copy=plan.find(value, routing=routing))
    _commit(plan, target, value, write, parts, tuple(target.shape) if selected is None else selected)


def written_back(value: Any, target: Tensor) -> Any:
    """``value`` as a write into the Float32 ``target`` (``t[key] = value``, ``copy_``) should store it.

    A floating value that left Float32 while recording is cast back through a
    recorded ``astype``, whose ``NoGradientPath`` node then fails a backward
    that reaches the write, instead of the write cutting its gradient.
    """
    if value.__class__ is Tensor and target._dtype is _FLOAT32 and value._dtype is not _FLOAT32 \
            and value._dtype.kind == "float" and _LOST_PRECISION and _state.enabled \
            and lost_precision_origin(value) is not None:
        return _ops.astype(value, _FLOAT32)
    return value


def inplace_operator(name: str, symbol: str):
    """The method ``__i<op>__`` for the op library's function ``name`` (``add`` for ``+=``, ...);
    ``symbol`` (``"+="``) names it in errors."""
    function = getattr(_ops, name)

    def method(self, other):
        if not isinstance(other, (Tensor, bool, int, float, complex)):
            other = constant(self, other, symbol)  # an array of the Tensor's own library is a constant
        base = base_of(self)
        mode = recorded(base, other)  # decided before anything reads the target
        if not mode:
            with no_grad():
                result = function(self, other)
                _check_update(name, self, result)
            if mode is None:
                raise refusal(self, base)
            _updated(self, base, lambda: _raw_write(self, result))
            return self
        result = function(self, other)
        _check_update(name, self, result)
        _record(self, base, result, lambda: _raw_write(self, result), routing=_routing_for(name, other, result))
        return self
    method.__name__ = f"__i{name}__"
    method.__doc__ = (f"In-place ``{name}``: writes ``{name}(self, other)`` into this Tensor's storage; "
                      "recorded or an update by the write rule (docs/api.md section 4).")
    return method


def _raw_write(target: Tensor, value: Any, add: bool = False) -> None:
    with no_grad():
        write_storage(target, value, add)


def recorded_setitem(x: Tensor, parts: tuple, selected: tuple, value: Any, write: Callable[[], None]) -> None:
    """``x[parts] = value`` through ``write``, recorded or an update by the write rule (``recorded``);
    ``parts`` index ``x``'s natural (C-order) positions."""
    base = base_of(x)
    value = written_back(value, base)
    mode = recorded(base, value)
    if mode is None:
        check_selected(value, tuple(selected))
        raise refusal(x, base)
    if not mode:
        _updated(x, base, write)
        return
    where = parts if x is base else _unravel(positions_in(base, x)[parts], base.shape)
    _record(x, base, value, write, parts=where, selected=selected)


def _write_method(target: Tensor, value: Any, add: bool) -> Tensor:
    """``target.copy_(value)`` (``fill_`` is one with a scalar), or ``target.add_(value)`` recorded as
    ``copy_(target + value)``: recorded or an update by the write rule (docs/api.md section 4)."""
    base = base_of(target)
    value = written_back(value, base)
    mode = recorded(base, value)
    if mode is None:
        _check_write(target, value)
        raise refusal(target, base)
    if not mode:
        _updated(target, base, lambda: _raw_write(target, value, add))
        return target
    routing = _no_routing
    if add:
        total = _ops.add(target, value)
        if total.shape != target.shape:
            raise ValueError(f"cannot add a value of shape {value.shape} into a Tensor of shape {target.shape}")
        routing = _routing_for("add", value, total)
        value = total if total._dtype is target._dtype else _ops.astype(total, target._dtype)
    _record(target, base, value, lambda: _raw_write(target, value), routing=routing)
    return target


def fill_(self, value):
    """Write ``value`` to every element; recorded or an update by the write rule (docs/api.md section 4)."""
    return _write_method(self, value, False)


def copy_(self, source):
    """Write ``source`` (broadcast to this shape) into this Tensor; recorded or an update by the
    write rule (docs/api.md section 4)."""
    return _write_method(self, source, False)


def add_(self, other):
    """Add ``other`` (broadcast to this shape) into this Tensor; recorded as ``copy_(self + other)``
    or an update by the write rule (docs/api.md section 4)."""
    return _write_method(self, other, True)
