"""Shape, Stride and Layout: immutable, hashable, CuTe-style layouts.

A ``Layout`` maps a logical coordinate to an offset in flat storage. The top
level of every shape and stride is a tuple of modes; a mode is an int (a leaf)
or a nested tuple. Coordinates are decomposed colexicographically (first mode
fastest, at every depth).

Construction validates once; ``Layout._trusted`` skips validation for the
hot path. Derived facts (leaves, size, cosize, aliasing, hash) are computed
lazily on first use and cached on the instance, so building a layout per op
call costs two attribute writes.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from typing_extensions import Self

from .aliasing import classify
from .int_tuple import (
    IntTuple,
    congruent,
    crd2idx,
    depth,
    format_modes,
    leaves,
    normalize_modes,
    product,
    unflatten,
)

__all__ = ["Layout", "Shape", "Stride"]

_set = object.__setattr__


def _reads(slot: str, doc: str) -> Any:
    """A read-only property that reads the slot ``slot`` (filled on first read where it is derived)."""
    return property(operator.attrgetter(slot), doc=doc)


def _computed(compute: Callable[[Any], Any], doc: str) -> Any:
    """A read-only property computed by ``compute(self)`` at every read (typed where it is assigned)."""
    return property(compute, doc=doc)


# ----- Shape and Stride ----------------------------------------------------------


class _Modes:
    """Common base of Shape and Stride: an immutable top-level tuple of modes."""

    __slots__ = ("_hash", "_modes")
    _kind = "IntTuple"
    # slots, written once through object.__setattr__ (the classes are immutable)
    _modes: tuple[IntTuple, ...]
    _hash: int

    def __init__(self, modes: Any) -> None:
        if type(modes) is type(self):
            modes = modes._modes  # copy: already validated
        elif isinstance(modes, _Modes):
            # A Stride passed where a Shape is expected is almost always
            # swapped arguments; refuse rather than reinterpret.
            raise TypeError(
                f"{self._kind}: got {type(modes).__name__} {modes}; "
                f"expected a {self._kind}, an int or a nested list/tuple of ints"
            )
        else:
            modes = normalize_modes(modes, self._kind)
        _set(self, "_modes", modes)

    @classmethod
    def _trusted(cls, modes: tuple[IntTuple, ...]) -> Self:
        """Wrap an already-validated top-level tuple without checking it."""
        self = object.__new__(cls)
        _set(self, "_modes", modes)
        return self

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable")

    def __reduce__(self) -> tuple[type[Self], tuple[tuple[IntTuple, ...]]]:
        return (type(self), (self._modes,))

    modes: tuple[IntTuple, ...] = _reads("_modes", "The top-level tuple of modes (ints and nested tuples).")

    rank: int = _computed(lambda self: len(self._modes), "Number of top-level modes.")
    depth: int = _computed(lambda self: depth(self._modes), "CuTe depth of the modes tuple: 1 when all modes are ints.")

    @property
    def leaves(self) -> tuple[int, ...]:
        """All ints in depth-first order."""
        return leaves(self._modes)

    def __len__(self) -> int:
        return len(self._modes)

    def __iter__(self) -> Iterator[IntTuple]:
        return iter(self._modes)

    def __getitem__(self, i: int) -> IntTuple:
        return self._modes[i]

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self._modes == other._modes

    def __ne__(self, other: object) -> bool:
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    def __hash__(self) -> int:
        try:
            return self._hash
        except AttributeError:
            h = hash((self._kind, self._modes))
            _set(self, "_hash", h)
            return h

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._modes!r})"

    def __str__(self) -> str:
        return format_modes(self._modes)


class Shape(_Modes):
    """Extents of a layout: ``Shape(4)``, ``Shape([2, [4, 3]])``.

    The top level is always a tuple of modes, so ``Shape(4) == Shape([4])``.
    Extents are ints >= 0.
    """

    __slots__ = ()
    _kind = "Shape"

    @property
    def size(self) -> int:
        """Product of all extents."""
        return product(self._modes)


class Stride(_Modes):
    """Strides of a layout, congruent with its Shape. Strides are ints >= 0."""

    __slots__ = ()
    _kind = "Stride"


# ----- Layout ----------------------------------------------------------------------


def _rebuild_layout(shape_modes: tuple[IntTuple, ...], stride_modes: tuple[IntTuple, ...]) -> Layout:
    return Layout._trusted(shape_modes, stride_modes)


# Already-normalised mode tuples -> canonical layout: the hot path of every
# operation skips re-validating modes it built itself.
_CANONICAL_BY_MODES: dict[tuple[IntTuple, ...], Layout] = {}


@functools.lru_cache(maxsize=4096)
def _canonical(shape_modes: tuple[IntTuple, ...]) -> Layout:
    # Running product over the leaves, depth first, extent-1 leaves included.
    strides = []
    running = 1
    for s in leaves(shape_modes):
        strides.append(running)
        running *= s
    stride_modes = unflatten(iter(strides), shape_modes)
    assert isinstance(stride_modes, tuple), "a tuple profile unflattens to a tuple"
    result = Layout._trusted(shape_modes, stride_modes)
    _set(result, "_aliasing", "injective")
    _set(result, "_is_canonical", True)
    _set(result, "_is_compact", True)
    return result


def _modes_of(value: Any, kind: type[_Modes], what: str) -> tuple[IntTuple, ...]:
    """The raw modes of ``value``, a ``kind`` (Shape or Stride) or raw modes; the other kind is a TypeError
    whose message starts with ``what``."""
    if type(value) is kind:
        return value._modes
    if isinstance(value, _Modes):
        raise TypeError(f"{what} a {kind.__name__} or raw modes, got {type(value).__name__} {value}")
    return normalize_modes(value, kind.__name__)


def _from_derive(name: str) -> Callable[[Layout], Any]:
    def read(layout: Layout) -> Any:
        layout._derive()  # fills every fact of the one pass, ``name`` among them
        return object.__getattribute__(layout, name)
    return read


#: slot name -> how a Layout computes it on its first read (``Layout.__getattr__``); each fact once
_DERIVED: dict[str, Callable[[Layout], Any]] = {
    **{name: _from_derive(name) for name in ("_leaf_shape", "_leaf_stride", "_mode_sizes", "_mode_leaf_counts",
                                             "_size", "_cosize")},
    "_shape": lambda layout: Shape._trusted(layout._shape_modes),
    "_stride": lambda layout: Stride._trusted(layout._stride_modes),
    "_aliasing": lambda layout: classify(layout._leaf_shape, layout._leaf_stride),
    "_is_compact": lambda layout: layout._aliasing == "injective" and layout._cosize == layout._size,
    "_is_canonical": lambda layout: layout._stride_modes == _canonical(layout._shape_modes)._stride_modes,
    "_rev_leaf_shape": lambda layout: layout._leaf_shape[::-1],
    # the transpose: the top-level modes in reverse order (``ops.views.transpose``, twice per layer of an MLP)
    "_reversed": lambda layout: Layout._trusted(layout._shape_modes[::-1], layout._stride_modes[::-1]),
    "_hash": lambda layout: hash(("Layout", layout._shape_modes, layout._stride_modes)),
}


def derived_slot(name: str, compute: Callable[[Layout], Any]) -> None:
    """Let ``compute(layout)`` fill the slot ``name`` on its first read; the value is a fact of the layout alone.

    Modules beside this one (``order.py``) declare their facts here, so every
    cached fact is read as a plain slot (``layout._storage_perm``), with no
    try/except at the reader.
    """
    if name not in Layout.__slots__ or name in _DERIVED:
        raise ValueError(f"derived_slot: {name!r} is not a free slot of Layout")
    _DERIVED[name] = compute


class Layout:
    """A map from coordinates to offsets: ``Layout(shape, stride=None)``.

    ``shape`` and ``stride`` are Shape/Stride objects or raw modes (an int
    or a nested list/tuple of ints) and must be congruent. ``stride=None``
    gives the canonical (compact, first-mode-fastest) layout.
    """

    # Every slot but the two mode tuples holds a fact derived on its first read (``_DERIVED``).
    __slots__ = (
        "_aliasing",
        "_batched",
        "_broadcast_axes",
        "_cosize",
        "_hash",
        "_is_canonical",
        "_is_compact",
        "_leaf_shape",
        "_leaf_stride",
        "_mode_leaf_counts",
        "_mode_sizes",
        "_rev_leaf_shape",
        "_reversed",
        "_shape",
        "_shape_modes",
        "_size",
        # facts of the memory order, declared by ``layout.order``
        "_storage_perm",
        "_storage_shape",
        "_stride",
        "_stride_modes",
    )
    # slots, written once through object.__setattr__ (Layout is immutable)
    _shape_modes: tuple[IntTuple, ...]
    _stride_modes: tuple[IntTuple, ...]
    _leaf_shape: tuple[int, ...]
    _leaf_stride: tuple[int, ...]
    _size: int
    _cosize: int
    _mode_sizes: tuple[int, ...]
    _mode_leaf_counts: tuple[int, ...]
    _aliasing: str
    _rev_leaf_shape: tuple[int, ...]
    _reversed: Layout
    _is_canonical: bool
    _is_compact: bool
    _hash: int
    _storage_perm: tuple[int, ...] | None
    _storage_shape: tuple[int, ...]
    _broadcast_axes: tuple[int, ...]
    _batched: Layout
    _shape: Shape
    _stride: Stride

    def __init__(self, shape: Any, stride: Any = None) -> None:
        shape_modes = _modes_of(shape, Shape, "Layout: shape must be")
        if stride is None:
            stride_modes = _canonical(shape_modes)._stride_modes
        else:
            stride_modes = _modes_of(stride, Stride, "Layout: stride must be")
            if not congruent(shape_modes, stride_modes):
                raise ValueError(
                    f"Layout: shape {format_modes(shape_modes)} and stride "
                    f"{format_modes(stride_modes)} are not congruent; expected the same nesting"
                )
        _set(self, "_shape_modes", shape_modes)
        _set(self, "_stride_modes", stride_modes)

    @classmethod
    def _trusted(cls, shape_modes: tuple[IntTuple, ...], stride_modes: tuple[IntTuple, ...]) -> Layout:
        """Build from validated, congruent top-level tuples (hot path, no checks)."""
        self = object.__new__(cls)
        _set(self, "_shape_modes", shape_modes)
        _set(self, "_stride_modes", stride_modes)
        return self

    @classmethod
    def canonical(cls, shape: Any) -> Layout:
        """The compact, first-mode-fastest layout of ``shape`` (cached).

        Each leaf's stride is the product of the extents of all leaves before
        it, depth first: ``canonical((2, (4, 3)))`` is ``(2,(4,3)):(1,(2,8))``.
        """
        if type(shape) is tuple:
            hit = _CANONICAL_BY_MODES.get(shape)
            if hit is not None:
                return hit
        modes = _modes_of(shape, Shape, "Layout.canonical: expected")
        result = _canonical(modes)
        if type(shape) is tuple and shape == modes and len(_CANONICAL_BY_MODES) < 4096:
            _CANONICAL_BY_MODES[modes] = result
        return result

    if TYPE_CHECKING:
        # The algebra (``algebra.py``) is attached by ``layout/__init__.py``.
        def flatten(self) -> Layout: ...
        def coalesce(self) -> Layout: ...
        def composition(self, other: Any) -> Layout: ...
        def complement(self, cosize: int | None = None) -> Layout: ...
        def logical_divide(self, tiler: Any) -> Layout: ...

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("Layout is immutable")

    def __reduce__(self) -> tuple[Callable[..., Layout], tuple[tuple[IntTuple, ...], tuple[IntTuple, ...]]]:
        return (_rebuild_layout, (self._shape_modes, self._stride_modes))

    # ----- derived facts (lazy, cached) -----

    if not TYPE_CHECKING:  # hidden from type checkers, which keep checking every attribute name
        def __getattr__(self, name: str) -> Any:
            """A derived slot read before it is filled: computed once (``derived_slot``), a slot read after."""
            derive = _DERIVED.get(name)
            if derive is None:
                raise AttributeError(f"'Layout' object has no attribute {name!r}")
            value = derive(self)
            _set(self, name, value)
            return value

    def _derive(self) -> None:
        """Compute leaves, size, cosize and per-mode facts in one pass."""
        leaf_shape: list[int] = []
        # d is an int wherever s is (shape and stride are congruent)
        leaf_stride: list[Any] = []
        mode_sizes = []
        mode_leaf_counts = []
        for s, d in zip(self._shape_modes, self._stride_modes):
            if type(s) is int:
                leaf_shape.append(s)
                leaf_stride.append(d)
                mode_sizes.append(s)
                mode_leaf_counts.append(1)
            else:
                ls = leaves(s)
                leaf_shape.extend(ls)
                leaf_stride.extend(leaves(d))
                n = 1
                for x in ls:
                    n *= x
                mode_sizes.append(n)
                mode_leaf_counts.append(len(ls))
        size = 1
        for x in mode_sizes:
            size *= x
        if size == 0:
            cosize = 0
        else:
            cosize = 1
            for s, d in zip(leaf_shape, leaf_stride):
                cosize += (s - 1) * d
        _set(self, "_leaf_shape", tuple(leaf_shape))
        _set(self, "_leaf_stride", tuple(leaf_stride))
        _set(self, "_mode_sizes", tuple(mode_sizes))
        _set(self, "_mode_leaf_counts", tuple(mode_leaf_counts))
        _set(self, "_size", size)
        _set(self, "_cosize", cosize)

    shape: Shape = _reads("_shape", "The Shape (extents).")

    stride: Stride = _reads("_stride", "The Stride, congruent with ``shape``.")

    rank: int = _computed(lambda self: len(self._shape_modes), "Number of top-level modes.")
    depth: int = _computed(lambda self: depth(self._shape_modes),
                           "CuTe depth of the shape's modes tuple: 1 when every mode is an int.")

    size: int = _reads("_size", "Number of coordinates: the product of all extents.")

    cosize: int = _reads("_cosize", "Largest offset + 1 (0 when the layout is empty).")

    leaf_shape: tuple[int, ...] = _reads("_leaf_shape", "Extents of all leaves, depth first.")

    leaf_stride: tuple[int, ...] = _reads("_leaf_stride", "Strides of all leaves, depth first.")

    mode_sizes: tuple[int, ...] = _reads("_mode_sizes", "Size of each top-level mode.")

    mode_leaf_counts: tuple[int, ...] = _reads("_mode_leaf_counts", "Number of leaves in each top-level mode.")

    def aliasing(self) -> str:
        """``"injective"``, ``"broadcast"`` or ``"overlapping"``.

        Injective: no two coordinates share an offset. Broadcast: not
        injective, but dropping every stride-0 leaf makes it injective (all
        collisions come from stride-0 modes). Overlapping: anything else.
        Exact for every layout.
        """
        return self._aliasing

    def is_injective(self) -> bool:
        """True when distinct coordinates map to distinct offsets."""
        return self.aliasing() == "injective"

    def is_compact(self) -> bool:
        """True when the layout is a bijection onto ``[0, size)``."""
        return self._is_compact

    def is_canonical(self) -> bool:
        """True when this is exactly ``Layout.canonical(self.shape)``."""
        return self._is_canonical

    rev_leaf_shape: tuple[int, ...] = _reads(
        "_rev_leaf_shape", "Leaf extents in reverse order: the shape of canonical storage read in C order.")

    # ----- evaluation -----

    def __call__(self, *coords: Any) -> int:
        """Offset of a coordinate.

        ``layout(i)`` takes a linear index in ``[0, size)``, decomposed
        colexicographically. ``layout(c0, c1, ...)`` (or ``layout((c0, c1,
        ...))``) takes one int or congruent tuple per top-level mode; an int
        for a nested mode is decomposed inside it. Out-of-range values raise
        ``IndexError``; wrong arity or types raise ``TypeError``.
        """
        rank = len(self._shape_modes)
        if len(coords) == 1:
            c = coords[0]
            if isinstance(c, (tuple, list)) and rank > 1:
                coords = tuple(c)
            elif not isinstance(c, (tuple, list)):
                return self._linear(c)
        if len(coords) != rank:
            raise TypeError(
                f"Layout{self}: got {len(coords)} coordinates {coords!r}; "
                f"expected a linear index or {rank} (one per top-level mode)"
            )
        offset = 0
        for m, (c, s, d) in enumerate(zip(coords, self._shape_modes, self._stride_modes)):
            offset += _mode_offset(c, s, d, (m,))
        return offset

    def _linear(self, i: Any) -> int:
        i = _coord_int(i, ())
        if not 0 <= i < self.size:
            raise IndexError(f"Layout {self}: index {i} out of range; expected 0 <= index < {self.size}")
        offset = 0
        for s, d in zip(self._leaf_shape, self._leaf_stride):
            offset += (i % s) * d
            i //= s
        return offset

    def __getitem__(self, i: Any) -> Layout:
        """Sub-layout of top-level mode ``i`` (a nested mode becomes top level)."""
        try:
            s = self._shape_modes[i]
            d = self._stride_modes[i]
        except IndexError:
            raise IndexError(f"Layout {self}: mode {i} out of range for rank {self.rank}") from None
        if type(i) is slice:
            if not s:
                raise IndexError(f"Layout {self}: slice {i} selects no modes")
            return Layout._trusted(s, d)
        if type(s) is int:
            return Layout._trusted((s,), (d,))
        return Layout._trusted(s, d)

    def __iter__(self) -> Iterator[Layout]:
        return (self[i] for i in range(len(self._shape_modes)))

    # ----- value semantics -----

    def __eq__(self, other: object) -> bool:
        if type(other) is not Layout:
            return NotImplemented
        return self._shape_modes == other._shape_modes and self._stride_modes == other._stride_modes

    def __ne__(self, other: object) -> bool:
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    def __hash__(self) -> int:
        return self._hash

    def __str__(self) -> str:
        return format_modes(self._shape_modes) + ":" + format_modes(self._stride_modes)

    def __repr__(self) -> str:
        return f"Layout(Shape({self._shape_modes!r}), Stride({self._stride_modes!r}))"


# ----- coordinate helpers ----------------------------------------------------------


def _coord_int(c: Any, where: tuple[int, ...]) -> int:
    if type(c) is int:
        return c
    if isinstance(c, bool) or getattr(getattr(c, "dtype", None), "kind", "") == "b":
        raise TypeError(f"coordinate {c!r} at mode {where} is a bool; expected an int")
    try:
        return operator.index(c)
    except TypeError:
        raise TypeError(
            f"coordinate {c!r} at mode {where} has type {type(c).__name__}; expected an int or a tuple"
        ) from None


def _mode_offset(c: Any, s: IntTuple, d: IntTuple, where: tuple[int, ...]) -> int:
    """Offset of coordinate ``c`` within one mode, with range and type checks."""
    if isinstance(c, (tuple, list)):
        # tuple coordinate: must match a tuple mode of the same length
        if isinstance(s, int) or isinstance(d, int) or len(c) != len(s):
            raise TypeError(f"coordinate {c!r} at mode {where} is not congruent with shape {format_modes(s)}")
        return sum(_mode_offset(ci, si, di, (*where, k)) for k, (ci, si, di) in enumerate(zip(c, s, d)))
    # int coordinate: range-check against the mode's size, then decompose
    c = _coord_int(c, where)
    n = s if type(s) is int else product(s)
    if not 0 <= c < n:
        raise IndexError(f"coordinate {c} at mode {where} out of range; expected 0 <= c < {n}")
    return crd2idx(c, s, d)
