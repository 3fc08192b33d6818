"""CuTe-style hierarchical layouts: Shape, Stride, Layout and their algebra.

Pure Python; no array library is imported at module load. The algebra
(``algebra.py``) is written as free functions over Layouts, as pycute writes
it, and attached here as Layout's methods, so ``layout.py`` never imports it.
"""

from __future__ import annotations

from typing import Any

from . import algebra
from .layout import Layout, Shape, Stride


def _composition(self: Layout, other: Any) -> Layout:
    """``R`` with ``R(c) == self(other(c))`` for every coordinate ``c`` of ``other`` (``algebra.composition``)."""
    return algebra.composition(self, other)


# setattr: Layout declares these methods for type checkers only.
for _name, _fn in (
    ("flatten", algebra.flatten),
    ("coalesce", algebra.coalesce),
    ("composition", _composition),
    ("complement", algebra.complement),
    ("logical_divide", algebra.logical_divide),
):
    setattr(Layout, _name, _fn)
del _name, _fn

__all__ = ["Layout", "Shape", "Stride"]
