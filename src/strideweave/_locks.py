"""Striped locks: a lock per object without a lock object per object.

Accumulating into a ``.grad`` or writing into a carrier is a read-modify-write
that two threads may run on the same target at once. Each target hashes to one
of a fixed set of locks, so unrelated targets rarely contend, creating a Tensor
or a carrier costs nothing, and there is no global engine lock.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import Any, Iterable, Iterator

_STRIPES = tuple(threading.RLock() for _ in range(64))


def lock_for(target: Any) -> threading.RLock:
    """The lock that guards mutations of ``target``."""
    return _STRIPES[(id(target) >> 4) % len(_STRIPES)]


@contextmanager
def locked(targets: Iterable[Any]) -> Iterator[None]:
    """Hold the locks of every target at once, taken in one global order so threads never deadlock."""
    indices = sorted({(id(t) >> 4) % len(_STRIPES) for t in targets})
    taken = []
    try:
        for index in indices:
            _STRIPES[index].acquire()
            taken.append(index)
        yield
    finally:
        for index in reversed(taken):
            _STRIPES[index].release()
