"""Choosing carriers: ``resolve``, the default carrier, array -> carrier class.

``resolve(spec)`` turns any ``carrier=`` argument into a :class:`.kind.CarrierKind`
``(cls, namespace, device)``, a small immutable value whose ``allocate`` and
``from_array`` build carriers of exactly that class.

The default carrier is **process-global** (not thread-local): a Tensor built
in one thread and used in another sees the same default.
``set_default_carrier(spec)`` changes it and returns a context manager that
restores the previous default on exit, so both ``set_default_carrier("torch")``
and ``with set_default_carrier("torch"): ...`` work.

Backends are never imported just to test a type: ``carrier_for_array`` looks
in ``sys.modules`` first (a torch tensor cannot exist unless torch is loaded).
"""

from __future__ import annotations

import os
import sys
from typing import NamedTuple

from .array_api_carrier import ArrayAPICarrier, _strict, as_namespace
from .base import Carrier, LibraryCarrier
from .dask_carrier import DaskCarrier
from .jax_carrier import JaxCarrier, implicit_narrowing
from .kind import CarrierKind, kind_of_parts
from .numpy_carrier import NumpyCarrier
from .torch_carrier import TorchCarrier

__all__ = [
    "REGISTERED",
    "CarrierKind",
    "Registered",
    "carrier_for_array",
    "carrier_names",
    "get_default_carrier",
    "kind_for_array",
    "resolve",
    "set_default_carrier",
    "transfer",
]

class Registered(NamedTuple):
    """One carrier the registry knows: its name and the facts the floors above ask of it.

    Every table of carrier names derives from ``REGISTERED``: ``carrier=`` and
    ``device=`` names, the namespace modules ``resolve`` accepts (a library
    carrier's ``library_modules``), the type test of ``carrier_for_array``
    (its ``array_type``), the name a pickle stores, and what
    ``available_carriers()`` imports.
    """

    #: what ``carrier=`` (and, unless lazy, ``device=``) takes, and a pickle stores
    name: str
    cls: type[Carrier]
    #: the module ``available_carriers()`` imports to see whether the backend is installed
    module: str
    #: its arrays hold their values now, so one element is read cheaply (not a lazy graph, nor a generic
    #: namespace whose arrays may live anywhere)
    eager: bool = False
    #: it builds task graphs: every value read is a computation, so the testing tools take it only when asked
    lazy: bool = False
    #: top-level modules of its array classes whose own ``reshape`` method is ``xp.reshape``
    reshape_modules: tuple[str, ...] = ()
    #: top-level modules of its native device objects (``device=torch.device("cpu")``)
    device_modules: tuple[str, ...] = ()
    #: its library spells its CPU device ``"cpu"``, as ``device="cpu"`` does
    cpu_string: bool = False


#: every carrier, in report order: adding a carrier is one entry here plus its carrier module
REGISTERED = (
    Registered("numpy", NumpyCarrier, "numpy", eager=True, reshape_modules=("numpy",), cpu_string=True),
    Registered("torch", TorchCarrier, "torch", eager=True, reshape_modules=("torch",), device_modules=("torch",),
               cpu_string=True),
    Registered("jax", JaxCarrier, "jax", eager=True, reshape_modules=("jax", "jaxlib"),
               device_modules=("jax", "jaxlib")),
    Registered("array_api_strict", ArrayAPICarrier, "array_api_strict", device_modules=("array_api_strict",)),
    Registered("dask", DaskCarrier, "dask.array", lazy=True, reshape_modules=("dask",)),
)
_BY_NAME = {entry.name: entry.cls for entry in REGISTERED}
#: the library carriers, whose arrays are recognised by type (in REGISTERED's order: numpy first)
_LIBRARIES = tuple(entry.cls for entry in REGISTERED if issubclass(entry.cls, LibraryCarrier))
#: (library module, its array type's name, carrier class), in that order
_ARRAY_TYPES = tuple((cls.library_modules[0], cls.array_type, cls) for cls in _LIBRARIES)
#: array class -> its library carrier, filled on first sight (a handful of classes: the libraries' arrays and
#: JAX's tracers)
_BY_TYPE: dict[type, type[Carrier]] = {}
# module __name__ -> carrier class (raw modules and their array_api_compat wrappers)
_BY_MODULE = {module: cls for cls in _LIBRARIES for module in cls.library_modules}


def carrier_names(*, lazy: bool = True) -> tuple[str, ...]:
    """Every registered carrier name (``lazy=False``: without the lazy ones), in report order."""
    return tuple(entry.name for entry in REGISTERED if lazy or not entry.lazy)


def segment_sum(xp, values, segments, n):
    """``values`` summed by segment into a 1-D array of ``n`` (duplicates accumulate): the
    scatter-add of the carrier class that holds ``xp``'s arrays (``Carrier.segment_sum``),
    the standard-only form for any other namespace."""
    return _BY_MODULE.get(getattr(xp, "__name__", ""), ArrayAPICarrier).segment_sum(xp, values, segments, n)


def _kind(cls, namespace=None, device=None):
    xp = cls._check_namespace(namespace)
    return kind_of_parts(cls, xp, cls._normalize_device(xp, device))


def resolve(spec=None, device=None):
    """Turn a ``carrier=`` argument into a :class:`CarrierKind`.

    ``spec`` is ``None`` (the default carrier), a ``CarrierKind``, a Carrier
    instance (its class, namespace and device), a Carrier subclass, one of
    ``"numpy"``, ``"torch"``, ``"jax"``, ``"array_api_strict"``, ``"dask"``, or a
    namespace module (numpy, torch, jax.numpy, array_api_strict, any other
    Array API namespace -> ArrayAPICarrier).  ``device`` overrides the
    device.  Unknown specs raise ``TypeError`` naming them; a missing backend
    raises ``ImportError`` naming the pip extra.
    """
    if spec is None:
        kind = get_default_carrier()
    elif isinstance(spec, CarrierKind):
        kind = spec
    elif isinstance(spec, Carrier):
        kind = spec.kind
    elif isinstance(spec, type) and issubclass(spec, Carrier) and spec is not Carrier:
        return _kind(spec, None, device)
    elif isinstance(spec, str):
        cls = _BY_NAME.get(spec)
        if cls is None:
            raise TypeError(f"unknown carrier {spec!r}; expected one of {sorted(_BY_NAME)}, "
                            f"a Carrier subclass or instance, or a namespace module")
        return _kind(cls, None, device)
    elif type(spec).__name__ == "module":
        cls = _BY_MODULE.get(spec.__name__)
        if cls is not None:
            return _kind(cls, None, device)
        if spec.__name__ == "array_api_strict":
            return _kind(ArrayAPICarrier, _strict(), device)
        try:
            xp = as_namespace(spec)
        except TypeError:
            raise TypeError(f"carrier module {spec.__name__!r} is not an Array API namespace") from None
        return _kind(ArrayAPICarrier, xp, device)
    else:
        raise TypeError(
            f"cannot use {spec!r} as a carrier; expected None, a Carrier subclass or instance, "
            f"one of {sorted(_BY_NAME)}, or a namespace module"
        )
    if device is not None:
        kind = kind._replace(device=kind.cls._normalize_device(kind.namespace, device))
    return kind


# ----- the default carrier ----------------------------------------------------

_default: CarrierKind | None = None


def get_default_carrier() -> CarrierKind:
    """The current default :class:`CarrierKind` (initially ``$STRIDEWEAVE_CARRIER``, else numpy on the CPU)."""
    global _default
    if _default is None:
        _default = _from_environment()
    return _default


def _from_environment() -> CarrierKind:
    # Lets a whole program (or a test suite such as array-api-tests) run on
    # another carrier without code changes; read once, on first use.
    name = os.environ.get("STRIDEWEAVE_CARRIER", "").strip()
    if not name:
        return _kind(NumpyCarrier)
    if name not in _BY_NAME:
        raise ValueError(f"STRIDEWEAVE_CARRIER={name!r} is not a carrier name; expected one of {sorted(_BY_NAME)}")
    return resolve(name)


class _DefaultCarrierScope:
    """Returned by ``set_default_carrier``; restores the previous default on exit."""

    __slots__ = ("_previous", "kind")

    def __init__(self, kind, previous):
        self.kind = kind
        self._previous = previous

    def __enter__(self):
        return self.kind

    def __exit__(self, *exc):
        global _default
        _default = self._previous
        return False

    def __repr__(self):
        return f"set_default_carrier({self.kind!r})"


def set_default_carrier(spec, device=None):
    """Make ``spec`` (anything ``resolve`` accepts; ``None`` = numpy) the default.

    Takes effect immediately; use the result as a context manager to restore
    the previous default on exit.  The default is process-global.
    """
    global _default
    kind = _kind(NumpyCarrier, None, device) if spec is None else resolve(spec, device)
    previous = get_default_carrier()
    _default = kind
    return _DefaultCarrierScope(kind, previous)


# ----- native arrays ---------------------------------------------------------------


class TracerError(TypeError):
    """Kept for callers that catch it: JAX tracers are now carrier arrays (staged), so nothing raises it."""


def carrier_for_array(x) -> type[Carrier]:
    """The carrier class for a native array (``TypeError`` if ``x`` is not one)."""
    known = _BY_TYPE.get(x.__class__)
    if known is not None:
        return known
    mods = sys.modules
    for module, array_type, cls in _ARRAY_TYPES:  # an array of a library that is not loaded cannot exist
        library = mods.get(module)
        if library is not None and isinstance(x, getattr(library, array_type)):  # a JAX tracer too
            _BY_TYPE[x.__class__] = cls
            return cls
    ArrayAPICarrier._namespace_of(x)  # TypeError naming x's type if not an array
    return ArrayAPICarrier


def kind_for_array(x) -> CarrierKind:
    """The :class:`CarrierKind` (class, namespace, device) a native array lives in."""
    cls = carrier_for_array(x)
    return kind_of_parts(cls, cls._namespace_of(x), cls._device_of(x))


def transfer(x, kind):
    """Move a carrier or native array to ``kind`` (anything ``resolve`` accepts).

    A native array comes back as a native array of the target namespace and
    device, through DLPack where possible (zero-copy on the same device), else
    through numpy.  A carrier comes back as a carrier of the target kind:
    itself if it already is one, else a copy with the same dtype and values.
    """
    kind = resolve(kind)
    if isinstance(x, Carrier):
        if kind.holds(x):
            return x
        return kind.cls.from_array(transfer(x.array, kind))
    try:
        if kind.cls._namespace_of(x) is kind.namespace and kind.cls._device_of(x) == kind.device:
            return x
    except TypeError:
        pass
    with implicit_narrowing():  # moving a float64 array onto JAX without x64 narrows it, as jnp.asarray does
        probe = kind.cls.allocate(0, _dtype_of_native(x), namespace=kind.namespace, device=kind.device)
    return probe._import_foreign(x)


def _dtype_of_native(x):
    cls = carrier_for_array(x)
    return cls._sw_dtype_in(cls._namespace_of(x), x.dtype)
