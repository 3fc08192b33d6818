"""The Carrier abstract base and the generic Array API implementation.

A carrier is a flat, 1-D, typed buffer from one Array API namespace on one
device, plus a ``version`` counter bumped by every successful public mutation
(``scatter*``, ``replace``, ``bump_version``) and by nothing else.

Tensors read and write carriers through layouts.  Internally everything is a
*rev array*: the layout's leaf modes in reverse order, so canonical storage is
exactly ``reshape(buf[offset:offset + size], reversed(leaf_shape))``.  The
public ``gather`` / ``scatter`` / ``scatter_add`` take and return natural leaf
order and permute.

This module holds the one implementation written over ``xp`` (the carrier's
namespace) that every backend falls back on:

* gather: canonical -> reshape; otherwise a reshape + slice + permute +
  broadcast recipe (:func:`._indexing.view_plan`) when the strides allow it;
  otherwise ``take`` with an index array computed by numpy and cached on the
  carrier;
* scatter / scatter_add: the Array API has no scatter and no setitem with
  index arrays, so writes rebuild the touched window with ``take`` + ``where``
  (+ ``sum`` over duplicate slots for scatter_add) and store it with a slice
  setitem, or swap the buffer when the namespace is immutable.

Backends override the ``_gather_rev`` / ``_set_rev`` / ``_add_rev`` hooks with
their fast paths (numpy and torch ``as_strided``, JAX ``.at[]``).
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from .._locks import lock_for
from .._marks import IdentityMarks
from ..dtypes import SIMPLE_DTYPES, STORED_DTYPES, SimpleDType, _scalar_fits
from . import _indexing

__all__ = ["Carrier"]

_CACHE_LIMIT = 16  # native index arrays kept per carrier
_SCALARS = (bool, int, float, complex)


def _checked_offset(carrier, layout, offset):
    """Slow path of the bounds check: normalise ``offset`` or raise naming both sides."""
    if isinstance(offset, bool):
        raise TypeError(f"offset must be an int, got {offset!r}")
    try:
        offset = operator.index(offset)
    except TypeError:
        raise TypeError(f"offset must be an int, got {offset!r} ({type(offset).__name__})") from None
    if offset < 0:
        raise ValueError(f"offset must be >= 0, got {offset}")
    if offset + layout.cosize <= carrier._size:
        return offset
    raise ValueError(
        f"layout {layout} (cosize {layout.cosize}) at offset {offset} needs "
        f"{offset + layout.cosize} elements, but the {type(carrier).__name__} holds "
        f"only {carrier._size}"
    )


#: Native cotangent arrays known to hold only ones (the unit flag: backward rules
#: skip multiplying by them, see ``ops._support.times``).
_UNIT_ARRAYS = IdentityMarks()


def is_unit(array: Any) -> bool:
    """Whether ``array`` is a cotangent flagged as all ones."""
    return array in _UNIT_ARRAYS


def mark_unit(array: Any) -> Any:
    """Flag ``array`` as all ones (an array that cannot be weakly referenced stays unflagged)."""
    return _UNIT_ARRAYS.add(array)


def unit_alias(source: Any, result: Any) -> Any:
    """``result`` (a reshape or view of ``source``) inherits ``source``'s unit flag."""
    return mark_unit(result) if result is not source and is_unit(source) else result


class ContentWatch:
    """Finds writes that bypass a carrier, for libraries that count no versions (NumPy).

    ``capture`` runs when a forward call saves the carrier: it keeps a copy of
    the values (reusing its buffer). If the values changed since the last
    capture at the same version, something wrote through a native alias, so
    the carrier's version is bumped: graphs recorded before the write become
    stale, exactly as after a public mutation. ``verify`` runs in the version
    check before backward and does the same.
    """

    __slots__ = ("version", "values", "verified_epoch", "verified_version")

    #: bumped at the start of every traversal: within one, a buffer is compared once
    epoch = 0

    def __init__(self):
        self.version = None  # the carrier version ``values`` were taken at; None before the first capture
        self.values = None
        self.verified_epoch = self.verified_version = None

    @classmethod
    def begin_traversal(cls):
        cls.epoch += 1

    def capture(self, carrier):
        with lock_for(carrier):
            if self.version == carrier._version:
                if carrier._equal_values(self.values):
                    return
                carrier._version += 1  # written from outside since the last capture
            self.values = carrier._copy_values(self.values)
            self.version = carrier._version
            self.verified_epoch = None

    def verify(self, carrier):
        # Within a traversal a buffer is compared once. Reading the two fields unlocked is safe:
        # they are written after the comparison, so a match means one was made at this version.
        if self.verified_epoch == ContentWatch.epoch and self.verified_version == carrier._version:
            return
        with lock_for(carrier):
            version = carrier._version
            if self.verified_epoch == ContentWatch.epoch and self.verified_version == version:
                return
            if self.version == version and not carrier._equal_values(self.values):
                carrier._version = version = version + 1
            self.verified_epoch, self.verified_version = ContentWatch.epoch, version


class Carrier:
    """Abstract flat 1-D storage buffer.  Build with ``allocate`` / ``from_array``.

    Attributes (read-only): ``array`` (the native 1-D buffer), ``namespace``
    (Array API namespace), ``device``, ``dtype`` (:class:`SimpleDType`),
    ``size``, ``version``.  Gathered arrays may be views of the buffer: treat
    them as read-only (numpy views of non-canonical layouts are marked so).
    """

    __slots__ = ("_array", "_xp", "_device", "_dtype", "_native", "_size", "_kind", "_last_gather",
                 "_version", "_cache", "_watch", "__weakref__")

    #: name used in error messages and by ``resolve``; set by subclasses
    backend = "abstract"
    #: whether native arrays have a ``.reshape`` method (cheaper than ``xp.reshape``)
    native_methods = False
    #: whether N-D results are kept unflattened (``_adopt_shaped``), for libraries whose reshape copies
    keeps_shape = False
    #: whether native arrays never change once made, so a flag on one (``mark_unit``) stays true
    immutable_arrays = False

    # ----- construction ---------------------------------------------------

    def __init__(self, array1d):
        """Wrap a 1-D native array without copying (same as ``from_array``)."""
        cls = type(self)
        if cls is Carrier:
            raise TypeError("Carrier is abstract; use NumpyCarrier, TorchCarrier, JaxCarrier or ArrayAPICarrier")
        xp = cls._namespace_of(array1d)  # TypeError for foreign objects
        if getattr(array1d, "ndim", None) != 1:
            raise TypeError(
                f"{cls.__name__}.from_array expects a 1-D array, got shape "
                f"{tuple(getattr(array1d, 'shape', ()))}"
            )
        dtype = cls._sw_dtype_in(xp, array1d.dtype)
        self._init(cls._prepare_buffer(array1d), xp, cls._device_of(array1d), dtype)

    def _init(self, array, xp, device, dtype):
        self._array = array
        self._xp = xp
        self._device = device
        self._dtype = dtype
        self._native = self._native_dtype_in(xp, dtype)
        self._size = int(array.shape[0])
        self._version = 0
        self._cache = None
        self._kind = None
        self._last_gather = None
        self._watch = None

    @classmethod
    def _adopt(cls, array1d, xp, device, kind=None):
        """Wrap a 1-D array an operation just computed on this kind (hot path: no checks).

        ``kind``, when the caller has it, is this carrier's CarrierKind.
        """
        self = object.__new__(cls)
        self._array = array1d
        self._xp = xp
        self._device = device
        native = array1d.dtype
        # Per-namespace table, so dtypes of different libraries are never compared.
        table = _FROM_NATIVE.get(id(xp))
        try:
            dtype = table[native]
        except (KeyError, TypeError):
            dtype = cls._sw_dtype_in(xp, native)
        self._dtype = dtype
        self._native = native
        shape = array1d.shape
        self._size = shape[0] if shape else 1  # a 0-d array: one value (``_adopt_shaped``)
        self._version = 0
        self._cache = None
        self._kind = kind
        self._last_gather = None
        self._watch = None
        return self

    @classmethod
    def from_array(cls, array1d):
        """Wrap a 1-D native array of this carrier's library without copying."""
        return cls(array1d)

    @classmethod
    def allocate(cls, n, dtype, like=None, *, namespace=None, device=None):
        """Fresh zero-filled storage of ``n`` elements, of exactly this class.

        ``like`` (a carrier of this class or a native array) supplies the
        namespace and device unless ``namespace`` / ``device`` are given.
        """
        if cls is Carrier:
            raise TypeError("Carrier is abstract; allocate on a concrete subclass")
        n = operator.index(n) if not isinstance(n, bool) else None
        if n is None or n < 0:
            raise ValueError(f"allocate: n must be an int >= 0, got {n!r}")
        if not isinstance(dtype, SimpleDType):
            raise TypeError(
                f"allocate: dtype must be a SimpleDType (e.g. DType.Float32), got {dtype!r}; "
                f"a CompoundDType needs one carrier per field"
            )
        if like is not None:
            if isinstance(like, Carrier):
                if type(like) is not cls:
                    raise TypeError(f"{cls.__name__}.allocate: like= must be a {cls.__name__}, got {like!r}")
                like_xp, like_dev = like._xp, like._device
            else:
                like_xp, like_dev = cls._namespace_of(like), cls._device_of(like)
            namespace = like_xp if namespace is None else namespace
            device = like_dev if device is None else device
        xp = cls._check_namespace(namespace)
        device = cls._normalize_device(xp, device)
        native = cls._native_dtype_in(xp, dtype)
        array = cls._zeros(xp, n, native, device)
        # The dtype the namespace stores, as it reports it: jax.numpy outside x64 mode narrows a
        # 64-bit request to 32 bits (and warns), and the carrier reports what it holds.
        dtype = cls._sw_dtype_in(xp, array.dtype)
        self = object.__new__(cls)
        self._init(array, xp, device, dtype)
        return self

    def fresh(self, n, dtype=None, fill=None):
        """Storage of ``n`` elements of this exact kind, zeros or every one ``fill`` (trusted hot path)."""
        cls = type(self)
        xp, device = self._xp, self._device
        native = self._native if dtype is None else self._native_dtype_in(xp, dtype)
        array = cls._zeros(xp, n, native, device) if fill is None else cls._full(xp, n, fill, native, device)
        return cls._adopt(array, xp, device, self._kind)

    def placed(self, layout, values):
        """Fresh storage of this kind, ``layout.cosize`` long, holding rev ``values`` at ``layout``.

        Positions the layout does not address (holes) are zero. ``values`` is
        a native array of this namespace whose shape broadcasts to the rev
        leaf shape; nothing else is validated (hot path for gradient buffers).
        """
        out = self.fresh(layout.cosize)
        if layout.size:
            rs = layout.rev_leaf_shape
            out._set_rev(rs, layout.leaf_stride[::-1], 0, out._prepare_values(values, rs, "place"),
                         layout.is_injective(), layout.is_canonical())
        return out

    def shaped(self, shape):
        """The whole buffer as an array of ``shape``, in C order (a view where the library has views)."""
        return self._array.reshape(shape) if self.native_methods else self._xp.reshape(self._array, shape)

    def dense_values(self):
        """The buffer as it was computed: the 1-D array, or an N-D array in whose C order it lies."""
        return self._array

    def _remember_shaped(self, values):
        """``values`` is the buffer reshaped (N-D, C order); a carrier that keeps shapes may keep it."""

    @staticmethod
    def _accumulate(into, other):
        """``into + other``, written into ``into`` where the library allows in-place updates.

        ``into`` is a gradient buffer the caller owns outright (a backward rule
        allocated it and nothing else refers to it); immutable libraries (JAX,
        array-api-strict, Dask) return a new array.
        """
        return into + other

    @staticmethod
    def _copied(source, result):
        """Whether ``result``, a reshape of ``source``, is a new array rather than a view of it.

        False where the library cannot tell cheaply: the caller then treats it as shared.
        """
        return False

    def _copy_values(self, into=None):
        """A private copy of the buffer (``into``: a previous copy to reuse where the library allows)."""
        return self._xp.asarray(self._array, copy=True)

    def _equal_values(self, other):
        """Whether the buffer holds exactly ``other`` (NaN equal to NaN)."""
        xp, a = self._xp, self._array
        same = a == other
        if self._dtype.kind == "float":
            same = same | ((a != a) & (other != other))
        return bool(xp.all(same))

    # ----- class-level backend hooks (overridden per backend) --------------

    @classmethod
    def _default_namespace(cls):
        raise NotImplementedError

    @classmethod
    def _check_namespace(cls, namespace):
        """The namespace to use for ``namespace=`` (None means the default)."""
        return cls._default_namespace() if namespace is None else namespace

    @classmethod
    def _namespace_of(cls, x):
        """The namespace of native array ``x``; TypeError if ``x`` is not native."""
        raise NotImplementedError

    @classmethod
    def _device_of(cls, x):
        import array_api_compat
        return array_api_compat.device(x)

    @classmethod
    def _normalize_device(cls, xp, device):
        return device

    @classmethod
    def _prepare_buffer(cls, array1d):
        return array1d

    @classmethod
    def _zeros(cls, xp, n, native, device):
        return xp.zeros(n, dtype=native, device=device)

    @classmethod
    def _full(cls, xp, n, value, native, device):
        return xp.full(n, value, dtype=native, device=device)

    @classmethod
    def to_numpy(cls, array):
        """A numpy copy or view of a native array of this carrier's library."""
        try:
            return np.from_dlpack(array)
        except Exception:  # no CPU DLPack export: go through the buffer protocol
            return np.asarray(array)

    # ----- dtype mapping -------------------------------------------------------

    @classmethod
    def _native_dtype_in(cls, xp, dtype):
        try:
            return getattr(xp, dtype.name)
        except AttributeError:
            raise TypeError(f"namespace {xp.__name__} has no dtype {dtype.name!r} for {dtype!r}") from None

    @classmethod
    def _sw_dtype_in(cls, xp, native):
        table = _FROM_NATIVE.get(id(xp))
        if table is None:
            table = _FROM_NATIVE[id(xp)] = {}
        try:
            return table[native]
        except (KeyError, TypeError):
            pass
        for d in STORED_DTYPES:
            cand = getattr(xp, d.name, None)
            if cand is not None and native == cand:
                try:
                    table[native] = d
                except TypeError:
                    pass
                return d
        raise TypeError(
            f"{cls.__name__}: native dtype {native!r} has no StrideWeave dtype; "
            f"expected one of {[d.name for d in SIMPLE_DTYPES]}"
        )

    def native_dtype(self, dtype=None):
        """The native dtype object for ``dtype`` (default: this carrier's dtype)."""
        if dtype is None:
            return self._native
        return self._native_dtype_in(self._xp, dtype)

    def sw_dtype_of(self, native):
        """The :class:`SimpleDType` of a native dtype object of this namespace."""
        return self._sw_dtype_in(self._xp, native)

    # ----- read-only attributes -----------------------------------------------

    @property
    def array(self):
        """The native 1-D buffer (current). Writes through it are found like writes to a wrapped array."""
        self.watch_external()
        return self._array
    namespace = property(lambda self: self._xp, doc="The Array API namespace.")
    device = property(lambda self: self._device, doc="The device of the buffer.")
    dtype = property(lambda self: self._dtype, doc="The SimpleDType of the elements.")
    size = property(lambda self: self._size, doc="Number of elements.")
    version = property(lambda self: self._version, doc="Mutation counter.")

    @property
    def kind(self):
        """The :class:`CarrierKind` (class, namespace, device) of this carrier."""
        kind = self._kind
        if kind is None:
            from .registry import CarrierKind
            kind = self._kind = CarrierKind(type(self), self._xp, self._device)
        return kind

    def __repr__(self):
        return (f"{type(self).__name__}(size={self._size}, dtype={self._dtype!r}, "
                f"device={self._device!r}, version={self._version})")

    # ----- mutation bookkeeping ---------------------------------------------------

    def bump_version(self):
        """Record an out-of-band mutation of ``array``."""
        with lock_for(self):
            self._version += 1

    #: whether writes that bypass the carrier (through a wrapped native array that
    #: the user still holds) must be found by comparing contents: true for mutable
    #: libraries without a version counter of their own (NumPy, most namespaces)
    watches_content = True

    def watch_external(self):
        """Treat the buffer as reachable from outside: writes there must not go unseen.

        Called when a user-held native array is wrapped and when a view of the
        buffer is handed out. From then on every recording of this carrier as
        a saved input snapshots its values, and the version check compares
        them, so a write through the native array fails backward with the
        spec's in-place modification error instead of giving a wrong gradient.
        """
        if self._watch is None and self.watches_content and self._writable():
            watch = ContentWatch()
            watch.capture(self)  # graphs recorded before now compare against today's values
            self._watch = watch

    def _writable(self):
        return True

    def replace(self, array1d):
        """Swap in a new buffer of the same size and dtype, and bump ``version``."""
        cls = type(self)
        cls._namespace_of(array1d)
        if getattr(array1d, "ndim", None) != 1 or int(array1d.shape[0]) != self._size:
            raise ValueError(
                f"replace: expected a 1-D array of {self._size} elements, got shape "
                f"{tuple(getattr(array1d, 'shape', ()))}"
            )
        if self._sw_dtype_in(self._xp, array1d.dtype) != self._dtype:
            raise TypeError(f"replace: expected dtype {self._dtype!r}, got {array1d.dtype!r}")
        with lock_for(self):
            before = self._version
            self._array = cls._prepare_buffer(array1d)
            self._version = before + 1

    def _cached(self, key, make):
        """Bounded per-carrier cache of native index arrays (FIFO eviction)."""
        cache = self._cache
        if cache is None:
            cache = self._cache = {}
        else:
            hit = cache.get(key)
            if hit is not None:
                return hit
        value = make()
        if len(cache) >= _CACHE_LIMIT:
            del cache[next(iter(cache))]
        cache[key] = value
        return value

    # ----- public read/write API ------------------------------------------------

    def gather_rev(self, layout, offset=0):
        """Values at ``layout`` from ``offset`` as a rev array (leaf axes reversed)."""
        if not (offset.__class__ is int and offset >= 0 and offset + layout.cosize <= self._size):
            offset = _checked_offset(self, layout, offset)
        rs = layout.leaf_shape[::-1]
        if layout.is_canonical():
            return self._xp.reshape(self._array[offset:offset + layout.size], rs)
        if layout.size == 0:
            return self._xp.zeros(rs, dtype=self._native, device=self._device)
        return self._gather_rev(rs, layout.leaf_stride[::-1], offset)

    def gather(self, layout, offset=0):
        """Values at ``layout`` from ``offset`` with one axis per leaf, natural order.

        May be a view of the buffer; writes through it are found like writes to a wrapped array.
        """
        self.watch_external()
        rev = self.gather_rev(layout, offset)
        nd = len(rev.shape)
        return rev if nd < 2 else self._xp.permute_dims(rev, tuple(range(nd - 1, -1, -1)))

    def scatter_rev(self, layout, offset, values):
        """Write ``values`` (rev-shaped, broadcastable, or a Python scalar).

        Duplicate targets (non-injective layouts) receive one of their values,
        unspecified which.  Bumps ``version``; writes nothing on error.
        """
        offset, rs = self._check_write(layout, offset)
        vals = self._prepare_values(values, rs, "scatter")
        with lock_for(self):
            before = self._version  # one bump per mutation, however the library counts its own writes
            if layout.size:
                self._set_rev(rs, layout.leaf_stride[::-1], offset, vals,
                              layout.is_injective(), layout.is_canonical())
            self._version = before + 1

    def scatter(self, layout, offset, values):
        """Write natural-order ``values`` (see :meth:`scatter_rev`)."""
        self.scatter_rev(layout, offset, self._natural_to_rev(layout, values, "scatter"))

    def scatter_add_rev(self, layout, offset, values):
        """Add rev-shaped ``values`` at ``layout``; duplicate offsets accumulate."""
        offset, rs = self._check_write(layout, offset)
        if self._dtype.kind == "bool":
            raise TypeError(f"scatter_add needs a numeric carrier, got dtype {self._dtype!r}")
        vals = self._prepare_values(values, rs, "scatter_add")
        if layout.size:
            rt = layout.leaf_stride[::-1]
            aliasing = layout.aliasing()
            canonical = layout.is_canonical()
            if aliasing != "injective":
                # Collapse stride-0 (broadcast) leaves first: sum the values
                # over them, then the remaining layout is injective unless
                # it also overlaps.
                zero = tuple(ax for ax in range(len(rs)) if rt[ax] == 0 and rs[ax] != 1)
                if zero:
                    vals = self._sum_axes(vals, rs, zero)
                    rs = tuple(e for ax, e in enumerate(rs) if ax not in zero)
                    rt = tuple(s for ax, s in enumerate(rt) if ax not in zero)
            with lock_for(self):
                before = self._version
                self._add_rev(rs, rt, offset, vals, aliasing != "overlapping", canonical)
                self._version = before + 1
        else:
            self.bump_version()

    def scatter_add(self, layout, offset, values):
        """Add natural-order ``values`` (see :meth:`scatter_add_rev`)."""
        self.scatter_add_rev(layout, offset, self._natural_to_rev(layout, values, "scatter_add"))

    def to_device(self, device):
        """This carrier on ``device``: ``self`` if already there, else a copy."""
        device = self._normalize_device(self._xp, device)
        if device == self._device:
            return self
        moved = self._move(self._array, device)
        out = object.__new__(type(self))
        out._init(moved, self._xp, device, self._dtype)
        return out

    # ----- validation helpers ------------------------------------------------------

    def _check_write(self, layout, offset):
        if not (offset.__class__ is int and offset >= 0 and offset + layout.cosize <= self._size):
            offset = _checked_offset(self, layout, offset)
        return offset, layout.leaf_shape[::-1]

    def _prepare_values(self, values, rs, what):
        """Python scalar (kept) or native array of this library, dtype-cast, shape-checked."""
        if isinstance(values, _SCALARS):
            if not _scalar_fits(values, self._dtype):
                raise TypeError(
                    f"{what}: Python scalar {values!r} does not fit a {self._dtype!r} carrier "
                    f"(Array API rules: bool->Bool, int->integer or floating, float->floating, complex->complex)"
                )
            return values
        vals = self._as_native(values)
        shape = tuple(vals.shape)
        if not _indexing.broadcast_ok(shape, rs):
            raise ValueError(f"{what}: values of shape {shape} do not broadcast to the target shape {rs}")
        if vals.dtype != self._native:
            self._sw_dtype_in(self._xp, vals.dtype)  # TypeError for dtypes we do not model
            vals = self._xp.astype(vals, self._native)
        return vals

    def _natural_to_rev(self, layout, values, what):
        if isinstance(values, _SCALARS):
            return values
        vals = self._as_native(values)
        shape, target = tuple(vals.shape), layout.leaf_shape
        if not _indexing.broadcast_ok(shape, target):
            raise ValueError(f"{what}: values of shape {shape} do not broadcast to the target shape {target}")
        nd = len(target)
        if nd < 2:
            return vals
        if shape != target:
            vals = self._xp.broadcast_to(vals, target)
        return self._xp.permute_dims(vals, tuple(range(nd - 1, -1, -1)))

    def _as_native(self, values):
        """``values`` as a native array of this carrier (foreign arrays are transferred)."""
        try:
            if self._namespace_of(values) is self._xp:
                return values
        except TypeError:
            pass
        if not (hasattr(values, "__dlpack__") or hasattr(values, "__array__")
                or hasattr(values, "__array_namespace__")):
            raise TypeError(
                f"values must be a native array or a Python scalar, got {values!r} "
                f"({type(values).__name__})"
            )
        return self._import_foreign(values)

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

    # ----- generic xp hooks (backends override with fast paths) -------------------

    def _full_values(self, vals, rs):
        """``vals`` broadcast to ``rs`` as a native array (scalars included)."""
        xp = self._xp
        if isinstance(vals, _SCALARS):
            vals = xp.asarray(vals, dtype=self._native, device=self._device)
        if tuple(vals.shape) != rs:
            vals = xp.broadcast_to(vals, rs)
        return vals

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
        self._last_gather = (key, values)
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
        return _read_through(self._xp, self._array, plan, rs, self._size, self._native, self._device)

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



class LibraryCarrier(Carrier):
    """A carrier bound to one array library (NumPy, PyTorch, JAX, Dask): its namespace hooks from ``_library``.

    Subclasses give ``_library()`` (the Array API namespace, the library module,
    its array type; importing the library on first use), ``namespace_name``
    and ``array_name`` for error messages.
    """

    __slots__ = ()
    namespace_name = ""
    array_name = ""

    @classmethod
    def _library(cls):
        raise NotImplementedError

    @classmethod
    def _default_namespace(cls):
        return cls._library()[0]

    @classmethod
    def _check_namespace(cls, namespace):
        xp, library, _ = cls._library()
        if namespace is None or namespace is xp or namespace is library:
            return xp
        raise TypeError(f"{cls.__name__}: namespace must be {cls.namespace_name}, got {namespace!r}")

    @classmethod
    def _namespace_of(cls, x):
        xp, _, array_type = cls._library()
        if isinstance(x, array_type):
            return xp
        raise TypeError(f"{cls.__name__} expects {cls.array_name}, got {type(x).__module__}.{type(x).__name__}")


_FROM_NATIVE: dict = {}  # id(namespace) -> {native dtype: SimpleDType}


def _read_through(xp, buffer, plan, rs, size, native, device):
    """Apply a ``ViewPlan`` to a 1-D ``buffer`` of ``size`` elements: a rev array of shape ``rs``."""
    if plan.stop > size:
        buffer = xp.concat([buffer, xp.zeros(plan.stop - size, dtype=native, device=device)])
    a = buffer[plan.start:plan.stop]
    if plan.dims is not None:
        a = xp.reshape(a, plan.dims)
    if plan.index is not None:
        a = a[plan.index]
    if plan.perm is not None:
        a = xp.permute_dims(a, plan.perm)
    if plan.shape1 is not None:
        a = xp.reshape(a, plan.shape1)
    if plan.bcast:
        a = xp.broadcast_to(a, rs)
    return a
