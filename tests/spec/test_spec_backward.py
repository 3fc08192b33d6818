"""Requirement: Backward traverses each recorded node once in topological order."""

import inspect
import sys

import numpy as np
import pytest
from _spec_support import FirstOnly, Probe, arr, vec

import strideweave as sw


def test_sum_contributions_of_a_repeated_input(carrier):
    x = vec([1.0, -2.0, 3.0], carrier)
    y = x + x
    c = vec([0.5, 2.0, -1.0], carrier)
    assert y.backward(c) is None
    np.testing.assert_allclose(arr(x.grad), [1.0, 4.0, -2.0])


def test_sum_contributions_of_a_repeated_input_through_multiply(carrier):
    x = vec([1.0, -2.0, 3.0], carrier)
    y = x * x
    c = vec([1.0, 2.0, 3.0], carrier)
    y.backward(c)
    np.testing.assert_allclose(arr(x.grad), 2 * np.array([1.0, -2.0, 3.0]) * [1.0, 2.0, 3.0])


def test_accumulate_a_shared_subgraph_before_propagating(carrier):
    xv, wv, cv = np.array([0.3, -1.2]), np.array([2.0, 5.0]), np.array([1.5, -0.5])
    x, w, c = vec(xv, carrier), vec(wv, carrier), vec(cv, carrier)
    probe = Probe()
    h = probe(x)                      # the shared intermediate
    out = h * w + sw.sin(h)           # consumed through two operations
    out.backward(c)
    expected = cv * wv + cv * np.cos(xv)
    assert len(probe.calls) == 1
    np.testing.assert_allclose(probe.calls[0], expected, rtol=1e-5)
    np.testing.assert_allclose(arr(x.grad), expected, rtol=1e-5)  # reached once: no double count
    np.testing.assert_allclose(arr(w.grad), cv * xv, rtol=1e-5)


def test_each_reached_node_runs_backward_once_in_topological_order(carrier):
    log = []
    x = vec([1.0, 2.0], carrier)
    a = Probe(log, "a")(x)
    b = Probe(log, "b")(a)
    c = Probe(log, "c")(a)
    d = Probe(log, "d")(b)
    out = Probe(log, "out")(d + c + b)
    out.backward(vec([1.0, 1.0], carrier))
    assert sorted(log) == ["a", "b", "c", "d", "out"]
    pos = {name: log.index(name) for name in log}
    # every consumer before its producer
    assert pos["out"] < pos["d"] < pos["b"] < pos["a"]
    assert pos["out"] < pos["c"] < pos["a"]
    np.testing.assert_allclose(arr(x.grad), [3.0, 3.0])  # paths: d-b-a, c-a, b-a


def test_a_node_runs_backward_only_when_its_result_has_a_cotangent(carrier):
    x1, x2 = vec([1.0, 2.0], carrier), vec([3.0, 4.0], carrier)
    p1, p2 = Probe(), Probe()
    out = FirstOnly()(p1(x1), p2(x2))
    out.backward(vec([2.0, 3.0], carrier))
    assert len(p1.calls) == 1 and len(p2.calls) == 0
    np.testing.assert_allclose(p1.calls[0], [2.0, 3.0])
    assert x2.grad is None


def test_backward_returns_none_and_has_the_specified_defaults(carrier):
    params = inspect.signature(sw.Tensor.backward).parameters
    assert list(params) == ["self", "gradient", "retain_graph"]
    assert params["gradient"].default is None and params["retain_graph"].default is False
    x = vec([2.0], carrier)
    assert (x * 3.0).backward() is None
    np.testing.assert_allclose(arr(x.grad), [3.0])


def test_default_retain_graph_is_false(carrier):
    x = vec([2.0], carrier)
    y = x * 3.0
    y.backward()
    assert y.autograd_ctx.inputs() == ()


class _Id(sw.Operation):
    def forward(self, x, options=None):
        return sw.Tensor(x.carrier, x.layout, x.offset)

    def backward(self, gradient):
        return (gradient,)


@pytest.mark.slow
def test_a_million_node_chain_backward_needs_no_recursion():
    x = vec([1.0], "numpy")
    y = x
    depth = 1_000_000
    assert depth > 10 * sys.getrecursionlimit()
    for _ in range(depth):
        y = _Id()(y)
    y.backward(vec([2.5], "numpy"))
    np.testing.assert_array_equal(arr(x.grad), [2.5])
    assert y.autograd_ctx.inputs() == ()


def test_a_deep_chain_of_builtin_operations(carrier):
    x = vec([1.0], carrier)
    y = x
    # Dask's own cost per chained operation grows with the graph's depth (each
    # new array merges every earlier layer; the distributed scheduler handles
    # one task per element of the chain), so on Dask the chain is only just
    # deeper than the recursion limit and its value is read in-process.
    depth = sys.getrecursionlimit() + 100 if carrier == "dask" else 3 * sys.getrecursionlimit()
    for _ in range(depth + depth % 2):
        y = sw.negative(y)
    y.backward(vec([2.0], carrier))  # an even number of negations
    if carrier == "dask":
        import dask

        with dask.config.set(scheduler="synchronous"):
            np.testing.assert_array_equal(arr(x.grad), [2.0])
    else:
        np.testing.assert_array_equal(arr(x.grad), [2.0])
