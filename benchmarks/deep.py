"""W2 deep chain, one contender per subprocess (clean peak RSS).

Child: ``python -m benchmarks.deep CONTENDER N`` prints one JSON line with the
wall time of forward + backward and ru_maxrss before (after imports and data
setup) and after the run.  The parent reports time, peak RSS and the delta.
"""
from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time

import numpy as np

CONTENDERS = ("sw-numpy", "sw-torch", "torch", "hips-autograd", "numpy")
SCALE = 1.0000001


def _status_mib(key: str):
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None


def _reset_peak() -> bool:
    """Reset the kernel's RSS high-water mark (VmHWM) to the current RSS (Linux)."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def _peak_mib() -> float:
    """Peak RSS.  VmHWM (resettable) where available; ru_maxrss otherwise.  ru_maxrss
    survives fork + exec on Linux (a child starts at the parent's high-water mark),
    which is why it is only the fallback."""
    hwm = _status_mib("VmHWM")
    if hwm is not None:
        return hwm
    r = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return r / 1024 / (1024 if sys.platform == "darwin" else 1)


def _build(name: str, n: int):
    from benchmarks import anchors as A
    from benchmarks import workloads as W
    x0 = np.linspace(0.5, 1.5, 16, dtype=np.float32)
    if name.startswith("sw-"):
        return W.sw_chain(x0, n, SCALE, None, name[3:])()
    return {"torch": lambda: A.chain_torch(x0, n, SCALE, None),
            "hips-autograd": lambda: A.chain_hips(x0, n, SCALE, None),
            "numpy": lambda: A.chain_numpy(x0, n, SCALE, None)}[name]()


def child(name: str, n: int) -> dict:
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    step = _build(name, n)
    _reset_peak()
    before = _status_mib("VmRSS") or _peak_mib()
    t0 = time.perf_counter()
    g = step()
    seconds = time.perf_counter() - t0
    after = _peak_mib()
    arr = np.asarray(g.to_array() if hasattr(g, "to_array") else
                     (g.detach().numpy() if hasattr(g, "detach") else g), dtype=np.float64)
    expected = float(np.float32(SCALE)) ** n
    ok = bool(np.allclose(arr, np.float32(expected), rtol=1e-2))
    return {"contender": name, "n": n, "seconds": seconds, "rss_before_mib": before,
            "rss_peak_mib": after, "rss_delta_mib": after - before, "grad_ok": ok,
            "grad0": float(arr.reshape(-1)[0]), "expected": expected}


def run_child(module: str, args: list, timeout_s: float, identity: dict) -> dict:
    """``python -m <module> <args>`` in a fresh interpreter: its last JSON line, with a status.

    ``identity`` names the run in the result when the child fails or times out.
    """
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    try:
        p = subprocess.run([sys.executable, "-m", module, *map(str, args)], cwd=root,
                           capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        return {**identity, "status": "failed", "error": f"timeout after {timeout_s:.0f} s"}
    line = [ln for ln in p.stdout.splitlines() if ln.startswith("{")]
    if p.returncode == 0 and line:
        res = json.loads(line[-1])
        res["status"] = "ok" if res["grad_ok"] else "wrong gradient"
        return res
    tail = (p.stderr or p.stdout).strip().splitlines()
    return {**identity, "status": "failed", "error": (tail[-1] if tail else f"exit code {p.returncode}")[:200]}


def run_all(n: int, timeout_s: float, log=print) -> list[dict]:
    """Each contender in its own fresh interpreter, sequentially."""
    results = []
    for name in CONTENDERS:
        t0 = time.perf_counter()
        res = run_child("benchmarks.deep", [name, n], timeout_s, {"contender": name, "n": n})
        res["wall_s"] = time.perf_counter() - t0
        log(f"  W2 {name:<14} {res['status']:<8} "
            + (f"{res['seconds']:.2f} s, peak RSS delta {res['rss_delta_mib']:.0f} MiB"
               if res["status"] == "ok" else res.get("error", "")))
        results.append(res)
    return results


if __name__ == "__main__":
    import benchmarks  # noqa: F401  (thread pinning, already done by -m)
    print(json.dumps(child(sys.argv[1], int(sys.argv[2]))))
