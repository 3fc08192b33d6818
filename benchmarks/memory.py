"""W3-mem: peak memory of one W3 step on a large writable input against a read-only one.

Each variant runs in a fresh interpreter, once for the resident set (the
kernel's VmHWM, reset just before the step, as in ``deep.py``) and once under
``tracemalloc``, which sees NumPy's buffers: NumPy reports every data
allocation to it (``PyTraceMalloc_Track``, since NumPy 1.13), and a snapshot
of a wrapped array is a NumPy buffer too.  The figure is the peak of the run
above the interpreter's memory just before the input is made: the input, what
``sw.tensor`` or a capture keeps, the step's temporaries and the gradient.

Child: ``python -m benchmarks.memory VARIANT MODE N`` prints one JSON line.
"""
from __future__ import annotations

import json
import sys
import time

import numpy as np

from benchmarks.deep import _peak_mib, _reset_peak, _status_mib, run_child

VARIANTS = ("writable", "read-only")
MODES = ("rss", "tracemalloc")
MIB = 1024 * 1024


def child(variant: str, mode: str, n: int) -> dict:
    import tracemalloc

    import strideweave as sw
    if variant not in VARIANTS or mode not in MODES:
        raise ValueError(f"variant must be one of {VARIANTS} and mode one of {MODES}, got {variant!r}, {mode!r}")

    def step(arr):
        x = sw.tensor(arr)
        (sw.exp(x) * x).sum().backward()
        return x.grad

    small = np.linspace(-1, 1, 1024, dtype=np.float32)   # loads every code path before measuring
    small.flags.writeable = variant == "writable"
    step(small)
    if mode == "tracemalloc":
        tracemalloc.start()
        base = tracemalloc.get_traced_memory()[0]
    else:
        _reset_peak()
        base = (_status_mib("VmRSS") or _peak_mib()) * MIB
    x = np.linspace(-1, 1, n, dtype=np.float32)
    x.flags.writeable = variant == "writable"
    t0 = time.perf_counter()
    g = step(x)
    seconds = time.perf_counter() - t0
    if mode == "tracemalloc":
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    else:
        peak = _peak_mib() * MIB
    gv = g.to_array()
    ok = bool(np.allclose(gv[:: max(1, n // 1000)], (np.exp(x) * (x + 1))[:: max(1, n // 1000)], rtol=1e-4))
    return {"variant": variant, "mode": mode, "n": n, "input_mib": x.nbytes / MIB,
            "peak_mib": (peak - base) / MIB, "seconds": seconds, "grad_ok": ok}


def run_all(n: int, timeout_s: float, log=print) -> list[dict]:
    """Every (variant, mode) in its own fresh interpreter, one after another."""
    rows = []
    for mode in MODES:
        for variant in VARIANTS:
            r = run_child("benchmarks.memory", [variant, mode, n], timeout_s,
                          {"variant": variant, "mode": mode, "n": n})
            log(f"  W3-mem {variant:<9} {mode:<11} " + (f"peak {r['peak_mib']:.0f} MiB"
                                                      if r["status"] == "ok" else r["status"] + ": "
                                                      + r.get("error", "")))
            rows.append(r)
    return rows


def ratio(rows: list[dict], mode: str):
    """Writable peak / read-only peak for one mode, or (None, why)."""
    by = {r["variant"]: r for r in rows if r["mode"] == mode}
    w, ro = by.get("writable", {}), by.get("read-only", {})
    if w.get("status") != "ok" or ro.get("status") != "ok":
        return None, w.get("error") or ro.get("error") or "missing"
    return w["peak_mib"] / max(ro["peak_mib"], 1e-9), None


if __name__ == "__main__":
    import benchmarks  # noqa: F401  (thread pinning, already done by -m)
    print(json.dumps(child(sys.argv[1], sys.argv[2], int(sys.argv[3]))))
