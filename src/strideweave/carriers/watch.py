"""ContentWatch: finding writes that bypass a carrier, for libraries that count no versions.

NumPy arrays (and most Array API namespaces) have no version counter of their
own, so a write through a native array the user still holds would go unseen
by the carrier's ``version``.  A carrier that may be written from outside
(``Carrier.watch_external``) holds a watch; the recording of a saved input
and the version check before backward consult it.
"""

from __future__ import annotations

import itertools

from .._locks import lock_for

__all__ = ["ContentWatch"]


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
    far rarer than an undetected memory error in hardware.)
    """

    __slots__ = ("digest", "lock", "verified_epoch", "verified_version", "version")

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
        self.verified_epoch = self.verified_version = None

    @classmethod
    def begin_traversal(cls):
        cls.epoch = next(cls._epochs)

    def capture(self, carrier):
        # Every saving call digests, even at an unchanged version: a write through a native alias
        # between two saving calls must make only the earlier graph stale (the user guide's "Writes
        # that bypass StrideWeave"), and only a digest taken at the later call tells the two apart. A
        # digest kept per version would let the later graph record the version the write went past,
        # so its backward would fail too.
        with self.lock:
            digest = carrier._digest()
            if self.version == carrier._version:
                if digest == self.digest:
                    return
                carrier._version += 1  # written from outside since the last capture
            self.digest = digest
            self.version = carrier._version
            self.verified_epoch = None

    def verify(self, carrier):
        # Within a traversal a buffer is digested once. Reading the two fields unlocked is safe:
        # they are written after the digest, so a match means one was taken at this version.
        if self.verified_epoch == ContentWatch.epoch and self.verified_version == carrier._version:
            return
        with self.lock:
            version = carrier._version
            if self.verified_epoch == ContentWatch.epoch and self.verified_version == version:
                return
            if self.version == version and carrier._digest() != self.digest:
                carrier._version = version = version + 1
            self.verified_epoch, self.verified_version = ContentWatch.epoch, version
