"""Layout algebra with CuTe semantics: flatten, coalesce, composition,
complement, logical_divide.

Facts follow CuTe (NVIDIA/cutlass, ``python/pycute/layout.py`` and the C++
``cute/layout.hpp``); where CuTe relies on an ``assert`` or a static
assertion for a precondition, these functions raise ``ValueError`` instead,
so a precondition failure never yields a silently wrong layout.

Internally a "mode" is a ``(shape, stride)`` pair whose parts are an int (a
leaf) or congruent nested tuples. A Layout used as a single mode is its
modes tuple, unwrapped when it has one top-level mode (CuTe's ``4:1`` is our
``(4):(1)``).
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

from .layout import Layout

__all__ = ["coalesce", "complement", "composition", "flatten", "logical_divide"]


def _as_mode(layout: Layout) -> tuple[Any, Any]:
    """A Layout as one mode: unwrap a rank-1 layout to its only mode."""
    s, d = layout._shape_modes, layout._stride_modes
    if len(s) == 1:
        return s[0], d[0]
    return s, d


def _from_modes(modes: list[tuple[Any, Any]]) -> Layout:
    """Layout whose top-level modes are ``modes`` (validated pieces)."""
    return Layout._trusted(tuple(s for s, _ in modes), tuple(d for _, d in modes))


def _as_tiler_layout(t: Any, what: str) -> Layout:
    """An int tiler ``n`` means the layout ``(n):(1)``, as in CuTe."""
    if isinstance(t, Layout):
        return t
    if isinstance(t, bool):
        raise TypeError(f"{what}: got bool {t!r}; expected a Layout, an int or a tuple of them")
    try:
        n = operator.index(t)
    except TypeError:
        raise TypeError(
            f"{what}: got {type(t).__name__} {t!r}; expected a Layout, an int or a tuple of them"
        ) from None
    if n < 0:
        raise ValueError(f"{what}: got {n}; expected an int >= 0")
    return Layout._trusted((n,), (1,))


# ----- flatten and coalesce --------------------------------------------------------


def flatten(layout: Layout) -> Layout:
    """The same function with every leaf as a top-level mode."""
    return Layout._trusted(layout.leaf_shape, layout.leaf_stride)


def _coalesced_leaves(layout: Layout) -> list[list[int]]:
    """Leaves of the coalesced layout as ``[[shape, stride], ...]``."""
    out = [[1, 0]]
    for s, d in zip(layout.leaf_shape, layout.leaf_stride):
        last = out[-1]
        if s == 1:
            continue  # an extent-1 leaf adds no offsets
        if last[0] == 1:
            last[0], last[1] = s, d  # replace the placeholder
        elif last[0] * last[1] == d:
            last[0] *= s  # this leaf continues the previous one
        else:
            out.append([s, d])
    return out


def coalesce(layout: Layout) -> Layout:
    """The same function on ``[0, size)`` with the fewest flat modes.

    Extent-1 leaves are dropped and neighbours ``s0:d0, s1:d1`` with
    ``d1 == s0 * d0`` merge into ``(s0*s1):d0``; an all-ones layout becomes
    ``(1):(0)``.
    """
    leaves = _coalesced_leaves(layout)
    return Layout._trusted(tuple(s for s, _ in leaves), tuple(d for _, d in leaves))


# ----- composition -----------------------------------------------------------------


def composition(a: Layout, b: Any) -> Layout:
    """``R`` with ``R(c) == a(b(c))`` for every coordinate ``c`` of ``b``.

    ``b`` is a Layout (``R`` is congruent with it: one result mode per mode of
    ``b``), an int ``n`` (the layout ``(n):(1)``), or a tuple/list tiler
    applied by mode: element ``i`` (a Layout, an int or ``None`` to keep the
    mode) is composed with mode ``i`` of ``a``; modes of ``a`` past the tiler
    are kept.

    As in CuTe, ``a`` is extended along its last coalesced mode when ``b``
    reaches past ``a.size``. Raises ``ValueError`` when CuTe's stride or
    shape divisibility conditions fail, when the leaves of ``b`` combine to
    carry across a mode of ``a`` (e.g. ``(3,2):(0,1) o (2,2):(1,2)``; CuTe
    returns a wrong layout there), or when ``a`` is empty and ``b`` is not.
    A single-leaf ``b`` needs only the divisibility conditions, and those
    are relaxed when all of ``b`` lands inside one mode of ``a``.
    """
    if isinstance(b, (tuple, list)):
        return _by_mode(a, b, composition, "composition")
    b = _as_tiler_layout(b, "composition")
    if a.size == 0 and b.size != 0:
        raise ValueError(f"composition: {a} is empty; cannot compose it with {b} of size {b.size}")
    a_leaves = _coalesced_leaves(a)
    # usage[k]: the largest coordinate the pieces of all of b's leaves can add
    # up to in mode k of coalesced a. Composing mode by mode is exact only
    # when these sums never carry into mode k+1 (CuTe does not check this).
    usage = [0] * len(a_leaves)
    modes = [_compose_mode(a_leaves, s, d, a, b, usage) for s, d in zip(b._shape_modes, b._stride_modes)]
    if b.size != 0:
        for k in range(len(a_leaves) - 1):  # the last mode of a is unbounded
            if usage[k] >= a_leaves[k][0]:
                raise ValueError(
                    f"composition: {a} o {b}: the modes of {b} together reach coordinate "
                    f"{usage[k]} of a mode of extent {a_leaves[k][0]} in {a}; their offsets "
                    "would carry into the next mode, so the result is not a layout"
                )
    return _from_modes(modes)


def _by_mode(
    a: Layout, tiler: tuple[Any, ...] | list[Any], op: Callable[[Layout, Any], Layout], name: str
) -> Layout:
    """Apply ``op`` to each top-level mode of ``a`` with its tiler entry (``None`` keeps the mode)."""
    if len(tiler) > a.rank:
        raise ValueError(f"{name}: tiler {tiler!r} has {len(tiler)} modes; {a} has only {a.rank}")
    modes = []
    for i, t in enumerate(tiler):
        sub = a[i]
        modes.append(_as_mode(sub) if t is None else _as_mode(op(sub, t)))
    modes.extend(zip(a._shape_modes[len(tiler) :], a._stride_modes[len(tiler) :]))
    return _from_modes(modes)


def _compose_mode(
    a_leaves: list[list[int]], s: Any, d: Any, a: Layout, b: Layout, usage: list[int]
) -> tuple[Any, Any]:
    """Compose coalesced ``a`` with one mode ``s:d`` of ``b``.

    Adds to ``usage[k]`` the largest coordinate of mode ``k`` of ``a`` the
    result reaches (see ``composition``).
    """
    if type(s) is tuple:
        # tuple mode: compose each sub-mode, keep b's nesting
        parts = [_compose_mode(a_leaves, si, di, a, b, usage) for si, di in zip(s, d)]
        return tuple(p[0] for p in parts), tuple(p[1] for p in parts)
    # int mode
    if s == 0:
        return 0, 0  # empty domain: any stride is the same function
    if d == 0:
        return s, 0  # every coordinate maps to a(0) == 0
    shapes: list[int] = []
    strides: list[int] = []
    rest_s, rest_d = s, d
    for k, (cs, cd) in enumerate(a_leaves[:-1]):
        if rest_s > 1:
            if (rest_s - 1) * rest_d < cs:
                # All of s:d lands inside this mode of a. CuTe would demand
                # divisibility here, but the answer is exact without it.
                shapes.append(rest_s)
                strides.append(rest_d * cd)
                usage[k] += (rest_s - 1) * rest_d
                rest_s = 1
                continue
            if cs % rest_d != 0 and rest_d % cs != 0:
                raise ValueError(
                    f"composition: {a} o {b} fails the stride divisibility condition: "
                    f"stride {rest_d} and extent {cs} of {a} must divide one another"
                )
            new_s = min(max(1, cs // rest_d), rest_s)
            if rest_s % new_s != 0:
                raise ValueError(
                    f"composition: {a} o {b} fails the shape divisibility condition: "
                    f"{new_s} of {cs} offsets fit in one mode of {a} but {rest_s} do not split evenly"
                )
        else:
            new_s = 1  # already placed; only keep tracking the stride
        if new_s != 1:
            shapes.append(new_s)
            strides.append(rest_d * cd)
            usage[k] += (new_s - 1) * rest_d
        rest_s //= new_s
        rest_d = -(-rest_d // cs)  # ceil division
    if rest_s != 1 or not shapes:
        # The last mode of a takes the rest (extended past a.size, as in CuTe).
        shapes.append(rest_s)
        strides.append(rest_d * a_leaves[-1][1])
    if len(shapes) == 1:
        return shapes[0], strides[0]
    return tuple(shapes), tuple(strides)


# ----- complement ------------------------------------------------------------------


def complement(layout: Layout, cosize: int | None = None) -> Layout:
    """The layout of the offsets ``layout`` skips, up to ``cosize``.

    With ``R = complement(A, M)``: ``R`` is injective with increasing
    strides, ``R(i) != A(j)`` except ``R(0) == A(0) == 0``, and the layout
    ``(A, R)`` (stride-0 leaves of ``A`` ignored, as CuTe filters them) is a
    bijection onto ``[0, size)`` with ``size >= M``. ``cosize`` defaults to
    ``A.cosize``. Raises ``ValueError`` when ``A`` is empty or its sorted
    leaves are not stride-divisible (``A`` overlaps itself, or the gaps
    between its leaves are not a layout).
    """
    if cosize is None:
        cosize = layout.cosize
    elif isinstance(cosize, bool):
        raise TypeError(f"complement: cosize {cosize!r} is a bool; expected an int >= 0")
    else:
        try:
            cosize = operator.index(cosize)
        except TypeError:
            raise TypeError(
                f"complement: cosize {cosize!r} has type {type(cosize).__name__}; expected an int") from None
        if cosize < 0:
            raise ValueError(f"complement: cosize {cosize}; expected an int >= 0")
    if layout.size == 0:
        raise ValueError(f"complement: {layout} is empty; expected a layout with size > 0")
    shapes: list[int] = []
    strides: list[int] = []
    current = 1  # every offset below `current` is reachable by A and R together
    # Stride-0 and extent-1 leaves add no new offsets (CuTe filters them).
    for d, s in sorted((d, s) for s, d in zip(layout.leaf_shape, layout.leaf_stride) if d != 0 and s != 1):
        if d % current != 0:
            raise ValueError(
                f"complement: {layout} has stride {d} not divisible by {current} "
                "(the span of its smaller-stride leaves); the complement is not a layout"
            )
        shapes.append(d // current)
        strides.append(current)
        current = s * d
    shapes.append(-(-cosize // current))
    strides.append(current)
    return coalesce(Layout._trusted(tuple(shapes), tuple(strides)))


# ----- logical_divide -----------------------------------------------------------------


def logical_divide(layout: Layout, tiler: Any) -> Layout:
    """Split ``layout`` into ``(tile, rest)`` by ``tiler`` (CuTe semantics).

    For a Layout (or int) tiler ``T`` this is
    ``composition(layout, (T, complement(T, layout.size)))``: mode 0 walks
    the elements ``T`` selects, mode 1 the repetitions of that tile. A
    tuple/list tiler divides mode by mode (``None`` keeps a mode).
    """
    if isinstance(tiler, (tuple, list)):
        return _by_mode(layout, tiler, logical_divide, "logical_divide")
    t = _as_tiler_layout(tiler, "logical_divide")
    rest = complement(t, layout.size)
    return composition(layout, _from_modes([_as_mode(t), _as_mode(rest)]))

