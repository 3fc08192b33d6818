"""Input generation: seeded values and the storage layouts every case runs in.

Every case describes its inputs by *logical* shape and value range
(:class:`InputSpec`). This module turns one spec into flat float32 storage
plus a :class:`strideweave.Layout` and offset, in one of several layout
variants:

``canonical``   compact, first mode fastest (CuTe LayoutLeft)
``transposed``  compact, last leaf fastest (C order / LayoutRight)
``holes``       the layout of a slice of a larger buffer: padded strides and
                an offset, with NaN in every slot the layout does not address
``broadcast``   one leaf mode with stride 0 (broadcast-aliased leaf); the
                logical values repeat along that mode
``nested``      the spec's alternative nested shape (same logical values)

Values are drawn with NumPy from the case seed, per input and independent of
the variant, so every carrier (and every non-broadcast variant) sees the
same logical values.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np

import strideweave as sw

__all__ = [
    "DEVICES_VARIABLE",
    "VARIANTS",
    "InputSpec",
    "PreparedInput",
    "carrier_device",
    "logical_offsets",
    "parse_devices",
    "prepare_inputs",
    "storage_bound",
    "tensor_from_logical",
    "variant_applies",
]

VARIANTS = ("canonical", "transposed", "holes", "broadcast", "nested")


@dataclass(frozen=True)
class InputSpec:
    """One differentiable input of a case.

    shape:     logical top-level modes (ints or nested tuples), e.g. ``(3, 4)``.
    low/high:  value range.
    signed:    when True, magnitudes are drawn from ``[low, high]`` and given a
               random sign (keeps values away from 0, for abs/where/divide).
    nested:    an alternative shape with the same mode sizes and at least one
               nested mode, used by the ``nested`` variant (None: not meaningful).
    broadcast: whether a stride-0 leaf is meaningful for this input.
    broadcast_leaf: which leaf (depth-first index) gets stride 0 in the
               ``broadcast`` variant; default the first leaf with extent > 1.
    pins:      ``((index, value), ...)``: exact values at logical positions
               (e.g. zeros for ``prod``), applied after drawing.
    """

    shape: tuple
    low: float = -1.0
    high: float = 1.0
    signed: bool = False
    nested: tuple | None = None
    broadcast: bool = True
    broadcast_leaf: int | None = None
    pins: tuple = ()

    def draw(self, rng: np.random.Generator) -> np.ndarray:
        """Logical values (float32), one axis per top-level mode."""
        sizes = tuple(_mode_size(m) for m in self.shape)
        values = rng.uniform(self.low, self.high, size=sizes)
        if self.signed:
            values = values * rng.choice([-1.0, 1.0], size=sizes)
        for index, value in self.pins:
            values[index] = value
        return values.astype(np.float32)


@dataclass(frozen=True)
class PreparedInput:
    """Flat storage plus the layout/offset that views it as the logical input."""

    storage: np.ndarray      # float32, 1-D, NaN in holes
    layout: sw.Layout
    offset: int
    logical: np.ndarray      # float32 logical values seen through the layout
    index: np.ndarray        # int64 storage slot (offset included) per logical position
    bound: int               # storage_bound(spec): the same for every variant

    def padded_storage(self) -> np.ndarray:
        """The storage zero-padded to ``bound`` (variant-independent length)."""
        out = np.zeros(self.bound, dtype=np.float32)
        out[: self.storage.size] = self.storage
        return out

    def tensor(self, carrier: Any) -> sw.Tensor:
        """A leaf Tensor on ``carrier`` viewing this storage through the layout."""
        return sw.Tensor.from_storage(self.storage, self.layout, offset=self.offset, carrier=carrier,
                                      device=carrier_device(carrier))


# ----- layout helpers ---------------------------------------------------------------


def _mode_size(mode: Any) -> int:
    return int(np.prod(_leaves(mode))) if isinstance(mode, tuple) else int(mode)


def _leaves(modes: Any) -> list[int]:
    if isinstance(modes, int):
        return [modes]
    return [leaf for m in modes for leaf in _leaves(m)]


def _unflatten(flat: list[int], like: tuple) -> tuple:
    """Rebuild ``flat`` (leaf order) into the nesting of ``like``."""
    it = iter(flat)

    def build(m):
        return next(it) if isinstance(m, int) else tuple(build(x) for x in m)

    return tuple(build(m) for m in like)


def _strides(extents: list[int], order: list[int], pad: int = 0) -> list[int]:
    """Compact (or padded) strides visiting leaves in ``order`` (fastest first)."""
    strides = [0] * len(extents)
    step = 1
    for k in order:
        strides[k] = step
        step *= extents[k] + pad
    return strides


@cache
def logical_offsets(layout: sw.Layout) -> np.ndarray:
    """Storage offset of every logical position, shaped like ``to_array()``.

    ``layout(i)`` decomposes ``i`` colexicographically over all modes, which
    is Fortran order over the top-level mode sizes (nested modes flattened
    first-fastest, as ``to_array`` does).
    """
    flat = np.array([layout(i) for i in range(layout.size)], dtype=np.int64)
    return flat.reshape(layout.mode_sizes, order="F")


def _layout_for(variant: str, spec: InputSpec) -> tuple[sw.Layout, int, int] | None:
    """(layout, offset, storage size) of ``spec`` in ``variant``; None if not meaningful."""
    shape = spec.shape
    extents = _leaves(shape)
    n = len(extents)
    if variant == "canonical":
        layout = sw.Layout.canonical(sw.Shape(shape))
        return layout, 0, layout.cosize
    if variant == "transposed":
        if sum(e > 1 for e in extents) < 2:
            return None
        strides = _strides(extents, list(reversed(range(n))))
        layout = sw.Layout(sw.Shape(shape), sw.Stride(_unflatten(strides, shape)))
        return layout, 0, layout.cosize
    if variant == "holes":
        # t[1::2, ::2]-style slice of a padded buffer: every stride doubled
        strides = [2 * s for s in _strides(extents, list(range(n)), pad=1)]
        layout = sw.Layout(sw.Shape(shape), sw.Stride(_unflatten(strides, shape)))
        return layout, 1, 1 + layout.cosize + 2
    if variant == "broadcast":
        big = [k for k, e in enumerate(extents) if e > 1]
        if not spec.broadcast or not big:
            return None
        zero = big[0] if spec.broadcast_leaf is None else spec.broadcast_leaf
        strides = _strides(extents, [k for k in range(n) if k != zero])
        strides[zero] = 0
        layout = sw.Layout(sw.Shape(shape), sw.Stride(_unflatten(strides, shape)))
        return layout, 0, max(layout.cosize, 1)
    if variant == "nested":
        if spec.nested is None:
            return None
        layout = sw.Layout.canonical(sw.Shape(spec.nested))
        return layout, 0, layout.cosize
    raise ValueError(f"unknown layout variant {variant!r}; expected one of {VARIANTS}")


def storage_bound(spec: InputSpec) -> int:
    """A storage length no variant of ``spec`` exceeds (a power of two).

    The native JAX reference pads every variant's storage to it, so all
    variants of a case share array shapes and hence XLA compilations.
    """
    sizes = [r[2] for r in (_layout_for(v, spec) for v in VARIANTS) if r is not None]
    return 1 << (max(sizes) - 1).bit_length()


def variant_applies(variant: str, specs: tuple[InputSpec, ...]) -> bool:
    """True when ``variant`` changes at least one input's layout."""
    return any(_layout_for(variant, s) is not None for s in specs) if variant != "canonical" else True


def prepare_inputs(specs: tuple[InputSpec, ...], variant: str, seed: int) -> list[PreparedInput]:
    """Seeded storage + layouts for every input of a case in one variant.

    An input for which the variant is not meaningful keeps its canonical layout.
    """
    prepared = []
    for i, spec in enumerate(specs):
        values = spec.draw(np.random.default_rng([seed, i]))
        layout, offset, total = _layout_for(variant, spec) or _layout_for("canonical", spec)
        index = offset + logical_offsets(layout)
        storage = np.full(total, np.nan, dtype=np.float32)
        storage[index] = values  # broadcast aliases: one of the aliased values wins
        prepared.append(PreparedInput(storage, layout, offset, storage[index], index, storage_bound(spec)))
    return prepared


def tensor_from_logical(values: np.ndarray, layout: sw.Layout, carrier: Any) -> sw.Tensor:
    """A Tensor on ``carrier`` in ``layout`` (injective) holding logical ``values``."""
    storage = np.zeros(max(layout.cosize, 1), dtype=np.float32)
    storage[logical_offsets(layout)] = np.asarray(values, dtype=np.float32).reshape(layout.mode_sizes)
    return sw.Tensor.from_storage(storage, layout, carrier=carrier, device=carrier_device(carrier))


#: where ``python -m conformance --devices torch=cuda,jax=gpu`` puts each carrier's Tensors; an
#: environment variable, so that the worker processes of ``--jobs`` read the same choice
DEVICES_VARIABLE = "STRIDEWEAVE_CONFORMANCE_DEVICES"


def parse_devices(text: str | None) -> dict[str, str]:
    """``"torch=cuda,jax=gpu"`` -> ``{"torch": "cuda", "jax": "gpu"}`` (``ValueError`` for a malformed entry)."""
    out = {}
    for entry in filter(None, (text or "").split(",")):
        carrier, sep, device = entry.partition("=")
        if not sep or not carrier or not device:
            raise ValueError(f"--devices entry {entry!r} is not of the form carrier=device (e.g. torch=cuda)")
        out[carrier.strip()] = device.strip()
    return out


def carrier_device(carrier: Any) -> Any:
    """The device chosen for ``carrier`` by ``--devices`` (None: the carrier's default device)."""
    if not isinstance(carrier, str):
        return None
    return parse_devices(os.environ.get(DEVICES_VARIABLE)).get(carrier)
