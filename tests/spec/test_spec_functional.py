"""Requirement: Functional gradients collect vector-Jacobian products without touching `.grad`."""

import inspect

import numpy as np
import pytest
from _spec_support import PassThrough, arr, assert_unchanged, canonical, layout, snapshot, stored, vec

import strideweave as sw


def _shared_graph(carrier):
    av, bv = np.array([0.5, -1.0]), np.array([2.0, 0.25])
    a, b = vec(av, carrier), vec(bv, carrier)
    h = a * b                         # shared intermediate
    out = sw.sin(h) + h * a
    return av, bv, a, b, out


def test_match_backward_on_a_shared_multi_input_graph(carrier):
    av, bv, a, b, out = _shared_graph(carrier)
    cv = np.array([1.0, -3.0])
    c = vec(cv, carrier)
    before = snapshot([a, b])
    ga, gb = sw.grad(out, [a, b], c, retain_graph=True)
    assert_unchanged([a, b], before)
    assert a.grad is None and b.grad is None
    h = av * bv
    np.testing.assert_allclose(arr(ga), cv * (np.cos(h) * bv + bv * av + h), rtol=1e-5)
    np.testing.assert_allclose(arr(gb), cv * (np.cos(h) * av + av * av), rtol=1e-5)
    out.backward(c)
    np.testing.assert_allclose(arr(a.grad), arr(ga), rtol=1e-6)
    np.testing.assert_allclose(arr(b.grad), arr(gb), rtol=1e-6)


def test_return_none_for_an_unreachable_input(carrier):
    x, other = vec([1.0, 2.0], carrier), vec([3.0, 4.0], carrier)
    out = x * x
    result = sw.grad(out, [x, other], vec([1.0, 1.0], carrier))
    assert isinstance(result, tuple) and len(result) == 2
    np.testing.assert_allclose(arr(result[0]), [2.0, 4.0])
    assert result[1] is None


def test_grad_returns_entries_in_request_order_with_repeats(carrier):
    x, w = vec([1.0, 2.0], carrier), vec([3.0, 5.0], carrier)
    out = x * w
    gw, gx, gw2 = sw.grad(out, (w, x, w), vec([1.0, 1.0], carrier))
    np.testing.assert_allclose(arr(gw), [1.0, 2.0])
    np.testing.assert_allclose(arr(gx), [3.0, 5.0])
    np.testing.assert_allclose(arr(gw2), [1.0, 2.0])


def test_grad_for_an_intermediate_input(carrier):
    x = vec([0.3, 0.6], carrier)
    h = x * 2.0
    out = sw.sin(h)
    (gh,) = sw.grad(out, [h], vec([1.0, 1.0], carrier))
    np.testing.assert_allclose(arr(gh), np.cos([0.6, 1.2]), rtol=1e-5)
    assert h.grad is None and x.grad is None


@pytest.mark.parametrize("bad", ["tensor", None, 3])
def test_reject_an_inputs_argument_that_is_not_a_sequence_of_tensors(carrier, bad):
    x = vec([1.0, 2.0], carrier)
    x.grad = vec([1.0, 1.0], carrier)
    out = x * 2.0
    inputs = x if bad == "tensor" else bad
    before = snapshot([x])
    with pytest.raises(TypeError):
        sw.grad(out, inputs, vec([1.0, 1.0], carrier))
    assert_unchanged([x], before)
    assert out.autograd_ctx.inputs() != ()  # no traversal happened


def test_grad_type_errors_for_other_bad_arguments(carrier):
    x = vec([1.0, 2.0], carrier)
    out = x * 2.0
    c = vec([1.0, 1.0], carrier)
    with pytest.raises(TypeError):
        sw.grad(out, [x, 1.0], c)
    with pytest.raises(TypeError):
        sw.grad(out, [x, x.numpy()], c)
    with pytest.raises(TypeError):
        sw.grad(out.numpy(), [x], c)
    with pytest.raises(TypeError):
        sw.grad(out, [x], [1.0, 1.0])
    with pytest.raises(TypeError):
        sw.grad(out, [x], None)
    assert x.grad is None
    assert out.autograd_ctx.inputs() != ()


def test_grad_value_error_for_a_non_differentiable_input(carrier):
    x = vec([1.0, 2.0], carrier)
    i = sw.tensor([1, 2], carrier=carrier)
    out = x * 2.0
    with pytest.raises(ValueError):
        sw.grad(out, [x, i], vec([1.0, 1.0], carrier))
    with pytest.raises(ValueError):
        sw.grad(out, [sw.tensor([True, False], carrier=carrier)], vec([1.0, 1.0], carrier))
    assert x.grad is None
    assert out.autograd_ctx.inputs() != ()


def test_grad_runtime_error_for_a_non_differentiable_output(carrier):
    x = vec([1.0, 2.0], carrier)
    out = sw.astype(x * 2.0, sw.DType.Int32)
    with pytest.raises(RuntimeError):
        sw.grad(out, [x], sw.tensor([1, 1], carrier=carrier))
    with pytest.raises(RuntimeError):
        sw.grad(out, [x], vec([1.0, 1.0], carrier))
    assert x.grad is None


def test_grad_neither_reads_nor_modifies_grad(carrier):
    x = vec([1.0, 2.0], carrier)
    sentinel = vec([100.0, 200.0], carrier)
    x.grad = sentinel
    h = x * 3.0
    h.retain_grad()
    out = h * 1.0
    (gx,) = sw.grad(out, [x], vec([1.0, 1.0], carrier))
    np.testing.assert_allclose(arr(gx), [3.0, 3.0])  # not added to the sentinel
    assert x.grad is sentinel
    np.testing.assert_array_equal(arr(x.grad), [100.0, 200.0])
    assert h.grad is None


def test_grad_returns_detached_gradients_in_fresh_storage(carrier):
    x = vec([1.0, 2.0], carrier)
    out = PassThrough()(x)  # the cotangent object itself reaches x
    c = vec([4.0, 5.0], carrier)
    (gx,) = sw.grad(out, [x], c)
    assert gx.autograd_ctx is None
    assert type(gx.carrier) is type(x.carrier)
    assert gx.carrier is not c.carrier and gx.carrier is not x.carrier
    c[0] = -1.0
    np.testing.assert_array_equal(arr(gx), [4.0, 5.0])
    # requesting the output itself: also a copy
    y = x * 2.0
    c2 = vec([1.0, 1.0], carrier)
    (gy,) = sw.grad(y, [y], c2)
    assert gy.carrier is not c2.carrier and gy.autograd_ctx is None
    np.testing.assert_array_equal(arr(gy), [1.0, 1.0])


def test_grad_releases_the_graph_by_default(carrier):
    x = vec([1.0, 2.0], carrier)
    out = sw.exp(x)
    sw.grad(out, [x], vec([1.0, 1.0], carrier))
    assert out.autograd_ctx.inputs() == ()
    with pytest.raises(RuntimeError, match="retain_graph=True"):
        sw.grad(out, [x], vec([1.0, 1.0], carrier))
    with pytest.raises(RuntimeError, match="retain_graph=True"):
        out.backward(vec([1.0, 1.0], carrier))
    assert x.grad is None


def test_grad_with_retain_graph_keeps_the_graph(carrier):
    x = vec([1.0, 2.0], carrier)
    out = x * x
    g1 = sw.grad(out, [x], vec([1.0, 1.0], carrier), retain_graph=True)[0]
    g2 = sw.grad(out, [x], vec([1.0, 1.0], carrier))[0]
    np.testing.assert_allclose(arr(g1), arr(g2))
    with pytest.raises(RuntimeError, match="retain_graph=True"):
        sw.grad(out, [x], vec([1.0, 1.0], carrier))


def test_grad_for_a_broadcast_input_uses_the_canonical_layout(carrier):
    x = stored([1.0, 2.0], layout([3, 2], [0, 1]), carrier)
    out = x * x
    cv = np.arange(1.0, 7.0).reshape(3, 2)
    (gx,) = sw.grad(out, [x], canonical(cv, out.layout, carrier))
    assert gx.layout == layout([3, 2], [1, 3])
    expected = np.broadcast_to((2 * np.array([1.0, 2.0]) * cv).sum(axis=0), (3, 2))
    np.testing.assert_allclose(arr(gx), expected)
    assert type(gx.carrier) is type(x.carrier)


def test_grad_signature(carrier):
    params = inspect.signature(sw.grad).parameters
    assert list(params) == ["output", "inputs", "cotangents", "batched", "retain_graph"]
    assert params["batched"].kind is inspect.Parameter.KEYWORD_ONLY and params["batched"].default is False
    assert params["retain_graph"].kind is inspect.Parameter.KEYWORD_ONLY
    assert params["retain_graph"].default is False
