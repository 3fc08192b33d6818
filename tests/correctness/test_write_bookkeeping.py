"""What a recorded write keeps: nothing beyond the graph it belongs to (no table outlives it), and the
version rule for nodes that only route cotangents through the written storage (they accept recorded
writes, and keep refusing any other change)."""

import gc
import weakref

import numpy as np
import pytest
import torch

import strideweave as sw

IN_PLACE = "in-place modification"


def _x(carrier):
    return sw.tensor(np.array([0.5, 1.0, 2.0, 4.0], np.float32), carrier=carrier)


def _values(t):
    return np.asarray(t.numpy(), dtype=np.float64)


@pytest.mark.parametrize("write", [
    lambda y, w: y.__iadd__(w),                 # ``y + w`` routes through y's storage
    lambda y, w: y.__setitem__(slice(0, 2), w[:2]),
    lambda y, w: y[1:3].copy_(w[1:3]),          # through a view, which is rebased
], ids=["+=", "setitem", "copy_ into a view"])
def test_a_recorded_write_leaves_nothing_alive_once_its_graph_is_dropped(carrier, write):
    x, w = _x(carrier), _x(carrier) * 3.0
    y = x * 2.0
    write(y, w)                   # recorded, never differentiated: the graph keeps every saved input
    node = weakref.ref(y.autograd_ctx)
    assert type(node()).__name__ == "WrittenValue"
    carriers = [weakref.ref(c) for c in (*x.carriers, *y.carriers, *w.carriers)]
    del x, w, y
    gc.collect()
    assert node() is None
    assert [r() for r in carriers] == [None] * len(carriers)


def _write_three_times(x, y, view):
    view.copy_(x[1:3] * 5.0)      # view is rebased onto the written y
    y[0] = x[0] * 7.0             # recorded writes elsewhere, each moving the storage's version on
    y[3] = x[3] * 11.0


def test_a_rebased_view_accepts_every_later_recorded_write_as_torch_does(carrier):
    """``view`` only routes cotangents through y's storage: later recorded writes change nothing it computes."""
    x = _x(carrier)
    y = x * 2.0
    view = y[1:3]
    _write_three_times(x, y, view)
    (view * sw.tensor(np.array([1.0, 3.0], np.float32), carrier=carrier)).sum().backward()
    xt = torch.tensor(_values(x), requires_grad=True)
    yt = xt * 2.0
    viewt = yt[1:3]
    _write_three_times(xt, yt, viewt)
    (viewt * torch.tensor([1.0, 3.0], dtype=torch.float64)).sum().backward()
    np.testing.assert_allclose(_values(x.grad), xt.grad.numpy(), rtol=1e-6)


def test_a_routing_node_refuses_an_update_between_recorded_writes(carrier):
    """An update (a write under no_grad) is no recorded write: a node that accepted the recorded ones refuses it."""
    x = _x(carrier)
    y = x * 2.0
    view = y[1:3]
    view.copy_(x[1:3] * 5.0)
    with sw.no_grad():
        y[0] = 1.0                # an update: view's history no longer accounts for every change
    y[3] = x[3] * 11.0            # a recorded write after it does not make it good again
    with pytest.raises(RuntimeError, match=IN_PLACE):
        view.sum().backward()
    assert x.grad is None


def test_a_node_out_of_date_before_a_write_stays_refused(carrier):
    """A view made before a recorded write into its base saw other values: the write does not make it good."""
    x = _x(carrier)
    y = x * 2.0
    early = y[0:2]                # a view of y's values before the writes
    y[0] = x[0] * 7.0             # recorded: early's node now describes values y no longer holds
    y[2:4] = early * 1.0          # a later write whose value reads early (its stand-in stays out of date)
    with pytest.raises(RuntimeError, match=IN_PLACE):
        y.sum().backward()
    assert x.grad is None


def test_a_node_given_a_copy_keeps_refusing_its_other_changed_inputs(carrier):
    """A write gives a node a copy of the storage it overwrites; the node's other saved inputs keep their
    saved versions, so a change to one of them still fails backward (as torch fails) instead of being
    taken as seen."""
    x = _x(carrier)
    d = sw.tensor(np.array([1.0, 2.0, 3.0, 4.0], np.float32), carrier=carrier)
    y = x * 2.0
    p = y * d                     # multiply saves y and d, and reads both at backward
    with sw.no_grad():
        d[0] = 100.0              # an update to d after multiply saved it
    y[2:4] = p[0:2]               # a recorded write into y whose value's graph holds that multiply
    with pytest.raises(RuntimeError, match=IN_PLACE):
        y.sum().backward()
    assert x.grad is None


@pytest.mark.parametrize("method", ["fill_", "copy_", "add_"])
@pytest.mark.parametrize("library", ["numpy", "torch", "array_api_strict"])  # JAX keeps float32 without x64 mode
def test_a_value_that_left_float32_fails_backward_through_every_write_method(library, method):
    """fill_, copy_ and add_ share one path: a floating value computed from a Float32 graph is cast back
    through a recorded astype, whose node fails a backward that reaches it (no silent zero gradient)."""
    import strideweave.array_api as xp

    pytest.importorskip(library)
    x = _x(library)
    y = x * 2.0
    getattr(y, method)(xp.astype(xp.sum(x), xp.float64))
    with pytest.raises(sw.Float32RuleError):
        y.sum().backward()
    assert x.grad is None
