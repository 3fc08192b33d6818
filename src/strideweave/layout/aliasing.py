"""Exact aliasing classification of a flat layout (leaf extents and strides).

Fast sufficient tests decide almost every layout met in practice: sorting
the leaves by stride, a leaf whose stride clears the whole span of the
smaller-stride leaves cannot collide with them (dominance), and pigeonhole
or ``d_j == k * d_i`` with ``k < s_i`` prove a collision. Only layouts that
no fast test decides enumerate their offsets (with NumPy, imported lazily).
"""

from __future__ import annotations

__all__ = ["classify"]


def _injective(shape: tuple[int, ...], stride: tuple[int, ...]) -> bool:
    """Exact injectivity of the flat layout ``shape:stride``."""
    if 0 in shape:
        return True  # no coordinates at all
    # Extent-1 leaves contribute nothing; sort the rest by stride.
    modes = sorted((d, s) for s, d in zip(shape, stride) if s != 1)
    if not modes:
        return True
    if modes[0][0] == 0:
        return False  # a stride-0 leaf with extent > 1 repeats offset 0
    size = 1
    reach = 1  # cosize of the sorted prefix
    dominated = True
    for d, s in modes:
        if d < reach:
            dominated = False
        size *= s
        reach += (s - 1) * d
    if dominated:
        # Each leaf's stride clears every offset of the smaller-stride leaves,
        # so the copies it makes are disjoint shifts.
        return True
    if size > reach:
        return False  # pigeonhole: more coordinates than offsets
    # Cheap collision: stride d_j = k * d_i with k < s_i puts (k at i) and
    # (1 at j) on the same offset. Equal strides are the case k == 1.
    for i, (di, si) in enumerate(modes):
        for dj, _ in modes[i + 1 :]:
            if dj % di == 0 and dj // di < si:
                return False
    return _injective_exact(modes)


def _injective_exact(modes: list[tuple[int, int]]) -> bool:
    """Fallback: enumerate every offset (only for layouts the fast tests miss).

    Costs O(size) memory; pigeonhole has already bounded size by cosize.
    """
    import numpy as np

    offsets = np.zeros(1, dtype=np.int64)
    for d, s in modes:
        offsets = (offsets[None, :] + np.arange(s, dtype=np.int64)[:, None] * d).ravel()
        # Check after each leaf so a collision stops the enumeration early.
        if np.unique(offsets).size != offsets.size:
            return False
    return True


def classify(shape: tuple[int, ...], stride: tuple[int, ...]) -> str:
    """``"injective"``, ``"broadcast"`` or ``"overlapping"`` for flat leaves.

    Broadcast means: not injective, but injective once every stride-0 leaf
    is dropped.
    """
    if _injective(shape, stride):
        return "injective"
    kept = [(s, d) for s, d in zip(shape, stride) if d != 0]
    if len(kept) != len(shape) and _injective(tuple(s for s, _ in kept), tuple(d for _, d in kept)):
        return "broadcast"
    return "overlapping"
