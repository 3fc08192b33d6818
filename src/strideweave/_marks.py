"""Marks on objects, by identity, that die with the object (unit cotangents, owned buffers, gradients).

A ``WeakValueDictionary`` would do, but its methods are Python code and
these marks are set and read once per operation on the hot path. Here a
mark is one plain dict entry, ``id -> weakref.ref``; an entry whose object
died (its id may already name a newer object) fails the identity check,
and dead entries are swept when the dict has doubled since the last sweep.
"""

from __future__ import annotations

import weakref
from typing import Any

__all__ = ["IdentityMarks", "is_unit", "mark_unit", "unit_alias"]


class IdentityMarks:
    """A set of objects compared by identity and held weakly."""

    __slots__ = ("_refs", "_sweep_at")

    def __init__(self) -> None:
        self._refs: dict[int, weakref.ref] = {}
        self._sweep_at = 1024

    def add(self, obj: Any) -> Any:
        """Mark ``obj`` (nothing happens for an object that cannot be weakly referenced)."""
        refs = self._refs
        if len(refs) >= self._sweep_at:
            self._sweep()
        try:
            refs[id(obj)] = weakref.ref(obj)
        except TypeError:
            pass
        return obj

    def add_all(self, objs: list) -> None:
        """Mark every object of ``objs``: ``add`` in one call, for a loop on the hot path."""
        refs = self._refs
        if len(refs) + len(objs) > self._sweep_at:  # (swept once, before: the dict doubles at most)
            self._sweep()
        ref = weakref.ref
        for obj in objs:
            try:
                refs[id(obj)] = ref(obj)
            except TypeError:  # (as in ``add``)
                continue

    def __contains__(self, obj: Any) -> bool:
        ref = self._refs.get(id(obj))
        return ref is not None and ref() is obj

    def claim(self, obj: Any) -> bool:
        """Whether ``obj`` was marked; the mark is removed either way."""
        ref = self._refs.pop(id(obj), None)
        return ref is not None and ref() is obj

    def __len__(self) -> int:
        return sum(1 for ref in self._refs.copy().values() if ref() is not None)

    def _sweep(self) -> None:
        refs = self._refs
        # A snapshot, since other threads may mark meanwhile: dict.copy() copies in one step, where
        # list(refs.items()) allocates a tuple per entry and a collection it triggers can switch threads.
        for key, ref in refs.copy().items():
            if ref() is None and refs.get(key) is ref:
                popped = refs.pop(key, None)
                if popped is not None and popped is not ref:
                    # Another thread marked a new object under the dead one's id in between: keep its mark.
                    refs.setdefault(key, popped)
        self._sweep_at = max(1024, 2 * len(refs))


#: Native cotangent arrays known to hold only ones (the unit flag: backward rules
#: skip multiplying by them, see ``autograd.cotangents.times``).
_UNIT_ARRAYS = IdentityMarks()
# Its dict, read in place by the two tests below: they run several times per backward node.
_UNIT_REFS = _UNIT_ARRAYS._refs


def is_unit(array: Any) -> bool:
    """Whether ``array`` is a cotangent flagged as all ones."""
    ref = _UNIT_REFS.get(id(array))
    return ref is not None and ref() is array


def mark_unit(array: Any) -> Any:
    """Flag ``array`` as all ones (an array that cannot be weakly referenced stays unflagged)."""
    return _UNIT_ARRAYS.add(array)


def unit_alias(source: Any, result: Any) -> Any:
    """``result`` (a reshape or view of ``source``) inherits ``source``'s unit flag."""
    if result is not source:
        ref = _UNIT_REFS.get(id(source))
        if ref is not None and ref() is source:
            return _UNIT_ARRAYS.add(result)
    return result
