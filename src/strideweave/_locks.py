"""Striped locks: a lock per object without a lock object per object.

Accumulating into a ``.grad`` or writing into a carrier is a read-modify-write
that two threads may run on the same target at once. Each target hashes to one
of a fixed set of locks, so unrelated targets rarely contend, creating a Tensor
or a carrier costs nothing, and there is no global engine lock.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from typing import Any

_STRIPES = tuple(threading.RLock() for _ in range(64))


def lock_for(target: Any) -> threading.RLock:
    """The lock that guards mutations of ``target``."""
    return _STRIPES[(id(target) >> 4) % len(_STRIPES)]


class locked:
    """Hold the locks of every target at once, taken in one global order so threads never deadlock.

    A small class rather than ``contextlib.contextmanager``: every ``backward``
    commits through it, and a generator-based manager costs a few microseconds.
    """

    __slots__ = ("_indices", "_taken")

    def __init__(self, targets: Iterable[Any]) -> None:
        self._indices = sorted({(id(t) >> 4) % len(_STRIPES) for t in targets})
        self._taken = 0

    def __enter__(self) -> None:
        for index in self._indices:
            _STRIPES[index].acquire()
            self._taken += 1

    def __exit__(self, *exc: Any) -> None:
        for index in reversed(self._indices[:self._taken]):
            _STRIPES[index].release()
        self._taken = 0
