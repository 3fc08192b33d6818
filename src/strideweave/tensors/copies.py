"""Copies of Tensors for ``copy``, ``copy.deepcopy`` and ``pickle`` (docs/api.md section 4, "Copies").

``copy.copy(t)`` and ``copy.deepcopy(t)`` mean ``xp.asarray(t, copy=True)``:
with grad mode on and ``t`` differentiable, a recorded copy whose gradient
flows back to ``t`` (so library code that copies its input, such as
xarray's ``DataArray.copy()``, differentiates); otherwise a fresh leaf in
fresh canonical storage of the same carrier class and device. ``pickle``
stores the values of any Tensor and loads them as a leaf, as torch does:
history never travels through a file. (``copy.copy`` itself is attached in
``strideweave._methods``, above the recording floor.)
"""

from __future__ import annotations

from typing import Any

from ..carriers import REGISTERED, carrier_names, resolve, transfer
from ..carriers.base import LibraryCarrier
from ..dtypes import CompoundDType, dtype_from_name
from ..layout import Layout
from .creation import from_subtensors
from .tensor import Tensor, to_numpy

__all__ = ["deep_copy", "fresh_copy", "rebuild", "reduce"]

#: carrier class -> its registered name, for the classes that hold one library (a generic namespace carrier is
#: named by its namespace module)
_CARRIER_NAMES = {entry.cls: entry.name for entry in REGISTERED if issubclass(entry.cls, LibraryCarrier)}


def _canonical_values(t: Tensor) -> list:
    """One flat native array per carrier, in canonical (colexicographic) order, sharing nothing with ``t``."""
    out = []
    for carrier in t._carriers:
        xp = carrier.kind.namespace
        out.append(xp.asarray(xp.reshape(carrier.gather_rev(t._layout, t._offset), (-1,)), copy=True))
    return out


def fresh_copy(t: Tensor) -> Tensor:
    """A leaf holding ``t``'s values in fresh canonical storage of the same carriers' kinds."""
    if t._blocks is not None:
        blocks, mode = t._blocks
        return from_subtensors([fresh_copy(b) for b in blocks], mode)
    carriers = [c.kind.from_array(v) for c, v in zip(t._carriers, _canonical_values(t))]
    return Tensor(carriers, Layout.canonical(t._layout.shape.modes), 0, t._dtype)


def deep_copy(t: Tensor, out: Tensor, memo: dict) -> Tensor:
    """``copy.deepcopy``: ``out``, the copy ``copy.copy(t)`` made, with a leaf copy's ``.grad``
    deep-copied too, as torch does."""
    import copy

    memo[id(t)] = out
    if t._grad is not None and out._ctx is None:
        out._grad = copy.deepcopy(t._grad, memo)
    return out


def _carrier_token(kind) -> tuple:
    """What names ``kind`` in a pickle: a carrier name (or namespace module) and a picklable device."""
    name = _CARRIER_NAMES.get(kind.cls, getattr(kind.namespace, "__name__", None))
    device = kind.device
    if name == "jax":
        import jax

        device = f"{device.platform}:{jax.devices(device.platform).index(device)}"
    return name, device


def _kind_from_token(name: str, device: Any):
    if name in carrier_names():
        return resolve(name, device=device)
    import importlib

    return resolve(importlib.import_module(name), device=device)


def reduce(t: Tensor) -> tuple:
    """``__reduce_ex__``: the values (host NumPy arrays), the hierarchical shape, dtype and carriers."""
    if t._blocks is not None:
        blocks, mode = t._blocks
        return _rebuild_blocks, (tuple(b.detach() for b in blocks), mode)
    fields = t._dtype.fields if isinstance(t._dtype, CompoundDType) else None
    dtypes = [d.name for _, d in fields] if fields else [t._dtype.name]
    storage = [(_carrier_token(c.kind), to_numpy(v)) for c, v in zip(t._carriers, _canonical_values(t))]
    return rebuild, (t._layout.shape.modes, [n for n, _ in fields] if fields else None, dtypes, storage)


def rebuild(modes: tuple, field_names: list | None, dtypes: list, storage: list) -> Tensor:
    """A leaf Tensor from what ``reduce`` stored (``pickle`` calls it by this name)."""
    carriers = []
    for ((name, device), host), dtype_name in zip(storage, dtypes):
        kind = _kind_from_token(name, device)
        carrier = kind.from_array(transfer(host, kind))
        if carrier.dtype != dtype_from_name(dtype_name):
            raise ValueError(f"unpickled storage holds {carrier.dtype!r}, expected {dtype_name}")
        carriers.append(carrier)
    dtype = carriers[0].dtype if field_names is None else \
        CompoundDType([(n, dtype_from_name(d)) for n, d in zip(field_names, dtypes)])
    return Tensor(carriers, Layout.canonical(modes), 0, dtype)


def _rebuild_blocks(blocks: tuple, mode: int) -> Tensor:
    return from_subtensors(blocks, mode)
