"""JaxCarrier: a 1-D ``jax.Array``.

JAX is imported on first use, never by importing this module.

JAX arrays are immutable, so a write builds a new buffer with
``buf.at[idx].set / .add`` and swaps it in: every Tensor that shares the
carrier object sees the new values, and ``version`` is bumped once by the
public method.  ``.at[].add`` accumulates duplicate indices, which is exactly
scatter_add's contract.  Reads use the generic reshape + slice + permute +
broadcast recipe, else ``take`` with a cached int32 index (JAX's preferred
index type; int64 needs x64 mode).

JAX only has 64-bit dtypes when ``jax_enable_x64`` is on; without it a
request for ``Float64`` / ``Int64`` / ``Complex128`` behaves as in
``jax.numpy``: the 32-bit type is stored and reported, with JAX's warning.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import warnings
from types import FrameType
from typing import Any

from .._marks import unit_alias
from . import _indexing
from .base import Carrier, LibraryCarrier
from .generic import _SCALARS, read_through

__all__ = ["JaxCarrier", "holds_tracers", "is_tracer", "refuse_traced"]

#: The 32-bit type JAX stores for a 64-bit request outside x64 mode.
_NARROW = {"float64": "float32", "int64": "int32", "uint64": "uint32", "complex128": "complex64"}
#: Warnings point at the first frame outside StrideWeave.
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


#: Set while values are moved onto JAX (``implicit_narrowing``): like ``jnp.asarray(float64 array)``,
#: that narrows without a warning; only an explicitly requested dtype warns.
_IMPLICIT = threading.local()


@contextlib.contextmanager
def implicit_narrowing():
    """Within it, a 64-bit dtype narrows to 32 bits without JAX's warning (a conversion, not a request)."""
    previous = getattr(_IMPLICIT, "on", False)
    _IMPLICIT.on = True
    try:
        yield
    finally:
        _IMPLICIT.on = previous


def _outside_stacklevel() -> int:
    """The ``warnings.warn`` stacklevel of the first caller outside StrideWeave."""
    frame: FrameType | None = sys._getframe(1)
    level = 1
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        frame, level = frame.f_back, level + 1
    return level


def is_tracer(x) -> bool:
    """Whether ``x`` is a JAX tracer: an array being staged (``jax.jit``, ``vmap``, ``grad``, ``lax.scan``).

    Its values are unknown until the program runs, so nothing may read them;
    JAX is not imported for the question (no JAX loaded: no tracer).
    """
    jax_module = sys.modules.get("jax")
    return jax_module is not None and isinstance(x, jax_module.core.Tracer)


def holds_tracers(carriers) -> bool:
    """Whether any of ``carriers`` (a Tensor's) holds a traced JAX array."""
    return any(is_tracer(c.dense_values()) for c in carriers)


_DATA_DEPENDENT = "its result's shape depends on the values of its input"


def refuse_traced(name: str, array, why: str = _DATA_DEPENDENT) -> None:
    """For a traced ``array``: JAX's own ``ConcretizationTypeError``, naming ``strideweave.<name>``.

    ``why`` says what needs the values (by default: ``name``'s result has a
    shape that depends on them, and a traced program needs every shape while
    it is traced).
    """
    if is_tracer(array):
        raise sys.modules["jax"].errors.ConcretizationTypeError(
            array, f"strideweave.{name}: {why}; the values are unknown while JAX traces (jax.jit, jax.vmap, "
                   "lax.scan): call it outside the traced function")


jax: Any = None  # the jax module, set on first use (``JaxCarrier.library_globals``)
jnp: Any = None  # jax.numpy (JAX's own Array API namespace)


#: Layouts with at least this many elements are read and placed by one fused (jitted) XLA
#: computation instead of a chain of eager ops, each of which would copy the whole array.
_FUSE_FROM = 1 << 16
_FUSED: dict = {}  # recipe key -> jitted function (FIFO, bounded)
_FUSED_LIMIT = 256


def _fused(key, make):
    function = _FUSED.get(key)
    if function is None:
        if len(_FUSED) >= _FUSED_LIMIT:
            del _FUSED[next(iter(_FUSED))]
        function = _FUSED[key] = jax.jit(make())
    return function


_flat_slot = Carrier.__dict__["_array"]  # the base class's storage slot, under the property below


class JaxCarrier(LibraryCarrier):
    """Storage in a 1-D JAX array; ``device`` is a ``jax.Device``.

    Every eager JAX reshape is a copy, so the buffer may also be held as an
    N-D array whose C order it is (``shaped``): results computed N-D stay N-D,
    wrapped N-D arrays keep their shape, and the 1-D array is made only when
    something reads it.
    """

    __slots__ = ("_shaped",)
    native_methods = True
    keeps_shape = True
    backend = "jax"
    namespace_name = "jax.numpy"
    array_name = "a jax.Array"
    watches_content = False  # JAX arrays are immutable: nothing can write behind the carrier
    immutable_arrays = True
    writes_in_place = False  # a write swaps in a new array (``replace``)

    @property
    def _array(self):
        flat = _flat_slot.__get__(self)
        if flat is None:
            flat = unit_alias(self._shaped, jnp.reshape(self._shaped, (-1,)))
            _flat_slot.__set__(self, flat)
        return flat

    @_array.setter
    def _array(self, value):
        _flat_slot.__set__(self, value)
        self._shaped = None

    @classmethod
    def segment_sum(cls, xp, values, segments, n):
        # ``.at[].add`` is XLA's scatter-add: duplicates accumulate. A traced array has no device.
        cls._library()  # the module global ``jnp``, when no carrier of it was made yet
        device = getattr(values, "device", None)
        return jnp.zeros(n, dtype=values.dtype, device=device).at[segments].add(values)

    @classmethod
    def _adopt_shaped(cls, values, xp, device, kind=None):
        """Adopt an N-D array whose C order is the buffer, without flattening it."""
        self = cls._adopt(values, xp, device, kind)
        _flat_slot.__set__(self, None)
        self._shaped = values
        self._size = int(values.size)
        return self

    def shaped(self, shape):
        shaped = self._shaped
        if shaped is None or tuple(shaped.shape) != shape:
            shaped = jnp.reshape(self._array, shape)
            self._shaped = shaped  # the same values; any write replaces the buffer and drops it
        return shaped

    def dense_values(self):
        flat = _flat_slot.__get__(self)
        return self._shaped if flat is None else flat

    def _remember_shaped(self, values):
        self._shaped = values

    # ----- class hooks ---------------------------------------------------------

    library_modules = ("jax", "jax.numpy")
    library_title = "JAX"
    extra = "jax"
    array_type = "Array"
    library_globals = ("jax", "jnp")

    @classmethod
    def _device_of(cls, x):
        if is_tracer(x):  # staged: placed where the traced program runs, JAX's default device
            cls._library()
            return jax.devices()[0]
        try:
            return x.device
        except Exception:  # sharded over several devices: keep the sharding
            return x.sharding

    @classmethod
    def _normalize_device(cls, xp, device):
        cls._library()
        if device is None:
            return jax.devices()[0]
        if isinstance(device, str):
            platform, _, index = device.partition(":")
            try:
                return jax.devices(platform)[int(index or 0)]
            except (RuntimeError, IndexError, ValueError):
                raise ValueError(f"JaxCarrier: no JAX device {device!r}; available: {jax.devices()}") from None
        return device

    @classmethod
    def _native_dtype_in(cls, xp, dtype):
        # complex64 is two 32-bit floats (always available); complex128 needs x64 mode.
        wide = dtype.bits == (128 if dtype.kind == "complex" else 64)
        if wide and not jax.config.jax_enable_x64:
            # As jax.numpy itself does: store the 32-bit type, and say so where the dtype was asked for.
            narrow = _NARROW[dtype.name]
            if getattr(_IMPLICIT, "on", False):
                return getattr(xp, narrow)
            warnings.warn(f"Explicitly requested dtype {dtype.name} requested in strideweave is not available, "
                          f"and will be truncated to dtype {narrow}. To enable more dtypes, set the jax_enable_x64 "
                          "configuration option or the JAX_ENABLE_X64 shell environment variable. See "
                          "https://github.com/jax-ml/jax#current-gotchas for more.", UserWarning,
                          stacklevel=_outside_stacklevel())
            return getattr(xp, narrow)
        return getattr(xp, dtype.name)

    @classmethod
    def to_numpy(cls, array):
        import numpy as np
        return np.asarray(array)

    def _move(self, array, device):
        return jax.device_put(array, device)

    def _small_index(self):
        return True

    # ----- writes: build a new buffer, swap it in -------------------------------

    def placed(self, layout, values):
        """Fresh storage holding ``values`` at ``layout``, built from dense ops where possible.

        A scatter with an index array per element is slow in JAX; when the
        layout has a reshape/slice/permute read recipe, the inverse recipe
        (reshape, inverse permute, zero padding) builds the buffer directly,
        as one fused XLA computation for large layouts.
        """
        rs = layout.rev_leaf_shape
        plan = _indexing.place_plan(rs, layout.leaf_stride[::-1], layout.size and layout.is_injective())
        if plan is None:
            return Carrier.placed(self, layout, values)
        cosize, native = layout.cosize, self._native
        if layout.size >= _FUSE_FROM and hasattr(values, "shape"):
            recipe = _fused(("place", repr(plan), rs, cosize, str(native), tuple(values.shape)),
                            lambda: lambda v: _indexing.place_through(jnp, v, plan, rs, cosize, native))
            placed = recipe(values)
        else:
            placed = _indexing.place_through(jnp, values, plan, rs, cosize, native)
        return type(self)._adopt(placed, self._xp, self._device, self._kind)

    def _read_through(self, plan, rs):
        size = 1
        for extent in rs:
            size *= extent
        if size < _FUSE_FROM:
            return Carrier._read_through(self, plan, rs)
        n, native = self._size, self._native
        recipe = _fused(("read", repr(plan), rs, n, str(native)),
                        lambda: lambda buffer: read_through(jnp, buffer, plan, rs, n, native, None))
        return recipe(self._array)

    def _flat(self, vals, rs):
        if isinstance(vals, _SCALARS):
            return vals
        return jnp.reshape(jnp.broadcast_to(vals, rs), (-1,))

    def _target(self, rs, rt, offset, canonical):
        """The ``.at[...]`` updater for the addressed elements: a slice when canonical, else indices."""
        if canonical:
            size = 1
            for e in rs:
                size *= e
            return self._array.at[offset:offset + size]
        return self._array.at[self._index(rs, rt, offset)]

    def _set_rev(self, rs, rt, offset, vals, injective, canonical):
        self._array = self._target(rs, rt, offset, canonical).set(self._flat(vals, rs))

    def _add_rev(self, rs, rt, offset, vals, injective, canonical):
        self._array = self._target(rs, rt, offset, canonical).add(self._flat(vals, rs))
