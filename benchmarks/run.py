"""``python -m benchmarks``: run the workloads, interleaved, and write the report.

Method: every contender of a workload is built (setup untimed), warmed up
(``--warmup`` calls; JIT compilation happens here; one more call sizes the
rounds), then timed in round-robin rounds in this one process: each round
calls every contender once, in a rotated order, with ``time.perf_counter``
around one full forward + backward.
The figure is the median over rounds.  The number of rounds is fitted to the
workload's time budget (between its min and max repeats).

Then every goal of the workload (a StrideWeave contender against one anchor)
is measured again *pairwise*: the two are built afresh, warmed up and timed
alone, alternating A, B / B, A round by round; the goal's ratio is the median
of A's times over the median of B's (the median of the per-round ratios is
kept beside it as a check).  A rotation over many contenders slows some
(torch's small steps most) more than others; a pair shares the process with
nothing else that runs.

W2 runs each contender once in its own subprocess for a clean peak RSS;
W3-mem runs one W3 step per subprocess for the peak memory of a writable
against a read-only input.
"""
from __future__ import annotations

import argparse
import contextlib
import gc
import os
import platform
import statistics
import sys
import time
import traceback

import benchmarks  # pins threads before any backend import
from benchmarks import backends as B


def _err(e: BaseException) -> str:
    return f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"[:160]


def _build_warm(build, warmup: int):
    """(step, seconds of one call after the warm-up), the call after it to fit the rounds to the budget."""
    step = build()
    for _ in range(max(1, warmup)):   # JIT compilation happens here
        step()
    t1 = time.perf_counter()
    step()
    return step, time.perf_counter() - t1


def time_pair(step_a, step_b, rounds: int) -> tuple[list, list]:
    """Alternate the two steps, A first in even rounds and B first in odd ones."""
    ta, tb = [], []
    gc.collect()
    for r in range(rounds):
        for step, ts in (((step_a, ta), (step_b, tb)) if r % 2 == 0 else ((step_b, tb), (step_a, ta))):
            t0 = time.perf_counter()
            step()
            ts.append(time.perf_counter() - t0)
    return ta, tb


def pair_summary(ta: list, tb: list) -> dict:
    ma, mb = statistics.median(ta), statistics.median(tb)
    return {"median_sw_s": ma, "median_anchor_s": mb, "ratio": ma / mb,
            "round_ratio_median": statistics.median(a / b for a, b in zip(ta, tb)), "n": len(ta)}


def run_pairs(wl, warmup: int, log) -> dict:
    """Every distinct (sw, anchor) of ``wl.goals`` timed alone, interleaved pairwise."""
    builds = dict(wl.contenders)
    pairs = {}
    for sw_name, anchor, _, _ in wl.goals:
        key = f"{sw_name} | {anchor}"
        if key in pairs:
            continue
        stage = sw_name
        try:
            step_a, wa = _build_warm(builds[sw_name], warmup)
            stage = anchor
            step_b, wb = _build_warm(builds[anchor], warmup)
            stage = "timing"
            rounds = int(max(wl.pair_min, min(wl.pair_max, wl.pair_budget_s / max(wa + wb, 1e-6))))
            pairs[key] = {"sw": sw_name, "anchor": anchor, "status": "ok",
                          **pair_summary(*time_pair(step_a, step_b, rounds))}
        except Exception as e:
            if os.environ.get("SW_BENCH_TRACEBACK"):
                traceback.print_exc()
            pairs[key] = {"sw": sw_name, "anchor": anchor, "status": "error", "error": f"{stage}: {_err(e)}"}
        step_a = step_b = None
        gc.collect()
        p = pairs[key]
        log(f"  {wl.id:<20} pair {key}: " + (f"{p['n']} rounds, {_fmt_s(p['median_sw_s'])} / "
                                               f"{_fmt_s(p['median_anchor_s'])} = {p['ratio']:.2f}x"
                                               if p["status"] == "ok" else "ERROR " + p["error"]))
    return pairs


def _goal(res, sw_name, anchor, limit, label):
    p = res["pairs"][f"{sw_name} | {anchor}"]
    cs = res["contenders"]
    a, b = cs.get(sw_name, {}), cs.get(anchor, {})
    rot = a["median_s"] / b["median_s"] if a.get("status") == b.get("status") == "ok" else None
    g = {"sw": sw_name, "anchor": anchor, "limit": limit, "label": label, "rotation_ratio": rot,
         "method": "pairwise"}
    if p["status"] != "ok":
        return {**g, "ratio": None, "met": False, "why": p["error"]}
    return {**g, "ratio": p["ratio"], "met": p["ratio"] <= limit}


def run_workload(wl, warmup: int, log) -> dict:
    steps, errors, times = {}, {}, {}
    for name, build in wl.contenders:
        try:
            steps[name] = build()
        except Exception as e:  # a missing backend or an unsupported op is a result, not a crash
            errors[name] = "setup: " + _err(e)
    warm_t = {}
    for name in list(steps):
        try:
            for _ in range(max(1, warmup)):   # JIT compilation happens here
                steps[name]()
            t1 = time.perf_counter()
            steps[name]()
            warm_t[name] = time.perf_counter() - t1   # one call after the warm-up ~ steady state
        except Exception as e:
            errors[name] = _err(e)
            if os.environ.get("SW_BENCH_TRACEBACK"):
                traceback.print_exc()
            del steps[name]
    per_round = sum(warm_t.get(n, 0.0) for n in steps) or 1e-3
    repeats = int(max(wl.min_repeats, min(wl.max_repeats, wl.budget_s / per_round)))
    names = list(steps)
    times = {n: [] for n in names}
    gc.collect()
    for r in range(repeats):
        k = r % len(names) if names else 0
        for name in names[k:] + names[:k]:
            t0 = time.perf_counter()
            steps[name]()
            times[name].append(time.perf_counter() - t0)
    steps.clear()
    gc.collect()
    res = {"id": wl.id, "title": wl.title, "repeats": repeats, "notes": list(wl.notes),
           "ops": wl.ops, "contenders": {}}
    for name, _ in wl.contenders:
        if name in times:
            ts = times[name]
            res["contenders"][name] = {"status": "ok", "median_s": statistics.median(ts),
                                       "min_s": min(ts), "max_s": max(ts), "n": len(ts)}
        else:
            res["contenders"][name] = {"status": "error", "error": errors.get(name, "?")}
    res["targets"] = [_target(res, *t) for t in wl.targets]
    log(f"  {wl.id:<20} {repeats:>3} rounds  " + "  ".join(
        f"{n}={_fmt_s(c['median_s'])}" if c["status"] == "ok" else f"{n}=ERROR"
        for n, c in res["contenders"].items()))
    for n, c in res["contenders"].items():
        if c["status"] != "ok":
            log(f"      {n}: {c['error']}")
    res["pairs"] = run_pairs(wl, warmup, log) if wl.goals else {}
    res["goals"] = [_goal(res, *g) for g in wl.goals]
    return res


def _target(res, sw_name, anchor, limit, label):
    cs = res["contenders"]
    a, b = cs.get(sw_name, {}), cs.get(anchor, {})
    alt = next((n for n in cs if n.startswith(sw_name + " [")), None)
    if a.get("status") != "ok" and alt and cs[alt].get("status") == "ok":
        sw_name, a, label = alt, cs[alt], label + f" (fallback: {sw_name} errored)"
    if a.get("status") != "ok" or b.get("status") != "ok":
        return {"sw": sw_name, "anchor": anchor, "limit": limit, "label": label,
                "ratio": None, "met": False, "why": a.get("error") or b.get("error") or "missing"}
    ratio = a["median_s"] / b["median_s"]
    return {"sw": sw_name, "anchor": anchor, "limit": limit, "label": label,
            "ratio": ratio, "met": ratio <= limit}


def _fmt_s(s: float) -> str:
    if s >= 1:
        return f"{s:.2f} s"
    if s >= 1e-3:
        return f"{s * 1e3:.2f} ms"
    return f"{s * 1e6:.1f} µs"


def w2_result(n: int, timeout_s: float, log) -> dict:
    from benchmarks import deep
    rows = deep.run_all(n, timeout_s, log)
    by = {r["contender"]: r for r in rows}
    targets = []
    sw_r, t_r = by.get("sw-numpy", {}), by.get("torch", {})
    ok = sw_r.get("status") == "ok"
    targets.append({"sw": "sw-numpy", "anchor": "-", "limit": None, "label": f"completes ({n:,} nodes)",
                    "ratio": None, "met": ok, "why": None if ok else sw_r.get("error")})
    both = ok and t_r.get("status") == "ok"
    if both:
        rt = sw_r["seconds"] / t_r["seconds"]
        rm = sw_r["rss_delta_mib"] / max(t_r["rss_delta_mib"], 1e-9)
    targets.append({"sw": "sw-numpy", "anchor": "torch", "limit": 0.9, "label": "time <= 0.9x torch",
                    "ratio": rt if both else None, "met": both and rt <= 0.9})
    targets.append({"sw": "sw-numpy", "anchor": "torch", "limit": 1.0,
                    "label": "peak memory (RSS delta) <= 1x torch",
                    "ratio": rm if both else None, "met": both and rm <= 1.0})
    return {"id": "W2", "title": f"deep: {n:,}-node chain y = y * 1.0000001 on 16 floats, sum, backward "
                                 "(one subprocess per contender, one run each)",
            "n": n, "rows": rows, "targets": targets,
            "notes": [("time = one forward + backward in a fresh process; peak RSS = the process's VmHWM "
                       "(high-water mark reset just before the run via /proc/self/clear_refs; ru_maxrss "
                       "where /proc is absent); RSS delta = peak RSS - RSS after imports and setup.")]}


def w3_mem_result(n: int, timeout_s: float, log) -> dict:
    from benchmarks import memory
    rows = memory.run_all(n, timeout_s, log)
    ratio, why = memory.ratio(rows, "rss")
    check, _ = memory.ratio(rows, "tracemalloc")
    mb = n * 4 / 1e6
    goal = {"sw": "sw-numpy", "anchor": "sw-numpy [read-only]", "limit": 1.15, "method": "memory",
            "label": f"peak memory, {mb:,.0f} MB writable input <= 1.15x read-only input",
            "ratio": ratio, "rotation_ratio": None, "tracemalloc_ratio": check,
            "met": ratio is not None and ratio <= 1.15, "why": why}
    return {"id": "W3-mem", "title": f"peak memory of one W3 step (sum(exp(x) * x), backward) on "
                                     f"{n:,} Float32 ({mb:,.0f} MB), writable vs read-only input "
                                     "(one subprocess per row)",
            "n": n, "rows": rows, "targets": [], "goals": [goal],
            "notes": [("peak = the run's high-water mark above the interpreter's memory just before the "
                       "input was made (input, anything sw.tensor or the content watch keeps, temporaries, "
                       "gradient). `rss`: the process's VmHWM, reset just before (/proc/self/clear_refs); "
                       "`tracemalloc`: Python's allocation tracer, which NumPy reports its buffers to. "
                       "The target uses `rss`; `tracemalloc` is the check.")]}


def profile_w1(out_dir: str, log) -> str:
    """cProfile of one W1 run on the numpy carrier, top 25 by total time."""
    import cProfile
    import io
    import pstats

    import numpy as np

    from benchmarks.workloads import sw_chain
    step = sw_chain(np.ones(16, np.float32), 1000, 1.0001, 0.001, "numpy")()
    step()
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(3):
        step()
    prof.disable()
    buf = io.StringIO()
    buf.write("cProfile of W1 (chain, 1,000 steps = 2,000 ops, + backward) on the numpy carrier, "
              "3 runs, after 1 warm-up.\n\n")
    st = pstats.Stats(prof, stream=buf)
    st.sort_stats("tottime").print_stats(25)
    st.sort_stats("cumulative").print_stats(20)
    path = os.path.join(out_dir, "profile_w1.txt")
    with open(path, "w") as f:
        f.write(buf.getvalue())
    log(f"  profile: {path}")
    return path


def environment() -> dict:
    env = {"python": sys.version.split()[0], "platform": platform.platform(),
           "cpus": os.cpu_count(), "loadavg_at_start": os.getloadavg() if hasattr(os, "getloadavg") else None,
           "threads": {k: os.environ.get(k) for k in benchmarks.SINGLE_THREAD_ENV}}
    for mod in ("numpy", "torch", "jax", "autograd", "strideweave"):
        try:
            from importlib import metadata
            __import__(mod)
            env[mod] = metadata.version(mod)
        except Exception as e:
            env[mod] = f"unavailable ({_err(e)})"
    with contextlib.suppress(Exception):
        env["torch_threads"] = B.torch().get_num_threads()
    try:
        import subprocess
        rev = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                             cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        env["git"] = rev.stdout.strip() or None
    except Exception:
        pass
    return env


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="short smoke run (about a minute, smaller sizes)")
    ap.add_argument("--only", default="", help="comma-separated workloads, e.g. W1,W3 (W7 selects all W7-*, "
                                               "W3 also W3-mem, interop both interop rows; scaling: the growth "
                                               "of every operation, run only when named)")
    ap.add_argument("--out", default=os.path.join("benchmarks", "results"), help="output directory")
    ap.add_argument("--device", default="cpu", choices=("cpu", "cuda"),
                    help="cuda: add torch-carrier / torch anchors on CUDA to W3/W4 (skipped without CUDA)")
    ap.add_argument("--warmup", type=int, default=None, help="warm-up calls per contender (default 2, quick 1)")
    ap.add_argument("--no-profile", action="store_true", help="skip the cProfile of W1")
    args = ap.parse_args(argv)

    from benchmarks import report
    from benchmarks.workloads import all_workloads

    only = {s.strip().upper() for s in args.only.split(",") if s.strip()}

    def wanted(wid: str) -> bool:
        return not only or wid.upper() in only or wid.split("-")[0].upper() in only

    warmup = args.warmup if args.warmup is not None else (1 if args.quick else 2)
    os.makedirs(args.out, exist_ok=True)
    if "SCALING" in only:  # run by name only: every operation at three sizes (scaling.py)
        from benchmarks import scaling
        scaling.main(args.quick, args.out)
        only.discard("SCALING")
        if not only:
            return 0
    start = time.perf_counter()
    log = lambda s: print(s, flush=True)  # noqa: E731
    log(f"StrideWeave benchmarks ({'quick' if args.quick else 'full'}, device={args.device}, "
        f"single-threaded backends)")
    env = environment()
    results = []
    mem_n = 12_500_000 if args.quick else 50_000_000     # 50 MB / 200 MB of float32
    for wl in all_workloads(args.quick, args.device):
        if wl.id == "W3" and wanted("W2"):
            results.append(w2_result(100_000 if args.quick else 1_000_000,
                                     60 if args.quick else 240, log))
        if wl.id == "interop-torch" and wanted("W3-mem"):
            results.append(w3_mem_result(mem_n, 60 if args.quick else 180, log))
        if wanted(wl.id):
            results.append(run_workload(wl, warmup, log))
            gc.collect()
    if wanted("W2") and not any(r["id"] == "W2" for r in results):
        results.append(w2_result(100_000 if args.quick else 1_000_000, 60 if args.quick else 240, log))
    if wanted("W3-mem") and not any(r["id"] == "W3-mem" for r in results):
        results.append(w3_mem_result(mem_n, 60 if args.quick else 180, log))
    if not args.no_profile and wanted("W1"):
        profile_w1(args.out, log)
    elapsed = time.perf_counter() - start
    doc = {"mode": "quick" if args.quick else "full", "device": args.device, "elapsed_s": elapsed,
           "environment": env, "workloads": results}
    paths = report.write_all(doc, args.out)
    print()
    print(report.markdown(doc))
    log(f"wrote {', '.join(paths)} ({elapsed:.0f} s)")
    return 0
