"""Evaluating Tensors on lazy (Dask) carriers: ``sw.compute`` and ``Tensor.compute``."""

from __future__ import annotations

import numpy as np

from ..carriers import DaskCarrier, NumpyCarrier
from ..carriers.dask_carrier import compute_arrays
from .creation import from_subtensors
from .tensor import Tensor

__all__ = ["compute"]


def compute(*tensors):
    """Evaluate Tensors on Dask carriers together: one graph, shared work done once.

    Returns a tuple of Tensors with the same layouts on NumPy carriers holding
    the computed values (Tensors on other carriers come back unchanged).  Runs
    on the active ``dask.distributed`` client when there is one, else on
    Dask's default scheduler.  Only the window of storage each Tensor
    addresses is computed; a failure changes nothing.
    """
    for t in tensors:
        if not isinstance(t, Tensor):
            raise TypeError(f"compute expects strideweave Tensors, got {type(t).__name__}: {t!r}")
    jobs = []  # (tensor index, carrier index, window start) per lazy carrier window
    arrays = []
    for i, t in enumerate(tensors):
        for j, carrier in enumerate(t._carriers):
            if isinstance(carrier, DaskCarrier):
                lo, hi = _window(t, j)
                jobs.append((i, j, lo))
                arrays.append(_window_array(carrier, lo, hi))
    if not arrays:
        return tuple(tensors)
    values = compute_arrays(arrays)
    done = {}
    for (i, j, lo), host in zip(jobs, values):
        done[i, j] = (NumpyCarrier.from_array(np.ascontiguousarray(host).reshape(-1)), lo)
    out = []
    for i, t in enumerate(tensors):
        computed = [done.get((i, j)) for j in range(len(t._carriers))]
        out.append(t if all(c is None for c in computed) else _rebuilt(t, computed))
    return tuple(out)


def _window_array(carrier, lo, hi):
    """The lazy array of ``carrier``'s storage ``[lo, hi)``: the whole buffer in the N-D shape it was
    wrapped or placed in when it has one (flattened on the host, for free), which saves Dask a
    reshape task per chunk."""
    if lo == 0 and hi == carrier.size:
        shaped = carrier._shaped_now()
        if shaped is not None:
            return shaped
    return carrier._array[lo:hi]


def _window(t, j):
    """The storage range [lo, hi) subtensor or field ``j`` of ``t`` addresses."""
    if t._blocks is not None:
        block = t._blocks[0][j]
        return block._offset, block._offset + block._layout.cosize
    if len(t._carriers) > 1:  # compound fields share one offset: keep whole buffers
        return 0, t._carriers[j]._size
    return t._offset, t._offset + t._layout.cosize


def _rebuilt(t, computed):
    """``t`` with its computed carriers swapped in (offsets shifted to the computed window)."""
    if t._blocks is not None:
        blocks, mode = t._blocks
        parts = [b if c is None else Tensor(c[0], b._layout, b._offset - c[1])
                 for b, c in zip(blocks, computed)]
        return from_subtensors(parts, mode)
    carriers = [t._carriers[j] if c is None else c[0] for j, c in enumerate(computed)]
    lo = computed[0][1] if len(carriers) == 1 else 0
    return Tensor(carriers if len(carriers) > 1 else carriers[0], t._layout, t._offset - lo, dtype=t._dtype)
