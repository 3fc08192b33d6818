"""Scale-out benchmark: gradients over a chunked design matrix on a dask.distributed LocalCluster.

    python -m benchmarks.distributed                  # 10^8 float32 elements (~381 MiB), 2 workers
    python -m benchmarks.distributed --elements 1e7   # a quick run
    python -m benchmarks.distributed --graph          # task counts of both graphs, nothing computed

Workloads over ``X`` (n rows x f features, row chunks) and targets in the same row chunks:

* least squares: ``loss = 0.5 / n * sum((X @ w - y) ** 2)``, gradient ``X.T @ (X @ w - y) / n``;
* logistic regression: ``loss = mean(log(1 + exp(X @ w)) - y * (X @ w))``,
  gradient ``X.T @ (sigmoid(X @ w) - y) / n``;
* least squares with k = 1, 3 or 10 output columns (``least_squares_k3``...): ``W`` (f, k), ``Y`` (n, k),
  ``loss = 0.5 / n * sum((X @ W - Y) ** 2)``, gradient ``X.T @ (X @ W - Y) / n``;
* multinomial logistic regression over k = 10 classes (``softmax``): one-hot ``Y`` (n, k),
  ``loss = mean(log(sum(exp(X @ W), 1)) - sum(Y * (X @ W), 1))``, gradient ``X.T @ (softmax(X @ W) - Y) / n``.

Contenders: StrideWeave on the ``"dask"`` carrier (forward, ``loss.backward()``,
``sw.compute(w.grad)``), the same gradient written by hand in ``dask.array``,
and ``jax.grad`` (jitted) on one process with the data in memory. ``X`` is
generated chunk by chunk on the workers (``dask.array.random``), so no worker
ever holds the whole matrix; each worker has a memory limit well below the
data size. The two Dask contenders are timed on one cluster, alternating
round by round (who goes first alternates too), so that a slow stretch of
a shared machine hits both; the table gives each one's median and the
median of the per-round ratios to the hand-written gradient. The peak
resident memory of every worker process (sampled every 10 ms, on a fresh
cluster for each contender and one round) is reported next to the limit.

Not part of the test suite or of ``python -m benchmarks``: it needs minutes
and several GiB. The table in docs/scale-out.md comes from this script.
``--graph`` only builds the two gradients' task graphs and counts their
tasks and layers, before and after Dask's optimisation (the counts depend on
the number of chunks, not on their size): deterministic, and a second.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import time

import numpy as np

WORKLOADS = ("least_squares", "logistic", "least_squares_k1", "least_squares_k3", "least_squares_k10", "softmax")
CLASSES = 10  # of the softmax workload


# ----- data ---------------------------------------------------------------------------------------

def make_data(n, f, rows_per_chunk, seed=0):
    """Lazy X (n x f), y (n,) and w (f,) float32, generated on the workers chunk by chunk."""
    import dask.array as da

    rng = da.random.default_rng(seed)
    X = rng.standard_normal((n, f), chunks=(rows_per_chunk, f), dtype=np.float32)
    y = (rng.random(n, chunks=rows_per_chunk) < 0.5).astype(np.float32)
    w = da.from_array(np.linspace(-0.05, 0.05, f, dtype=np.float32))
    return X, y, w


def outputs(workload):
    """The number of output columns k of a workload with a weight matrix, else None (a weight vector)."""
    if workload == "softmax":
        return CLASSES
    if workload.startswith("least_squares_k"):
        return int(workload[len("least_squares_k"):])
    return None


def problem(workload, X, y, w, seed=1):
    """``(X, targets, weights)`` of a workload: ``y`` and ``w`` themselves, or Y (n, k) and W (f, k),
    generated on the workers in X's row chunks (one-hot class labels for the softmax)."""
    import dask.array as da

    k = outputs(workload)
    if k is None:
        return X, y, w
    (n, f), rows = X.shape, X.chunks[0]
    rng = da.random.default_rng(seed)
    if workload == "softmax":
        labels = rng.integers(0, k, n, chunks=(rows,))
        Y = (labels[:, None] == da.arange(k)[None, :]).astype(np.float32)
    else:
        Y = rng.standard_normal((n, k), chunks=(rows, (k,)), dtype=np.float32)
    W = da.from_array(np.linspace(-0.05, 0.05, f * k, dtype=np.float32).reshape(f, k))
    return X, Y, W


# ----- contenders ---------------------------------------------------------------------------------

def lazy_dask(workload, X, y, w):
    """The gradient written by hand in dask.array (a lazy array)."""
    import dask.array as da

    n = X.shape[0]
    z = X @ w
    if workload == "logistic":
        r = 1.0 / (1.0 + da.exp(-z)) - y
    elif workload == "softmax":
        e = da.exp(z)
        r = e / e.sum(axis=1, keepdims=True) - y
    else:
        r = z - y
    return (X.T @ r) / np.float32(n)


def grad_dask(workload, X, y, w):
    """The gradient written by hand in dask.array (evaluated)."""
    return lazy_dask(workload, X, y, w).compute()


def lazy_strideweave(workload, X, y, w):
    """The gradient through StrideWeave's autograd on the dask carrier (a lazy Tensor, ``w.grad``)."""
    import strideweave as sw

    n = X.shape[0]
    Xt, yt, wt = sw.tensor(X), sw.tensor(y), sw.tensor(w)
    z = Xt @ wt
    if workload == "logistic":
        loss = sw.mean(sw.log(1.0 + sw.exp(z)) - yt * z)
    elif workload == "softmax":
        loss = sw.mean(sw.log(sw.sum(sw.exp(z), modes=(1,))) - sw.sum(yt * z, modes=(1,)))
    else:
        r = z - yt
        loss = sw.sum(r * r) * (0.5 / n)
    loss.backward()
    return wt.grad


def grad_strideweave(workload, X, y, w):
    """The gradient through StrideWeave's autograd on the dask carrier (evaluated)."""
    import strideweave as sw

    (g,) = sw.compute(lazy_strideweave(workload, X, y, w))
    return g.numpy()


def graph_counts(array, build=None, repeats=5):
    """Tasks and layers of a lazy array's graph, its tasks after Dask's optimisation, and the client's
    milliseconds (median of ``repeats``) to build it (``build()``, when given) and to optimise it."""
    import dask

    graph = array.__dask_graph__()
    (optimised,) = dask.optimize(array)
    out = {"tasks": len(graph), "layers": len(graph.layers), "optimised_tasks": len(optimised.__dask_graph__())}
    timings = {"optimise_ms": lambda: dask.optimize(array)}
    if build is not None:
        timings["build_ms"] = build
    for key, fn in timings.items():
        times = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            fn()
            times.append((time.perf_counter() - t0) * 1e3)
        out[key] = statistics.median(times)
    return out


def graphs(workloads, X, y, w):
    """``graph_counts`` of both contenders' gradients, per workload (the window ``sw.compute`` evaluates)."""
    out = {}
    for workload in workloads:
        args = (workload, *problem(workload, X, y, w))
        g = lazy_strideweave(*args)
        ours = g.carrier.array[g.offset:g.offset + g.layout.cosize]
        out[workload] = {"dask.array by hand": graph_counts(lazy_dask(*args), lambda args=args: lazy_dask(*args)),
                         "StrideWeave (dask carrier)": graph_counts(ours, lambda args=args: lazy_strideweave(*args))}
    return out


def jax_runner(workload, X, y, w):
    """A jitted jax.grad over in-memory copies of the data (one process)."""
    import jax
    import jax.numpy as jnp

    Xh, yh, wh = (jnp.asarray(np.asarray(a)) for a in (X, y, w))

    def loss(w):
        z = Xh @ w
        if workload == "logistic":
            return jnp.mean(jnp.logaddexp(0.0, z) - yh * z)
        if workload == "softmax":
            return jnp.mean(jax.nn.logsumexp(z, axis=1) - jnp.sum(yh * z, axis=1))
        return 0.5 * jnp.sum((z - yh) ** 2) / z.shape[0]

    grad = jax.jit(jax.grad(loss))
    return lambda: np.asarray(grad(wh).block_until_ready())


# ----- measurement --------------------------------------------------------------------------------

def _peak_rss():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # kilobytes on Linux


def timed(fn, rounds):
    """Median, min and all wall times of ``rounds`` calls after one warm-up, and the last result."""
    out = fn()
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), min(times), times, out


def interleaved(contenders, rounds):
    """Wall times of ``rounds`` calls of each ``(name, fn)`` after one warm-up each, the contenders
    alternating and the first of each round alternating too: ``{name: [seconds, ...]}``."""
    for _, fn in contenders:
        fn()
    times = {name: [] for name, _ in contenders}
    for r in range(rounds):
        for name, fn in (contenders if r % 2 == 0 else contenders[::-1]):
            t0 = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t0)
    return times


def _start_sampler(dask_worker):
    """Sample this worker process's resident memory every 10 ms in a daemon thread."""
    import threading

    import psutil

    state = {"peak": 0}
    process = psutil.Process()

    def loop():
        while True:
            state["peak"] = max(state["peak"], process.memory_info().rss)
            time.sleep(0.01)

    threading.Thread(target=loop, daemon=True).start()
    dask_worker.strideweave_peak = state


def _read_sampler(dask_worker):
    return dask_worker.strideweave_peak["peak"]


def worker_peaks(client):
    """Peak resident memory of every worker process since its sampler started, in bytes."""
    return sorted(client.run(_read_sampler).values())


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--elements", type=float, default=1e8, help="elements of X (default 1e8)")
    parser.add_argument("--features", type=int, default=100)
    parser.add_argument("--rows-per-chunk", type=int, default=25_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--memory-limit", default="300MiB", help="per worker (default 300MiB)")
    parser.add_argument("--rounds", type=int, default=5,
                        help="timed rounds per contender, the two Dask contenders alternating (default 5)")
    parser.add_argument("--no-jax", action="store_true", help="skip the single-process jax.grad contender")
    parser.add_argument("--only", default=",".join(WORKLOADS), help="comma-separated workloads (default: all)")
    parser.add_argument("--out", default=None, help="write the results as JSON here")
    parser.add_argument("--graph", action="store_true",
                        help="only count the tasks of both gradients' graphs (nothing is computed)")
    args = parser.parse_args(argv)

    from dask.utils import format_bytes, parse_bytes
    from distributed import Client, LocalCluster

    f = args.features
    n = int(args.elements) // f
    limit = parse_bytes(args.memory_limit)
    results = {"elements": n * f, "rows": n, "features": f, "rows_per_chunk": args.rows_per_chunk,
               "data_bytes": n * f * 4, "workers": args.workers, "memory_limit": limit, "runs": []}
    print(f"X: {n} x {f} float32 = {format_bytes(n * f * 4)} in chunks of {args.rows_per_chunk} rows; "
          f"{args.workers} workers, memory limit {format_bytes(limit)} each")

    X, y, w = make_data(n, f, args.rows_per_chunk)
    workloads = args.only.split(",")
    for workload in workloads:
        if workload not in WORKLOADS:
            parser.error(f"unknown workload {workload!r}; expected some of {', '.join(WORKLOADS)}")
    if args.graph:
        results["graphs"] = graphs(workloads, X, y, w)
        print(graph_table(results["graphs"], X.numblocks[0]))
        if args.out:
            with open(args.out, "w") as fh:
                json.dump(results, fh, indent=2)
        return 0
    contenders = (("dask.array by hand", grad_dask), ("StrideWeave (dask carrier)", grad_strideweave))
    data = X, y, w
    for workload in workloads:
        call = (workload, *problem(workload, *data))
        answers, peaks = {}, {}
        for name, fn in contenders:
            # Memory: a fresh cluster per contender, so each worker's sampled peak covers this contender
            # only (one warm-up and one measured round).
            with LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                              memory_limit=limit, dashboard_address=None) as cluster, Client(cluster) as client:
                client.run(_start_sampler)
                *_, answers[name] = timed(lambda fn=fn, call=call: fn(*call), 1)
                peaks[name] = worker_peaks(client)
        # Time: both contenders on one cluster, alternating (which goes first alternates too), so that a
        # slow stretch of the machine or a slower cluster start hits both alike.
        with LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                          memory_limit=limit, dashboard_address=None) as cluster, Client(cluster):
            times = interleaved([(name, lambda fn=fn, call=call: fn(*call)) for name, fn in contenders],
                                args.rounds)
        hand = times[contenders[0][0]]
        for name, _ in contenders:
            ts = times[name]
            run = {"workload": workload, "contender": name, "median_s": statistics.median(ts), "min_s": min(ts),
                   "times_s": ts, "pairwise_vs_hand": statistics.median(t / h for t, h in zip(ts, hand)),
                   "worker_peak_bytes": peaks[name], "over_limit": any(p > limit for p in peaks[name])}
            results["runs"].append(run)
            print(f"{workload:14s} {name:28s} median {run['median_s']:7.2f} s  min {run['min_s']:7.2f} s  "
                  f"pairwise {run['pairwise_vs_hand']:.2f}x  "
                  f"worker peaks {', '.join(format_bytes(p) for p in peaks[name])}", flush=True)
        a, b = answers.values()
        err = float(np.max(np.abs(a - b)) / (np.max(np.abs(a)) + 1e-30))
        results.setdefault("agreement", {})[workload] = err
        if not args.no_jax:
            with LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                              dashboard_address=None) as cluster, Client(cluster):
                fn = jax_runner(*call)  # the data is generated on the cluster, then held here
            median, best, times, _g = timed(fn, args.rounds)
            results["runs"].append({"workload": workload, "contender": "jax.grad (jit, 1 process)",
                                    "median_s": median, "min_s": best, "times_s": times,
                                    "process_peak_bytes": _peak_rss()})
            print(f"{workload:14s} {'jax.grad (jit, 1 process)':28s} median {median:7.2f} s  "
                  f"min {best:7.2f} s  (process peak {format_bytes(_peak_rss())})", flush=True)
    print(table(results))
    if args.out:
        with open(args.out, "w") as fh:
            json.dump(results, fh, indent=2)
    return 0


def graph_table(counts, chunks):
    """``graphs`` output as a Markdown table."""
    lines = [(f"| workload ({chunks} chunks) | contender | tasks | layers | tasks after optimisation "
              "| client build (ms) | optimisation (ms) |"),
             "|---|---|---:|---:|---:|---:|---:|"]
    for workload, contenders in counts.items():
        for name, c in contenders.items():
            lines.append(f"| {workload} | {name} | {c['tasks']} | {c['layers']} | {c['optimised_tasks']} "
                         f"| {c['build_ms']:.1f} | {c['optimise_ms']:.1f} |")
    return "\n".join(lines)


def table(results):
    """The results as a Markdown table with the StrideWeave / hand-written Dask ratio."""
    from dask.utils import format_bytes

    lines = ["| workload | contender | median (s) | min (s) | vs dask by hand | pairwise | peak memory |",
             "|---|---|---:|---:|---:|---:|---|"]
    base = {r["workload"]: r["median_s"] for r in results["runs"] if r["contender"] == "dask.array by hand"}
    for r in results["runs"]:
        if "worker_peak_bytes" in r:
            mem = "workers " + ", ".join(format_bytes(p) for p in r["worker_peak_bytes"])
            mem += " (over the limit!)" if r["over_limit"] else f" (limit {format_bytes(results['memory_limit'])})"
        else:
            mem = f"process {format_bytes(r['process_peak_bytes'])}"
        ratio = r["median_s"] / base[r["workload"]]
        pairwise = f"{r['pairwise_vs_hand']:.2f}x" if "pairwise_vs_hand" in r else ""
        lines.append(f"| {r['workload']} | {r['contender']} | {r['median_s']:.2f} | {r['min_s']:.2f} | "
                     f"{ratio:.2f}x | {pairwise} | {mem} |")
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
