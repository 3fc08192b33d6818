"""Concurrent traversals of one retained graph each get exactly the gradients they get alone.

Threads run ``backward``, pruned and unpruned ``grad`` and batched ``grad``
over one graph whose nodes they all share (``retain_graph=True``), with a
tiny switch interval so the interpreter interleaves them inside the engine
as often as it can. Nothing a traversal decides for itself (which inputs
need a cotangent, whether a cotangent may stay unplaced, who owns a buffer)
may leak into another one. Data are small integers, so every summation
order is exact in float32 and the comparisons are exact.
"""

import time

import numpy as np
import pytest
from _thread_runs import run_in_threads

import strideweave as sw

#: (threads per kind of call, seconds each thread keeps calling, at least two calls each); longer with --soak
BUDGET = (1, 1.0)
SOAK_BUDGET = (3, 30.0)


def _graph(carrier):
    """Leaves a, b, M and an output that reaches them through nodes every call kind shares."""
    a = sw.tensor(np.array([1, 2, 3, 4], np.float32), carrier=carrier)
    b = sw.tensor(np.array([2, 1, 0, 3], np.float32), carrier=carrier)
    m = sw.tensor(np.array([[1, 0, 2, 1], [0, 1, 1, 0], [2, 1, 0, 1], [1, 1, 1, 0]], np.float32), carrier=carrier)
    c = a * b                   # both operands leaves: a pruned call wants one of them
    d = m @ a                   # a matmul whose matrix a pruned call does not want
    strided = c[::2]            # a view with holes: its cotangents may travel unplaced
    out = c * d + sw.sum(strided * strided) + a * 2.0
    return (a, b, m), out


def _basis(carrier, count):
    storage = sw.tensor(np.eye(count, dtype=np.float32).ravel(), carrier=carrier).carrier.array
    return sw.Tensor.from_storage(storage, sw.Layout(sw.Shape([count, count]), sw.Stride([count, 1])))


def _values(gradients):
    return [None if g is None else np.asarray(g.numpy()) for g in gradients]


def _assert_same(got, want, what):
    assert len(got) == len(want), what
    for g, w in zip(got, want):
        assert (g is None) == (w is None), what
        if w is not None:
            np.testing.assert_array_equal(g, w, err_msg=what)


def _calls(leaves, out, cotangent, basis):
    a, b, m = leaves
    return {
        "pruned": lambda: sw.grad(out, [a], cotangent, retain_graph=True),
        "pruned_matrix": lambda: sw.grad(out, [m, b], cotangent, retain_graph=True),
        "unpruned": lambda: sw.grad(out, [a, b, m], cotangent, retain_graph=True),
        "batched": lambda: sw.grad(out, [a, b, m], basis, batched=True, retain_graph=True),
        "batched_pruned": lambda: sw.grad(out, [b], basis, batched=True, retain_graph=True),
    }


def _stress(carrier, threads_per_kind, seconds):
    leaves, out = _graph(carrier)
    cotangent = sw.tensor(np.array([1, 2, 0, 1], np.float32), carrier=carrier)
    basis = _basis(carrier, 4)
    calls = _calls(leaves, out, cotangent, basis)
    alone = {name: _values(call()) for name, call in calls.items()}
    out.backward(cotangent, retain_graph=True)
    backward_alone = _values([leaf.grad for leaf in leaves])
    for leaf in leaves:
        leaf.grad = None

    backward_calls = []  # one entry per backward thread, appended once it is done
    deadline = time.monotonic() + seconds

    def work(name):
        done = 0
        while done < 2 or time.monotonic() < deadline:
            if name == "backward":
                out.backward(cotangent, retain_graph=True)
            else:
                _assert_same(_values(calls[name]()), alone[name], f"concurrent {name} on {carrier}")
            done += 1
        if name == "backward":
            backward_calls.append(done)

    run_in_threads(work, [name for name in ["backward", *calls] for _ in range(threads_per_kind)])
    total = sum(backward_calls)
    _assert_same(_values([leaf.grad for leaf in leaves]), [None if g is None else g * total for g in backward_alone],
                 f"concurrent backward on {carrier}")


def test_concurrent_traversals_of_one_retained_graph_are_exact(carrier, fast_switching, request):
    threads, seconds = SOAK_BUDGET if request.config.getoption("--soak") else BUDGET
    _stress(carrier, threads, seconds)


def test_the_graph_gradients_match_torch(carrier):
    """The reference the stress test compares against is itself right (torch float64)."""
    torch = pytest.importorskip("torch")
    leaves, out = _graph(carrier)
    cotangent = np.array([1, 2, 0, 1], np.float64)
    (ga, gb, gm) = _values(sw.grad(out, list(leaves), sw.tensor(cotangent.astype(np.float32), carrier=carrier)))
    ta = torch.tensor([1., 2., 3., 4.], dtype=torch.float64, requires_grad=True)
    tb = torch.tensor([2., 1., 0., 3.], dtype=torch.float64, requires_grad=True)
    tm = torch.tensor([[1., 0., 2., 1.], [0., 1., 1., 0.], [2., 1., 0., 1.], [1., 1., 1., 0.]],
                      dtype=torch.float64, requires_grad=True)
    tc = ta * tb
    tout = tc * (tm @ ta) + torch.sum(tc[::2] * tc[::2]) + ta * 2.0
    tout.backward(torch.tensor(cotangent))
    np.testing.assert_array_equal(ga, ta.grad.numpy())
    np.testing.assert_array_equal(gb, tb.grad.numpy())
    np.testing.assert_array_equal(gm, tm.grad.numpy())


def test_identity_marks_keep_every_live_mark_under_concurrent_sweeps(fast_switching):
    """Marks (unit arrays, owned buffers) on live objects survive other threads' marking and sweeping."""
    from strideweave._marks import IdentityMarks

    class Thing:
        pass

    marks = IdentityMarks()
    kept = [[] for _ in range(4)]

    def work(k):
        for round_ in range(150):
            churn = [marks.add(Thing()) for _ in range(20)]  # die at once: the dict fills with dead entries
            del churn
            kept[k].append(marks.add(Thing()))
            if round_ % 50 == 0:
                marks._sweep()
            assert Thing() not in marks

    run_in_threads(work, range(4))
    assert all(thing in marks for things in kept for thing in things)
    assert all(marks.claim(thing) for things in kept for thing in things)
    assert not any(thing in marks for things in kept for thing in things)
