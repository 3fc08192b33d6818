"""The Carrier contract and LibraryCarrier.

A carrier is a flat, 1-D, typed buffer from one Array API namespace on one
device, plus a ``version`` counter bumped by every successful public mutation
(``scatter*``, ``replace``, ``bump_version``) and by nothing else.

Tensors read and write carriers through layouts.  Internally everything is a
*rev array*: the layout's leaf modes in reverse order, so canonical storage is
exactly ``reshape(buf[offset:offset + size], reversed(leaf_shape))``.  The
public ``gather`` / ``scatter`` / ``scatter_add`` take and return natural leaf
order and permute.

This module holds the contract: construction, the dtype map, the version
counter, the public gather / scatter methods and their validation, and
:class:`LibraryCarrier` (a carrier bound to one array library).  The data
paths themselves are the generic xp hooks of :mod:`.generic`, which backends
override with their fast paths (numpy and torch ``as_strided``, JAX ``.at[]``).
"""

from __future__ import annotations

import operator
import sys
from typing import Any

import numpy as np

from .._locks import lock_for
from ..dtypes import SIMPLE_DTYPES, STORED_DTYPES, SimpleDType, _scalar_fits
from ..errors import MissingBackendError
from . import _indexing
from .generic import _SCALARS, GenericHooks
from .kind import CarrierKind, kind_of_parts
from .watch import ContentWatch

__all__ = ["WRITE_REFUSALS", "Carrier"]

_CACHE_LIMIT = 16  # native index arrays kept per carrier

#: id(carrier) -> a callable making, from the carrier, the exception that a write into it raises before
#: anything is written: storage lent on the condition that it stays unchanged (a bridge's caller's tensor
#: that requires grad). Empty but for such a call, so a write pays one truth test.
WRITE_REFUSALS: dict[int, Any] = {}


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


class Carrier(GenericHooks):
    """Abstract flat 1-D storage buffer.  Build with ``allocate`` / ``from_array``.

    Attributes (read-only): ``array`` (the native 1-D buffer), ``namespace``
    (Array API namespace), ``device``, ``dtype`` (:class:`SimpleDType`),
    ``size``, ``version``.  Gathered arrays may be views of the buffer: treat
    them as read-only (numpy views of non-canonical layouts are marked so).
    """

    __slots__ = (
        "__weakref__",
        "_array",
        "_cache",
        "_device",
        "_dtype",
        "_kind",
        "_last_gather",
        "_native",
        "_recorded_run",  # unset until a recorded write: see ``operation.accept_recorded_write``
        "_size",
        "_unread",
        "_version",
        "_watch",
        "_xp",
    )
    # slots, filled by ``_adopt`` alone
    _array: Any
    _cache: dict | None
    _device: Any
    _dtype: SimpleDType
    _kind: CarrierKind | None
    _last_gather: Any
    _native: Any
    _size: int
    _unread: bool
    _watch: ContentWatch | None
    _xp: Any

    #: name used in error messages and by ``resolve``; set by subclasses
    backend = "abstract"
    #: whether native arrays have a ``.reshape`` method (cheaper than ``xp.reshape``)
    native_methods = False
    #: whether N-D results are kept unflattened (``_adopt_shaped``), for libraries whose reshape copies
    keeps_shape = False
    #: whether a 2-D matmul over a row-major operand is computed in natural order (a row-major result;
    #: the class then has ``flatten`` and ``unflatten`` between N-D arrays and buffers), not as a rev array
    natural_products = False
    #: whether native arrays never change once made, so a flag on one (``mark_unit``) stays true
    immutable_arrays = False
    #: whether ``_spread`` reads nothing of the carrier (a static method): the class then stands in for
    #: the carrier of a result not yet made one (``Tensor._from_raw``), which need not be made for it
    spreads_alone = False
    #: whether a write changes the buffer's memory in place (not by swapping in a new array), so two
    #: carriers over one memory would each miss the other's writes (``ops._natural.own_storage``)
    writes_in_place = True

    # ----- construction ---------------------------------------------------

    def __new__(cls, array1d):
        """Wrap a 1-D native array without copying (same as ``from_array``)."""
        if cls is Carrier:
            raise TypeError("Carrier is abstract; use NumpyCarrier, TorchCarrier, JaxCarrier or ArrayAPICarrier")
        xp = cls._namespace_of(array1d)  # TypeError for foreign objects
        if getattr(array1d, "ndim", None) != 1:
            raise TypeError(
                f"{cls.__name__}.from_array expects a 1-D array, got shape "
                f"{tuple(getattr(array1d, 'shape', ()))}"
            )
        return cls._adopt(cls._prepare_buffer(array1d), xp, cls._device_of(array1d))

    @classmethod
    def _adopt(cls, array1d, xp, device, kind=None):
        """Wrap a 1-D array an operation just computed on this kind (hot path: no checks).

        The one place a carrier's slots are filled: the constructor, ``allocate``
        and ``to_device`` check their arguments, then come here. ``kind``, when
        the caller has it, is this carrier's CarrierKind.
        """
        self = object.__new__(cls)
        self._array = array1d
        self._xp = xp
        self._device = device
        native = array1d.dtype
        # Per-namespace table, so dtypes of different libraries are never compared.
        # Any: a missing table (None) raises TypeError below, the fallback path.
        table: Any = _FROM_NATIVE.get(id(xp))
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
        # True on a fresh buffer (``zeros``, ``empty``, ...) until a recorded operation reads it: a
        # Float32 Tensor written into it is recorded (the write rule, docs/api.md section 4).
        self._unread = False
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
        # The dtype is the one the namespace stores, as it reports it (``_adopt``): jax.numpy outside
        # x64 mode narrows a 64-bit request to 32 bits (and warns), and the carrier reports what it holds.
        return cls._adopt(array, xp, device)

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
            kind = self._kind = kind_of_parts(type(self), self._xp, self._device)
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
    #: the user still holds) must be found from the contents: true for mutable
    #: libraries without a version counter of their own (NumPy, most namespaces)
    watches_content = True

    def watch_external(self, fresh=False):
        """Treat the buffer as reachable from outside: writes there must not go unseen.

        Called when a user-held native array is wrapped and when a view of the
        buffer is handed out. From then on every recording of this carrier as
        a saved input digests its values (no copy is kept), and the version
        check digests them again, so a write through the native array fails backward with the
        spec's in-place modification error instead of giving a wrong gradient.
        ``fresh``: no graph has saved this carrier yet, so the first saving call takes the first digest.
        """
        if self._watch is None and self.watches_content and self._writable():
            watch = ContentWatch(self)
            if not fresh:
                watch.capture(self)  # graphs recorded before now are checked against today's values
            self._watch = watch

    def drop_watch(self):
        """Stop watching: the buffer was just wrapped from a native array that nothing outside StrideWeave holds.

        For a host array a creation function made and let go of (``xp.zeros``,
        ``xp.asarray`` of a list): no one can write it but through
        StrideWeave, which counts versions, so no saving call need digest it.
        """
        self._watch = None

    def _writable(self):
        return True

    def _refuse_lent_write(self):
        """Raise the refusal registered for this carrier in ``WRITE_REFUSALS``, if any (storage lent read-only)."""
        refusal = WRITE_REFUSALS.get(id(self))
        if refusal is not None:
            raise refusal(self)

    def replace(self, array1d):
        """Swap in a new buffer of the same size and dtype, and bump ``version``."""
        if WRITE_REFUSALS:
            self._refuse_lent_write()
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
        if WRITE_REFUSALS:
            self._refuse_lent_write()
        offset, rs = self._checked(layout, offset)
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
        if WRITE_REFUSALS:
            self._refuse_lent_write()
        offset, rs = self._checked(layout, offset)
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
        return type(self)._adopt(self._move(self._array, device), self._xp, device)

    # ----- validation helpers ------------------------------------------------------

    def _checked(self, layout, offset):
        """The bounds check of a public call: ``offset`` normalised (or an error naming both sides), and the rev shape.

        The rev-order reads (``gather_rev``) inline the fast test instead: they are the hot path.
        """
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

class LibraryCarrier(Carrier):
    """A carrier bound to one array library (NumPy, PyTorch, JAX, Dask).

    Subclasses name the library and its namespace, which are imported on first
    use: ``library_modules`` (the library's module and its Array API
    namespace's), ``array_type`` (the array class's name in the library),
    ``library_title`` and ``extra`` (the ImportError names the pip extra),
    ``namespace_name`` and ``array_name`` for error messages, and ``cpu_only``
    where the library has no devices.  ``library_globals`` names the backend
    module's globals that receive the imported modules (its fast paths read them).
    """

    __slots__ = ()
    namespace_name = ""
    array_name = ""
    #: (library module, Array API namespace module), imported by ``_load``
    library_modules: tuple = ()
    array_type = ""
    library_title = ""
    extra = ""
    #: names of the backend module's globals that receive the library and its namespace, once imported
    library_globals: tuple = ()
    #: whether the library has no devices: the device is ``"cpu"``, and asking for another fails
    cpu_only = False
    #: (namespace, library, array type) once ``_load`` has imported them
    _loaded = None

    @classmethod
    def _library(cls):
        loaded = cls._loaded
        return loaded if loaded is not None else cls._load()

    @classmethod
    def _load(cls):
        """Import the library and its namespace (ImportError names the pip extra) and remember them."""
        try:
            # Through ``__import__``, as an import statement does, so that import hooks see every load.
            for name in cls.library_modules:
                __import__(name)
            library, xp = (sys.modules[name] for name in cls.library_modules)
        except ImportError as exc:
            extra = f"[{cls.extra}]" if cls.extra else ""
            raise MissingBackendError(f"the {cls.backend!r} carrier needs {cls.library_title}: "
                              f"pip install strideweave{extra}") from exc
        # The backend module's fast paths read the library as module globals (``library_globals``).
        module = vars(sys.modules[cls.__module__])
        for name, value in zip(cls.library_globals, (library, xp)):
            module[name] = value
        loaded = cls._loaded = (xp, library, getattr(library, cls.array_type))
        return loaded

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

    @classmethod
    def _device_of(cls, x):
        if cls.cpu_only:
            return "cpu"
        return super()._device_of(x)

    @classmethod
    def _normalize_device(cls, xp, device):
        if not cls.cpu_only:
            return device
        if device is None or device == "cpu":
            return "cpu"
        raise ValueError(f"{cls.__name__} lives on the CPU; got device {device!r} (expected None or 'cpu')")


_FROM_NATIVE: dict = {}  # id(namespace) -> {native dtype: SimpleDType}
