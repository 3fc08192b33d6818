"""CuTe-style hierarchical layouts: Shape, Stride, Layout and their algebra.

Pure Python; no array library is imported at module load.
"""

from .layout import Layout, Shape, Stride

__all__ = ["Shape", "Stride", "Layout"]
