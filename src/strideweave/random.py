"""Seeded random Tensors with the same values on every carrier for the same seed."""

from __future__ import annotations

from typing import Any

import numpy as np

from .carriers import resolve, transfer
from .layout import Layout
from .tensors.creation import _shape_modes
from .tensors.tensor import Tensor

__all__ = ["normal", "uniform"]


def _draw(shape: Any, seed: Any, carrier: Any, device: Any, draw) -> Tensor:
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise TypeError(f"seed must be an int, got {seed!r}")
    modes = _shape_modes(shape)
    layout = Layout.canonical(modes)
    # Values are drawn on the host in canonical storage order, then moved, so
    # every carrier sees identical numbers.
    generator = np.random.Generator(np.random.PCG64(int(seed)))
    flat = np.ascontiguousarray(draw(generator, layout.size))
    kind = resolve(carrier, device=device)
    return Tensor._make(kind.from_array(transfer(flat, kind)), layout, 0)

def normal(shape: Any, *, seed: int, mean: float = 0.0, std: float = 1.0, carrier: Any = None,
           device: Any = None) -> Tensor:
    """Float32 samples from N(mean, std^2), identical on every carrier for one ``seed``."""
    return _draw(shape, seed, carrier, device,
                 lambda g, n: (mean + std * g.standard_normal(n)).astype(np.float32))


def uniform(shape: Any, *, seed: int, low: float = 0.0, high: float = 1.0, carrier: Any = None,
            device: Any = None) -> Tensor:
    """Float32 samples from U[low, high), identical on every carrier for one ``seed``."""
    return _draw(shape, seed, carrier, device,
                 lambda g, n: g.uniform(low, high, n).astype(np.float32))
