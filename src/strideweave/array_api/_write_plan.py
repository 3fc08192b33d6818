"""What a recorded write overwrites: the base that owns the storage, the positions a view of it
addresses, and the nodes that saved that storage (``_Plan``), which it gives stand-ins through
``Operation`` methods (``replace_input``, ``routes_through``, ``stop_result_check``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..carriers import NumpyCarrier
from ..operation import Operation, accept_recorded_write
from ..ops.views import View
from ..ops.written import WrittenValue
from ..tensors.tensor import Tensor
from ..tensors.values import kind_of

__all__ = ["base_of", "positions_in", "rebase_view"]


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
        if node is None or node.released or not node.inputs() or node.__class__ is WrittenValue:
            return current
        source = node.inputs()[0]  # a node whose result shares its input's storage is a view
        if not _shares(source, current._carriers):
            return current
        current = source


def _offsets(tensor: Tensor) -> np.ndarray:
    """The storage offset of every element of ``tensor``, in natural (C-order) position."""
    span = tensor._offset + tensor._layout.cosize
    ids = NumpyCarrier.from_array(np.arange(max(span, 1), dtype=np.int64))
    return np.asarray(Tensor._make(ids, tensor._layout, tensor._offset)._read_numpy())


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


def _routes_only(node: Operation, index: int, routing: Callable[[Operation, int], bool]) -> bool:
    """Whether ``node`` reads none of the values of its saved input ``index`` (views, rules that keep
    only shapes, and what ``routing`` names for this write)."""
    return node.__class__ is View or type(node).__dict__.get("reads_inputs") is False or routing(node, index)


class _Plan:
    """One recorded write: the storage it overwrites and the nodes that saved that storage."""

    def __init__(self, base: Tensor) -> None:
        self.base = base
        self.carriers = base._carriers
        self.history = base._ctx
        self.versions = tuple(c._version for c in self.carriers)
        self.references: list = []   # (node, index of the saved Tensor over the storage)
        self.owners: dict = {}       # id(saved Tensor) -> the node that produced it (before rebasing)
        self.views: list = []        # saved views of the base: they show the new values afterwards

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
            if id(node) in seen or node.released:
                continue
            seen.add(id(node))
            for index, saved in enumerate(node.inputs()):
                if _shares(saved, self.carriers):
                    self.references.append((node, index))
                    if id(saved) not in self.owners:
                        self.owners[id(saved)] = saved._ctx
                        if saved is not self.base and base_of(saved) is self.base:
                            self.views.append(saved)
                    needs_copy = needs_copy or not _routes_only(node, index, routing)
                child = saved._ctx
                if child is not None and child is not self.history and id(child) not in seen:
                    pending.append(child)
        return needs_copy

    def detach_references(self, copy: bool) -> None:
        """Give each referring node a stand-in for the Tensor it saved, carrying that Tensor's history
        from before the write: over a copy of the storage (``copy``), or over the storage itself (the
        node then only routes cotangents through it, and accepts the write). A node whose saved
        versions were already out of date keeps the storage itself, so it keeps failing at backward."""
        if not self.references:
            return
        copies = {id(c): _clone(c) for c in self.carriers} if copy else {}
        # Decided before any saved Tensor is replaced
        stale = {id(node) for node, _ in self.references if copy and node.stale_in(self.carriers)}
        pools: tuple[dict, dict] = ({}, {})  # stand-ins over the copy, and over the storage itself
        for node, index in self.references:
            saved = node.inputs()[index]
            keeps_storage = not copy or id(node) in stale
            pool = pools[keeps_storage]
            stand_in = pool.get(id(saved))
            if stand_in is None:
                if keeps_storage:
                    stand_in = saved._alias()
                else:
                    stand_in = object.__new__(Tensor)
                    stand_in._init(tuple(copies.get(id(c), c) for c in saved._carriers), saved._layout,
                                   saved._offset, saved._dtype, saved._blocks)
                producer = self.owners[id(saved)]
                stand_in._ctx = producer
                if producer is not None:
                    producer.stop_result_check()  # its result is what the stand-in holds
                pool[id(saved)] = stand_in
            node.replace_input(index, stand_in)
        if not copy:
            for node, _ in self.references:
                node.routes_through(self.carriers)

    def settle(self) -> None:
        """After the write: nodes that route cotangents through the storage accept it; the base's
        history from before it lives on as the write's ``before``."""
        accept_recorded_write(self.carriers, self.versions)
        if self.history is not None:
            self.history.stop_result_check()  # its result is what the write's ``before`` stands for

    def rebase_views(self) -> None:
        """Saved views of the base show the new values now: they become views of the rebased base
        (their stand-ins keep the old history for the nodes that saw the old values)."""
        for view in self.views:
            rebase_view(view, self.base)


def _clone(carrier: Any) -> Any:
    """A carrier of the same kind holding a copy of ``carrier``'s whole buffer."""
    kind = kind_of(carrier)
    copied = kind.namespace.asarray(carrier._array, copy=True)
    return kind.cls._adopt(copied, kind.namespace, kind.device, kind)


def rebase_view(view: Tensor, base: Tensor) -> None:
    """``view`` becomes a fresh recorded view of ``base`` (whose history a write just changed)."""
    if view is base:
        return
    fresh = View()(base, layout=view._layout, offset=view._offset)  # callers record: gradients are on
    node = fresh._ctx
    if node is not None:
        # The base's own node checks the storage; the view's values are the base's, so later
        # recorded writes into the base change nothing this node computes.
        node.stop_result_check()
        node.routes_through(base._carriers)
    view._ctx = node
