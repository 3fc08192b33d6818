"""The complete ``strideweave.array_api``, for the functions composed of its own functions.

einsum, the NaN-skipping reductions and NumPy's extras are defined in modules
the namespace imports, so they cannot import it back; they run only after it
is complete, and reach it here.
"""

from __future__ import annotations

import sys
from typing import Any

__all__ = ["namespace"]


def namespace() -> Any:
    """``strideweave.array_api`` (already imported whenever a function composed of it runs)."""
    return sys.modules["strideweave.array_api"]
