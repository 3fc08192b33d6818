"""Argument checks every public function shares: a Tensor where one is expected, and axes normalised once.

The standard's functions count ``axis``; the layout-native ones count
top-level ``modes``; both are the same positions, so one normaliser serves
both, and ``word`` names them in its errors.
"""

from __future__ import annotations

import operator
from typing import Any

from ..autograd.buffers import library_type_name
from ..tensors.tensor import Tensor

__all__ = ["axes", "axis", "no_tensor_operand", "not_a_tensor", "tensor"]

#: what a position is out of range for, by the word that names positions
_HOLDER = {"axis": "an array with {} axes", "mode": "a Tensor with {} top-level modes"}
_ARTICLE = {"axis": "an", "mode": "a"}


def tensor(x: Any, name: str) -> Tensor:
    """``x`` itself when it is a Tensor; else a TypeError naming ``name`` and ``x``."""
    if not isinstance(x, Tensor):
        raise not_a_tensor(name, x)
    return x


_CONVERT = "convert a native array or a Python value first with xp.asarray(a) (strideweave.array_api) or sw.tensor(a)"


def not_a_tensor(name: str, x: Any) -> TypeError:
    """The TypeError for ``x`` where ``name`` expects a Tensor: ``x``'s type as its library spells it
    (``torch.Tensor``, not a bare ``Tensor``), and how to convert it."""
    return TypeError(f"{name} expects a Tensor, got {library_type_name(x)}: {x!r}; {_CONVERT}")


def no_tensor_operand(name: str, a: Any, b: Any) -> TypeError:
    """The TypeError for a binary operation ``name`` given no Tensor: both operands' types, and the fix."""
    return TypeError(f"{name} needs at least one Tensor operand, got {library_type_name(a)} and "
                     f"{library_type_name(b)} ({a!r} and {b!r}); {_CONVERT}")


def _index(value: Any, rank: int, name: str, word: str, expected: str, scalar: bool) -> int:
    if value.__class__ is int:
        index = value
    else:
        try:
            if isinstance(value, bool):
                raise TypeError
            index = operator.index(value)
        except TypeError:
            raise TypeError(f"{name}: {word} must be {expected}, got {value!r}") from None
    bound = 1 if scalar and rank == 0 else rank
    if not -bound <= index < bound:
        raise IndexError(f"{name}: {word} {index} is out of range for {_HOLDER[word].format(rank)}")
    return index % bound


def axis(value: Any, rank: int, name: str, word: str = "axis") -> int:
    """One position among ``rank`` (negative ones count from the end), as an int in ``range(rank)``."""
    return _index(value, rank, name, word, "an int", False)


def axes(value: Any, rank: int, name: str, word: str = "axis", *, scalar: bool = False) -> tuple[int, ...]:
    """``None`` (every position), an int, or a tuple or list of distinct ints: normalised and sorted.

    ``scalar``: a 0-d array takes position 0 or -1 (as torch's reductions do).
    """
    if value is None:
        return tuple(range(rank))
    if value.__class__ is int:
        return (_index(value, rank, name, word, "an int or a tuple of ints", scalar),)
    picked = value if isinstance(value, (tuple, list)) else (value,)
    out = sorted(_index(v, rank, name, word, "an int or a tuple of ints", scalar) for v in picked)
    for i in range(1, len(out)):
        if out[i] == out[i - 1]:
            raise ValueError(f"{name}: {word} {value!r} names {_ARTICLE[word]} {word} twice")
    return tuple(out)
