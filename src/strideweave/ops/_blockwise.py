"""Elementwise operations over multi-subtensor Tensors whose blocks live on different carriers.

``Tensor.from_subtensors`` joins blocks along one top-level mode without
copying; the blocks may sit on different carriers (one on torch, one on
numpy, one on Dask).  An elementwise operation on such a Tensor, given no
``ExecutionOptions``, runs once per block on that block's own carrier: other
Tensor operands are sliced along the block mode (views, no copy) or passed
whole where they broadcast over it, and the result is again a multi-subtensor
Tensor whose blocks stay where their inputs were.  Each per-block call is an
ordinary recorded operation; the joined result has no autograd node, so the
autograd entry points refuse it with NotImplementedError, as the spec says.
"""

from __future__ import annotations

import copy
import itertools
from typing import Any

from ..operation import ExecutionOptions
from ..tensors.creation import from_subtensors
from ..tensors.tensor import Tensor
from ..tensors.values import MixedBlocks, kind_of

__all__ = ["run_blockwise"]


def run_blockwise(op, args: tuple, kwargs: dict) -> Tensor:
    """Run the elementwise primitive ``op`` block by block; the result keeps each block's carrier."""
    lead = next(a for a in args if isinstance(a, Tensor) and a._blocks is not None)
    blocks, mode = lead._blocks  # type: ignore[misc]  # ``lead`` was picked for its blocks
    out_rank = max(a._layout.rank for a in args if isinstance(a, Tensor))
    axis = mode + out_rank - lead._layout.rank  # the block mode's position in the result
    bounds = [0]
    for block in blocks:
        bounds.append(bounds[-1] + block._layout.mode_sizes[mode])
    results = []
    for i, block in enumerate(blocks):
        parts = [_part(a, i, bounds, axis, out_rank, lead) for a in args]
        kind = kind_of(block._carriers[0])
        elsewhere = any(isinstance(p, Tensor) and kind_of(p._carriers[0]) != kind for p in parts)
        options = ExecutionOptions(carrier=kind) if elsewhere else None
        results.append(copy.copy(op)(*parts, options=options, **kwargs))
    return from_subtensors(results, axis)


def _part(arg: Any, i: int, bounds: list, axis: int, out_rank: int, lead: Tensor) -> Any:
    """The piece of ``arg`` that meets block ``i`` of ``lead`` (the whole of it where it broadcasts)."""
    if not isinstance(arg, Tensor):
        return arg
    position = axis - (out_rank - arg._layout.rank)  # arg's mode that lines up with the block mode
    if position < 0 or arg._layout.mode_sizes[position] == 1:
        return arg
    if arg._blocks is not None:
        blocks, mode = arg._blocks
        sizes = [b._layout.mode_sizes[mode] for b in blocks]
        if mode == position and sizes == [hi - lo for lo, hi in itertools.pairwise(bounds)]:
            return blocks[i]
        raise MixedBlocks(
            f"multi-subtensor operands split mode {position} into blocks {sizes} and "
            f"{[hi - lo for lo, hi in itertools.pairwise(bounds)]}; "
            "pass options=ExecutionOptions(carrier=...) to say where the operation runs"
        )
    index = tuple(slice(bounds[i], bounds[i + 1]) if m == position else slice(None)
                  for m in range(arg._layout.rank))
    return arg[index]
