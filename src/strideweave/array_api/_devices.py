"""Devices for the namespace: ``device=`` as a carrier name, a native device, or ``x.device``."""

from __future__ import annotations

import sys
from typing import Any

from ..carriers import (
    REGISTERED,
    CarrierKind,
    NamedDevice,
    carrier_names,
    default_int,
    get_default_carrier,
    missing_wide_types,
    resolve,
)
from ..dtypes import DType

__all__ = ["Info", "default_int", "kind_for_device"]

#: the carrier names ``device=`` takes: every registered carrier but the lazy ones
_NAMES = carrier_names(lazy=False)


def _library_of(device: Any) -> str | None:
    """Which carrier a native device object belongs to (no backend is imported to ask)."""
    module = type(device).__module__ or ""
    for entry in REGISTERED:
        for library in entry.device_modules:
            if module.startswith(library) and library in sys.modules:
                return entry.name
    return None


def kind_for_device(device: Any) -> CarrierKind:
    """The carrier kind ``device`` names (``None``: the default carrier)."""
    if device is None:
        return get_default_carrier()
    if isinstance(device, CarrierKind):
        return device
    if isinstance(device, NamedDevice):
        return device.kind  # an array's .device: its own carrier, whatever the default is
    if isinstance(device, str):
        if device in _NAMES:
            return resolve(device)
        if device == "cpu":
            default = get_default_carrier()
            # NumPy's device is the string "cpu"; torch also spells its CPU that way.
            spells_cpu = any(entry.cls is default.cls and entry.cpu_string for entry in REGISTERED)
            return default if spells_cpu else resolve("numpy")
        raise ValueError(f"unknown device {device!r}; expected a carrier name {list(_NAMES)}, a native device "
                         f"or an array's .device")
    library = _library_of(device)
    if library is None:
        raise ValueError(f"unknown device {device!r} ({type(device).__name__}); expected a carrier name "
                         f"{list(_NAMES)}, a native device or an array's .device")
    return resolve(library, device=device)


def _default_device() -> Any:
    kind = get_default_carrier()
    return NamedDevice(kind.device, kind) if isinstance(kind.device, str) else kind.device


_DTYPES = {d.name: d for d in (DType.Bool, DType.Int8, DType.Int16, DType.Int32, DType.Int64, DType.UInt8,
                                DType.UInt16, DType.UInt32, DType.UInt64, DType.Float32, DType.Float64,
                                DType.Complex64, DType.Complex128)}
_SIGNED, _UNSIGNED = ("int8", "int16", "int32", "int64"), ("uint8", "uint16", "uint32", "uint64")
_KINDS = {"bool": ("bool",), "signed integer": _SIGNED, "unsigned integer": _UNSIGNED,
          "integral": _SIGNED + _UNSIGNED, "real floating": ("float32", "float64"),
          "complex floating": ("complex64", "complex128"),
          "numeric": _SIGNED + _UNSIGNED + ("float32", "float64", "complex64", "complex128")}


class Info:
    """``__array_namespace_info__()``: what this namespace supports."""

    def capabilities(self) -> dict:
        """Boolean indexing and data-dependent shapes work; ``max dimensions`` is unbounded."""
        return {"boolean indexing": True, "data-dependent shapes": True, "max dimensions": None}

    def default_device(self) -> Any:
        """The default carrier's native device (naming that carrier, as ``x.device`` does)."""
        return _default_device()

    def devices(self) -> list:
        """The default carrier's native device (other carriers are reached by name)."""
        return [_default_device()]

    def default_dtypes(self, *, device: Any = None) -> dict:
        """float32 for reals, complex64 for complex, and ``default_int`` for indexing and integers."""
        integer = default_int(kind_for_device(device))
        return {"real floating": DType.Float32, "complex floating": DType.Complex64, "integral": integer,
                "indexing": integer}

    def dtypes(self, *, device: Any = None, kind: Any = None) -> dict:
        """The dtypes of ``kind`` (all when ``None``) by name that ``device``'s carrier can store."""
        storable = {n: d for n, d in _DTYPES.items() if n not in missing_wide_types(kind_for_device(device))}
        if kind is None:
            return storable
        kinds = kind if isinstance(kind, tuple) else (kind,)
        out = {}
        for k in kinds:
            if isinstance(k, str):
                if k not in _KINDS:
                    raise ValueError(f"unknown dtype kind {k!r}; expected one of {sorted(_KINDS)}")
                out.update({n: storable[n] for n in _KINDS[k] if n in storable})
            else:
                out.update({n: d for n, d in storable.items() if d is k})
        return out

