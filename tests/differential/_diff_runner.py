"""Run one program on a StrideWeave carrier and on torch float64, and classify the pair.

The reference is torch.autograd in float64 through ``array_api_compat.torch``
with ``requires_grad`` leaves; StrideWeave runs the same statements through
``strideweave.array_api`` with Float32 leaves on the carrier. After the
statements, every variable's value is compared, then ``loss = sum of
xp.sum(v * v)`` over the float variables the program made is differentiated
and every leaf's gradient compared (float32 tolerances, NaN == NaN).

Outcomes: ``agree``; ``torch refused`` (torch raised, StrideWeave ran: skipped);
``both refused``; ``strideweave loud`` (StrideWeave raised one of the expected
error types where torch ran: counted and listed); ``near singular`` (the
reference met a tie, a zero or a near-equal comparison, where float32 and
float64 may take different branches: skipped unless singular points are
asked for); and the failures: ``silent difference`` and ``strideweave crash``
(an exception of an unexpected type).
"""

from __future__ import annotations

import dataclasses
import re
import traceback
import warnings

import numpy as np
from _diff_programs import Program, leaf_literal, negative_steps

AGREE, TORCH_REFUSED, BOTH_REFUSED, LOUD, SINGULAR = (
    "agree", "torch refused", "both refused", "strideweave loud", "near singular")
SILENT, CRASH = "silent difference", "strideweave crash"
OUTCOMES = (AGREE, LOUD, TORCH_REFUSED, BOTH_REFUSED, SINGULAR, SILENT, CRASH)
FAILURES = (SILENT, CRASH)

#: what a clear refusal raises; anything else from StrideWeave is a crash
EXPECTED_ERRORS = (RuntimeError, ValueError, TypeError, IndexError, NotImplementedError)
RTOL = 2e-4


class NearSingular(Exception):
    """Raised by the guarded reference namespace at a tie, a zero or a near-equal comparison."""


@dataclasses.dataclass
class Run:
    values: dict | None = None    # name -> np.ndarray, after the statements
    grads: dict | None = None     # leaf name -> np.ndarray or None
    error: BaseException | None = None
    stage: str = ""               # "forward" or "backward" when error is set
    where: str = ""               # the statement that raised
    names: list | None = None     # the float variables the loss sums


@dataclasses.dataclass
class Outcome:
    kind: str
    detail: str = ""


# ----- the two sides -----

def loss_line(names) -> str:
    terms = [f"xp.sum({n} * {n})" for n in names]
    return "loss = " + " + ".join(terms) if terms else ""


def leaf_lines(program: Program, carrier: str) -> list[str]:
    """The statements that make the program's leaves on ``carrier``.

    On Dask: wrapped dask arrays in chunks of two along every axis (so that
    matrices lie across chunks), computed on the synchronous scheduler.
    """
    if carrier != "dask":
        return [f"{n} = xp.asarray({leaf_literal(d)}, device={carrier!r})" for n, d in program.leaves]
    return [f"{n} = sw.tensor(da.from_array({leaf_literal(d)}, chunks=2))" if np.ndim(d)
            else f"{n} = xp.asarray({leaf_literal(d)}, device=sw.zeros(1, carrier='dask').device)"
            for n, d in program.leaves]


def _header(carrier: str) -> list[str]:
    if carrier != "dask":
        return ["import numpy as np", "import strideweave.array_api as xp"]
    return ["import dask.array as da", "import numpy as np", "import strideweave as sw",
            "import strideweave.array_api as xp"]


def sw_source(program: Program, carrier: str, names=None) -> str:
    """The program as a runnable StrideWeave script (the reproducer)."""
    lines = [*_header(carrier), ""]
    if carrier == "dask":
        lines[:0] = ["import dask"]
        lines += ["dask.config.set(scheduler='synchronous')"]
    lines += leaf_lines(program, carrier)
    lines += list(program.lines)
    if names:
        lines += [loss_line(names), "loss.backward()"]
        lines += [f"print({n!r}, {n}.grad)" for n, _ in program.leaves]
    return "\n".join(lines)


def _exec_lines(lines, env):
    for line in lines:
        try:
            exec(line, env)  # the program is the test input
        except BaseException as exc:
            exc.__diff_line__ = line
            raise


def _run(program: Program, env: dict, to_numpy, grad_of, backward) -> Run:
    run = Run()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _exec_lines(program.lines, env)
            run.values = {k: to_numpy(v) for k, v in env.items() if k[:1] in "xv" and k[1:].isdigit()}
    except Exception as exc:  # every refusal is classified
        run.error, run.stage, run.where = exc, "forward", getattr(exc, "__diff_line__", "")
        return run
    run.names = [k for k in run.values if k.startswith("v") and run.values[k].dtype.kind == "f"]
    if not run.names:
        run.grads = {}
        return run
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            exec(loss_line(run.names), env)
            backward(env["loss"])
            run.grads = {n: grad_of(env[n]) for n, _ in program.leaves}
    except Exception as exc:
        run.error, run.stage, run.where = exc, "backward", "loss.backward()"
    return run


def run_strideweave(program: Program, carrier: str) -> Run:
    if carrier == "dask":
        import dask
        with dask.config.set(scheduler="synchronous"):
            return _run_strideweave(program, carrier)
    return _run_strideweave(program, carrier)


def _run_strideweave(program: Program, carrier: str) -> Run:
    env: dict = {}
    exec("\n".join([*_header(carrier), *leaf_lines(program, carrier)]), env)  # as the reproducer does

    def grad_of(t):
        return None if t.grad is None else np.asarray(t.grad.numpy())

    def backward(loss):
        if loss.is_differentiable():  # else every gradient stays None, compared as zeros
            loss.backward()

    return _run(program, env, lambda t: np.asarray(t.numpy()), grad_of, backward)


def run_torch(program: Program, singular: bool = False, guard: bool = True) -> Run:
    import array_api_compat.torch as tx
    import torch
    from _diff_guard import guarded
    env = {"xp": guarded(tx, singular) if guard else tx, "np": np}
    for name, data in program.leaves:
        env[name] = torch.tensor(np.array(data), dtype=torch.float64, requires_grad=True)

    def grad_of(t):
        return None if t.grad is None else t.grad.numpy()

    def backward(loss):
        if loss.requires_grad:  # a program whose outputs hold no history: nothing to differentiate
            loss.backward()

    with negative_steps():  # NumPy's negative steps, which torch refuses, as index arrays
        return _run(program, env, lambda t: t.detach().numpy().copy(), grad_of, backward)


# ----- comparing -----

def _differs(got, want, what: str) -> str:
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape:
        return f"{what}: shape {got.shape}, torch {want.shape}"
    if want.dtype.kind != got.dtype.kind and not (want.dtype.kind in "iu" and got.dtype.kind in "iu"):
        return f"{what}: dtype {got.dtype}, torch {want.dtype}"
    if want.dtype.kind == "f":
        if got.dtype != np.float32:
            return f"{what}: dtype {got.dtype}, expected float32"
        finite = np.isfinite(want)
        scale = max(1.0, float(np.max(np.abs(want[finite]), initial=0.0)))
        ok = np.isclose(got, want, rtol=RTOL, atol=RTOL * scale, equal_nan=True)
        if not np.all(ok):
            i = tuple(int(j) for j in np.argwhere(~ok)[0])
            return f"{what}: got {got.tolist()}, torch {want.tolist()} (first at {i}: {got[i]} vs {want[i]})"
        return ""
    if not np.array_equal(got, want):
        return f"{what}: got {got.tolist()}, torch {want.tolist()}"
    return ""


def _compare_values(mine: Run, ref: Run) -> str:
    for name, want in ref.values.items():
        if name not in mine.values:
            return f"{name}: missing"
        bad = _differs(mine.values[name], want, f"value of {name}")
        if bad:
            return bad
    return ""


def _compare_grads(mine: Run, ref: Run, program: Program) -> str:
    for name, data in program.leaves:
        want, got = ref.grads.get(name), mine.grads.get(name)
        want = np.zeros(np.shape(data)) if want is None else want
        got = np.zeros(np.shape(data), np.float32) if got is None else got
        bad = _differs(got, want, f"gradient of {name}")
        if bad:
            return bad
    return ""


def _error_text(run: Run) -> str:
    first = str(run.error).splitlines()[0][:300] if str(run.error) else ""
    return f"{type(run.error).__name__} at {run.stage} ({run.where}): {first}"


def classify(program: Program, carrier: str, *, singular: bool = False) -> Outcome:
    """Run ``program`` on ``carrier`` and on torch float64; say how they compare."""
    ref = run_torch(program, singular)
    if isinstance(ref.error, NearSingular):
        return Outcome(SINGULAR, str(ref.error))
    return judge(program, run_strideweave(program, carrier), ref)


def judge(program: Program, mine: Run, ref: Run) -> Outcome:
    """How StrideWeave's run ``mine`` of ``program`` compares with the torch float64 run ``ref``."""
    if mine.error is not None and not isinstance(mine.error, EXPECTED_ERRORS):
        tb = "".join(traceback.format_exception(mine.error)[-6:])
        return Outcome(CRASH, _error_text(mine) + "\n" + tb)
    if ref.error is not None and ref.stage == "forward":
        return Outcome(BOTH_REFUSED if mine.error is not None else TORCH_REFUSED, _error_text(ref))
    if mine.error is not None and mine.stage == "forward":
        return Outcome(LOUD, _error_text(mine))
    bad = _compare_values(mine, ref)
    if bad:
        return Outcome(SILENT, bad)
    if ref.error is not None:
        return Outcome(BOTH_REFUSED if mine.error is not None else TORCH_REFUSED, _error_text(ref))
    if mine.error is not None:
        return Outcome(LOUD, _error_text(mine))
    bad = _compare_grads(mine, ref, program)
    return Outcome(SILENT, bad) if bad else Outcome(AGREE)


# ----- minimal reproducers -----

def _message(outcome: Outcome) -> str:
    """An error's type and the start of its message, without the statement that raised it."""
    if outcome.kind not in (LOUD, CRASH):
        return ""
    head = outcome.detail.split(" at ", 1)[0]
    return head + outcome.detail.split("): ", 1)[-1][:50]


def minimize(program: Program, carrier: str, kind: str, *, singular: bool = False, classify=classify) -> Program:
    """Drop statements and leaves while the program still fails the same way (a refusal: the same error);
    ``classify`` runs a candidate (the bridges' tester passes its own)."""
    first = classify(program, carrier, singular=singular)
    target = (kind, _message(first) if first.kind == kind else "")

    def same(candidate):
        outcome = classify(candidate, carrier, singular=singular)
        return (outcome.kind, _message(outcome) if target[1] else "") == target

    changed = True
    while changed:
        changed = False
        for i in reversed(range(len(program.lines))):
            smaller = program.without(i)
            if same(smaller):
                program, changed = smaller, True
        text = program.body()
        for j, (name, _) in enumerate(program.leaves):
            if name not in text and len(program.leaves) > 1:
                smaller = Program(program.leaves[:j] + program.leaves[j + 1:], program.lines)
                if same(smaller):
                    program, changed = smaller, True
                    break
    renamed = _renumbered(program)
    return renamed if same(renamed) else program


def _renumbered(program: Program) -> Program:
    """Leaves ``x0, x1, ...`` and variables ``v0, v1, ...`` in order of appearance, after the cuts."""
    names = {}
    for name, _ in program.leaves:
        names[name] = f"x{len(names)}"
    count = 0
    for line in program.lines:
        head = re.match(r"(v\d+) = ", line)
        if head and head.group(1) not in names:
            names[head.group(1)] = f"v{count}"
            count += 1

    def rename(text):
        return re.sub(r"\b[xv]\d+\b", lambda m: names.get(m.group(0), m.group(0)), text)

    leaves = tuple((names[n], d) for n, d in program.leaves)
    return Program(leaves, tuple(rename(line) for line in program.lines))


def reproducer(program: Program, carrier: str, outcome: Outcome) -> str:
    """A copy-pastable script, with the difference and what torch float64 gives."""
    ref = run_torch(program, guard=False)
    names = ref.names or []
    text = sw_source(program, carrier, names)
    return (f"# {outcome.kind} on {carrier}: {outcome.detail}\n"
            f"# reference: the same statements with `import array_api_compat.torch as xp` and leaves\n"
            f"# torch.tensor(..., dtype=torch.float64, requires_grad=True)\n{text}\n")


# ----- the tally -----

class Tally:
    """Outcomes per carrier, StrideWeave's refusals by message, and the failures' reproducers."""

    def __init__(self):
        self.counts: dict = {}
        self.loud: dict = {}      # (carrier, message) -> count
        self.failures: list = []  # (carrier, kind, reproducer)

    def add(self, carrier: str, outcome: Outcome) -> None:
        row = self.counts.setdefault(carrier, dict.fromkeys(OUTCOMES, 0))
        row[outcome.kind] += 1
        if outcome.kind == LOUD:
            key = (carrier, outcome.detail.splitlines()[0][:160])
            self.loud[key] = self.loud.get(key, 0) + 1

    def merge(self, other: dict) -> None:
        for carrier, row in other["counts"].items():
            mine = self.counts.setdefault(carrier, dict.fromkeys(OUTCOMES, 0))
            for k, n in row.items():
                mine[k] = mine.get(k, 0) + n
        for carrier, message, n in other["loud"]:
            self.loud[(carrier, message)] = self.loud.get((carrier, message), 0) + n
        self.failures += [tuple(f) for f in other["failures"]]

    def as_dict(self) -> dict:
        return {"counts": self.counts, "loud": [[c, m, n] for (c, m), n in self.loud.items()],
                "failures": [list(f) for f in self.failures]}

    def summary(self) -> str:
        if not self.counts:
            return ""
        cols = OUTCOMES
        lines = ["random programs against torch.autograd float64, per carrier:",
                 f"{'carrier':<18}" + "".join(f"{k:>19}" for k in cols)]
        for carrier, row in sorted(self.counts.items()):
            lines.append(f"{carrier:<18}" + "".join(f"{row.get(k, 0):>19}" for k in cols))
        if self.loud:
            lines.append("StrideWeave refused where torch ran (strideweave loud):")
            for (carrier, message), n in sorted(self.loud.items(), key=lambda kv: -kv[1]):
                lines.append(f"  {n:>4} x [{carrier}] {message}")
        for carrier, kind, text in self.failures:
            lines.append(f"--- {kind} on {carrier}, minimal reproducer:\n{text}")
        return "\n".join(lines)


TALLY = Tally()
