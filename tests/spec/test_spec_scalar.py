"""Requirement: A scalar result supplies its own unit cotangent."""

import numpy as np
import pytest
from _spec_support import AliasProbe, Probe, arr, assert_unchanged, layout, snapshot, stored, vec

import strideweave as sw


def test_differentiate_a_scalar_without_an_explicit_cotangent(carrier):
    xv = np.array([1.0, -2.0, 0.5])
    x = vec(xv, carrier)
    probe = Probe()
    loss = probe(sw.sum(x * x))  # the layout-native full reduction: layout (1):(1)
    assert loss.layout == layout(1, 1)
    loss.backward()
    assert probe.carrier_types == [type(loss.carrier)]
    np.testing.assert_array_equal(probe.calls[0], [1.0])
    np.testing.assert_allclose(arr(x.grad), 2 * xv)


def test_unit_cotangent_for_a_scalar_leaf(carrier):
    x = stored([7.0], layout(1, 1), carrier)
    x.backward()
    np.testing.assert_array_equal(arr(x.grad), [1.0])
    assert type(x.grad.carrier) is type(x.carrier)


def test_unit_cotangent_has_the_scalar_layout(carrier):
    # a scalar viewed with a stride > 1 at an offset: unit cotangent uses that layout
    x = sw.Tensor.from_storage([9.0, 9.0, 3.0], layout(1, 5), offset=2, carrier=carrier)
    probe = AliasProbe()
    y = probe(x)
    assert y.layout == layout(1, 5) and y.autograd_ctx is probe
    y.backward()
    assert probe.layouts == [layout(1, 5)]
    assert probe.carrier_types == [type(x.carrier)]
    np.testing.assert_array_equal(probe.calls[0], [1.0])
    np.testing.assert_array_equal(arr(x.grad), [1.0])
    assert x.grad.layout == layout(1, 5)


@pytest.mark.parametrize(("shape", "stride", "storage"), [([1, 1], [1, 1], [2.0]), (2, 1, [2.0, 3.0]),
                                                  ([[1]], [[1]], [2.0])])
def test_reject_an_implicit_cotangent_for_a_non_scalar_tensor(carrier, shape, stride, storage):
    x = stored(storage, layout(shape, stride), carrier)
    y = x * 2.0
    before = snapshot([x])
    with pytest.raises(ValueError):
        y.backward()
    assert_unchanged([x], before)
    with pytest.raises(ValueError):
        x.backward()
    assert x.grad is None


def test_reject_an_implicit_cotangent_keeps_an_existing_grad(carrier):
    x = stored([1.0, 2.0], layout(2, 1), carrier)
    x.grad = vec([5.0, 6.0], carrier)
    y = x * 2.0
    before = snapshot([x])
    with pytest.raises(ValueError):
        y.backward()
    assert_unchanged([x], before)
    with pytest.raises(ValueError):
        x.backward()
    assert_unchanged([x], before)


def test_a_supplied_gradient_replaces_the_unit_cotangent(carrier):
    x = vec([1.5, -1.0], carrier)
    loss = sw.sum(x * x)
    loss.backward(vec([3.0], carrier))
    np.testing.assert_allclose(arr(x.grad), 3.0 * 2 * np.array([1.5, -1.0]))
