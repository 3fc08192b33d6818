"""ContentWatch: finding writes that bypass a carrier, for libraries that count no versions.

NumPy arrays (and most Array API namespaces) have no version counter of their
own, so a write through a native array the user still holds would go unseen
by the carrier's ``version``.  A carrier that may be written from outside
(``Carrier.watch_external``) holds a watch; the recording of a saved input
and the version check before backward consult it.

``one_call`` marks a public function that records several nodes over the same
buffers (``unstack``'s k views, ``einsum``'s views and product): no code of the
caller runs between those recordings, so each watched buffer is digested once
per call, not once per node.
"""

from __future__ import annotations

import functools
import itertools
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from .._locks import lock_for

__all__ = ["ContentWatch", "one_call"]

_F = TypeVar("_F", bound=Callable[..., Any])


class _CallScope(threading.local):
    """The token of the ``one_call`` function this thread is inside (None outside one)."""

    token: int | None = None


_SCOPE = _CallScope()
#: ``next`` on a count is atomic: two threads never share a token
_tokens = itertools.count(1)


def one_call(function: _F) -> _F:
    """``function`` as one digest scope: a watched buffer it saves several times is digested once.

    For public functions that record several nodes and run no code of the
    caller in between: nothing outside StrideWeave can write a buffer between
    two of those recordings, and a write through StrideWeave bumps the version,
    which takes a new digest. A call nested in another keeps the outer scope.
    """
    @functools.wraps(function)
    def call(*args: Any, **kwargs: Any) -> Any:
        if _SCOPE.token is not None:
            return function(*args, **kwargs)
        _SCOPE.token = next(_tokens)
        try:
            return function(*args, **kwargs)
        finally:
            _SCOPE.token = None
    return call  # type: ignore[return-value]


class ContentWatch:
    """Finds writes that bypass a carrier, for libraries that count no versions (NumPy).

    ``capture`` runs when a forward call saves the carrier: it takes a digest
    of the buffer (``Carrier._digest``: xxh3-128 of its bytes for NumPy, the
    graph name for Dask) and keeps only that, never a copy of the values. If
    the digest changed since the last capture at the same version, something
    wrote through a native alias, so the carrier's version is bumped: graphs
    recorded before the write become stale, exactly as after a public
    mutation. ``verify`` runs in the version check before backward and does
    the same.  (An accidental write that leaves a 128-bit digest unchanged is
    far rarer than an undetected memory error in hardware.) Within one
    ``one_call`` function a capture at the version of the last one is not
    repeated.
    """

    __slots__ = ("digest", "lock", "scope", "verified_epoch", "verified_version", "version")

    #: a new value at the start of every traversal: within one, a buffer is digested once
    epoch = 0
    #: ``next`` on a count is atomic, so concurrent traversals never share an epoch (``epoch += 1`` could
    #: lose one, and a traversal would take as verified a buffer digested before it began)
    _epochs = itertools.count(1)

    def __init__(self, carrier):
        # The carrier's striped lock, looked up once: capture and verify run at every saving call.
        self.lock = lock_for(carrier)
        self.version = None  # the carrier version ``digest`` was taken at; None before the first capture
        self.digest = None
        self.scope = None  # the ``one_call`` token of the last capture (None: outside one)
        self.verified_epoch = self.verified_version = None

    @classmethod
    def begin_traversal(cls):
        cls.epoch = next(cls._epochs)

    def capture(self, carrier):
        # Every saving call digests, even at an unchanged version: a write through a native alias
        # between two saving calls must make only the earlier graph stale (the user guide's "Writes
        # that bypass StrideWeave"), and only a digest taken at the later call tells the two apart. A
        # digest kept per version would let the later graph record the version the write went past,
        # so its backward would fail too. Inside one ``one_call`` function no caller's code ran since
        # a capture there, so one at the same version is the same digest.
        scope = _SCOPE.token
        if scope is not None and self.scope == scope and self.version == carrier._version:
            return
        digest = carrier._digest()
        # The common case, unchanged contents at an unchanged version, needs no lock: the locked path
        # below writes a bump, then the digest, then the version, and this reads the digest before
        # the two versions, so a digest it matches is never paired with a version from before it.
        if digest == self.digest and self.version == carrier._version:
            self.scope = scope
            return
        with self.lock:
            if self.version == carrier._version:
                if digest == self.digest:
                    self.scope = scope
                    return
                carrier._version += 1  # written from outside since the last capture
            self.digest = digest
            self.version = carrier._version
            self.verified_epoch = None
            self.scope = scope

    def verify(self, carrier):
        # Within a traversal a buffer is digested once. Reading the two fields unlocked is safe:
        # they are written after the digest, so a match means one was taken at this version.
        if self.verified_epoch == ContentWatch.epoch and self.verified_version == carrier._version:
            return
        if self.version == carrier._version:
            # Unchanged contents need no lock, read in ``capture``'s order (the digest, then the versions).
            matched = carrier._digest() == self.digest
            version = self.version
            if matched and version == carrier._version:
                self.verified_epoch, self.verified_version = ContentWatch.epoch, version
                return
        with self.lock:
            version = carrier._version
            if self.verified_epoch == ContentWatch.epoch and self.verified_version == version:
                return
            if self.version == version and carrier._digest() != self.digest:
                carrier._version = version = version + 1
            self.verified_epoch, self.verified_version = ContentWatch.epoch, version
