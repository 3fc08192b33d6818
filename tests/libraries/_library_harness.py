"""Run library code (scikit-learn, SciPy, xarray, marray, einops, ...) on StrideWeave arrays and judge its gradient.

A case is one library call ``program(x)`` written as a user of the library
writes it. It runs on a Float32 StrideWeave Tensor on one carrier, the loss
``xp.sum(program(x) * w)`` (fixed random weights ``w``) is differentiated with
``backward()``, and the gradient is compared with torch.autograd running the
very same library code on a float64 torch tensor (scikit-learn and SciPy both
dispatch to torch through array-api-compat). Where torch cannot differentiate
the code, the reference is float64 central differences of the library's own
NumPy path.

The library receives ``x * 1.0``, a computed array, as it does inside a
model's forward pass: a leaf exports freely by the contract (docs/api.md section
4), a Tensor with history does not, so only a computed input shows whether
an implicit export is refused.

Each case x carrier run has one outcome:

- ``agree``: forward value and gradient match the reference within float32
  tolerances;
- ``loud``: an exception was raised (the test then checks that it is the
  failure the case expects, and why);
- ``wrong``: no error, but the forward value or the gradient differs;
- ``none``: no error, but ``x.grad`` is None (the history was cut silently).

``wrong`` and ``none`` are the forbidden outcomes: the tests fail on them.
SciPy reads ``SCIPY_ARRAY_API`` once, when it is first imported, so the test
suite's conftest sets it before any test module imports SciPy, and
:func:`require_scipy_array_api` refuses to run with SciPy imported without it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import os
import re
import sys
import traceback
from collections.abc import Callable

import numpy as np

import strideweave as sw
import strideweave.array_api as xp
from strideweave.testing import available_carriers

CARRIERS = available_carriers()
OUTCOMES = ("agree", "loud", "wrong", "none")

# Float32 against a float64 reference: relative error of a few ulps times the condition of the
# small programs here, and an absolute floor scaled by the gradient's magnitude.
RTOL = 2e-3
ATOL = 2e-4

# The version rule's message (spec "Backward rejects storage modified after the forward pass")
# and torch's for the same situation.
VERSION_RULE = "in-place modification"
TORCH_VERSION_RULE = "modified by an inplace operation"


def require_scipy_array_api() -> None:
    """Set ``SCIPY_ARRAY_API=1``, or fail loudly where SciPy was already imported without it."""
    if os.environ.get("SCIPY_ARRAY_API") == "1":
        return
    if "scipy" in sys.modules:
        raise RuntimeError("SciPy was imported before SCIPY_ARRAY_API=1 was set, so it will not "
                           "dispatch to StrideWeave arrays: set it in the environment (tests/conftest.py does)")
    os.environ["SCIPY_ARRAY_API"] = "1"


@dataclasses.dataclass(frozen=True)
class Loud:
    """A failure a case is allowed to end in: its exception type, a message fragment and its cause.

    ``fragment`` is a regular expression searched for in the message. ``torch_fails``: a fragment
    of torch's own error on the same code, which the check requires of the reference run (the
    failure is accepted only because torch fails the same way). ``carriers``: the carriers it
    applies to (all when None).
    """

    error: type
    fragment: str
    cause: str
    torch_fails: str | None = None
    carriers: tuple[str, ...] | None = None

    def matches(self, error: BaseException) -> bool:
        return isinstance(error, self.error) and re.search(self.fragment, str(error)) is not None


# SciPy computes on NumPy for namespaces it does not know (np.asarray in, xp.asarray out): a
# Tensor with a history refuses that implicit export and says to detach (docs/api.md section 4).
SCIPY_ON_NUMPY = Loud(TypeError, r"detach\(\)", "SciPy computes on NumPy: implicit export of a Tensor with history")

# Accepted wherever torch fails the same way on the same code, whatever the case declares.
TORCH_FAILS_TOO = (
    Loud(RuntimeError, VERSION_RULE, "the spec's version rule: a node saved the array the library then "
         "wrote in place (torch fails too)", torch_fails=TORCH_VERSION_RULE),
    Loud(TypeError, r"detach\(\)", "the library computes on NumPy (torch refuses the export too)",
         torch_fails="Can't call numpy()"),
)


def float64_cut(where: str, what: str) -> Loud:
    """The library computes in Float64 or complex (``what``): only Float32 is differentiable (spec).

    The error must name a file matching the regular expression ``where`` and a line (docs/api.md
    section 8, "No silent cut").
    """
    return Loud(RuntimeError, where + r"\S*:\d+", f"{what}: only Float32 is differentiable (spec)")


@dataclasses.dataclass(frozen=True)
class Case:
    """One library call to differentiate: ``program(x)`` returns one array.

    ``domain`` picks the input values: ``"real"`` (standard normal), ``"positive"`` (0.5 to 2),
    ``"unit"`` (0.05 to 0.95). ``loud``: the failures this case may end in instead of agreeing.
    """

    library: str
    name: str
    program: Callable
    domain: str = "real"
    shape: tuple[int, ...] = (6, 4)
    loud: tuple[Loud, ...] = ()
    seed: int = 0

    @property
    def id(self) -> str:
        return f"{self.library}:{self.name}"

    def allowed_loud(self, carrier: str) -> tuple[Loud, ...]:
        declared = tuple(f for f in self.loud if f.carriers is None or carrier in f.carriers)
        return declared + TORCH_FAILS_TOO


@dataclasses.dataclass
class Reference:
    """The reference forward value and gradient, where they came from, and torch's error if any."""

    forward: np.ndarray
    grad: np.ndarray
    source: str
    torch_error: BaseException | None = None


@dataclasses.dataclass
class Outcome:
    """The result of one case x carrier run."""

    case: Case
    carrier: str
    kind: str
    detail: str
    error: BaseException | None = None
    where: str = ""


def inputs(case: Case) -> np.ndarray:
    """The case's Float32 input values (the float64 reference starts from the same values)."""
    rng = np.random.default_rng(1000 + case.seed)
    if case.domain == "real":
        values = rng.standard_normal(case.shape)
    elif case.domain == "positive":
        values = rng.uniform(0.5, 2.0, case.shape)
    elif case.domain == "unit":
        values = rng.uniform(0.05, 0.95, case.shape)
    else:
        raise ValueError(f"unknown domain {case.domain!r}: expected 'real', 'positive' or 'unit'")
    return values.astype(np.float32)


def weights(shape: tuple[int, ...]) -> np.ndarray:
    """Fixed random loss weights of the result's shape, exact in Float32."""
    return np.random.default_rng(7).standard_normal(shape).astype(np.float32).astype(np.float64)


def namespace(x):
    """The Array API namespace of ``x``, as the libraries find it."""
    import array_api_compat

    return array_api_compat.array_namespace(x)


def constant(x, values, dtype=None):
    """``values`` as an array of ``x``'s namespace, device and (floating) dtype, as library callers write it."""
    import array_api_compat

    ns = array_api_compat.array_namespace(x)
    values = np.asarray(values)
    if dtype is None and values.dtype.kind == "f":
        dtype = x.dtype
    elif dtype is None:
        dtype = ns.int32
    return ns.asarray(values.tolist(), dtype=dtype, device=array_api_compat.device(x))


@contextlib.contextmanager
def dispatch():
    """scikit-learn's Array API dispatch on (SciPy's is the environment variable)."""
    try:
        import sklearn
    except ImportError:
        yield
        return
    with sklearn.config_context(array_api_dispatch=True):
        yield


def _torch_reference(case: Case):
    import torch

    x = torch.tensor(inputs(case).astype(np.float64), requires_grad=True)
    with dispatch():
        y = case.program(x * 1.0)
    if not isinstance(y, torch.Tensor):
        raise TypeError(f"returned {type(y).__name__}, not a torch tensor")
    w = torch.tensor(weights(tuple(y.shape)), dtype=y.dtype)
    (y * w).sum().backward()
    if x.grad is None:
        raise RuntimeError("torch.autograd gave no gradient")
    return y.detach().numpy(), x.grad.numpy()


def _numpy_loss(case: Case, values: np.ndarray, w: np.ndarray | None):
    with dispatch():
        y = np.asarray(case.program(values), dtype=np.float64)
    return y, (None if w is None else float(np.sum(y * w)))


def _central_differences(case: Case, eps: float = 1e-6):
    x0 = inputs(case).astype(np.float64)
    forward, _ = _numpy_loss(case, x0, None)
    w = weights(forward.shape)
    grad = np.zeros_like(x0)
    for i in np.ndindex(x0.shape):
        up, down = x0.copy(), x0.copy()
        up[i] += eps
        down[i] -= eps
        grad[i] = (_numpy_loss(case, up, w)[1] - _numpy_loss(case, down, w)[1]) / (2 * eps)
    return forward, grad


@functools.cache
def reference(case: Case) -> Reference:
    """torch.autograd in float64 on the same library code, else float64 central differences."""
    try:
        forward, grad = _torch_reference(case)
        return Reference(forward, grad, "torch")
    except ImportError:
        torch_error = None
    except Exception as error:  # any torch failure falls back to differences
        torch_error = error
    forward, grad = _central_differences(case)
    return Reference(forward, grad, "central differences", torch_error)


def _where(error: BaseException) -> str:
    """The innermost frame outside StrideWeave and this harness where ``error`` was raised."""
    frames = traceback.extract_tb(error.__traceback__)
    here = os.path.dirname(os.path.abspath(__file__))
    outside = [f for f in frames if "strideweave" not in f.filename and not f.filename.startswith(here)]
    frame = (outside or frames)[-1] if frames else None
    if frame is None:
        return ""
    parts = frame.filename.replace("\\", "/").split("/")
    short = "/".join(parts[-3:])
    return f"{short}:{frame.lineno}"


def _close(got: np.ndarray, want: np.ndarray) -> tuple[bool, float]:
    if got.shape != want.shape:
        return False, float("inf")
    scale = max(1.0, float(np.max(np.abs(want)))) if want.size else 1.0
    err = np.abs(got.astype(np.float64) - want)
    ok = bool(np.all(err <= ATOL * scale + RTOL * np.abs(want)))
    return ok, float(np.max(err)) if err.size else 0.0


def run(case: Case, carrier: str) -> Outcome:
    """Differentiate ``case`` on ``carrier`` and judge the result against :func:`reference`."""
    ref = reference(case)
    x = sw.tensor(inputs(case), carrier=carrier)
    try:
        with sw.set_default_carrier(carrier), dispatch():
            y = case.program(x * 1.0)
            if not isinstance(y, sw.Tensor):
                return Outcome(case, carrier, "none", f"returned {type(y).__name__}, not a Tensor")
            forward = y.numpy()
            w = sw.tensor(weights(tuple(y.shape)).astype(np.float32), carrier=carrier)
            xp.sum(y * w).backward()
    except Exception as error:  # every exception is a loud outcome, judged by the test
        message = str(error).splitlines()[0] if str(error) else ""
        return Outcome(case, carrier, "loud", f"{type(error).__name__}: {message[:200]}", error, _where(error))
    ok, err = _close(np.asarray(forward, dtype=np.float64), ref.forward)
    if not ok:
        return Outcome(case, carrier, "wrong", f"forward value differs (max error {err:.2e})")
    if x.grad is None:
        return Outcome(case, carrier, "none", f"x.grad is None (result dtype {y.dtype}, "
                                              f"history {'kept' if y.autograd_ctx is not None else 'cut'})")
    ok, err = _close(x.grad.numpy(), ref.grad)
    if not ok:
        return Outcome(case, carrier, "wrong", f"gradient differs from {ref.source} (max error {err:.2e})")
    return Outcome(case, carrier, "agree", f"max gradient error {err:.1e} against {ref.source}")


def accepted(outcome: Outcome) -> Loud | None:
    """The accepted failure a loud outcome matches (its type, message and torch's own error), else None."""
    if outcome.kind != "loud":
        return None
    torch_error = reference(outcome.case).torch_error
    for failure in outcome.case.allowed_loud(outcome.carrier):
        if failure.matches(outcome.error) and (
                failure.torch_fails is None or (torch_error is not None and failure.torch_fails in str(torch_error))):
            return failure
    return None


def check(case: Case, carrier: str) -> None:
    """Assert the run agrees, or fails in one of the ways the case allows (what the tests call)."""
    outcome = run(case, carrier)
    if outcome.kind == "agree" or accepted(outcome) is not None:
        return
    where = f" (at {outcome.where})" if outcome.where else ""
    if outcome.kind != "loud":
        raise AssertionError(f"{case.id} on {carrier}: {outcome.kind}: {outcome.detail}{where}")
    torch_error = reference(case).torch_error
    torch_said = "no error" if torch_error is None else repr(str(torch_error)[:120])
    raise AssertionError(f"{case.id} on {carrier}: {outcome.detail}{where}; torch gave {torch_said}; expected "
                         "agreement or "
                         + "; ".join(f"{f.error.__name__} matching {f.fragment!r} ({f.cause})"
                                     for f in case.allowed_loud(carrier)))


def run_all(cases, carriers=None) -> list[Outcome]:
    """Every case on every carrier."""
    return [run(case, carrier) for case in cases for carrier in (carriers or CARRIERS)]


def markdown_table(outcomes: list[Outcome]) -> str:
    """Per library and carrier: agree / loud / wrong / none counts, as a Markdown table."""
    libraries = sorted({o.case.library for o in outcomes})
    carriers = [c for c in CARRIERS if any(o.carrier == c for o in outcomes)]
    lines = ["| library | carrier | runs | agree | loud | (accepted) | wrong | none |",
             "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for library in [*libraries, "all"]:
        for carrier in [*carriers, "all"]:
            picked = [o for o in outcomes if (library == "all" or o.case.library == library)
                      and (carrier == "all" or o.carrier == carrier)]
            counts = [sum(o.kind == k for o in picked) for k in OUTCOMES]
            counts.insert(2, sum(accepted(o) is not None for o in picked))
            lines.append(f"| {library} | {carrier} | {len(picked)} | " + " | ".join(map(str, counts)) + " |")
    return "\n".join(lines)


def markdown_details(outcomes: list[Outcome]) -> str:
    """One row per case: its outcome on each carrier, then every run that did not agree."""
    carriers = [c for c in CARRIERS if any(o.carrier == c for o in outcomes)]
    cases = list(dict.fromkeys(o.case for o in outcomes))
    by = {(o.case.id, o.carrier): o for o in outcomes}
    lines = ["| case | reference | " + " | ".join(carriers) + " |", "| --- | --- |" + " --- |" * len(carriers)]
    for case in cases:
        kinds = [by[(case.id, c)] for c in carriers]
        lines.append(f"| {case.id} | {reference(case).source} | "
                     + " | ".join(o.kind + ("*" if accepted(o) else "") for o in kinds) + " |")
    lines.append("")
    lines.append("`loud*`: a failure the case accepts (the cause is in the list below).")
    lines += ["", "| case | carrier | outcome | detail |", "| --- | --- | --- | --- |"]
    for o in outcomes:
        if o.kind != "agree":
            where = f" at `{o.where}`" if o.where else ""
            cause = accepted(o)
            kind = f"loud, accepted: {cause.cause}" if cause else o.kind
            lines.append(f"| {o.case.id} | {o.carrier} | {kind} | {o.detail.replace('|', '/')}{where} |")
    return "\n".join(lines)
