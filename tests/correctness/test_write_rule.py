"""The write rule (docs/api.md section 4) and copies that differentiate, against torch.autograd in float64.

A constant updates a leaf; a Float32 Tensor written into a fresh buffer
(``zeros``, ``empty``, ... not yet read by a recorded operation) is
recorded; a Float32 Tensor written into any other leaf raises before
anything is written; under ``no_grad`` every write is an update. Copies
(``copy.copy``, ``copy.deepcopy``, xarray's ``.copy()``) are recorded
copies whose gradient reaches the original; ``pickle`` stores values.
"""

import copy
import pickle
import threading

import numpy as np
import pytest

import strideweave as sw
import strideweave.array_api as xp

torch = pytest.importorskip("torch")

REFUSED = r"in-place write of a Float32 Tensor into .*leaf.*sw\.no_grad\(\).*xp\.asarray\(x, copy=True\)"
X0 = np.array([[0.5, 1.5, -2.0, 3.0], [1.0, -0.5, 2.5, 0.25]], np.float32)
V0 = np.array([[4.0, -1.0], [0.5, 2.0]], np.float32)
W0 = np.array([[1.0, 2.0, 4.0, -3.0], [0.5, -1.0, 3.0, 2.0]], np.float32)


def _sw(values, carrier):
    return sw.tensor(values.copy(), carrier=carrier)


def _torch(values):
    return torch.tensor(values.astype(np.float64), requires_grad=True)


def _close(ours, reference):
    np.testing.assert_allclose(ours.numpy(), reference.detach().numpy(), rtol=1e-5, atol=1e-6)


def _agrees_with_torch_slice_add(y, x, v):
    """``y``, a copy of ``x`` with ``v`` added at ``[:, 1:3]``: its value and both gradients of
    ``sum(y * y)`` are torch's."""
    xp.sum(y * y).backward()
    tx, tv = _torch(X0), _torch(V0)
    ty = tx.clone()
    ty[:, 1:3] += tv
    (ty * ty).sum().backward()
    _close(y, ty)
    _close(x.grad, tx.grad)
    _close(v.grad, tv.grad)


# ----- a Float32 Tensor into a leaf that is no fresh buffer: refused, nothing written -------------------

def test_subtracting_the_mean_from_an_input_raises_and_writes_nothing(carrier):
    x = _sw(X0, carrier)
    with pytest.raises(sw.LeafWriteError, match=REFUSED):   # a RuntimeError, as torch raises
        x -= xp.mean(x)
    np.testing.assert_array_equal(x.numpy(), X0)
    assert x.is_leaf and x.grad is None
    reference = _torch(X0)
    with pytest.raises(RuntimeError, match="leaf"):
        reference -= reference.mean()         # torch refuses the same program


def test_subtracting_the_mean_differentiates_on_a_copy_and_updates_under_no_grad(carrier):
    x = _sw(X0, carrier)
    c = xp.asarray(x, copy=True)
    c -= xp.mean(c)
    xp.sum(c * _sw(W0, carrier)).backward()
    t = _torch(X0)
    tc = t.clone()
    tc -= tc.mean()
    (tc * torch.tensor(W0, dtype=torch.float64)).sum().backward()
    _close(c, tc)
    _close(x.grad, t.grad)
    with sw.no_grad():
        x -= xp.mean(x)
    assert x.is_leaf
    np.testing.assert_allclose(x.numpy(), X0 - X0.mean(), rtol=1e-6)


def test_an_augmented_write_through_a_view_of_an_input_raises(carrier):
    x, v = _sw(X0, carrier), _sw(V0, carrier)
    with pytest.raises(RuntimeError, match=REFUSED):
        x[:, 1:3] += v
    np.testing.assert_array_equal(x.numpy(), X0)
    assert x.is_leaf and v.grad is None
    y = xp.asarray(x, copy=True)               # the fix: a copy, and both inputs get their gradient
    y[:, 1:3] += v
    _agrees_with_torch_slice_add(y, x, v)


def test_array_api_extra_at_add(carrier):
    xpx = pytest.importorskip("array_api_extra")
    x, v = _sw(X0, carrier), _sw(V0, carrier)
    with pytest.raises(RuntimeError, match=REFUSED):
        xpx.at(x)[:, 1:3].add(v)               # copy=None: xpx writes into the writeable input
    np.testing.assert_array_equal(x.numpy(), X0)
    y = xpx.at(x)[:, 1:3].add(v, copy=True)
    _agrees_with_torch_slice_add(y, x, v)


def test_xarray_in_place_subtraction_of_the_mean_raises(carrier):
    xr = pytest.importorskip("xarray")
    x = _sw(X0, carrier)
    data = xr.DataArray(x)
    with pytest.raises(RuntimeError, match=REFUSED):
        data -= data.mean(skipna=False)
    np.testing.assert_array_equal(x.numpy(), X0)


def _softmax_in_place(x):
    x -= xp.max(x, axis=-1, keepdims=True)     # the idiom library code uses on its own arrays
    e = xp.exp(x)
    return e / xp.sum(e, axis=-1, keepdims=True)


def test_the_in_place_softmax_idiom_on_an_input_raises_and_differentiates_on_a_copy(carrier):
    x = _sw(X0, carrier)
    with pytest.raises(RuntimeError, match=REFUSED):
        _softmax_in_place(x)
    np.testing.assert_array_equal(x.numpy(), X0)
    s = _softmax_in_place(xp.asarray(x, copy=True))
    xp.sum(s * _sw(W0, carrier)).backward()
    t = _torch(X0)
    tc = t.clone()
    tc -= tc.max(dim=-1, keepdim=True).values
    ts = torch.softmax(tc, dim=-1)
    (ts * torch.tensor(W0, dtype=torch.float64)).sum().backward()
    _close(s, ts)
    _close(x.grad, t.grad)


@pytest.mark.parametrize("how", ["fill_", "copy_", "add_", "setitem"])
def test_every_write_form_refuses_a_float32_tensor_into_a_leaf(carrier, how):
    x = _sw(X0, carrier)
    value = _sw(X0[0], carrier) * 2.0
    write = {"fill_": lambda: x.fill_(value[0]), "copy_": lambda: x.copy_(value),
             "add_": lambda: x.add_(value), "setitem": lambda: x.__setitem__((0,), value)}[how]
    with pytest.raises(RuntimeError, match=REFUSED):
        write()
    np.testing.assert_array_equal(x.numpy(), X0)
    with sw.no_grad():
        write()                                # an update: x stays a leaf
    assert x.is_leaf


def test_an_optimiser_step_runs_under_no_grad(carrier):
    w = _sw(X0, carrier)
    xp.sum(w * w).backward()
    with pytest.raises(RuntimeError, match=REFUSED):
        w -= 0.1 * w.grad
    with sw.no_grad():
        w -= 0.1 * w.grad
    assert w.is_leaf
    np.testing.assert_allclose(w.numpy(), 0.8 * X0, rtol=1e-6)


def test_constants_update_a_leaf(carrier):
    x = _sw(X0, carrier)
    x += 1.0
    x[0, 0] = 7.0
    x[1] = sw.tensor(np.arange(4, dtype=np.int32), carrier=carrier)   # a non-Float32 value is a constant
    x.add_(0.5)
    assert x.is_leaf
    expected = X0 + 1.0
    expected[0, 0] = 7.0
    expected[1] = np.arange(4)
    np.testing.assert_allclose(x.numpy(), expected + 0.5, rtol=1e-6)
    xp.sum(x * x).backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * (expected + 0.5), rtol=1e-6)


def test_a_shape_error_comes_before_the_refusal(carrier):
    x = _sw(X0, carrier)
    wrong = _sw(np.ones(3, np.float32), carrier)
    with pytest.raises(ValueError):
        x[0] = wrong
    with pytest.raises(ValueError):
        x.copy_(wrong)
    with pytest.raises(ValueError):
        x -= wrong
    np.testing.assert_array_equal(x.numpy(), X0)


# ----- fresh buffers: recorded ------------------------------------------------------------------------

@pytest.mark.parametrize("make", ["zeros", "ones", "empty", "full", "zeros_like", "empty_like", "sw.zeros"])
def test_a_fresh_buffer_written_with_a_float32_tensor_differentiates(carrier, make):
    x = _sw(X0, carrier)
    out = {"zeros": lambda: xp.zeros((2, 5), device=carrier), "ones": lambda: xp.ones((2, 5), device=carrier),
           "empty": lambda: xp.empty((2, 5), device=carrier),
           "full": lambda: xp.full((2, 5), 3.0, device=carrier),
           "zeros_like": lambda: xp.zeros_like(_sw(np.ones((2, 5), np.float32), carrier)),
           "empty_like": lambda: xp.empty_like(_sw(np.ones((2, 5), np.float32), carrier)),
           "sw.zeros": lambda: sw.zeros((2, 5), carrier=carrier)}[make]()
    out[:, 1:] = x * 2.0
    assert not out.is_leaf
    xp.sum(out * out).backward()
    t = _torch(X0)
    tout = torch.zeros((2, 5), dtype=torch.float64)
    tout[:, 1:] = t * 2.0
    (tout * tout).sum().backward()
    np.testing.assert_allclose(out.numpy()[:, 1:], tout.detach().numpy()[:, 1:], rtol=1e-6)
    _close(x.grad, t.grad)


def test_eye_arange_and_linspace_are_fresh_buffers(carrier):
    x = _sw(X0[0], carrier)
    for out in (xp.eye(4, device=carrier)[0], xp.arange(4.0, device=carrier), xp.linspace(0, 1, 4, device=carrier)):
        out += x                                # recorded: the buffer's values are constants
        xp.sum(out * out).backward()
    t = _torch(X0[0])
    for start in (np.eye(4)[0], np.arange(4.0), np.linspace(0, 1, 4)):
        o = torch.tensor(start) + t
        (o * o).sum().backward()
    _close(x.grad, t.grad)


def test_a_fresh_buffer_written_through_a_view_differentiates(carrier):
    x = _sw(X0, carrier)
    out = xp.zeros((2, 5), device=carrier)
    window = out[:, 1:]                        # a view reads nothing: the buffer stays fresh
    window[...] = x * 2.0
    out[:, 0] = x[:, 0]
    xp.sum(out * out).backward()
    t = _torch(X0)
    tout = torch.zeros((2, 5), dtype=torch.float64)
    tout[:, 1:] = t * 2.0
    tout[:, 0] = t[:, 0]
    (tout * tout).sum().backward()
    _close(x.grad, t.grad)


@pytest.mark.parametrize("read", ["whole", "through a view"])
def test_a_fresh_buffer_read_by_a_recorded_operation_is_a_leaf_like_any_other(carrier, read):
    x = _sw(X0, carrier)
    out = xp.zeros((2, 4), device=carrier)
    seen = xp.sum(out) if read == "whole" else xp.sum(out[:, 1:] * 2.0)
    with pytest.raises(RuntimeError, match=REFUSED):
        out[:, 1:] = x[:, 1:] * 2.0
    np.testing.assert_array_equal(out.numpy(), np.zeros((2, 4)))
    seen.backward()                            # nothing was written: the reader's graph is intact
    with sw.no_grad():
        fresh = xp.zeros((2, 4), device=carrier)
        xp.sum(fresh)                          # an unrecorded read leaves it fresh
    fresh[:, 1:] = x[:, 1:] * 2.0
    assert not fresh.is_leaf


def test_under_no_grad_a_fresh_buffer_is_updated(carrier):
    x = _sw(X0, carrier)
    out = xp.zeros((2, 4), device=carrier)
    with sw.no_grad():
        out[...] = x * 2.0
    assert out.is_leaf
    np.testing.assert_allclose(out.numpy(), X0 * 2.0, rtol=1e-6)


def test_fresh_buffers_filled_in_threads_each_differentiate(carrier):
    errors = []

    def work(k):
        try:
            for _ in range(20):
                x = _sw(X0 * k, carrier)
                out = xp.zeros((2, 5), device=carrier)
                out[:, 1:] = x * 2.0
                xp.sum(out * out).backward()
                np.testing.assert_allclose(x.grad.numpy(), 8.0 * X0 * k, rtol=1e-5)
        except Exception as exc:  # reported by the main thread
            errors.append(exc)
    threads = [threading.Thread(target=work, args=(k,)) for k in (1.0, 2.0, 3.0, 4.0)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors


# ----- copies ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("how", ["copy.copy", "copy.deepcopy", "xarray copy"])
def test_a_copy_differentiates_back_to_the_original(carrier, how):
    x = _sw(X0, carrier)
    if how == "xarray copy":
        xr = pytest.importorskip("xarray")
        c = xr.DataArray(x).copy().data        # deep by default
    else:
        c = {"copy.copy": copy.copy, "copy.deepcopy": copy.deepcopy}[how](x)
    assert isinstance(c, sw.Tensor) and not c.is_leaf
    assert type(c.carrier) is type(x.carrier) and c.carrier is not x.carrier
    c[:, 1:3] *= _sw(V0, carrier)              # a write into the copy leaves the original alone
    np.testing.assert_array_equal(x.numpy(), X0)
    xp.sum(c * c).backward()
    t = _torch(X0)
    tc = t.clone()
    tc[:, 1:3] *= torch.tensor(V0, dtype=torch.float64)
    (tc * tc).sum().backward()
    _close(c, tc)
    _close(x.grad, t.grad)


@pytest.mark.parametrize("how", [copy.copy, copy.deepcopy])
def test_a_copy_without_grad_mode_or_of_a_non_float32_tensor_is_a_fresh_leaf(carrier, how):
    x = _sw(X0, carrier)
    with sw.no_grad():
        c = how(x)
    assert c.is_leaf and c.carrier is not x.carrier and type(c.carrier) is type(x.carrier)
    ints = sw.tensor(np.arange(4, dtype=np.int32), carrier=carrier)
    d = how(ints)
    assert d.is_leaf and d.carrier is not ints.carrier
    c[0, 0] = 9.0
    np.testing.assert_array_equal(x.numpy(), X0)


def test_pickle_stores_values_and_loads_a_leaf(carrier):
    x = _sw(X0, carrier)
    y = x * 2.0
    loaded = pickle.loads(pickle.dumps(y))
    assert loaded.is_leaf and type(loaded.carrier) is type(y.carrier)
    np.testing.assert_array_equal(loaded.numpy(), X0 * 2.0)
    xp.sum(loaded * loaded).backward()
    assert x.grad is None
    np.testing.assert_allclose(loaded.grad.numpy(), 4.0 * X0, rtol=1e-6)


def test_a_float32_tensor_into_a_leaf_of_another_dtype_is_refused(carrier):
    x = _sw(X0, carrier)
    out = xp.zeros((2, 4), dtype=xp.int32, device=carrier)
    with pytest.raises(RuntimeError, match="only Float32 is differentiable"):
        out[...] = x * 2.0                     # the cast would drop the product's history
    np.testing.assert_array_equal(out.numpy(), np.zeros((2, 4)))
    with sw.no_grad():
        out[...] = x * 2.0
    np.testing.assert_array_equal(out.numpy(), (X0 * 2.0).astype(np.int32))
