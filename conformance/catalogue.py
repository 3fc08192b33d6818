"""The declarative conformance catalogue: what is differentiated, how, and how closely.

A :class:`Case` names a program (``fn``, a function of StrideWeave Tensors),
its inputs (:class:`~conformance.inputs.InputSpec`: logical shape, value
range, optional nested shape), the seed the values are drawn from, the
cotangent, explicit tolerances, and optionally the same math written against
the Array API (``ref(xp, *arrays)``), which the runner differentiates with
``torch.autograd`` and ``jax.vjp``.

The cases themselves live in :mod:`conformance.cases` (one module per
family); :data:`CATALOGUE` collects them.
"""

from __future__ import annotations

import fnmatch
import zlib
from collections.abc import Callable
from dataclasses import dataclass

from .inputs import VARIANTS, InputSpec, variant_applies

__all__ = ["CATALOGUE", "MATMUL", "SENSITIVE", "SMOOTH", "Case", "Tol", "select"]


@dataclass(frozen=True)
class Tol:
    """Per-case tolerances. An element passes when ``|got - want| <= atol + rtol * |want|``.

    fd_*:    analytic float32 gradient vs float64 central differences.
    agree_*: float32 gradient vs float32 gradient (another carrier, or the
             backend's own autodiff).
    """

    fd_rtol: float
    fd_atol: float
    agree_rtol: float
    agree_atol: float


#: elementwise / smooth programs of modest depth
SMOOTH = Tol(fd_rtol=1e-3, fd_atol=1e-4, agree_rtol=1e-5, agree_atol=1e-6)
#: contractions: float32 summation order differs per backend
MATMUL = Tol(fd_rtol=2e-3, fd_atol=2e-4, agree_rtol=1e-4, agree_atol=1e-5)
#: deeper programs with cancellation (layer norm, attention, mixtures)
SENSITIVE = Tol(fd_rtol=5e-3, fd_atol=5e-4, agree_rtol=5e-4, agree_atol=5e-5)


@dataclass(frozen=True)
class Case:
    """One conformance case.

    name, family:  identification (family: elementwise, reduction, linalg,
                   manipulation, view, program).
    fn:            ``fn(*tensors) -> Tensor``; pure StrideWeave operations.
    inputs:        one InputSpec per differentiable input.
    tol:           explicit tolerances (required).
    ref:           ``ref(xp, *arrays)``: the same math on logical arrays with
                   the Array API (None: no meaningful native form).
    cotangent:     "random" (uniform [-1, 1] from the seed), "ones", or
                   "basis": every unit cotangent at once through
                   ``sw.grad(..., batched=True)`` (the full Jacobian).
    seed:          input values are drawn from it (default: from the name).
    eps:           central-difference step (float64).
    fd:            False when finite differences do not measure the same
                   thing (e.g. ``detach``); fd_note says why.
    variants:      the layout variants that are meaningful for the case.
    note:          a remark carried into the report.
    unavailable:   (carrier, reason) pairs: carriers whose library lacks a
                   function the case needs; reported as skips with the reason.
    """

    name: str
    family: str
    fn: Callable
    inputs: tuple[InputSpec, ...]
    tol: Tol
    ref: Callable | None = None
    cotangent: str = "random"
    seed: int = 0
    eps: float = 1e-4
    fd: bool = True
    fd_note: str = ""
    native_note: str = ""
    variants: tuple[str, ...] = VARIANTS
    note: str = ""
    unavailable: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        if self.cotangent not in ("random", "ones", "basis"):
            raise ValueError(f"case {self.name}: cotangent must be random, ones or basis, got {self.cotangent!r}")
        if not self.seed:
            object.__setattr__(self, "seed", zlib.crc32(self.name.encode()) % (2**31))
        if self.ref is None and not self.native_note:
            object.__setattr__(self, "native_note", "no native reference written")

    def layouts(self) -> list[str]:
        """The layout variants this case runs in (those that change some input)."""
        return [v for v in self.variants if variant_applies(v, self.inputs)]


def _collect() -> list[Case]:
    from .cases import array_api, ops, programs

    cases = ops.CASES + programs.CASES + array_api.CASES
    names = [c.name for c in cases]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise ValueError(f"duplicate case names in the catalogue: {dupes}")
    return cases


CATALOGUE: list[Case] = _collect()


def select(pattern: str | None) -> list[Case]:
    """Cases whose name or family matches ``pattern``.

    ``pattern`` is a comma-separated list; each item matches as an fnmatch
    pattern or, without wildcards, as a substring.
    """
    if not pattern:
        return list(CATALOGUE)
    items = [p.strip() for p in pattern.split(",") if p.strip()]

    def hit(case: Case, item: str) -> bool:
        if any(ch in item for ch in "*?["):
            return fnmatch.fnmatch(case.name, item) or fnmatch.fnmatch(case.family, item)
        return item in case.name or item == case.family

    return [c for c in CATALOGUE if any(hit(c, i) for i in items)]
