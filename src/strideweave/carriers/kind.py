"""Where carriers live: :class:`CarrierKind` (class, namespace, device) and dtype facts about a kind.

A kind is a small immutable value; ``resolve`` (in :mod:`.registry`) builds
one from any ``carrier=`` argument, and ``Carrier.kind`` reports a carrier's
own.  This module imports no carrier class, so every carrier file may use it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

from ..dtypes import DType

if TYPE_CHECKING:
    from .base import Carrier

__all__ = ["CarrierKind", "NamedDevice", "default_int", "kind_of_parts", "missing_wide_types", "named_device"]


class CarrierKind(NamedTuple):
    """Where carriers live: exact class, Array API namespace and device."""

    cls: type[Carrier]
    namespace: Any  # an Array API namespace module; its functions are the standard's, which no stub types
    device: object

    def allocate(self, n, dtype):
        """Zero-filled carrier of ``n`` elements of ``dtype`` of this kind."""
        return self.cls.allocate(n, dtype, namespace=self.namespace, device=self.device)

    def from_array(self, array1d):
        """Wrap a native 1-D array of this kind's library without copying."""
        return self.cls.from_array(array1d)

    def holds(self, carrier: Carrier) -> bool:
        """Whether ``carrier`` is of exactly this kind: same class, namespace object and device."""
        return carrier.__class__ is self.cls and carrier._xp is self.namespace and carrier._device == self.device

    def __repr__(self):
        name = getattr(self.namespace, "__name__", repr(self.namespace))
        return f"CarrierKind({self.cls.__name__}, {name}, {self.device!r})"


_KINDS: dict = {}


def kind_of_parts(cls: type, namespace: object, device: object) -> CarrierKind:
    """The one :class:`CarrierKind` for these parts: equal kinds are then the same object, which the
    hot paths compare with ``is`` before falling back to ``==``."""
    key = (cls, namespace, device)
    try:
        return _KINDS[key]
    except KeyError:
        return _KINDS.setdefault(key, CarrierKind(cls, namespace, device))
    except TypeError:  # an unhashable device
        return CarrierKind(cls, namespace, device)


class NamedDevice(str):
    """A string device (NumPy's ``"cpu"``) that names the carrier it came from.

    ``x.device`` returns one for carriers whose native device is a string, so
    ``device=x.device`` lands on x's own carrier whatever the default carrier
    is (a bare ``"cpu"`` means the default carrier where it lives on the CPU).
    It compares and hashes as the string.
    """

    kind: CarrierKind

    def __new__(cls, name: str, kind: CarrierKind) -> NamedDevice:
        self = str.__new__(cls, name)
        self.kind = kind
        return self

    def __reduce__(self):
        return (str, (str(self),))


_NAMED: dict = {}


def named_device(carrier) -> object:
    """``carrier``'s device as ``x.device`` reports it: a :class:`NamedDevice` for string devices."""
    device = carrier.device
    if not isinstance(device, str):
        return device
    kind = carrier._kind or carrier.kind
    named = _NAMED.get(kind)
    if named is None:
        named = _NAMED[kind] = NamedDevice(device, kind)
    return named


def missing_wide_types(kind: CarrierKind) -> tuple:
    """Dtype names ``kind`` cannot store: JAX has no 64-bit types unless x64 mode is on."""
    if kind.cls.backend == "jax":
        import jax

        if not jax.config.jax_enable_x64:  # type: ignore[attr-defined]  # jax declares its flags at run time
            return ("int64", "uint64", "float64", "complex128")
    return ()


def default_int(kind: CarrierKind):
    """The default integer dtype on ``kind``: int64, or int32 where 64-bit integers cannot be stored."""
    return DType.Int32 if "int64" in missing_wide_types(kind) else DType.Int64
