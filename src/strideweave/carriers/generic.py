"""The generic implementation of a carrier's data paths, written over ``xp`` only.

Every backend falls back on these hooks (``Carrier`` inherits them) and
overrides them with its fast paths (numpy and torch ``as_strided``, JAX
``.at[]``):

* gather: a reshape + slice + permute + broadcast recipe
  (:func:`._indexing.view_plan`) when the strides allow it; otherwise ``take``
  with an index array computed by numpy and cached on the carrier;
* scatter / scatter_add: the Array API has no scatter and no setitem with
  index arrays, so writes rebuild the touched window with ``take`` + ``where``
  (+ ``sum`` over duplicate slots for scatter_add) and store it with a slice
  setitem, or swap the buffer when the namespace is immutable;
* values: copies, comparisons and foreign-array imports through ``xp`` and
  DLPack;
* segment_sum: the scatter-add every gather's backward uses (``out[s]`` is the
  sum of the values whose segment is ``s``), from the standard's own sort,
  comparisons and searchsorted (:func:`sorted_segment_sum`).

The hooks read the carrier's slots (``_array``, ``_xp``, ``_native``, ...)
and its ``_cached``; they validate nothing (the public methods of
:class:`.base.Carrier` have done that).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np
from xxhash import xxh3_128_intdigest

from . import _indexing

__all__ = ["GenericHooks", "finish_read", "read_through", "sorted_segment_sum"]

_SCALARS = (bool, int, float, complex)


class GenericHooks:
    """The xp fallback of every data-path hook of a carrier (see the module docstring)."""

    __slots__ = ()

    if TYPE_CHECKING:
        # Carrier mixes these hooks in; it declares the slots and methods below.
        _array: Any
        _xp: Any
        _device: Any
        _native: Any
        _size: int
        _version: int
        _last_gather: tuple[tuple[Any, Any, Any, int], Any] | None

        @classmethod
        def to_numpy(cls, array: Any) -> Any: ...
        @classmethod
        def _device_of(cls, x: Any) -> Any: ...
        def _cached(self, key: Any, make: Callable[[], Any]) -> Any: ...

    # ----- values ---------------------------------------------------------------

    @staticmethod
    def _accumulate(into, other):
        """``into + other``, written into ``into`` where the library allows in-place updates.

        ``into`` is a gradient buffer the caller owns outright (a backward rule
        allocated it and nothing else refers to it); immutable libraries (JAX,
        array-api-strict, Dask) return a new array.
        """
        return into + other

    @staticmethod
    def _fresh_copy(xp, array):
        """A new array with ``array``'s values that nothing else refers to (a detached gradient's storage)."""
        return xp.asarray(array, copy=True)

    @staticmethod
    def _copied(source, result):
        """Whether ``result``, a reshape of ``source``, is a new array rather than a view of it.

        False where the library cannot tell cheaply: the caller then treats it as shared.
        """
        return False

    def _digest(self):
        """A token that changes when the buffer's contents do (see :class:`.watch.ContentWatch`).

        The 128-bit xxh3 digest of the buffer's bytes, read through a host
        view (a device buffer is copied to the host for the digest and the copy
        dropped).  Bitwise, so NaN matches itself.
        """
        host = self.to_numpy(self._array)
        if not host.flags.c_contiguous:
            host = np.ascontiguousarray(host)
        return xxh3_128_intdigest(host)

    def _import_foreign(self, values):
        """Convert a foreign array (or nested sequence) onto this carrier's namespace/device."""
        xp = self._xp
        try:
            out = xp.from_dlpack(values)
        except Exception:
            out = None
        if out is None:
            if hasattr(values, "__dlpack__") or hasattr(values, "__array__"):
                try:
                    host = np.from_dlpack(values)
                except Exception:
                    host = np.asarray(values)
            else:
                host = np.asarray(values)
            out = self._from_numpy(np.ascontiguousarray(host))
        if self._device_of(out) != self._device:
            out = self._move(out, self._device)
        return out

    def _from_numpy(self, host):
        return self._xp.asarray(host, device=self._device)

    def _move(self, array, device):
        import array_api_compat
        return array_api_compat.to_device(array, device)

    @classmethod
    def segment_sum(cls, xp, values, segments, n):
        """A 1-D array of ``n``: element ``s`` is the sum of ``values[i]`` over every ``i`` with
        ``segments[i] == s`` (zero where none), so duplicate segments accumulate.

        ``values`` and ``segments`` are 1-D native arrays of ``xp`` of one length; ``segments``
        holds integers in ``[0, n)`` (not checked). Time and memory grow as ``len(values) + n``
        (times a log where the library has no scatter-add); nothing of ``len(values) * n``.
        """
        return sorted_segment_sum(xp, values, segments, n)

    # ----- reads and writes -----------------------------------------------------

    def _full_values(self, vals, rs):
        """``vals`` broadcast to ``rs`` as a native array (scalars included)."""
        xp = self._xp
        if isinstance(vals, _SCALARS):
            vals = xp.asarray(vals, dtype=self._native, device=self._device)
        if tuple(vals.shape) != rs:
            vals = xp.broadcast_to(vals, rs)
        return vals

    def _spread(self, one, size):
        """``one`` (a one-element 1-D array) for each of this buffer's ``size`` elements, a stride-0 view
        laid out like the buffer (a chunked library: in its chunks)."""
        return self._xp.broadcast_to(one, (size,))

    def _sum_axes(self, vals, rs, axes):
        vals = self._full_values(vals, rs)
        return self._xp.sum(vals, axis=axes, dtype=self._native)

    def _index(self, rs, rt, offset):
        """Cached native flat index array (C order of the rev array)."""
        return self._cached(("take", rs, rt, offset), lambda: self._from_numpy(
            _indexing.flat_index(rs, rt, offset, small=self._small_index())))

    def _small_index(self):
        return False

    def _gather_rev(self, rs, rt, offset):
        # Backends without strided views copy on every non-canonical read; a
        # backward pass reads the same saved input several times, so keep the
        # last read (keyed by version: any write invalidates it).
        key = (rs, rt, offset, self._version)
        last = self._last_gather
        if last is not None and last[0] == key:
            return last[1]
        values = self._gather_view(rs, rt, offset)
        self._last_gather = (key, values)  # type: ignore[misc]  # a slot of Carrier, which mixes this in
        return values

    def _gather_view(self, rs, rt, offset):
        plan = _indexing.view_plan(rs, rt, offset, self._size)
        if plan is None:
            # The recipe reads whole rows of the outermost stride; when the buffer
            # ends inside the last row, padding it is still far cheaper than `take`.
            room = offset + 1 + sum(e * s for e, s in zip(rs, rt))
            plan = _indexing.view_plan(rs, rt, offset, room)
            if plan is None:
                return self._xp.reshape(self._xp.take(self._array, self._index(rs, rt, offset), axis=0), rs)
        return self._read_through(plan, rs)

    def _read_through(self, plan, rs):
        """The values ``plan`` reads from the buffer (padded with zeros where it runs past the end)."""
        return read_through(self._xp, self._array, plan, rs, self._size, self._native, self._device)

    def _maps(self, rs, rt, offset):
        def make():
            lo, hi, last, mask, every, k = _indexing.write_maps(rs, rt, offset)
            return (lo, hi, self._from_numpy(last), self._from_numpy(mask),
                    self._from_numpy(every), k)
        return self._cached(("maps", rs, rt, offset), make)

    def _flat_ext(self, vals, rs):
        """Flattened values plus one trailing zero (the sentinel target)."""
        xp = self._xp
        flat = xp.reshape(self._full_values(vals, rs), (-1,))
        zero = xp.zeros(1, dtype=self._native, device=self._device)
        return xp.concat([flat, zero])

    def _set_rev(self, rs, rt, offset, vals, injective, canonical):
        xp = self._xp
        if canonical:
            new = xp.reshape(self._full_values(vals, rs), (-1,))
            self._write_window(offset, offset + new.shape[0], new)
            return
        lo, hi, last, mask, _, _ = self._maps(rs, rt, offset)
        picked = xp.take(self._flat_ext(vals, rs), last, axis=0)
        self._write_window(lo, hi, xp.where(mask, picked, self._array[lo:hi]))

    def _add_rev(self, rs, rt, offset, vals, injective, canonical):
        xp = self._xp
        if canonical:
            size = 1
            for e in rs:
                size *= e
            window = self._array[offset:offset + size]
            self._write_window(offset, offset + size,
                               window + xp.reshape(self._full_values(vals, rs), (-1,)))
            return
        lo, hi, _, mask, every, k = self._maps(rs, rt, offset)
        contrib = xp.take(self._flat_ext(vals, rs), every, axis=0)
        if k > 1:
            contrib = xp.sum(xp.reshape(contrib, (hi - lo, k)), axis=1, dtype=self._native)
        window = self._array[lo:hi]
        # `where` keeps untouched slots bit-exact (x + 0 would turn -0.0 into 0.0)
        self._write_window(lo, hi, xp.where(mask, window + contrib, window))

    def _write_window(self, lo, hi, new):
        """Store ``new`` into ``buf[lo:hi]``; swap the buffer if setitem is unsupported."""
        buf = self._array
        try:
            buf[lo:hi] = new
            return
        except (TypeError, ValueError, NotImplementedError, AttributeError, IndexError):
            pass
        xp = self._xp
        self._array = xp.concat([buf[:lo], new, buf[hi:]])


def read_through(xp, buffer, plan, rs, size, native, device):
    """Apply a ``ViewPlan`` to a 1-D ``buffer`` of ``size`` elements: a rev array of shape ``rs``."""
    if plan.stop > size:
        buffer = xp.concat([buffer, xp.zeros(plan.stop - size, dtype=native, device=device)])
    a = buffer[plan.start:plan.stop]
    if plan.dims is not None:
        a = xp.reshape(a, plan.dims)
    return finish_read(xp, a, plan, rs)


def finish_read(xp, a, plan, rs):
    """``plan``'s steps after the reshape to ``plan.dims``, on ``a`` of that shape: a rev array of shape ``rs``."""
    if plan.index is not None:
        a = a[plan.index]
    if plan.perm is not None:
        a = xp.permute_dims(a, plan.perm)
    if plan.shape1 is not None:
        a = xp.reshape(a, plan.shape1)
    if plan.bcast:
        a = xp.broadcast_to(a, rs)
    return a


def sorted_segment_sum(xp, values, segments, n):
    """``segment_sum`` from the standard's functions alone, in O((k + n) log(k + n)) for k values.

    The values are sorted by segment (a stable argsort), each run of equal
    segments is summed by a segmented doubling scan (after the pass with step
    ``d`` every position holds the sum of the last ``2 d`` values of its run,
    so ``log2`` of the longest run passes suffice), and each segment's total,
    at the end of its run, is found by ``searchsorted``. Prefix sums with
    differences would be one pass, but a difference of two large prefix sums
    loses a small segment's digits; the scan adds only values of one segment.
    """
    device = getattr(values, "device", None)
    k = values.shape[0]
    if k == 0 or n == 0:
        return xp.zeros(n, dtype=values.dtype, device=device)
    order = xp.argsort(segments, stable=True)
    ids = xp.take(segments, order, axis=0)
    sums = xp.take(values, order, axis=0)
    step = 1
    while step < k:
        same = ids[step:] == ids[:-step]
        if not bool(xp.any(same)):  # every run is at most ``step`` long: each end holds its run's sum
            break
        earlier = sums[:-step]
        sums = xp.concat([sums[:step], sums[step:] + xp.where(same, earlier, xp.zeros_like(earlier))])
        step *= 2
    targets = xp.arange(n, dtype=ids.dtype, device=device)
    ends = xp.searchsorted(ids, targets, side="right")
    present = ends > xp.searchsorted(ids, targets, side="left")
    last = xp.take(sums, xp.clip(ends - 1, min=0), axis=0)
    return xp.where(present, last, xp.zeros_like(last))
