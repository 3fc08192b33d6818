"""The Array API broadcasting rule over top-level modes, on rev arrays.

Two Tensors broadcast mode by mode, right-aligned, as the standard's arrays
do by axis; a nested mode broadcasts only against an equal nested mode or
an extent-1 leaf. ``expand`` lines an operand's rev array up with the
result's, and ``unbroadcast`` / ``sum_to`` sum a gradient back.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from ..carriers import REGISTERED
from ..layout.int_tuple import leaves as _flatten_modes

__all__ = ["broadcast_modes", "expand", "expand_plan", "leaves_of", "reduce_plan", "reshape_array", "sum_to",
           "unbroadcast"]

#: array class -> whether its own ``reshape`` method matches ``xp.reshape`` (the registry names the libraries)
_OWN_RESHAPE: dict = {}
_RESHAPE_LIBRARIES = frozenset(module for entry in REGISTERED for module in entry.reshape_modules)


def reshape_array(values: Any, shape: tuple, xp: Any) -> Any:
    """``xp.reshape(values, shape)``, through the array's own method where its library has one.

    The namespace wrapper costs several times the reshape itself on small arrays.
    """
    cls = values.__class__
    own = _OWN_RESHAPE.get(cls)
    if own is None:
        own = _OWN_RESHAPE[cls] = cls.__module__.split(".")[0] in _RESHAPE_LIBRARIES and hasattr(cls, "reshape")
    return values.reshape(shape) if own else xp.reshape(values, shape)


def _leaf_count(mode) -> int:
    return 1 if isinstance(mode, int) else len(_flatten_modes(mode))


def _mode_str(modes: tuple) -> str:
    return str(modes).replace(" ", "")


@lru_cache(maxsize=4096)
def broadcast_modes(a: tuple, b: tuple) -> tuple:
    """The Array API broadcast of two top-level mode tuples (right-aligned; extent 1 stretches)."""
    if a == b:
        return a
    n = max(len(a), len(b))
    a_full = (1,) * (n - len(a)) + a
    b_full = (1,) * (n - len(b)) + b
    out = []
    for x, y in zip(a_full, b_full):
        if x == y or y == 1:
            out.append(x)
        elif x == 1:
            out.append(y)
        else:
            if isinstance(x, int) and isinstance(y, int):
                raise ValueError(f"shapes {_mode_str(a)} and {_mode_str(b)} do not broadcast: extent {x} against "
                                 f"{y} (aligned from the right, extents must be equal or 1)")
            raise ValueError(f"shapes {_mode_str(a)} and {_mode_str(b)} do not broadcast: mode {_mode_str(x)} "
                             f"against {_mode_str(y)} (a nested mode broadcasts only against an equal nested mode "
                             "or an extent-1 leaf)")
    return tuple(out)


@lru_cache(maxsize=4096)
def leaves_of(modes: tuple) -> tuple:
    """Leaf extents of a top-level mode tuple, depth first."""
    return tuple(_flatten_modes(modes))


@lru_cache(maxsize=4096)
def expand_plan(source: tuple, target: tuple) -> tuple | None:
    """Rev shape that lines ``source`` up with ``target``'s leaves (None: already lined up)."""
    pad = len(target) - len(source)
    natural: list[int] = []
    for i, mode in enumerate(target):
        mine = source[i - pad] if i >= pad else None
        if mine is None or (mine == 1 and mode != 1):
            natural.extend([1] * _leaf_count(mode))
        else:
            natural.extend(leaves_of((mine,)))
    rev = tuple(reversed(natural))
    return None if rev == tuple(reversed(leaves_of(source))) else rev


def expand(values: Any, source: tuple, target: tuple, xp: Any) -> Any:
    """Reshape a rev array of shape modes ``source`` so it broadcasts against ``target``'s rev array."""
    plan = expand_plan(source, target)
    return values if plan is None else reshape_array(values, plan, xp)


@lru_cache(maxsize=4096)
def reduce_plan(source: tuple, target: tuple) -> tuple:
    """Rev axes to sum, and the final rev shape, to bring a ``target`` gradient back to ``source``."""
    full = tuple(reversed(leaves_of(target)))
    lined_up = expand_plan(source, target) or tuple(reversed(leaves_of(source)))
    axes = tuple(i for i, (s, t) in enumerate(zip(lined_up, full)) if s == 1 and t != 1)
    return axes, tuple(reversed(leaves_of(source)))


def unbroadcast(values: Any, source: tuple, target: tuple, xp: Any, batch: int | None = None) -> Any:
    """Sum a gradient over the modes broadcasting stretched, back to ``source``'s rev leaf shape.

    With ``batch`` the values carry a leading batch axis of that extent, which is kept.
    """
    if source == target:
        return values
    axes, leaves = reduce_plan(source, target)
    if batch is not None:
        axes = tuple(axis + 1 for axis in axes)
        leaves = (batch, *leaves)
    if axes:
        values = xp.sum(values, axis=axes, keepdims=True)
    if tuple(values.shape) != leaves:
        values = reshape_array(values, leaves, xp)
    return values


def sum_to(xp: Any, values: Any, shape: tuple, lead: tuple = ()) -> Any:
    """Sum a broadcast gradient back to ``lead + shape``: its extra leading axes and the extent-1 axes
    of ``shape`` it stretched (``lead``: axes kept in front, a cotangent batch)."""
    skip = len(lead)
    extra = values.ndim - skip - len(shape)
    if extra:
        values = xp.sum(values, axis=tuple(range(skip, skip + extra)))
    axes = tuple(skip + i for i, (have, want) in enumerate(zip(values.shape[skip:], shape)) if want == 1 and have != 1)
    if axes:
        values = xp.sum(values, axis=axes, keepdims=True)
    return values
