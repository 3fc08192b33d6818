"""Writes into an operation's result: recorded as torch records them, refused at backward where a node
saved the overwritten values."""

import numpy as np
import pytest

import strideweave as sw
import strideweave.array_api as xp

IN_PLACE = "in-place modification"


def _x(carrier):
    return sw.tensor(np.array([0.5, 1.0, 2.0], np.float32), carrier=carrier)


def _values(t):
    return np.asarray(t.numpy(), dtype=np.float64)


def _agrees_with_torch(program, inputs, carrier, *, loss_rtol=None, atol=1e-6):
    """``program(m, *arrays)`` on ``carrier`` and through torch float64: the same gradients (and the same
    loss, with ``loss_rtol``)."""
    torch = pytest.importorskip("torch")
    import array_api_compat.torch as torch_xp

    tensors = [xp.asarray(a, device=carrier) for a in inputs]
    loss = program(xp, *tensors)
    loss.backward()
    references = [torch.tensor(a, dtype=torch.float64, requires_grad=True) for a in inputs]
    expected = program(torch_xp, *references)
    expected.backward()
    if loss_rtol is not None:
        np.testing.assert_allclose(float(loss), expected.item(), rtol=loss_rtol)
    for t, r in zip(tensors, references):
        np.testing.assert_allclose(_values(t.grad), r.grad.numpy(), rtol=1e-5, atol=atol)


@pytest.mark.parametrize("write", [
    lambda z: z.__setitem__(0, 100.0),
    lambda z: z.fill_(3.0),
    lambda z: z.copy_(sw.tensor(np.ones(3, np.float32), carrier=z.carrier.kind)),
    lambda z: z[0:2].__setitem__(0, 5.0),          # through a view of the result
], ids=["setitem", "fill_", "copy_", "through a view"])
def test_a_write_into_a_result_fails_backward_instead_of_using_stale_history(carrier, write):
    x = _x(carrier)
    z = sw.exp(x)                       # exp's backward reads its result
    write(z)
    with pytest.raises(RuntimeError, match=IN_PLACE):
        z.sum().backward()
    assert x.grad is None               # all or nothing: no .grad written


def test_a_write_through_a_native_view_of_a_result_is_detected():
    x = _x("numpy")
    z = sw.exp(x)
    native = z.to_array()
    if not np.shares_memory(native, z.carrier.array):
        pytest.skip("to_array copied")
    native[0] = 9.0
    with pytest.raises(RuntimeError, match=IN_PLACE):
        z.sum().backward()


def test_a_write_where_the_cotangent_is_zero_keeps_an_exact_history(carrier):
    x = _x(carrier)
    y = x * 2.0                          # multiply's backward does not read its result
    y[0] = 5.0
    weights = sw.tensor(np.array([0.0, 1.0, 3.0], np.float32), carrier=carrier)
    (y * weights).sum().backward()       # no cotangent reaches position 0
    np.testing.assert_array_equal(_values(x.grad), [0.0, 2.0, 6.0])


def test_an_unrecorded_write_into_a_result_fails_backward(carrier):
    x = _x(carrier)
    y = x * 2.0
    with sw.no_grad():
        y[0] = 5.0                       # not recorded: the history of y is stale at position 0
    with pytest.raises(RuntimeError, match=IN_PLACE):
        y.sum().backward()
    assert x.grad is None


# ----- writes into the result of an operation whose backward does not read it are recorded ----------

def _write_into_results(m, x, v):
    y = x * 2.0                          # multiply's backward does not read its result
    y[0, 1:3] = v * v                    # a differentiable value
    y[1, :] = 7.0                        # a constant: nothing flows there
    y[0, 2] = v[0] + 1.0                 # takes a position over from the first write
    z = m.sum(y, axis=0)                 # sums do not read their result either
    z[1] = x[2, 0] * 3.0
    return m.sum(y * y) + m.sum(z * z)


def _matches_torch(program, carrier, *inputs):
    """``program(xp, *tensors).backward()`` on ``carrier`` gives torch.autograd's gradients for ``inputs``."""
    torch = pytest.importorskip("torch")
    import array_api_compat.torch as torch_xp

    tensors = [sw.tensor(a, carrier=carrier) for a in inputs]
    program(xp, *tensors).backward()
    references = [torch.tensor(a, requires_grad=True) for a in inputs]
    program(torch_xp, *references).backward()
    for t, r in zip(tensors, references):
        np.testing.assert_allclose(_values(t.grad), r.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_writes_into_results_differentiate_like_torch(carrier):
    _matches_torch(_write_into_results, carrier, np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4),
                   np.array([0.5, -2.0], np.float32))


def test_a_write_into_a_result_still_invalidates_graphs_that_saved_it(carrier):
    x = _x(carrier)
    y = x * 2.0
    before = y * y                       # saved y before the write
    y[0] = 5.0
    with pytest.raises(RuntimeError, match=IN_PLACE):
        before.sum().backward()
    assert x.grad is None
    (y * y).sum().backward(retain_graph=True)
    np.testing.assert_allclose(_values(x.grad), [0.0, 8.0, 16.0])
    (y * y).sum().backward()             # the written result's history runs again
    np.testing.assert_allclose(_values(x.grad), [0.0, 16.0, 32.0])


def test_a_key_that_selects_nothing_writes_nothing(carrier):
    x = _x(carrier)
    y = x * 2.0
    version = y.carrier.version
    y[y > 100.0] = 0.0
    assert y.carrier.version == version
    y.sum().backward()
    np.testing.assert_array_equal(_values(x.grad), [2.0, 2.0, 2.0])


def test_array_api_extra_at_differentiates_exactly(carrier):
    xpx = pytest.importorskip("array_api_extra")
    values = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)
    x = sw.tensor(values, carrier=carrier)
    y = xpx.at(x)[1, :].set(0.0, copy=True)    # the cotangent of sum(y * m) is m, zero on row 1 here
    mask = np.ones((3, 4), np.float32)
    mask[1] = 0.0
    xp.sum(y * xp.asarray(mask, device=carrier)).backward()
    np.testing.assert_array_equal(_values(x.grad), mask)
    x = sw.tensor(values, carrier=carrier)
    y = xpx.at(x)[x > 0].multiply(2.0, copy=True)
    xp.sum(y * y).backward()            # recorded: twice the values where x > 0, squared
    np.testing.assert_allclose(_values(x.grad), np.where(values > 0, 8 * values, 2 * values), rtol=1e-6)


# ----- writes of differentiable values into a leaf are recorded -------------------------------------

def _build(m, x):
    out = m.zeros((3, 6), dtype=m.float32)
    out[:, 1:5] = x * 2.0               # a differentiable value into a fresh array
    out[0, :] = x[0, 0]                  # broadcast over part of the first write, which then holds less
    out[2, 2] = 7.0                      # a constant: nothing flows there
    out[out > 100.0] = 1.0               # selects nothing
    return out


def test_fill_then_write_differentiates_like_torch(carrier):
    torch = pytest.importorskip("torch")
    import array_api_compat.torch as torch_xp

    values = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)
    x = sw.tensor(values, carrier=carrier)
    y = _build(xp, x)
    assert type(y.autograd_ctx).__name__ == "WrittenValue"
    xp.sum(y * y).backward()
    t = torch.tensor(values, requires_grad=True)
    (_build(torch_xp, t) ** 2).sum().backward()
    np.testing.assert_allclose(_values(x.grad), t.grad.numpy(), rtol=1e-6, atol=1e-6)


def test_library_code_that_fills_then_writes_differentiates(carrier):
    xpx = pytest.importorskip("array_api_extra")
    values = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)
    x = sw.tensor(values, carrier=carrier)
    xp.sum(xpx.pad(x, 1, xp=xp) ** 2).backward()          # a fresh array, then x written into it
    np.testing.assert_allclose(_values(x.grad), 2 * values, rtol=1e-6)
    x = sw.tensor(values, carrier=carrier)
    xp.sum(xpx.apply_where(x > 0, x, lambda a: a * a, fill_value=0.0, xp=xp)).backward()
    np.testing.assert_allclose(_values(x.grad), np.where(values > 0, 2 * values, 0), rtol=1e-6)


def test_a_write_computed_from_its_own_target_is_refused_outside_no_grad(carrier):
    w = sw.tensor(np.array([1.0, 2.0, 3.0], np.float32), carrier=carrier)
    with pytest.raises(RuntimeError, match=r"sw\.no_grad"):
        w[:] = w * 2.0                   # a Float32 Tensor into a leaf that is no fresh buffer
    np.testing.assert_array_equal(_values(w), [1.0, 2.0, 3.0])
    with sw.no_grad():
        w[:] = w * 2.0                   # an update
    assert w.autograd_ctx is None
    (w * w).sum().backward()
    np.testing.assert_array_equal(_values(w.grad), [4.0, 8.0, 12.0])


def test_a_recorded_write_checks_the_value_it_saved(carrier):
    x = sw.tensor(np.array([1.0, 2.0], np.float32), carrier=carrier)
    value = x * 3.0
    out = xp.zeros(4, device=carrier)
    out[1:3] = value
    value[0] = 0.0                       # the saved value changed after the write
    with pytest.raises(RuntimeError, match=IN_PLACE):
        xp.sum(out).backward()
    assert x.grad is None


def test_a_recorded_write_under_functional_retained_and_batched_traversals(carrier):
    x = sw.tensor(np.array([[0.5, 1.0], [2.0, 3.0]], np.float32), carrier=carrier)

    def build():
        out = xp.zeros((2, 4), device=carrier)
        out[:, 1:3] = x * 2.0
        out[0, 0] = 7.0
        return out

    want = 8.0 * np.array([[0.5, 1.0], [2.0, 3.0]])            # d/dx sum((2x)^2)
    loss = xp.sum(build() ** 2)
    (g,) = sw.grad(loss, [x], sw.ones(loss.shape, carrier=carrier))
    np.testing.assert_allclose(_values(g), want)
    assert x.grad is None
    loss = xp.sum(build() ** 2)
    loss.backward(retain_graph=True)
    loss.backward()
    np.testing.assert_allclose(_values(x.grad), 2 * want)
    storage = sw.tensor(np.eye(8, dtype=np.float32).ravel(), carrier=carrier).carrier.array
    basis = sw.Tensor.from_storage(storage, sw.Layout(sw.Shape([8, 8]), sw.Stride([8, 1])))  # (K, out (8):(1))
    (jacobian,) = sw.grad(xp.reshape(build(), (8,)), [x], basis, batched=True)
    rows = _values(jacobian).reshape(8, 4)
    expected = np.zeros((8, 4))
    for position, element in ((1, 0), (2, 1), (5, 2), (6, 3)):  # out[i, 1 + j] = 2 x[i, j]
        expected[position, element] = 2.0
    np.testing.assert_array_equal(rows, expected)


# ----- in-place updates of results are recorded where the history stays exact ------------------------

def _updates(m, x, d):
    y = x * 2.0
    y += 1.0
    y *= 3.0
    y[0, 1] = d[1] * 4.0
    y -= d
    y /= 2.0
    y[1, :] = d * d
    y += 1.0
    z = m.sum(y, axis=0)
    z += d[0]
    return m.sum(y * y) + m.sum(z * z)


def test_chains_of_updates_and_writes_differentiate_like_torch(carrier):
    _matches_torch(_updates, carrier, np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3),
                   np.array([0.5, -1.0, 2.0], np.float32))


def test_an_update_still_invalidates_what_saved_its_operands(carrier):
    x = _x(carrier)
    y = x * 2.0
    saved_before = y * y
    y += 1.0
    with pytest.raises(RuntimeError, match=IN_PLACE):
        saved_before.sum().backward()
    d = sw.tensor(np.ones(3, np.float32), carrier=carrier)
    y = x * 2.0
    y -= d
    d.fill_(0.0)                          # the update saved d
    with pytest.raises(RuntimeError, match=IN_PLACE):
        y.sum().backward()
    assert x.grad is None


def test_an_update_that_needs_old_values_keeps_a_copy_of_them(carrier):
    x = _x(carrier)
    d = sw.tensor(np.full(3, 2.0, np.float32), carrier=carrier)
    y = x * 2.0
    y *= d                                # its VJP for d reads y from before the write
    assert type(y.autograd_ctx).__name__ == "WrittenValue"
    (y * y).sum().backward()
    np.testing.assert_allclose(_values(x.grad), 32 * _values(x))          # d/dx (4x)^2
    np.testing.assert_allclose(_values(d.grad), 16 * _values(x) ** 2)     # d/dd (2x d)^2 at d = 2


def test_an_update_after_a_node_that_reads_its_result_fails_backward(carrier):
    x = _x(carrier)
    y = sw.exp(x)
    y += 1.0                              # recorded, but exp saved the values it overwrote
    assert not y.is_leaf
    with pytest.raises(RuntimeError, match=IN_PLACE):
        y.sum().backward()
    assert x.grad is None


# ----- results of selections and joins own writable buffers, and their backward reads no result -------

def _write_into_selections(m, x, b):
    c = m.clip(x, min=-0.5)              # on NumPy this was a read-only broadcast view
    c[0, 1] *= 1.5
    c *= x
    w = m.where(x > b, x, b)
    w[1, :] += b[0]
    j = m.concat([x, c], axis=0)
    j[0, ...] = b * b
    s = m.stack([x, w], axis=-1)
    s[..., :2, 0] -= 3.0
    return m.sum(c * c) + m.sum(w * w) + m.sum(j * j) + m.sum(s * s)


def test_writes_into_clip_where_concat_and_stack_results_differentiate_like_torch(carrier):
    inputs = [np.array([[-1.2, 0.3, 0.9], [0.4, -0.7, 1.6]], np.float32), np.array([0.2, -0.1, 0.5], np.float32)]
    _agrees_with_torch(_write_into_selections, inputs, carrier, loss_rtol=1e-5, atol=1e-5)


def test_clip_without_bounds_is_a_copy(carrier):
    x = _x(carrier)
    y = xp.clip(x)
    y[0] = 9.0
    np.testing.assert_array_equal(_values(x), [0.5, 1.0, 2.0])


def _write_into_logaddexp(m, a, b):
    y = m.logaddexp(a, b)                # torch's backward reads the operands alone, not the result
    y[1] = a[0] * 2.0
    return m.sum(y * y)


def test_a_write_into_a_logaddexp_result_differentiates_like_torch(carrier):
    inputs = [np.array([0.3, -1.2, 2.0], np.float32), np.array([1.1, 0.4, -0.5], np.float32)]
    _agrees_with_torch(_write_into_logaddexp, inputs, carrier)


def _write_into_var(m, x, s):
    v = m.var(x, axis=0)                 # the variance's backward reads the centred values, not the result
    v *= s
    w = m.var(x, axis=None, correction=1)
    w -= 0.5
    return m.sum(v * v) + m.sum(w * w)


def test_a_write_into_a_var_result_differentiates_like_torch_and_std_refuses(carrier):
    inputs = [np.array([[1.4, -0.3], [1.9, 0.8], [-1.1, 2.2]], np.float32), np.array(0.84, np.float32)]
    _agrees_with_torch(_write_into_var, inputs, carrier)
    x = xp.asarray(inputs[0], device=carrier)
    s = xp.std(x, axis=0)                # d std reads std itself (torch refuses this write too)
    s *= 2.0
    with pytest.raises(RuntimeError, match=IN_PLACE):
        xp.sum(s).backward()


def _write_through_views_of_a_0d_result(m, x, w):
    y = m.sin(x)                         # 0-d
    v = y[None, ...]                     # a (1,) view of a 0-d base
    v[...] = 0.25
    u = y[None]
    u *= w                               # an in-place operator through such a view
    e = y[None][0:0]
    e[...] = 7.0                         # selects nothing: writes nothing
    return m.sum(y * y) + m.sum(v * v)


def test_writes_through_views_of_a_0d_result_differentiate_like_torch(carrier):
    inputs = [np.array(0.5, np.float32), np.array([2.0], np.float32)]
    _agrees_with_torch(_write_through_views_of_a_0d_result, inputs, carrier, loss_rtol=1e-6)


def _write_seen_through_expand_dims(m, x0, x1):
    v0 = m.clip(x1, min=-2.329, max=1.47)  # a result in a layout that is not row-major
    v1 = v0[2, -2, ...]
    v2 = m.expand_dims(v0, axis=2)       # a view, in torch and NumPy: it shows the write below
    s = m.squeeze(m.sin(x1)[:, :1], axis=1)  # a view of a result not yet materialised
    v1[0:2:3] = x0
    s[0, 1] = x0 * 3.0
    return m.sum(v0 * v0) + m.sum(v1 * v1) + m.sum(v2 * v2) + m.sum(s * s)


def test_expand_dims_and_squeeze_are_views_that_show_later_writes(carrier):
    # found by the differential soak: expand_dims copied a clip result, so v2 kept the old value silently
    torch = pytest.importorskip("torch")
    import array_api_compat.torch as torch_xp

    inputs = [np.array(1.305, np.float32),
              np.array([[[-1.049, -0.73], [1.247, -1.147]], [[-1.669, 0.461], [1.609, -1.829]],
                        [[0.43, 1.331], [-0.188, 0.967]]], np.float32)]
    tensors = [xp.asarray(a, device=carrier) for a in inputs]
    loss = _write_seen_through_expand_dims(xp, *tensors)
    references = [torch.tensor(a, dtype=torch.float64, requires_grad=True) for a in inputs]
    expected = _write_seen_through_expand_dims(torch_xp, *references)
    np.testing.assert_allclose(float(loss), expected.item(), rtol=1e-5)
    # torch rebases a view held across a write into its base; here its history stays the old one, so
    # backward refuses it (never a gradient through values the view no longer holds)
    with pytest.raises(RuntimeError, match=IN_PLACE):
        loss.backward()
    x = xp.asarray(inputs[1], device=carrier)
    y = xp.sin(x)
    e, q = xp.expand_dims(y, axis=0), xp.squeeze(y[:1], axis=0)
    y[0, 0, 0] = 5.0
    assert float(e[0, 0, 0, 0]) == 5.0 and float(q[0, 0]) == 5.0
