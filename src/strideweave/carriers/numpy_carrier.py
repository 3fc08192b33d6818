"""NumpyCarrier: a 1-D ``numpy.ndarray``.

Fast paths (why): numpy exposes raw strides, so *every* layout can be read as
one ``as_strided`` view (no copy, no index array) and every injective layout
can be written or accumulated through a writable strided view in a single
ufunc call.  Only non-injective writes need index arrays (``buf[idx] = v``,
``np.add.at`` so that duplicates accumulate, as ``segment_sum`` does).
"""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import as_strided
from xxhash import xxh3_128_intdigest

from ..dtypes import STORED_DTYPES
from . import _indexing
from .base import LibraryCarrier, _checked_offset
from .generic import _SCALARS

__all__ = ["NumpyCarrier"]



class NumpyCarrier(LibraryCarrier):
    """Storage in a 1-D numpy array on the CPU (``device == "cpu"``)."""

    __slots__ = ()
    native_methods = True
    backend = "numpy"
    namespace_name = "numpy"
    array_name = "a numpy.ndarray"
    library_modules = ("numpy", "array_api_compat.numpy")
    library_title = "NumPy"
    array_type = "ndarray"
    cpu_only = True

    # NumPy counts no versions: writes through a wrapped array are found by
    # digesting contents (see ContentWatch), bitwise so NaN equals itself.
    def _writable(self):
        # A read-only view of writable memory can still change under us: every array
        # up the base chain must be read-only, ending in nothing or immutable bytes.
        # (as_strided views hold their source through a helper object with its own ``base``.)
        array = self._array
        while array is not None:
            if isinstance(array, bytes):
                return False
            if isinstance(array, np.ndarray) and array.flags.writeable:
                return True
            array = getattr(array, "base", True)  # an unknown buffer object: assume writable
            if array is True:
                return True
        return False

    @staticmethod
    def _accumulate(into, other):
        return np.add(into, other, out=into)

    @staticmethod
    def _fresh_copy(xp, array):
        return array.copy()  # a C-ordered new array, as ``asarray(copy=True)`` makes, without its wrapper

    @staticmethod
    def _copied(source, result):
        # A view's base is ``source`` or what ``source`` views (NumPy collapses chains of views); a
        # copy's is the new array. Anything else is asked of the bounds, where "may" errs towards shared.
        base = result.base
        if base is source or (base is not None and base is source.base):
            return False
        return not np.may_share_memory(source, result)

    spreads_alone = True

    @staticmethod
    def _spread(one, size):
        # ``np.broadcast_to`` is Python code building an iterator (about 4 us); a read-only stride-0
        # ndarray over ``one``'s element is the same view (about 1 us). A full reduction's gradient.
        view = np.ndarray((size,), one.dtype, one, 0, (0,))
        view.flags.writeable = False
        return view

    def _digest(self):
        # The buffer's memory itself, no copy kept: xxh3 reads it once per capture, 2-3x faster
        # than comparing with a snapshot from 64k elements up, ~0.1 us slower for tiny buffers.
        a = self._array
        try:
            return xxh3_128_intdigest(a)
        except ValueError:  # a strided buffer: digest a contiguous copy, dropped at once
            # numpy declares ndarray's buffer protocol to type checkers only from Python 3.12
            return xxh3_128_intdigest(np.ascontiguousarray(a))  # type: ignore[arg-type]

    @classmethod
    def segment_sum(cls, xp, values, segments, n):
        # ``np.add.at`` into zeros: one pass in C since NumPy 1.25, faster than ``bincount`` with
        # weights (which sums in float64, over an n-long float64 array, and then needs a cast).
        out = np.zeros(n, dtype=values.dtype)
        np.add.at(out, segments, values)
        return out

    # ----- class hooks ---------------------------------------------------------

    # numpy's own constructors: array_api_compat's wrappers add a Python call and a device check
    @classmethod
    def _zeros(cls, xp, n, native, device):
        return np.zeros(n, dtype=native)

    @classmethod
    def _full(cls, xp, n, value, native, device):
        values = np.empty(n, dtype=native)  # ``np.full`` is these two steps through Python code
        try:
            values.fill(value)
        except (TypeError, ValueError):  # a value ``fill`` refuses (NaN into integers): np.full's casting
            return np.full(n, value, dtype=native)
        return values

    @classmethod
    def _native_dtype_in(cls, xp, dtype):
        return _NATIVE[dtype]

    @classmethod
    def to_numpy(cls, array):
        return np.asarray(array)

    def _from_numpy(self, host):
        return host

    def _import_foreign(self, values):
        # numpy reads torch CPU tensors, JAX arrays and DLPack producers itself.
        try:
            return np.from_dlpack(values)
        except Exception:
            return np.asarray(values)

    def _move(self, array, device):
        return array

    # ----- reads ---------------------------------------------------------------

    def gather_rev(self, layout, offset=0):
        if not (offset.__class__ is int and offset >= 0 and offset + layout.cosize <= self._size):
            offset = _checked_offset(self, layout, offset)
        rs = layout.rev_leaf_shape
        if layout.is_canonical():
            if len(rs) == 1 and offset == 0 and rs[0] == self._size:
                return self._array
            return self._array[offset:offset + layout.size].reshape(rs)
        return self._strided(rs, layout.leaf_stride[::-1], offset, False)

    def gather(self, layout, offset=0):
        self.watch_external()  # a canonical layout gives a writable view of the buffer
        offset, rs = self._checked(layout, offset)
        if layout.is_canonical():
            return self._array[offset:offset + layout.size].reshape(rs).T
        return self._strided(layout.leaf_shape, layout.leaf_stride, offset, False)

    def _strided(self, shape, strides, offset, writeable):
        """A view of the buffer with element strides ``strides`` (read-only unless asked)."""
        buf = self._array
        step = buf.strides[0]  # bytes per element step; the buffer itself may be strided
        if offset >= buf.shape[0]:  # size-0 layout at the very end of the buffer
            return np.zeros(shape, dtype=buf.dtype)
        if buf.flags.c_contiguous:
            # The ndarray constructor over the buffer is ~10x cheaper than
            # as_strided (which round-trips through __array_interface__);
            # bounds were checked by the caller.
            view = np.ndarray(shape, buf.dtype, buf, offset * step, tuple(s * step for s in strides))
            if not writeable:
                view.flags.writeable = False
            return view
        base = buf[offset:] if offset else buf
        return as_strided(base, shape, tuple(s * step for s in strides), writeable=writeable)

    def _gather_rev(self, rs, rt, offset):
        return self._strided(rs, rt, offset, False)

    # ----- writes --------------------------------------------------------------

    def _flat_idx(self, rs, rt, offset):
        return self._cached(("idx", rs, rt, offset), lambda: _indexing.flat_index(rs, rt, offset))

    def _flat_values(self, vals, rs):
        if isinstance(vals, _SCALARS):
            return vals
        flat = np.broadcast_to(vals, rs).reshape(-1)
        # np.add.at / fancy setitem read values while writing: never let them alias the buffer
        return flat.copy() if np.may_share_memory(flat, self._array) else flat

    def _set_rev(self, rs, rt, offset, vals, injective, canonical):
        if injective:
            # numpy detects overlap between `vals` and the target and buffers it
            self._strided(rs, rt, offset, True)[...] = vals
        else:
            self._array[self._flat_idx(rs, rt, offset)] = self._flat_values(vals, rs)

    def _add_rev(self, rs, rt, offset, vals, injective, canonical):
        if injective:
            view = self._strided(rs, rt, offset, True)
            np.add(view, vals, out=view, casting="unsafe")  # scalars follow setitem's cast
        else:
            np.add.at(self._array, self._flat_idx(rs, rt, offset), self._flat_values(vals, rs))

    def _sum_axes(self, vals, rs, axes):
        if isinstance(vals, _SCALARS):
            vals = np.asarray(vals, dtype=self._native)
        return np.broadcast_to(vals, rs).sum(axis=axes, dtype=self._native)


_NATIVE = {d: np.dtype(d.name) for d in STORED_DTYPES}  # SimpleDType -> numpy dtype
