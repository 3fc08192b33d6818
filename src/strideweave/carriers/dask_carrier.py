"""DaskCarrier: a 1-D ``dask.array`` through array-api-compat's dask namespace.

Dask (and distributed) are imported on first use, never by importing this
module.  Everything stays lazy: a read is a Dask slicing / reshape /
transpose / broadcast expression (:func:`._indexing.view_plan`) or a ``take``
with a NumPy index array (Dask splits it per chunk; a Dask index array would
be one more graph input); a write builds a new graph with a slice
``__setitem__``; a scatter-add onto duplicate offsets is a ``take`` of every
contribution followed by a ``sum`` (a reduction, not a loop).  Nothing is
evaluated until :func:`compute` (``sw.compute``, ``Tensor.compute``) or a
value is read on the host (``numpy()``, ``item()``).

Dask arrays are values: ``x[lo:hi] = v`` swaps the graph inside the Python
object ``x``.  The carrier therefore never writes into an Array object that
someone else may hold: each write works on a fresh shallow copy and swaps it
in.  A write a user makes through the object they wrapped changes its graph
name, which the content watch compares instead of the values (comparing
values would compute them).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from . import _indexing
from .base import Carrier, LibraryCarrier
from .generic import finish_read

__all__ = ["DaskCarrier", "compute_arrays", "flatten", "unflatten"]

_OPTIMIZE_LAYERS = 1000
da: Any = None  # dask.array, set on first use (``DaskCarrier.library_globals``)
xp_dask: Any = None  # array_api_compat.dask.array


def _load():
    """Import dask.array and its array-api-compat namespace (ImportError names the extra)."""
    return DaskCarrier._load()[0]


def _check_known_chunks(x):
    """Refuse Dask arrays whose chunk sizes are unknown: layouts need exact extents."""
    if any(math.isnan(c) for dim in x.chunks for c in dim):
        raise ValueError(
            f"DaskCarrier: the Dask array {x.name!r} has unknown chunk sizes (shape {x.shape}); "
            "call x.compute_chunk_sizes() (or build it with known chunks) before wrapping it"
        )


def _shallow(x):
    """A new Array object over the same graph, so a setitem on it leaves ``x`` alone."""
    return da.Array(x.dask, x.name, x.chunks, meta=x._meta)


def _broadcast_block(like, value):
    """``value`` (one element) over a block of ``like``'s shape, a stride-0 view."""
    return np.broadcast_to(value, like.shape)


def _flat_block(blocks):
    # The one block along each contracted trailing axis comes nested in lists (``concatenate=None``).
    while isinstance(blocks, list):
        blocks = blocks[0]
    return blocks.reshape(-1)


def _rows_block(block, like):
    return block.reshape((-1, *like.shape))


def flatten(x):
    """``x`` in C order as 1-D; one blockwise task per chunk when every chunk holds whole rows.

    Dask's own ``reshape`` is a materialised layer (a task per chunk that its
    optimiser never fuses); a chunk of whole rows is a C-ordered run of the
    buffer, so reshaping each block alone gives the same values, and as a
    blockwise layer it fuses into its neighbours. A one-chunk array keeps
    Dask's ``reshape`` (one task either way): see docs/scale-out.md, Limits,
    for what more fusion costs a client that computes one graph after another.
    """
    if x.ndim < 2 or len(x.chunks[0]) == 1 or any(len(c) != 1 for c in x.chunks[1:]):
        return x.reshape((-1,))
    inner = math.prod(x.shape[1:])
    # Contracted trailing axes handed over as lists, not concatenated: Dask's blockwise fusion then
    # takes the layer into its consumers (a concatenating one would be fused on its own, with an alias).
    index = "abcdefghijklmnopqrstuvwxyz"[:x.ndim]
    return da.blockwise(_flat_block, "a", x, index, adjust_chunks={"a": tuple(c * inner for c in x.chunks[0])},
                        dtype=x.dtype, meta=np.empty((0,), dtype=x.dtype), name=_name("flat_block", x.name))


def unflatten(x, shape):
    """The 1-D ``x`` as a C-ordered array of ``shape``, blockwise when each chunk is whole rows (``flatten``)."""
    shape = tuple(shape)
    inner = math.prod(shape[1:])
    if len(shape) < 2 or x.ndim != 1 or len(x.chunks[0]) == 1 or inner == 0 or any(c % inner for c in x.chunks[0]):
        return x.reshape(shape)
    # The trailing axes come from an uninitialised array of their shape, not as new axes: Dask's optimiser
    # drops blocks when it fuses a new axis that a later operation broadcasts (extent 1 against several
    # chunks). Like ``_spread``'s, that array's layer fuses into its consumers.
    index = "abcdefghijklmnopqrstuvwxyz"[:len(shape)]
    like = da.empty(shape[1:], chunks=shape[1:], dtype=x.dtype)
    return da.blockwise(_rows_block, index, x, "a", like, index[1:],
                        adjust_chunks={"a": tuple(c // inner for c in x.chunks[0])}, dtype=x.dtype,
                        meta=np.empty((0,) * len(shape), dtype=x.dtype), name=_name("rows_block", x.name, shape))


def _name(prefix, *parts):
    # Named from the input's graph name (which already tokenises its values) and the plain arguments:
    # Dask's own tokenize of the function and its keyword arguments pickles them, a millisecond a call.
    from dask.base import tokenize

    return f"{prefix}-{tokenize(*parts)}"


_flat_slot = Carrier.__dict__["_array"]  # the base class's storage slot, under the property below


class DaskCarrier(LibraryCarrier):
    """Storage in a lazy 1-D ``dask.array``; ``device`` is ``"cpu"`` (where the chunks live).

    ``_shaped`` is ``(graph name of the buffer, the N-D array it came as)``
    for a wrapped N-D array (its C order is the buffer), else None. A new
    buffer drops it; a setitem through the buffer object renames the buffer,
    which makes it stale (``_shaped_now``).
    """

    __slots__ = ("_shaped",)
    native_methods = True
    writes_in_place = False  # a write swaps in a new graph
    backend = "dask"
    namespace_name = "array_api_compat.dask.array"
    array_name = "a dask.array.Array"
    library_modules = ("dask.array", "array_api_compat.dask.array")
    library_title = "Dask"
    extra = "dask"
    array_type = "Array"
    library_globals = ("da", "xp_dask")
    cpu_only = True  # Dask places chunks on workers, not on devices
    # A product over row chunks is computed in natural (row-major) order, so that it keeps the chunks
    # of its row-major operand: stored column by column it would rechunk across them (ops/linalg.py).
    natural_products = True
    flatten = staticmethod(flatten)
    unflatten = staticmethod(unflatten)

    @property
    def _array(self):
        return _flat_slot.__get__(self)

    @_array.setter
    def _array(self, value):
        _flat_slot.__set__(self, value)
        self._shaped = None

    def _remember_shaped(self, values):
        # A shallow copy: a later setitem on the user's object must not reach the carrier.
        if values.ndim > 1 and int(values.size) == self._size:
            self._array = flatten(values)  # the same values, as a layer Dask fuses (not a reshape's)
            self._shaped = (self._array.name, _shallow(values))

    def _shaped_now(self):
        """The N-D array the buffer was wrapped as, while the buffer still holds its values; else None."""
        shaped = self._shaped
        if shaped is None or shaped[0] != self._array.name:
            return None
        return shaped[1]

    def shaped(self, shape):
        shaped = self._shaped_now()
        if shaped is not None and tuple(shaped.shape) == tuple(shape):
            return shaped
        return unflatten(self._array, shape)

    @classmethod
    def _adopt_shaped(cls, values, xp, device, kind=None):
        """Adopt an N-D result whose C order is the buffer: flattened blockwise, the N-D array kept."""
        out = cls._adopt(flatten(values), xp, device, kind)
        if values.ndim > 1:
            out._shaped = (out._array.name, values)
        return out

    # ----- class hooks ---------------------------------------------------------

    @classmethod
    def segment_sum(cls, xp, values, segments, n):
        # Dask's ``bincount`` counts block by block and adds the blocks' counts (a tree reduction of
        # n-long partial sums), lazily; integers have no weights there and take the generic path.
        cls._library()  # the module global ``da``, when no carrier of it was made yet
        kind = values.dtype.kind
        if kind not in "fc":
            return super().segment_sum(xp, values, segments, n)
        if values.chunks != segments.chunks:
            values = values.rechunk(segments.chunks)
        if kind == "c":
            real = da.bincount(segments, weights=xp.real(values), minlength=n)
            imag = da.bincount(segments, weights=xp.imag(values), minlength=n)
            return xp.astype(real + 1j * imag, values.dtype)
        return xp.astype(da.bincount(segments, weights=values, minlength=n), values.dtype)

    @classmethod
    def _namespace_of(cls, x):
        xp = super()._namespace_of(x)
        _check_known_chunks(x)
        return xp

    @classmethod
    def _prepare_buffer(cls, array1d):
        _check_known_chunks(array1d)
        return _shallow(array1d)

    # dask.array's own constructors: array_api_compat's wrappers add a Python call and a device check
    @classmethod
    def _zeros(cls, xp, n, native, device):
        return da.zeros(n, dtype=native)

    @classmethod
    def _full(cls, xp, n, value, native, device):
        return da.full(n, value, dtype=native)

    @classmethod
    def to_numpy(cls, array):
        """Evaluate ``array`` (on the active client, if any) into a NumPy array."""
        return np.asarray(compute_arrays([array])[0])

    def _from_numpy(self, host):
        return da.from_array(host)

    def _import_foreign(self, values):
        if isinstance(values, da.Array):
            return values
        return Carrier._import_foreign(self, values)

    def _move(self, array, device):
        return array

    # ----- content watch: compare graph names, never values -----------------------

    def _digest(self):
        return self._array.name

    # ----- reads: slicing recipes, else take with a NumPy index ----------------------

    def _gather_rev(self, rs, rt, offset):
        # Building a slicing expression is cheap and lazy: no per-version cache needed.
        shaped = self._shaped_now()
        if shaped is not None:
            plan = _indexing.view_plan(rs, rt, offset, self._size)
            if plan is not None and plan.start == 0 and plan.stop == self._size \
                    and plan.dims == tuple(shaped.shape):
                return finish_read(self._xp, shaped, plan, rs)
        return self._gather_view(rs, rt, offset)

    def _read_through(self, plan, rs):
        if plan.dims is None or plan.stop > self._size:
            return super()._read_through(plan, rs)
        whole = plan.start == 0 and plan.stop == self._size
        a = unflatten(self._array if whole else self._array[plan.start:plan.stop], plan.dims)
        return finish_read(self._xp, a, plan, rs)

    def _index(self, rs, rt, offset):
        return self._cached(("take", rs, rt, offset),
                            lambda: _indexing.flat_index(rs, rt, offset, small=False))

    def _maps(self, rs, rt, offset):
        return self._cached(("maps", rs, rt, offset), lambda: _indexing.write_maps(rs, rt, offset))

    def _spread(self, one, size):
        # In this buffer's chunks, so that a full reduction's gradient meets the values it was
        # reduced from chunk for chunk: no rechunk (two tasks per chunk). A blockwise layer over
        # an uninitialised array of those chunks, not broadcast_to's materialised one, so that
        # Dask's optimiser fuses it into its consumers.
        if self._size != size:
            return da.broadcast_to(one, (size,))
        shape_of = da.empty(size, chunks=self._array.chunks, dtype=one.dtype)
        return da.blockwise(_broadcast_block, "i", shape_of, "i", one, "i", dtype=one.dtype, meta=one._meta,
                            name=_name("broadcast_block", shape_of.name, one.name))

    # ----- writes: a fresh graph swapped in ------------------------------------------

    def placed(self, layout, values):
        """Fresh storage holding ``values`` at ``layout``, built from dense Dask operations.

        A gradient buffer in a leaf's own layout (a row-major design matrix,
        say) would otherwise be a scatter through an index array as large as
        the data. When the layout has a reshape/slice/permute read recipe, the
        inverse recipe (reshape, inverse permute, zero padding) builds the
        buffer chunk by chunk instead (:func:`._indexing.place_through`).
        """
        rs = layout.rev_leaf_shape
        plan = _indexing.place_plan(rs, layout.leaf_stride[::-1], layout.size and layout.is_injective())
        if plan is None:
            return Carrier.placed(self, layout, values)
        if plan.dims is None or plan.index is not None or plan.start or plan.stop != layout.cosize \
                or layout.cosize != layout.size:
            placed = _indexing.place_through(da, values, plan, rs, layout.cosize, self._native)
            return type(self)._adopt(placed, self._xp, self._device, self._kind)
        # No holes: place_through's steps, keeping the N-D array before the flattening reshape, so
        # that reading it back in that shape (or computing it) needs no reshape to N-D again.
        shaped = da.broadcast_to(da.asarray(values, dtype=self._native), rs)
        if plan.shape1 is not None:
            shaped = da.reshape(shaped, tuple(extent for extent in rs if extent != 1))
        if plan.perm is not None:
            shaped = da.transpose(shaped, _indexing.inverse_of(plan)[0])
        out = type(self)._adopt(flatten(shaped), self._xp, self._device, self._kind)
        if shaped.ndim > 1:
            out._shaped = (out._array.name, shaped)
        return out

    def _write_window(self, lo, hi, new):
        buf = _shallow(self._array)
        buf[lo:hi] = new
        self._array = buf


def compute_arrays(arrays):
    """Evaluate Dask arrays together (one graph) on the active client, naming lost workers."""
    import dask

    # Dask's graph optimisation (blockwise fusion) costs time quadratic in the
    # number of graph layers; a very deep graph (thousands of chained
    # operations) computes far sooner unoptimised.
    layers = max(len(a.__dask_graph__().layers) for a in arrays)
    try:
        return dask.compute(*arrays, optimize_graph=layers <= _OPTIMIZE_LAYERS)
    except Exception as exc:
        cause = _lost_worker(exc)
        if cause is None:
            raise
        raise RuntimeError(
            f"Dask computation failed because the cluster lost a worker ({cause}: {exc}); "
            "no Tensor and no .grad was changed, and their lazy values can be computed again"
        ) from exc


def _lost_worker(exc):
    """The name of the lost-worker failure class ``exc`` belongs to, else None."""
    import sys

    if "distributed" not in sys.modules:  # no cluster was ever involved
        return None
    from distributed.comm.core import CommClosedError
    from distributed.scheduler import KilledWorker

    for cls in (KilledWorker, CommClosedError):
        if isinstance(exc, cls):
            return cls.__name__
    return None
