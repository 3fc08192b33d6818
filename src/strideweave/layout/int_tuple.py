"""IntTuple helpers: nested tuples of non-negative ints.

An IntTuple is either an ``int`` (a leaf) or a non-empty ``tuple`` of
IntTuples. These functions work on already-validated values; validation of
user input lives in :func:`normalize_modes`.

Coordinates are decomposed colexicographically: the first mode varies
fastest, at every depth (CuTe's LayoutLeft convention).
"""

from __future__ import annotations

import operator
from collections.abc import Iterator
from typing import Any, TypeAlias

# A leaf int or a (nested) tuple of IntTuples; the nesting is not expressible
# precisely without a recursive alias, which mypy handles poorly in unions.
IntTuple: TypeAlias = "int | tuple[Any, ...]"

__all__ = [
    "IntTuple",
    "congruent",
    "crd2idx",
    "depth",
    "format_modes",
    "idx2crd",
    "is_int",
    "is_tuple",
    "leaves",
    "normalize_modes",
    "product",
    "unflatten",
]


# ----- validation -------------------------------------------------------------


def _as_leaf(value: Any, kind: str, where: tuple[int, ...]) -> int:
    """Return ``value`` as a plain int >= 0, or raise naming the bad value."""
    pos = f" at position {where}" if where else ""
    # bool is an int subclass, and numpy bools may implement __index__: reject
    # both explicitly so True never silently becomes an extent of 1.
    if isinstance(value, bool) or getattr(getattr(value, "dtype", None), "kind", "") == "b":
        raise TypeError(f"{kind}: got bool {value!r}{pos}; expected an int >= 0")
    if type(value) is int:
        result = value
    else:
        try:
            result = operator.index(value)  # numpy integer scalars, 0-d arrays
        except TypeError:
            raise TypeError(
                f"{kind}: got {type(value).__name__} {value!r}{pos}; "
                "expected an int >= 0 or a nested list/tuple of them"
            ) from None
    if result < 0:
        raise ValueError(f"{kind}: got {result}{pos}; expected an int >= 0")
    return result


def _normalize(value: Any, kind: str, where: tuple[int, ...]) -> IntTuple:
    if type(value) is int and value >= 0:
        return value  # the common case, kept free of the checks below
    if isinstance(value, (list, tuple)):
        if not value:
            raise ValueError(
                f"{kind}: got empty tuple at position {where}; "
                "expected an int >= 0 or a non-empty nested tuple"
            )
        return tuple(_normalize(v, kind, (*where, i)) for i, v in enumerate(value))
    return _as_leaf(value, kind, where)


def normalize_modes(value: Any, kind: str) -> tuple[Any, ...]:
    """Validate user input and return the top-level tuple of modes.

    ``value`` is an int or a (nested) list/tuple of ints. An int becomes a
    one-mode tuple. ``kind`` ("Shape" or "Stride") names the caller in
    error messages. Raises ``TypeError`` for wrong types (bool, float, str,
    ...) and ``ValueError`` for negative values or empty nested tuples; an
    empty top-level tuple is the rank-0 shape ``()``.
    """
    if isinstance(value, (list, tuple)):
        # An empty top level is the rank-0 (0-d) shape: size 1, no modes.
        # Empty *nested* tuples stay errors (``_normalize``).
        return tuple(_normalize(v, kind, (i,)) for i, v in enumerate(value))
    if type(value) is int and value >= 0:
        return (value,)
    return (_as_leaf(value, kind, ()),)


# ----- structure ---------------------------------------------------------------


def is_int(x: Any) -> bool:
    """True for an IntTuple leaf."""
    return type(x) is int


def is_tuple(x: Any) -> bool:
    """True for a non-leaf IntTuple."""
    return type(x) is tuple


def leaves(t: IntTuple) -> tuple[int, ...]:
    """The ints of ``t`` in depth-first order (``(2, (4, 3))`` -> ``(2, 4, 3)``)."""
    if isinstance(t, int):
        return (t,)
    # Iterative so that pathological nesting cannot hit the recursion limit.
    out: list[int] = []
    stack = [iter(t)]
    while stack:
        for item in stack[-1]:
            if type(item) is int:
                out.append(item)
            else:
                stack.append(iter(item))
                break
        else:
            stack.pop()
    return tuple(out)


def depth(t: IntTuple) -> int:
    """CuTe depth: 0 for an int, 1 + max depth of the children for a tuple."""
    if isinstance(t, int):
        return 0
    return 1 + max((depth(x) for x in t), default=0)  # rank 0: depth 1


def product(t: IntTuple) -> int:
    """Product of all leaves of ``t`` (the size of a shape)."""
    if isinstance(t, int):
        return t
    result = 1
    for x in leaves(t):
        result *= x
    return result


def congruent(a: IntTuple, b: IntTuple) -> bool:
    """True when ``a`` and ``b`` have the same nesting profile."""
    if isinstance(a, int) or isinstance(b, int):
        return isinstance(a, int) and isinstance(b, int)
    return len(a) == len(b) and all(congruent(x, y) for x, y in zip(a, b))


def unflatten(flat: Iterator[int], profile: IntTuple) -> IntTuple:
    """Rebuild the nesting of ``profile`` from an iterator ``flat`` of leaves."""
    if isinstance(profile, int):
        return next(flat)
    return tuple(unflatten(flat, p) for p in profile)


# ----- coordinates -------------------------------------------------------------


def idx2crd(idx: int, shape: IntTuple) -> IntTuple:
    """Decompose a linear index into a coordinate congruent with ``shape``.

    Colexicographic (first mode fastest). The last mode absorbs whatever is
    left, as in CuTe, so an out-of-range index is not detected here.
    """
    if isinstance(shape, int):  # int shape: the index is the coordinate
        return idx
    # tuple shape: peel off each mode, the last one takes the remainder
    out = []
    last = len(shape) - 1
    for i, s in enumerate(shape):
        if i == last:
            out.append(idx2crd(idx, s))
        else:
            n = product(s)
            out.append(idx2crd(idx % n, s))
            idx //= n
    return tuple(out)


def crd2idx(crd: IntTuple, shape: IntTuple, stride: IntTuple) -> int:
    """Inner product of a coordinate with ``stride`` (the layout function).

    ``crd`` is congruent with ``shape``, or an int anywhere a tuple mode is
    expected (then decomposed colexicographically inside that mode).
    """
    if isinstance(crd, tuple):
        if type(shape) is not tuple or type(stride) is not tuple or len(crd) != len(shape):
            raise TypeError(f"coordinate {crd!r} is not congruent with shape {shape!r}")
        # tuple tuple: sum over modes
        return sum(crd2idx(c, s, d) for c, s, d in zip(crd, shape, stride))
    if isinstance(shape, int):
        # int int: one leaf
        assert isinstance(stride, int), "stride is congruent with shape"
        return crd * stride
    # int tuple: decompose the int colexicographically inside the mode
    assert not isinstance(stride, int), "stride is congruent with shape"
    result = 0
    last = len(shape) - 1
    for i, (s, d) in enumerate(zip(shape, stride)):
        if i == last:
            result += crd2idx(crd, s, d)
        else:
            n = product(s)
            result += crd2idx(crd % n, s, d)
            crd //= n
    return result


# ----- formatting --------------------------------------------------------------


def format_modes(t: IntTuple) -> str:
    """CuTe notation without spaces: ``(2,(4,3))``."""
    if isinstance(t, int):
        return str(t)
    return "(" + ",".join(format_modes(x) for x in t) + ")"
