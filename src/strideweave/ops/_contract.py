"""Every built-in node offers the traversal the engine-rule contract (``autograd.cotangents.Rule``).

A check for mypy, which reads every module under ``src/strideweave``: a rule
family whose ``pullback``, ``backward_flat``, ``flat_cotangent`` or
``ones_for`` drifts from the contract fails type checking here.
"""

from __future__ import annotations

from ..autograd.cotangents import Rule
from ._primitive import Primitive

_CONTRACT: type[Rule] = Primitive
