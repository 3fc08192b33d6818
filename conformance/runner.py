"""Run the catalogue: every case, in every layout variant, on every carrier, against three references.

For one (case, layout) *unit* the runner computes

* the analytic gradient on each carrier (``strideweave.testing.analytic_gradients``,
  or one batched ``sw.grad`` call for a Jacobian case),
* float64 central differences (``strideweave.testing.numerical_gradients``),
* the numpy carrier's analytic gradient (the cross-carrier reference),
* the backend's own autodiff of the case's native reference (torch.autograd
  for the torch carrier, jax.vjp for the jax carrier),

and turns every comparison into a :class:`Check`. Nothing here prints; the
report module renders results.
"""

from __future__ import annotations

import contextlib
import inspect
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field

import numpy as np

import strideweave as sw
from strideweave.carriers import carrier_names
from strideweave.testing import analytic_gradients, available_carriers, numerical_gradients

from .catalogue import Case
from .inputs import PreparedInput, prepare_inputs, tensor_from_logical
from .native import NATIVE_CHECKS, native_vjp

__all__ = [
    "CARRIERS",
    "Check",
    "RunResult",
    "checks_for",
    "condense",
    "resolve_carriers",
    "run",
    "run_case",
    "run_unit",
    "unit_count",
]

#: the carriers the suite knows, in report order (the registry's)
CARRIERS = carrier_names()
REFERENCE = "numpy"


@dataclass
class Check:
    """One comparison: a case in one layout on one carrier against one reference.

    ``check`` is ``fd`` (float64 central differences), ``numpy`` (the numpy
    carrier's gradient), ``torch.autograd`` or ``jax.vjp``. ``error`` is the
    worst relative error ``|got - want| / (|want| + atol / rtol)``; the check
    passes when it is at most ``rtol``.
    """

    case: str
    family: str
    layout: str
    carrier: str
    check: str
    status: str                 # pass | fail | error | skip
    error: float | None = None
    rtol: float | None = None
    atol: float | None = None
    element: str = ""           # the worst element, named
    message: str = ""

    @property
    def ratio(self) -> float | None:
        """error / rtol: at most 1 passes (inf when the check raised)."""
        if self.status == "error":
            return float("inf")
        return None if self.error is None or not self.rtol else self.error / self.rtol

    def describe(self) -> str:
        where = f"{self.case} [{self.layout}] on {self.carrier} vs {self.check}"
        if self.status == "fail":
            return f"FAIL {where}: {self.element} (rel error {self.error:.3g} > rtol {self.rtol:g})"
        return f"{self.status.upper()} {where}: {self.message}"


@dataclass
class RunResult:
    """Every check of a run, plus what was run and how long it took."""

    carriers: list[str]
    cases: list[str]
    checks: list[Check] = field(default_factory=list)
    seconds: float = 0.0
    unit_seconds: dict = field(default_factory=dict)
    versions: dict = field(default_factory=dict)

    @property
    def failures(self) -> list[Check]:
        return [c for c in self.checks if c.status in ("fail", "error")]

    def to_dict(self) -> dict:
        return {"carriers": self.carriers, "cases": self.cases, "seconds": round(self.seconds, 2),
                "versions": self.versions, "unit_seconds": self.unit_seconds,
                "checks": [asdict(c) for c in self.checks]}


def condense(checks: Sequence[Check]) -> list[str]:
    """One line per failing or erroring check, errors sharing (case, layout, message) merged into one."""
    lines, errors = [], {}
    for c in checks:
        if c.status == "fail":
            lines.append(c.describe())
        elif c.status == "error":
            errors.setdefault((c.case, c.layout, c.message), []).append(f"{c.carrier}/{c.check}")
    for (case, layout, message), where in errors.items():
        lines.append(f"ERROR {case} [{layout}] on {', '.join(where)}: {message}")
    return lines


def checks_for(carrier: str) -> list[str]:
    """The checks run for one carrier (report column order)."""
    out = ["fd"]
    if carrier != REFERENCE:
        out.append(REFERENCE)
    if carrier in NATIVE_CHECKS:
        out.append(NATIVE_CHECKS[carrier])
    return out


# ----- gradients ---------------------------------------------------------------------------------


def _cotangents(case: Case, out_shape: tuple) -> list[np.ndarray]:
    """The cotangent values (logical shape of the output) a case is differentiated with."""
    size = int(np.prod(out_shape))
    if case.cotangent == "basis":
        return [np.eye(size, dtype=np.float32)[k].reshape(out_shape, order="F") for k in range(size)]
    if case.cotangent == "ones":
        return [np.ones(out_shape, dtype=np.float32)]
    rng = np.random.default_rng([case.seed, 1_000_003])
    return [rng.uniform(-1.0, 1.0, size=out_shape).astype(np.float32)]


def _analytic(case: Case, prepared: Sequence[PreparedInput], carrier: str,
              cotangents: list[np.ndarray]) -> list[np.ndarray]:
    """Per input: analytic gradients on ``carrier``, stacked over cotangents (K, *shape)."""
    tensors = [p.tensor(carrier) for p in prepared]
    if case.cotangent != "basis":
        return [_stack([g], p) for g, p in zip(analytic_gradients(case.fn, tensors, cotangents[0]), prepared)]
    # The Jacobian: every basis cotangent at once, one batched sw.grad call.
    out = case.fn(*tensors)
    layout = out.layout
    batched = sw.Layout(sw.Shape([len(cotangents), *layout.shape.modes]),
                        sw.Stride([layout.cosize, *layout.stride.modes]))
    cot = tensor_from_logical(np.stack(cotangents), batched, carrier)
    grads = sw.grad(out, tensors, cot, batched=True)
    return [np.zeros((len(cotangents), *p.logical.shape)) if g is None else np.asarray(g.numpy(), np.float64)
            for g, p in zip(grads, prepared)]


def _stack(rows: list, p: PreparedInput) -> np.ndarray:
    return np.stack([np.zeros(p.logical.shape) if r is None else np.asarray(r, np.float64) for r in rows])


def _numeric(case: Case, prepared: Sequence[PreparedInput], cotangents: list[np.ndarray]) -> list[np.ndarray]:
    """Per input: float64 central differences, stacked over cotangents."""
    tensors = [p.tensor("numpy") for p in prepared]
    rows = [numerical_gradients(case.fn, tensors, cot, eps=case.eps) for cot in cotangents]
    return [_stack([r[i] for r in rows], p) for i, p in enumerate(prepared)]


# ----- comparison ----------------------------------------------------------------------------------


def _arg_names(case: Case) -> list[str]:
    try:
        names = [p.name for p in inspect.signature(case.fn).parameters.values()]
    except (TypeError, ValueError):
        names = []
    return names if len(names) == len(case.inputs) else [f"in{i}" for i in range(len(case.inputs))]


def _compare(case: Case, got: list[np.ndarray], want: list[np.ndarray], rtol: float, atol: float,
             out_shape: tuple) -> tuple[bool, float, str]:
    """(passed, worst relative error, the worst element named) over all inputs."""
    worst = (-1.0, "")
    for name, g, w in zip(_arg_names(case), got, want):
        if g.shape != w.shape:
            return False, float("inf"), f"{name}: gradient shape {g.shape[1:]} != expected {w.shape[1:]}"
        if g.size == 0:
            continue
        diff = np.abs(g - w)
        diff[np.isnan(diff)] = np.inf
        rel = diff / (np.abs(w) + atol / rtol)
        at = np.unravel_index(int(np.argmax(rel)), rel.shape)
        if rel[at] > worst[0]:
            k, idx = at[0], ", ".join(str(int(i)) for i in at[1:])
            row = ""
            if case.cotangent == "basis":
                row = f"d out[{', '.join(str(int(i)) for i in np.unravel_index(k, out_shape, order='F'))}] / d "
            worst = (float(rel[at]), f"{row}{name}[{idx}]: got {g[at]:.7g}, expected {w[at]:.7g}")
    return worst[0] <= rtol, max(worst[0], 0.0), worst[1]


def _emit(case, layout, carrier, check, outcome, *, rtol=None, atol=None, out_shape=()) -> Check:
    """A Check from a pair (got, want) of results, either of which may be an exception or a skip reason."""
    got, want = outcome
    base = {"case": case.name, "family": case.family, "layout": layout, "carrier": carrier, "check": check,
            "rtol": rtol, "atol": atol}
    if isinstance(want, str):
        return Check(**base, status="skip", message=want)
    for what, value in (("analytic gradient", got), (f"{check} reference", want)):
        if isinstance(value, BaseException):
            return Check(**base, status="error", message=f"{what} raised {type(value).__name__}: {value}")
    ok, err, element = _compare(case, got, want, rtol, atol, out_shape)
    return Check(**base, status="pass" if ok else "fail", error=err, element=element,
                 message="" if ok else element)


def _attempt(fn: Callable, *args):
    try:
        return fn(*args)
    except Exception as exc:  # reported as an error check, never hidden
        return exc


# ----- driving --------------------------------------------------------------------------------------


def run_unit(case: Case, layout: str, carriers: Sequence[str]) -> list[Check]:
    """All checks for one case in one layout variant on the given carriers."""
    prepared = prepare_inputs(case.inputs, layout, case.seed)
    try:
        out_shape = tuple(int(s) for s in case.fn(*[p.tensor(REFERENCE) for p in prepared]).layout.mode_sizes)
    except Exception as exc:
        return [Check(case.name, case.family, layout, c, chk, "error",
                      message=f"forward on numpy raised {type(exc).__name__}: {exc}")
                for c in carriers for chk in checks_for(c)]
    unavailable = dict(case.unavailable)
    skipped = [Check(case.name, case.family, layout, c, chk, "skip", message=f"skipped: {unavailable[c]}")
               for c in carriers if c in unavailable for chk in checks_for(c)]
    carriers = [c for c in carriers if c not in unavailable]
    cots = _cotangents(case, out_shape)
    analytic = {c: _attempt(_analytic, case, prepared, c, cots) for c in dict.fromkeys([REFERENCE, *carriers])}
    numeric = _attempt(_numeric, case, prepared, cots) if case.fd else f"skipped: {case.fd_note}"
    native = {}
    for c in carriers:
        if c in NATIVE_CHECKS:
            native[c] = (_attempt(native_vjp, c, case.ref, prepared, cots) if case.ref is not None
                         else f"skipped: {case.native_note}")
    t = case.tol
    checks = []
    for c in carriers:
        got = analytic[c]
        checks.append(_emit(case, layout, c, "fd", (got, numeric), rtol=t.fd_rtol, atol=t.fd_atol,
                            out_shape=out_shape))
        if c != REFERENCE:
            checks.append(_emit(case, layout, c, REFERENCE, (got, analytic[REFERENCE]), rtol=t.agree_rtol,
                                atol=t.agree_atol, out_shape=out_shape))
        if c in native:
            checks.append(_emit(case, layout, c, NATIVE_CHECKS[c], (got, native[c]), rtol=t.agree_rtol,
                                atol=t.agree_atol, out_shape=out_shape))
    return checks + skipped


def run_case(case: Case, carriers: Sequence[str]) -> list[Check]:
    """All checks of one case, every meaningful layout variant."""
    return [chk for layout in case.layouts() for chk in run_unit(case, layout, carriers)]


def resolve_carriers(requested: Iterable[str] | None) -> list[str]:
    """The requested carriers (default: all installed), validated, in report order."""
    installed = available_carriers(lazy=True)
    if requested is None:
        return [c for c in CARRIERS if c in installed]
    requested = list(dict.fromkeys(requested))
    unknown = [c for c in requested if c not in CARRIERS]
    if unknown:
        raise ValueError(f"unknown carrier(s) {unknown}; expected some of {list(CARRIERS)}")
    missing = [c for c in requested if c not in installed]
    if missing:
        raise ValueError(f"carrier(s) {missing} are not installed here (installed: {installed})")
    return [c for c in CARRIERS if c in requested]


def _versions() -> dict:
    import platform

    out = {"python": platform.python_version(), "strideweave": sw.__version__, "numpy": np.__version__}
    for name in ("torch", "jax", "array_api_strict"):
        with contextlib.suppress(Exception):  # not installed
            out[name] = __import__(name).__version__
    return out


def _case_task(name: str, carriers: Sequence[str]) -> tuple[list[Check], dict]:
    """Worker entry point: run one catalogue case by name; (checks, unit seconds)."""
    from .catalogue import CATALOGUE

    case = next(c for c in CATALOGUE if c.name == name)
    checks, seconds = [], {}
    for layout in case.layouts():
        t0 = time.perf_counter()
        checks.extend(run_unit(case, layout, carriers))
        seconds[f"{case.name}[{layout}]"] = round(time.perf_counter() - t0, 3)
    return checks, seconds


def run(cases: Sequence[Case], carriers: Sequence[str], *, jobs: int = 1,
        on_progress: Callable[[str, int], None] | None = None) -> RunResult:
    """Run ``cases`` on ``carriers`` and collect every check.

    ``jobs > 1`` runs whole cases in that many worker processes (spawned, so
    each has its own torch/JAX state; a case stays in one process so JAX
    reuses its compilations across layout variants); the cases must then
    come from the catalogue. ``on_progress(label, units_done)`` is called as
    work completes.
    """
    result = RunResult(carriers=list(carriers), cases=[c.name for c in cases], versions=_versions())
    start = time.perf_counter()
    by_case: dict[str, tuple[list[Check], dict]] = {}
    if jobs > 1 and len(cases) > 1:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor, as_completed

        ctx = multiprocessing.get_context("spawn")
        # Longest cases first (more layouts, more inputs) keeps the workers evenly loaded.
        order = sorted(cases, key=lambda c: -len(c.layouts()) * len(c.inputs))
        with ProcessPoolExecutor(max_workers=jobs, mp_context=ctx) as pool:
            futures = {pool.submit(_case_task, c.name, list(carriers)): c for c in order}
            for future in as_completed(futures):
                case = futures[future]
                by_case[case.name] = future.result()
                if on_progress is not None:
                    on_progress(case.name, len(case.layouts()))
    else:
        for case in cases:
            checks, seconds = [], {}
            for layout in case.layouts():
                t0 = time.perf_counter()
                checks.extend(run_unit(case, layout, carriers))
                seconds[f"{case.name}[{layout}]"] = round(time.perf_counter() - t0, 3)
                if on_progress is not None:
                    on_progress(f"{case.name} [{layout}]", 1)
            by_case[case.name] = (checks, seconds)
    for case in cases:  # catalogue order, whatever order the work finished in
        checks, seconds = by_case[case.name]
        result.checks.extend(checks)
        result.unit_seconds.update(seconds)
    result.seconds = time.perf_counter() - start
    return result


def unit_count(cases: Sequence[Case]) -> int:
    """How many (case, layout) units a run over ``cases`` has."""
    return sum(len(c.layouts()) for c in cases)
