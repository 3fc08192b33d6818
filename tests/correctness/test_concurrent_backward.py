"""Concurrent traversals accumulate every contribution exactly once, on every carrier.

Eight threads each run their own forward over shared leaves (and a private
one) and call backward at the same time, with a tiny switch interval so the
interpreter interleaves them as often as it can. Data are small integers, so
every summation order is exact in float32 and the expected totals are exact.
"""

import numpy as np
from _thread_runs import run_in_threads

import strideweave as sw

THREADS = 8
ITERATIONS = 6
RUNS = 3  # 20 in a row with --soak


def _run_threads(work):
    run_in_threads(work, range(THREADS))


def _one_run(carrier):
    shared = sw.tensor(np.arange(1, 5, dtype=np.float32), carrier=carrier)
    bias = sw.tensor(np.ones(4, np.float32), carrier=carrier)
    private = [sw.tensor(np.full(4, k + 1, np.float32), carrier=carrier) for k in range(THREADS)]
    retained = []

    def work(k):
        for _ in range(ITERATIONS):
            hidden = shared * private[k] + bias
            hidden.retain_grad()
            retained.append(hidden)
            sw.sum(hidden * 2.0).backward()

    _run_threads(work)
    scale = sum(k + 1 for k in range(THREADS))
    np.testing.assert_array_equal(shared.grad.numpy(), np.full(4, 2.0 * ITERATIONS * scale))
    np.testing.assert_array_equal(bias.grad.numpy(), np.full(4, 2.0 * ITERATIONS * THREADS))
    for leaf in private:
        np.testing.assert_array_equal(leaf.grad.numpy(), 2.0 * ITERATIONS * np.arange(1, 5))
    for hidden in retained:
        np.testing.assert_array_equal(hidden.grad.numpy(), np.full(4, 2.0))


def test_concurrent_backward_accumulates_exactly(carrier, fast_switching, request):
    runs = 20 if request.config.getoption("--soak") else RUNS
    for _ in range(runs):
        _one_run(carrier)


def test_concurrent_functional_grad_leaves_grad_alone(carrier, fast_switching):
    w = sw.tensor(np.arange(1, 4, dtype=np.float32), carrier=carrier)
    results = [None] * THREADS

    def work(k):
        out = sw.sum(w * float(k + 1))
        results[k] = sw.grad(out, [w], sw.ones(1, carrier=carrier))[0]

    _run_threads(work)
    assert w.grad is None
    for k, g in enumerate(results):
        np.testing.assert_array_equal(g.numpy(), np.full(3, k + 1.0))


def test_concurrent_in_place_writes_bump_versions_atomically(carrier, fast_switching):
    t = sw.zeros(4, carrier=carrier)
    before = t.carrier.version

    def work(k):
        for _ in range(ITERATIONS):
            t.add_(1.0)

    _run_threads(work)
    assert t.carrier.version == before + THREADS * ITERATIONS
    np.testing.assert_array_equal(t.numpy(), np.full(4, float(THREADS * ITERATIONS)))


def test_forward_passes_in_threads_record_independent_graphs(carrier):
    x = sw.tensor([1.0, 2.0], carrier=carrier)
    outputs = [None] * THREADS

    def work(k):
        with sw.no_grad() if k % 2 else _null():
            outputs[k] = x * float(k)

    _run_threads(work)
    for k, out in enumerate(outputs):
        assert (out.autograd_ctx is None) == bool(k % 2)
        if not k % 2:
            assert out.autograd_ctx.inputs() == (x,)


class _null:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False
