"""``WrittenValue``: the node of a base after recorded in-place writes into it (``array_api/_writes.py``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..autograd.cotangents import cotangent_for
from ..dtypes import DType
from ..operation import Operation, result_state, versions_of
from ..tensors.broadcasting import sum_to
from ..tensors.tensor import Tensor
from ..tensors.values import kind_of
from ._natural import _to_rev, natural

__all__ = ["WrittenValue"]

_FLOAT32 = DType.Float32
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
        """Make ``value``, written at ``parts`` (C-order positions) of ``base``, part of ``base``'s history:
        a new node over ``history`` (the base's node before the write), or, with ``merge``, the base's
        own WrittenValue node extended by one more write. ``selected`` is the written region's shape."""
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
        node.routes_through(base._carriers)  # it only routes cotangents through the base's storage
        base._ctx = node
        node._result_state = result_state(base)

    def backward(self, gradient: Tensor) -> tuple:
        kind = kind_of(gradient._carriers[0])
        xp = kind.namespace
        owner = self.context["owner"].reshape(-1)
        flat = xp.reshape(natural(gradient, kind), (-1,))
        device = getattr(flat, "device", None)  # Dask arrays and traced JAX arrays have none
        grads = []
        for index, (value, write) in enumerate(zip(self._inputs, self.context["writes"])):
            if write is None:  # the base from before the first write: the positions no write took
                kept = owner == _UNWRITTEN
                if kept.all():
                    kept_g = flat
                elif kept.any():
                    kept_g = xp.where(xp.asarray(kept, device=device), flat, xp.zeros_like(flat))
                else:  # overwritten everywhere: still a zero, not None, as torch gives (the graph reaches it)
                    kept_g = xp.zeros_like(flat)
                natural_shape = tuple(self._result_layout.mode_sizes)
                grads.append(cotangent_for(value, _to_rev(xp.reshape(kept_g, natural_shape), value, xp), kind))
                continue
            positions, selected = write
            positions = positions.reshape(-1)
            held = owner[positions] == index  # later writes took the others over
            take_at = np.ascontiguousarray(np.where(held, positions, 0))
            # Dask takes the NumPy index itself, as its carrier's gathers do: with a Dask index of one
            # element over two, dask.array.take reports a wrong shape.
            if kind.cls.backend != "dask":
                take_at = xp.asarray(take_at, device=device)
            picked = xp.take(flat, take_at, axis=0)
            if not held.any():
                picked = xp.zeros_like(picked)
            elif not held.all():
                picked = xp.where(xp.asarray(held, device=device), picked, xp.zeros_like(picked))
            picked = sum_to(xp, xp.reshape(picked, selected), tuple(value._layout.mode_sizes))
            grads.append(cotangent_for(value, _to_rev(picked, value, xp), kind))
        return tuple(grads)
