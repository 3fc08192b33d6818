"""Carrier test helpers: the backends under test and brute-force references.

Every carrier-touching test runs on numpy, torch, jax and array_api_strict
(the four public carriers) and on two extra generic configurations that
exercise the pure-Array-API code paths: ``generic-numpy`` (ArrayAPICarrier
over array_api_compat.numpy, mutable) and ``generic-jax`` (ArrayAPICarrier
over jax.numpy, immutable, so writes swap the buffer).
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from strideweave.carriers import ArrayAPICarrier, CarrierKind, resolve, transfer

BACKENDS = ["numpy", "torch", "jax", "array_api_strict", "generic-numpy", "generic-jax"]


class Backend:
    """A carrier kind plus numpy conversions for comparing results."""

    def __init__(self, name):
        self.name = name
        if name == "generic-numpy":
            import array_api_compat.numpy as xp
            self.kind = CarrierKind(ArrayAPICarrier, xp, "cpu")
        elif name == "generic-jax":
            jnp = pytest.importorskip("jax.numpy")
            import jax
            self.kind = CarrierKind(ArrayAPICarrier, jnp, jax.devices()[0])
        else:
            pytest.importorskip({"array_api_strict": "array_api_strict"}.get(name, name))
            self.kind = resolve(name)

    def native(self, values):
        """A native array of this backend holding the numpy ``values``."""
        return transfer(np.ascontiguousarray(values), self.kind)

    def carrier(self, values):
        """A carrier of this backend wrapping a copy of the 1-D numpy ``values``."""
        return self.kind.from_array(self.native(np.array(values)))

    def to_np(self, native):
        return np.array(self.kind.cls.to_numpy(native))

    def __repr__(self):
        return f"Backend({self.name})"


# ----- brute-force references over every coordinate ------------------------------


def offsets_rev(layout, offset):
    """Buffer offset of every element of the rev array (numpy int array)."""
    rs, rt = layout.leaf_shape[::-1], layout.leaf_stride[::-1]
    out = np.zeros(rs, dtype=np.int64)
    for coord in itertools.product(*(range(e) for e in rs)):
        out[coord] = offset + sum(c * s for c, s in zip(coord, rt))
    return out


def ref_gather_rev(buf, layout, offset):
    return buf[offsets_rev(layout, offset)]


def ref_gather(buf, layout, offset):
    ls, lt = layout.leaf_shape, layout.leaf_stride
    out = np.zeros(ls, dtype=buf.dtype)
    for coord in itertools.product(*(range(e) for e in ls)):
        out[coord] = buf[offset + sum(c * s for c, s in zip(coord, lt))]
    return out


def ref_scatter_add_rev(buf, layout, offset, values):
    out = buf.copy()
    idx = offsets_rev(layout, offset)
    vals = np.broadcast_to(values, idx.shape)
    for pos, v in zip(idx.reshape(-1), vals.reshape(-1)):
        out[pos] += v
    return out


def ref_scatter_rev(buf, layout, offset, values):
    """Reference for injective layouts (or duplicates that agree)."""
    out = buf.copy()
    idx = offsets_rev(layout, offset)
    out[idx.reshape(-1)] = np.broadcast_to(values, idx.shape).reshape(-1)
    return out
