"""The flat recorder of a binary elementwise op whose smaller operand broadcasts in storage order.

``x @ W + b``: the bias row stretches along the matrix's other mode. Where
the full-shape operand is dense and the other's buffer lines up with its
storage order (``ops._storage.lined_up_shape``), ``_Binary.forward`` runs on
the two buffers reshaped and records a flat node; ``with_lined_up`` makes
that same result and node in one step (``flat_function``), without the
generic call, kind and layout searches of ``Operation.__call__``. Backward
is the node's own (``_Binary.backward_flat``, which sums the stretched axes).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from ..tensors.broadcasting import broadcast_modes
from ._primitive import flat_function, flat_operand_source
from ._storage import lined_up_shape

__all__ = ["with_lined_up"]


@lru_cache(maxsize=1024)
def full_operand(a_modes: tuple, b_modes: tuple) -> int | None:
    """Which of two different top-level mode tuples is the broadcast of both (0: the first, 1: the
    second), or None where neither is or they do not broadcast (the general path raises the error)."""
    try:
        modes = broadcast_modes(a_modes, b_modes)
    except ValueError:
        return None
    return 0 if modes == a_modes else 1 if modes == b_modes else None


with_lined_up: Any = flat_function("with_lined_up", "cls, first, second", """\
a_layout, b_layout = first._layout, second._layout
if a_layout._shape_modes == b_layout._shape_modes:
    return None  # one shape: ``with_tensor``'s case, or the general path's
side = full_operand(a_layout._shape_modes, b_layout._shape_modes)
if side is None:
    return None
layout = b_layout if side else a_layout  # the layout ``result_layout`` picks: the dense full-shape operand's
if not layout._is_compact:
    return None
""" + flat_operand_source("first", "values", "kind") + flat_operand_source("second", "other", "other_kind") + """\
cls_of = kind.cls
if (other_kind is not kind and other_kind != kind) or not cls_of.native_methods or cls_of.keeps_shape:
    return None
a_shape = layout._storage_shape if not side else lined_up_shape(a_layout, layout)
b_shape = layout._storage_shape if side else lined_up_shape(b_layout, layout)
if a_shape is None or b_shape is None:
    return None  # a buffer that does not run in the result's storage order: the general path reads it
computed = cls.compute(kind.namespace, values.reshape(a_shape), other.reshape(b_shape))
out = computed.reshape(-1)
saved = (None, computed) if cls.keeps_result else None
inputs = (first, second)
""", {"full_operand": full_operand, "lined_up_shape": lined_up_shape},
    """The result of the binary op ``cls`` of two Float32 Tensors of different shapes, one dense in the
    broadcast shape and the other's buffer lined up with its storage order, made and recorded as
    ``_Binary.forward`` makes it there (a flat node), or None for the general path.
    """, names=("first", "second"))
