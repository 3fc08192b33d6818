"""Which carriers the testing tools run on: the installed ones, or those a caller names."""

from __future__ import annotations

import importlib
from typing import Any

from ..carriers import REGISTERED, Carrier, resolve

__all__ = ["available_carriers"]


def available_carriers(*, lazy: bool = False) -> list[str]:
    """Names of the registered carriers (numpy, torch, jax, array_api_strict) whose backend imports.

    ``lazy=True`` adds the lazy carriers (``"dask"``) whose backend imports: they
    build task graphs, where every value read is a computation, so they join
    only when asked for.
    """
    names = []
    for name, module in ((entry.name, entry.module) for entry in REGISTERED if lazy or not entry.lazy):
        try:
            importlib.import_module(module)
            resolve(name)
        except ImportError:
            continue
        names.append(name)
    return names


def _carrier_label(spec: Any) -> str:
    """A readable name for a ``carrier=`` spec (name, class, module or instance)."""
    if isinstance(spec, str):
        return spec
    if isinstance(spec, type):
        return spec.__name__
    if isinstance(spec, Carrier):
        return type(spec).__name__
    return getattr(spec, "__name__", repr(spec))


def _carrier_list(carriers: Any) -> list:
    if carriers is None:
        return available_carriers()
    if isinstance(carriers, (str, type)) or not isinstance(carriers, (list, tuple)):
        carriers = [carriers]
    return list(carriers)
