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

On a leaf (and a view of one) the write rule decides (API.md section 4):
a constant updates it; a Float32 Tensor written into a fresh buffer (made by
``zeros``, ``empty``, ... and read by no recorded operation yet,
``Carrier._unread``) is recorded, with the buffer's old values as
constants; a Float32 Tensor written into any other leaf raises before
anything is written. Under ``no_grad`` every write is an update. Nothing
drops a history silently.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import ops as _ops
from ..autograd.cotangents import cotangent_for
from ..carriers import NumpyCarrier
from ..dtypes import DType
from ..errors import LeafWriteError
from ..operation import Operation, _state, _unique_carriers, no_grad, result_state, versions_of
from ..ops._natural import _to_rev, natural
from ..ops.views import View
from ..tensors.broadcasting import sum_to
from ..tensors.tensor import _LOST_PRECISION, Tensor, lost_precision_origin
from ..tensors.values import kind_of
from ..tensors.writes import check_fits
from ..tensors.writes import write as write_storage
from ._native_operands import constant

__all__ = ["WrittenValue", "inplace_operator", "recorded_setitem"]

_FLOAT32 = DType.Float32

#: Operators whose node reads neither operand's values for the target's old values:
#: ``y + v`` and ``y - v`` always, ``y * c`` and ``y / c`` for a constant ``c``.
_ROUTES_ONLY = frozenset({"add", "subtract"})
_ROUTES_ONLY_BY_CONSTANT = frozenset({"multiply", "divide"})


def _shares(tensor: Tensor, carriers: tuple) -> bool:
    if tensor._raw is not None:
        return False  # a result with no carrier object yet owns a buffer nothing else sees
    return any(c is t for c in tensor._carriers for t in carriers)


def base_of(tensor: Tensor) -> Tensor:
    """The Tensor whose history describes ``tensor``'s storage: ``tensor`` itself, or the source
    that a chain of recorded views of ``tensor`` starts from."""
    current = tensor
    while True:
        node = current._ctx
        if node is None or node._released or not node._inputs or node.__class__ is WrittenValue:
            return current
        source = node._inputs[0]  # a node whose result shares its input's storage is a view
        if not _shares(source, current._carriers):
            return current
        current = source


def _offsets(tensor: Tensor) -> np.ndarray:
    """The storage offset of every element of ``tensor``, in natural (C-order) position."""
    span = tensor._offset + tensor._layout.cosize
    ids = NumpyCarrier.from_array(np.arange(max(span, 1), dtype=np.int64))
    return np.asarray(Tensor._make(ids, tensor._layout, tensor._offset).numpy())


def positions_in(base: Tensor, view: Tensor) -> np.ndarray:
    """The flat C-order positions in ``base`` of every element of ``view`` (shape ``view.shape``)."""
    if not base._layout.is_injective():
        raise ValueError(f"cannot write in place into a Tensor whose storage is shared by a broadcast "
                         f"(layout {base._layout}); copy it first (xp.asarray(x, copy=True))")
    base_offsets = _offsets(base).reshape(-1)
    inverse = np.full(int(base_offsets.max(initial=-1)) + 2, -1, dtype=np.int64)
    inverse[base_offsets] = np.arange(base_offsets.size, dtype=np.int64)
    wanted = _offsets(view)
    found = inverse[np.clip(wanted, 0, inverse.size - 1)]
    if found.size and ((found < 0).any() or (wanted >= inverse.size - 1).any()):
        raise ValueError(f"cannot record a write through a view (layout {view._layout}, offset {view._offset}) "
                         f"that addresses storage outside its source (layout {base._layout})")
    if np.unique(found).size != found.size:
        raise ValueError(f"cannot write in place into a broadcast view (layout {view._layout}): several of its "
                         f"elements share one storage slot; copy it first")
    return found


def _unravel(positions: np.ndarray, shape: Any) -> tuple:
    """``np.unravel_index`` of flat positions, also into a 0-d base, which NumPy refuses: there a 0-d
    boolean index takes the one position (a view of it holds at most one element) or none."""
    if len(shape) == 0:
        return (np.bool_(positions.size > 0),)
    return np.unravel_index(positions, shape)


def _float32_tensor(value: Any) -> bool:
    return isinstance(value, Tensor) and value._dtype is _FLOAT32


def recorded(base: Tensor, value: Any) -> bool | None:
    """The write rule (API.md section 4) for writing ``value`` into storage whose owner is ``base``:
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


#: Nodes that saved a carrier's storage only to route cotangents through it (views, ``y + v`` on the
#: overwritten values, recorded writes), per carrier: a later recorded write into that storage
#: changes nothing they compute, so it moves their saved version along (``_see_write``).
_ROUTERS: weakref.WeakKeyDictionary[Any, list] = weakref.WeakKeyDictionary()


def routes_through(node: Operation, carriers: tuple) -> None:
    """Note that ``node`` reads none of the values it saved in ``carriers``."""
    for carrier in carriers:
        nodes = _ROUTERS.get(carrier)
        if nodes is None:
            _ROUTERS[carrier] = [node]
        elif not any(n is node for n in nodes):
            nodes.append(node)


def _see_write(carriers: tuple, versions: tuple) -> None:
    """A recorded write moved ``carriers`` on from ``versions``: routing nodes that saw those take the new ones."""
    for carrier, before in zip(carriers, versions):
        nodes = _ROUTERS.get(carrier)
        if not nodes:
            continue
        kept = []
        for node in nodes:
            if node._released:
                continue
            kept.append(node)
            saved = _unique_carriers(node._inputs)
            node._versions = tuple(c._version if c is carrier and v == before else v
                                   for c, v in zip(saved, node._versions))
        _ROUTERS[carrier] = kept


class _Plan:
    """One recorded write: the storage it overwrites and the nodes that saved that storage."""

    def __init__(self, base: Tensor) -> None:
        self.base = base
        self.carriers = base._carriers
        self.history = base._ctx
        self.versions = tuple(c._version for c in self.carriers)
        self.references: list = []   # (node, index of the saved Tensor over the storage)
        self.owners: dict = {}       # id(saved Tensor) -> the node that produced it (before rebasing)
        self.copied: list = []       # nodes given stand-ins over a copy of the storage
        self.views: list = []        # saved views of the base: they show the new values afterwards
        self.stale: set = set()      # ids of those whose saved versions were already out of date

    def find(self, value: Any, *, routing: Callable[[Operation, int], bool]) -> bool:
        """Every node recorded for ``value`` that saved the overwritten storage; True when one of them
        may read it at backward (``routing(node, index)`` says which only route cotangents)."""
        if not isinstance(value, Tensor):
            return False
        needs_copy = False
        seen: set = set()
        pending = [value._ctx] if value._ctx is not None and value._ctx is not self.history else []
        while pending:
            node = pending.pop()
            if id(node) in seen or node._released:
                continue
            seen.add(id(node))
            for index, saved in enumerate(node._inputs):
                if _shares(saved, self.carriers):
                    self.references.append((node, index))
                    if id(saved) not in self.owners:
                        self.owners[id(saved)] = saved._ctx
                        if saved is not self.base and base_of(saved) is self.base:
                            self.views.append(saved)
                    if not (node.__class__ is View or type(node).__dict__.get("reads_inputs") is False
                            or routing(node, index)):
                        needs_copy = True
                child = saved._ctx
                if child is not None and child is not self.history and id(child) not in seen:
                    pending.append(child)
        return needs_copy

    def _exact(self, node: Operation) -> bool:
        """Whether ``node``'s saved versions of the overwritten storage are the ones before the write."""
        now = dict(zip((id(c) for c in self.carriers), self.versions))
        return all(now.get(id(c), v) == v for c, v in node.input_versions())

    def detach_references(self, copy: bool) -> None:
        """Give each referring node a stand-in for the Tensor it saved, carrying that Tensor's history
        from before the write: over a copy of the storage (``copy``), or over the storage itself (the
        node then only routes cotangents through it, and takes the write as seen)."""
        if not self.references:
            return
        copies = {id(c): _clone(c) for c in self.carriers} if copy else None
        if copies is not None:  # decided before any saved Tensor is replaced
            self.stale = {id(node) for node, _ in self.references if not self._exact(node)}
        stand_ins: dict = {}
        stale_stand_ins: dict = {}
        for node, index in self.references:
            saved = node._inputs[index]
            # An out-of-date node keeps the storage itself, so its version check still fails
            stale = id(node) in self.stale
            pool = stale_stand_ins if stale else stand_ins
            stand_in = pool.get(id(saved))
            if stand_in is None:
                if copies is None or stale:
                    stand_in = saved._alias()
                else:
                    stand_in = object.__new__(Tensor)
                    stand_in._init(tuple(copies.get(id(c), c) for c in saved._carriers), saved._layout,
                                   saved._offset, saved._dtype, saved._blocks)
                producer = self.owners[id(saved)]
                stand_in._ctx = producer
                if producer is not None and not type(producer).reads_result:
                    producer._result_state = None  # its result is what the stand-in holds
                pool[id(saved)] = stand_in
            inputs = list(node._inputs)
            inputs[index] = stand_in
            node._inputs = tuple(inputs)
        for node, _ in self.references:
            if copies is None:
                routes_through(node, self.carriers)
            elif not any(n is node for n in self.copied):
                self.copied.append(node)

    def settle(self) -> None:
        """After the write: every node that saved the storage takes it as seen, except those that were
        already out of date, which keep failing at backward."""
        _see_write(self.carriers, self.versions)
        for node in self.copied:
            if id(node) not in self.stale:
                node._versions = versions_of(node._inputs)
        history = self.history
        if history is not None and not type(history).reads_result:
            history._result_state = None  # its result is what the write's ``before`` stands for

    def rebase_views(self) -> None:
        """Saved views of the base show the new values now: they become views of the rebased base
        (their stand-ins keep the old history for the nodes that saw the old values)."""
        for view in self.views:
            _rebase_view(view, self.base)


def _clone(carrier: Any) -> Any:
    """A carrier of the same kind holding a copy of ``carrier``'s whole buffer."""
    kind = kind_of(carrier)
    copied = kind.namespace.asarray(carrier._array, copy=True)
    return kind.cls._adopt(copied, kind.namespace, kind.device, kind)


def _rebase_view(view: Tensor, base: Tensor) -> None:
    """``view`` becomes a fresh recorded view of ``base`` (whose history a write just changed)."""
    if view is base:
        return
    fresh = View()(base, layout=view._layout, offset=view._offset)  # callers record: gradients are on
    node = fresh._ctx
    if node is not None:
        # The base's own node checks the storage; the view's values are the base's, so later
        # recorded writes into the base change nothing this node computes.
        node._result_state = None
        routes_through(node, base._carriers)
    view._ctx = node


def _commit(plan: _Plan, target: Tensor, value: Any, write: Callable[[], None], parts: tuple | None,
            selected: tuple) -> None:
    """Write, then make ``value`` at ``parts`` of the base the base's new history."""
    base = plan.base
    write()
    plan.settle()
    if parts is None:
        parts = (Ellipsis,) if target is base else _unravel(positions_in(base, target), base.shape)
    WrittenValue.record(base, value, parts, selected, plan.history, merge=not plan.references)
    _rebase_view(target, base)
    plan.rebase_views()


def _routing_for(name: str, other: Any, result: Tensor):
    """Which saved Tensors the node of ``result = target op other`` only routes cotangents for."""
    node = result._ctx
    routes_target = name in _ROUTES_ONLY or (
        name in _ROUTES_ONLY_BY_CONSTANT and not (isinstance(other, Tensor) and other._dtype is _FLOAT32))

    def routing(candidate: Operation, index: int) -> bool:
        return candidate is node and index == 0 and routes_target
    return routing


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
        _rebase_view(target, base)  # its old view node saved the storage just written


def _record(target: Tensor, base: Tensor, value: Any, write: Callable[[], None], *,
            parts: tuple | None = None, selected: tuple | None = None,
            routing: Callable[[Operation, int], bool] = lambda node, index: False) -> None:
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
                      "recorded or an update by the write rule (API.md section 4).")
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


_UNWRITTEN = -1   # owner of a position no write took: the base's values from before the first write
_CONSTANT = -2    # owner of a position last written with a constant


class WrittenValue(Operation):
    """A base after writes into it: the cotangent at the positions each written value still holds
    goes to that value (summed where it was broadcast), positions written with a constant pass
    nothing, and the rest goes to the base's values from before the first write (its input 0,
    when it had a history): torch's rule for writes into a result."""

    reads_result = False

    @classmethod
    def record(cls, base: Tensor, value: Any, parts: tuple, selected: tuple, history: Any, merge: bool) -> None:
        node = base._ctx
        if not (merge and node is not None and node.__class__ is cls and not node._released):
            node = cls()
            node._result_layout = base._layout
            node.context["owner"] = np.full(tuple(base._layout.mode_sizes), _UNWRITTEN, dtype=np.int64)
            node.context["writes"] = []
            if history is not None:
                before = base._alias()
                before._ctx = history
                node._inputs = (before,)
                node.context["writes"].append(None)
        owner = node.context["owner"]
        if isinstance(value, Tensor) and value._dtype is _FLOAT32:
            index = len(node._inputs)
            node._inputs = (*node._inputs, value)
            node.context["writes"].append((np.arange(owner.size, dtype=np.int64).reshape(owner.shape)[parts],
                                           tuple(selected)))
        else:
            index = _CONSTANT
        owner[parts] = index
        node._versions = versions_of(node._inputs)
        routes_through(node, base._carriers)
        base._ctx = node
        node._result_state = result_state(base)

    def backward(self, gradient: Tensor) -> tuple:
        kind = kind_of(gradient._carriers[0])
        xp = kind.namespace
        owner = self.context["owner"].reshape(-1)
        flat = xp.reshape(natural(gradient, kind), (-1,))
        grads = []
        for index, (value, write) in enumerate(zip(self._inputs, self.context["writes"])):
            if write is None:  # the base from before the first write: the positions no write took
                kept = owner == _UNWRITTEN
                if kept.all():
                    kept_g = flat
                elif kept.any():
                    kept_g = xp.where(xp.asarray(kept, device=flat.device), flat, xp.zeros_like(flat))
                else:  # overwritten everywhere: still a zero, not None, as torch gives (the graph reaches it)
                    kept_g = xp.zeros_like(flat)
                natural_shape = tuple(self._result_layout.mode_sizes)
                grads.append(cotangent_for(value, _to_rev(xp.reshape(kept_g, natural_shape), value, xp), kind))
                continue
            positions, selected = write
            positions = positions.reshape(-1)
            held = owner[positions] == index  # later writes took the others over
            take_at = np.where(held, positions, 0)
            picked = xp.take(flat, xp.asarray(np.ascontiguousarray(take_at), device=flat.device), axis=0)
            if not held.any():
                picked = xp.zeros_like(picked)
            elif not held.all():
                picked = xp.where(xp.asarray(held, device=flat.device), picked, xp.zeros_like(picked))
            picked = sum_to(xp, xp.reshape(picked, selected), tuple(value._layout.mode_sizes))
            grads.append(cotangent_for(value, _to_rev(picked, value, xp), kind))
        return tuple(grads)


def fill_(self, value):
    """Write ``value`` to every element; recorded or an update by the write rule (API.md section 4)."""
    base = base_of(self)
    mode = recorded(base, value)
    if mode is None:
        _check_write(self, value)
        raise refusal(self, base)
    if mode:
        _record(self, base, value, lambda: _raw_write(self, value))
    else:
        _updated(self, base, lambda: _raw_write(self, value))
    return self


def copy_(self, source):
    """Write ``source`` (broadcast to this shape) into this Tensor; recorded or an update by the
    write rule (API.md section 4)."""
    base = base_of(self)
    source = written_back(source, base)
    mode = recorded(base, source)
    if mode is None:
        _check_write(self, source)
        raise refusal(self, base)
    if not mode:
        _updated(self, base, lambda: _raw_write(self, source))
        return self
    _record(self, base, source, lambda: _raw_write(self, source))
    return self


def add_(self, other):
    """Add ``other`` (broadcast to this shape) into this Tensor; recorded as ``copy_(self + other)``
    or an update by the write rule (API.md section 4)."""
    base = base_of(self)
    other = written_back(other, base)
    mode = recorded(base, other)
    if mode is None:
        _check_write(self, other)
        raise refusal(self, base)
    if not mode:
        _updated(self, base, lambda: _raw_write(self, other, add=True))
        return self
    total = _ops.add(self, other)
    if total.shape != self.shape:
        raise ValueError(f"cannot add a value of shape {other.shape} into a Tensor of shape {self.shape}")
    routing = _routing_for("add", other, total)
    if total._dtype is not self._dtype:
        total = _ops.astype(total, self._dtype)
    _record(self, base, total, lambda: _raw_write(self, total), routing=routing)
    return self
