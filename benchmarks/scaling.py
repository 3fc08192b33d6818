"""``python -m benchmarks --only scaling``: how the cost of every operation grows, beside torch.

Every row of ``scaling_cases.CASES`` runs at three sizes ``n`` (elements of a
vector input; matrices are ``sqrt(n)`` square, linalg's ``sqrt(n) / 2``): one
timed call is the forward and, where the result is Float32 and an input is a
float, ``sum(result).backward()``, on StrideWeave's numpy carrier and on torch
CPU eager (one thread), interleaved in the same process (a warm-up call each,
then ``repeats`` alternating rounds, the minimum). Peak memory of one call:
``tracemalloc`` for StrideWeave (NumPy reports its buffers to it), the
resident set's high-water mark above the resident set before the call for
torch (VmHWM, reset just before, with glibc mapping every block of 64 KiB or
more afresh; torch's CPU allocator does not report to ``tracemalloc``), so
torch's figure misses blocks under 64 KiB and is empty at the quick sizes.

Before the first size, two probe sizes (``n / 16``, ``n / 4``) run once, not
reported: with them, every size is extrapolated before it runs (quadratic
growth assumed from a single point).

The growth exponents are the least-squares slopes of log time and log peak
memory over log ``n``. A row is flagged when StrideWeave's time exponent
exceeds torch's (or, without a torch reference, the row's expected ``growth``)
by more than 0.5, or when its time at the largest size is more than 10x
torch's; a flagged row whose calls take under 50 ms is measured once more
and keeps the second measurement (a flag that does not repeat is noted). A row whose next
size would take more than ``limit_s`` (or more than ``limit_bytes`` of
traced memory), extrapolated from the sizes measured, stops there and is
flagged: its exponents come from the sizes it ran (the probes included when
fewer than two reported sizes ran).
"""
from __future__ import annotations

import gc
import json
import math
import os
import time
import traceback
import tracemalloc
from dataclasses import dataclass

import numpy as np

from benchmarks import backends as B
from benchmarks.deep import _peak_mib, _reset_peak, _status_mib

MIB = 1024 * 1024
FULL_SIZES = (16_384, 65_536, 262_144)
QUICK_SIZES = (64, 256, 1_024)
EXPONENT_MARGIN = 0.5
RATIO_LIMIT = 10.0
MMAP_THRESHOLD = 65_536
REMEASURE_BELOW_S = 0.05


@dataclass
class Settings:
    sizes: tuple = FULL_SIZES
    repeats: int = 3
    limit_s: float = 0.5              # a size predicted slower than this is not run
    limit_bytes: float = 1.5e9        # nor one predicted to trace more memory


def _float_token(token: str) -> bool:
    from benchmarks.scaling_cases import INPUTS
    return INPUTS[token][1]


def _inputs(case, n: int) -> list:
    from benchmarks.scaling_cases import INPUTS
    rng = np.random.default_rng(abs(hash(case.name)) % 2**32 + n)
    return [INPUTS[token][0](n, rng) for token in case.inputs]


def _outputs(out) -> list:
    if isinstance(out, (tuple, list)):
        return [o for item in out for o in _outputs(item)]
    return [out]


def _leaves(case, arrays, make_float, make_other) -> tuple[list, list]:
    """The inputs as the library's arrays (floats as float32, complex as complex64), and the float ones."""
    leaves = [make_float(a.astype(np.float32)) if _float_token(t) else
              make_other(a.astype(np.complex64) if np.iscomplexobj(a) else a)
              for t, a in zip(case.inputs, arrays)]
    return leaves, [leaf for leaf, t in zip(leaves, case.inputs) if _float_token(t)]


def sw_step(case, arrays):
    """One StrideWeave call: the program, and ``sum(result).backward()`` where the result is Float32."""
    import strideweave.array_api as xp
    from strideweave.errors import Float32RuleError
    leaves, floats = _leaves(case, arrays, xp.asarray, xp.asarray)

    def step():
        for leaf in floats:
            leaf.grad = None
        outs = [o for o in _outputs(case.program(xp, *leaves)) if hasattr(o, "dtype")]
        diff = [o for o in outs if o.dtype == xp.float32] if floats else []
        if diff:
            total = xp.sum(diff[0])
            for o in diff[1:]:
                total = total + xp.sum(o)
            if state["backward"]:
                try:
                    total.backward()
                except Float32RuleError:  # a Float32 result outside the graph (unique_*): forward only
                    state["backward"] = False
        return bool(diff) and state["backward"]
    state = {"backward": True}
    return step


def torch_step(case, arrays, backward: bool):
    """The same call on torch float32 tensors (``case.torch`` or the program through array_api_compat)."""
    torch = B.torch()
    import array_api_compat.torch as txp
    leaves, floats = _leaves(case, arrays, lambda a: torch.tensor(a, requires_grad=backward), torch.tensor)

    def step():
        for leaf in floats:
            leaf.grad = None
        out = case.program(txp, *leaves) if case.torch == "same" else case.torch(torch, *leaves)
        outs = [o for o in _outputs(out) if isinstance(o, torch.Tensor)]
        diff = [o for o in outs if o.dtype == torch.float32] if backward else []
        if diff:
            total = sum(o.sum() for o in diff)
            if total.requires_grad:  # a constant result (zeros_like) is summed, as on StrideWeave, not differentiated
                total.backward()
        return bool(diff)
    return step


def _best_times(steps: list, repeats: int) -> list:
    """Each step warmed up once, then ``repeats`` rounds alternating which goes first; each one's minimum
    (on a shared machine the figure other work disturbs least)."""
    for step in steps:
        step()
    times: list = [[] for _ in steps]
    order = list(range(len(steps)))
    gc.collect()
    for r in range(repeats):
        for i in (order if r % 2 == 0 else order[::-1]):
            t0 = time.perf_counter()
            steps[i]()
            times[i].append(time.perf_counter() - t0)
    return [min(ts) for ts in times]


def _traced_peak(step) -> float:
    gc.collect()
    tracemalloc.start()
    try:
        step()
        return float(tracemalloc.get_traced_memory()[1])
    finally:
        tracemalloc.stop()


def _mallopt():
    """glibc's ``mallopt`` (None elsewhere)."""
    try:
        import ctypes
        libc = ctypes.CDLL("libc.so.6")
        return libc.mallopt, libc.malloc_trim
    except (OSError, AttributeError):
        return None


M_MMAP_THRESHOLD = -3
_ALLOCATOR = _mallopt()


def _timing_allocator() -> None:
    # Blocks up to 32 MiB come from the heap and are reused, as glibc's own threshold settles to.
    if _ALLOCATOR:
        _ALLOCATOR[0](M_MMAP_THRESHOLD, 32 * MIB)


def _rss_peak(step) -> float | None:
    """The resident set's high-water mark above the resident set before ``step`` (Linux with glibc).

    Meanwhile every block of 64 KiB or more is mapped afresh and unmapped when freed, so the
    mark follows the live memory instead of the allocator's reuse of freed blocks.
    """
    if _ALLOCATOR is None:
        return None
    gc.collect()
    _ALLOCATOR[0](M_MMAP_THRESHOLD, MMAP_THRESHOLD)
    _ALLOCATOR[1](0)
    try:
        if not _reset_peak():
            return None
        base = _status_mib("VmRSS")
        step()
        return None if base is None else max(0.0, (_peak_mib() - base) * MIB)
    finally:
        _timing_allocator()


def slope(ns, values) -> float | None:
    """Least-squares slope of log(values) over log(ns); None with fewer than two positive points."""
    pts = [(math.log(n), math.log(v)) for n, v in zip(ns, values) if v is not None and v > 0]
    if len(pts) < 2:
        return None
    mx = sum(p[0] for p in pts) / len(pts)
    my = sum(p[1] for p in pts) / len(pts)
    den = sum((p[0] - mx) ** 2 for p in pts)
    return sum((p[0] - mx) * (p[1] - my) for p in pts) / den if den else None


def flags(row: dict) -> list:
    """Why a row is flagged: its time exponent beyond torch's (or its expected growth) + 0.5, its ratio > 10x,
    or a size it could not reach within the limits."""
    why = []
    mine, theirs = row.get("time_exp_sw"), row.get("time_exp_torch")
    yardstick, label = (theirs, "torch's") if theirs is not None else (row.get("growth"), "expected")
    if mine is not None and yardstick is not None and mine > yardstick + EXPONENT_MARGIN:
        why.append(f"time exponent {mine:.2f} > {label} {yardstick:.2f} + {EXPONENT_MARGIN}")
    ratio = row.get("ratio")
    if ratio is not None and ratio > RATIO_LIMIT:
        why.append(f"{ratio:.1f}x torch at n={row['sizes'][-1]:,}")
    if row.get("stopped"):
        why.append(row["stopped"])
    return why


def _probes(sizes: tuple) -> tuple:
    """Two sizes below the first, measured (not reported) to extrapolate the first before running it."""
    return tuple(max(2, sizes[0] // f) for f in (16, 4))


def _predicted(points: list, n: int) -> tuple[float, float]:
    """StrideWeave's time and traced memory at ``n`` from the points so far: quadratic growth from one point,
    the measured growth (between linear and n^2.5, so one disturbed round does not stop a row) from more."""
    ns = [p[0] for p in points]
    exp_t = 2.0 if len(points) < 2 else min(max(slope(ns, [p[1] for p in points]) or 1.0, 1.0), 2.5)
    exp_m = 2.0 if len(points) < 2 else min(max(slope(ns, [p[3] for p in points]) or 1.0, 1.0), 2.5)
    grow = n / points[-1][0]
    return points[-1][1] * grow ** exp_t, points[-1][3] * grow ** exp_m


def measure(case, settings: Settings) -> dict:
    """One row: times and peak memory at each size that fits the limits, exponents, ratio and flags."""
    row = {"name": case.name, "growth": case.growth, "sizes": [], "sw_s": [], "torch_s": [], "sw_bytes": [],
           "torch_bytes": [], "backward": None, "status": "ok", "stopped": None,
           "note": case.note or ("no torch reference" if case.torch is None else "")}
    has_torch = case.torch is not None
    points: list = []   # (n, sw s, torch s, sw bytes, torch bytes) of every size run, probes included
    try:
        for n in _probes(settings.sizes) + tuple(settings.sizes):
            probe = n < settings.sizes[0]
            if points:
                t_next, m_next = _predicted(points, n)
                slack = 4.0 if len(points) < 2 else 1.0  # one point gives a pessimistic (quadratic) guess
                if t_next > slack * settings.limit_s or m_next > slack * settings.limit_bytes:
                    stop = f"stopped before n={n:,}: predicted {t_next:.1f} s, {m_next / MIB:,.0f} MiB traced"
                    row["note"] = f"{row['note']}; {stop}" if row["note"] else stop
                    row["stopped"] = stop
                    break
            arrays = _inputs(case, n)
            sw = sw_step(case, arrays)
            backward = sw()
            steps = [sw]
            if has_torch:
                steps.append(torch_step(case, arrays, backward))
            best = _best_times(steps, 1 if probe else settings.repeats)
            rss = _rss_peak(steps[1]) if has_torch and not probe else None
            points.append((n, best[0], best[1] if has_torch else None, _traced_peak(sw), rss))
            row["backward"] = backward
            steps = sw = None
    except Exception as e:  # an operation that cannot run is a result, not a crash
        if os.environ.get("SW_BENCH_TRACEBACK"):
            traceback.print_exc()
        row["status"] = "error"
        row["note"] = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"[:160]
    reported = [p for p in points if p[0] >= settings.sizes[0]]
    if len(reported) < 2 and len(points) >= 2:
        reported = points  # stopped early: the probes give the growth
        row["note"] += "; exponents include the probe sizes" if row["note"] else "exponents include the probe sizes"
    for key, column in (("sizes", 0), ("sw_s", 1), ("torch_s", 2), ("sw_bytes", 3), ("torch_bytes", 4)):
        row[key] = [p[column] for p in reported]
    ns = row["sizes"]
    row["time_exp_sw"] = slope(ns, row["sw_s"])
    row["time_exp_torch"] = slope(ns, row["torch_s"]) if has_torch else None
    row["mem_exp_sw"] = slope(ns, row["sw_bytes"])
    row["mem_exp_torch"] = slope(ns, row["torch_bytes"]) if has_torch else None
    last_torch = row["torch_s"][-1] if row["torch_s"] else None
    row["ratio"] = row["sw_s"][-1] / last_torch if last_torch else None
    row["flags"] = flags(row) if row["status"] == "ok" else []
    return row


def run_all(cases, settings: Settings, log=print) -> dict:
    """Every case measured; the document the report is written from."""
    from benchmarks.scaling_cases import UNBENCHMARKED
    B.torch()
    import strideweave.array_api  # noqa: F401
    gc.collect()
    gc.freeze()  # the imported modules' objects leave the collector's view: each later collect is cheap
    _timing_allocator()
    start = time.perf_counter()
    rows = []
    for case in cases:
        row = measure(case, settings)
        if row["flags"] and max(row["sw_s"], default=1.0) < REMEASURE_BELOW_S:
            # A flag must reproduce: on a shared machine one row's rounds can all land in a busy spell.
            again = measure(case, settings)
            if not again["flags"]:
                again["note"] = "; ".join(filter(None, [again["note"], "the first measurement's flag did not repeat"]))
            row = again
        rows.append(row)
        log(f"  scaling {row['name']:<40} " + (_cells(row)[0] if row["status"] == "ok" else "ERROR " + row["note"]))
        gc.collect()
    return {"sizes": list(settings.sizes), "repeats": settings.repeats, "rows": rows,
            "unbenchmarked": dict(UNBENCHMARKED), "elapsed_s": time.perf_counter() - start}


def _fmt(v, spec="{:.2f}") -> str:
    return "-" if v is None else spec.format(v)


def _time(s) -> str:
    if s is None:
        return "-"
    return f"{s * 1e3:.2f} ms" if s >= 1e-3 else f"{s * 1e6:.0f} µs"


def _cells(row: dict) -> list:
    mine = _time(row["sw_s"][-1] if row["sw_s"] else None)
    theirs = _time(row["torch_s"][-1] if row["torch_s"] else None)
    return [f"{mine} / {theirs} = {_fmt(row['ratio'])}x", "; ".join(row["flags"])]


def markdown(doc: dict) -> str:
    """The results table (flagged rows first), then the errors and the names not benchmarked."""
    rows = doc["rows"]
    ok = [r for r in rows if r["status"] == "ok"]
    flagged = [r for r in ok if r["flags"]]
    summary = (f"Sizes n = {', '.join(f'{n:,}' for n in doc['sizes'])}; {doc['repeats']} rounds; "
               f"{len(ok)} rows measured, {len(flagged)} flagged, {len(rows) - len(ok)} errors; "
               f"{doc['elapsed_s']:.0f} s.")
    header = ("| operation | backward | time at largest n (sw / torch = ratio) | time exp sw | time exp torch "
              "| mem exp sw | mem exp torch | flag |")
    lines = [summary, "", header, "|---|---|---|---|---|---|---|---|"]
    for r in sorted(ok, key=lambda r: (not r["flags"], r["name"])):
        when = "yes" if r["backward"] else "forward only"
        note = "; ".join(part for part in r["note"].split("; ") if part and part != r["stopped"])  # stops: a flag
        note = f" ({note})" if note else ""
        flag = "**" + "; ".join(r["flags"]) + "**" if r["flags"] else ""
        lines.append(f"| `{r['name']}` | {when} | {_cells(r)[0]}{note} | {_fmt(r['time_exp_sw'])} | "
                     f"{_fmt(r['time_exp_torch'])} | {_fmt(r['mem_exp_sw'])} | {_fmt(r['mem_exp_torch'])} | {flag} |")
    errors = [r for r in rows if r["status"] != "ok"]
    if errors:
        lines += ["", "Rows that could not run:", ""]
        lines += [f"- `{r['name']}`: {r['note']}" for r in errors]
    lines += ["", "Not benchmarked:", ""]
    lines += [f"- `{name}`: {why}" for name, why in sorted(doc["unbenchmarked"].items())]
    return "\n".join(lines)


def main(quick: bool, out_dir: str, log=None) -> dict:
    """Run every case (``quick``: tiny sizes) and write ``scaling.md`` / ``scaling.json`` in ``out_dir``."""
    from benchmarks.scaling_cases import CASES
    log = log or (lambda s: print(s, flush=True))
    settings = Settings(QUICK_SIZES, 2, 0.5) if quick else Settings()
    log(f"scaling: {len(CASES)} operations at n = {', '.join(f'{n:,}' for n in settings.sizes)}, "
        "numpy carrier against torch CPU")
    doc = run_all(CASES, settings, log)
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "scaling.json"), "w") as f:
        json.dump(doc, f, indent=1)
    text = markdown(doc)
    with open(os.path.join(out_dir, "scaling.md"), "w") as f:
        f.write(text + "\n")
    print()
    print(text)
    return doc


if __name__ == "__main__":
    import argparse
    ap = argparse.ArgumentParser(prog="python -m benchmarks.scaling", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="tiny sizes, two rounds")
    ap.add_argument("--out", default=os.path.join("benchmarks", "results"), help="output directory")
    parsed = ap.parse_args()
    main(parsed.quick, parsed.out)
