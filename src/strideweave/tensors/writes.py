"""In-place writes (``fill_``, ``copy_``, ``add_``, ``t[key] = value``): never recorded, they bump versions."""

from __future__ import annotations

from typing import Any

from .._locks import lock_for
from ..dtypes import scalar_operand
from .broadcasting import broadcast_modes, expand
from .creation import tensor
from .tensor import Tensor
from .values import kind_of, operand

__all__ = ["check_fits", "write"]


def check_fits(target: Tensor, value: Tensor) -> tuple:
    """``value``'s modes, after a ValueError unless they broadcast to ``target``'s (nothing is written)."""
    modes = target._layout.shape.modes
    value_modes = value._layout.shape.modes
    if len(value_modes) > len(modes) or broadcast_modes(value_modes, modes) != modes:
        raise ValueError(f"cannot write a value of shape {value.shape} into a Tensor of shape {target.shape}")
    return value_modes


def write(target: Tensor, value: Any, add: bool) -> None:
    """Write (or add) ``value``, broadcast to ``target``'s shape, through to its carrier.

    Everything is validated and computed before the single write, so a
    failure leaves storage and version untouched.
    """
    if target._blocks is not None or len(target._carriers) != 1:
        raise NotImplementedError("in-place writes need a Tensor stored in one carrier")
    carrier = target._carriers[0]
    kind = kind_of(carrier)
    xp = kind.namespace
    layout = target._layout
    modes = layout.shape.modes
    if isinstance(value, (bool, int, float)):
        values = scalar_operand(value, target._dtype, "in-place write")
    elif isinstance(value, complex):
        if target._dtype.kind != "complex":
            raise TypeError(f"cannot write the complex value {value!r} into a Tensor of dtype {target._dtype!r}")
        values = value
    else:
        if not isinstance(value, Tensor):
            value = tensor(value, carrier=kind)
        value_modes = check_fits(target, value)
        values = expand(operand(value, kind), value_modes, modes, xp)
        if value._dtype != target._dtype:
            values = xp.astype(values, carrier.native_dtype())
        elif any(c is carrier for c in value._carriers):
            values = xp.asarray(values, copy=True)  # the source may overlap the destination
    if not add:
        carrier.scatter_rev(layout, target._offset, values)
        return
    with lock_for(carrier):  # read, add and write back as one step for concurrent writers
        carrier.scatter_rev(layout, target._offset, carrier.gather_rev(layout, target._offset) + values)
