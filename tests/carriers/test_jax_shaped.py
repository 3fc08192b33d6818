"""JaxCarrier keeps N-D arrays unflattened (every eager JAX reshape is a copy) without changing any value."""

import numpy as np
import pytest

import strideweave as sw

jnp = pytest.importorskip("jax.numpy")


def test_a_wrapped_2d_array_is_read_back_in_its_own_shape():
    values = jnp.arange(12, dtype=jnp.float32).reshape(3, 4)
    t = sw.tensor(values)
    assert t.carrier.shaped((3, 4)) is values                 # no reshape of the flat buffer
    np.testing.assert_array_equal(np.asarray(t.carrier.array), np.arange(12, dtype=np.float32))


def test_results_stay_shaped_until_the_flat_buffer_is_read():
    a = sw.tensor(jnp.arange(12, dtype=jnp.float32).reshape(3, 4))
    w = sw.tensor(jnp.asarray([[1.0, 2.0, 3.0, 4.0]], dtype=jnp.float32))
    out = a * w                                              # broadcast: computed (3, 4), row-major
    carrier = out.carrier
    assert carrier.dense_values().shape == (3, 4)
    expected = np.arange(12, dtype=np.float32).reshape(3, 4) * np.array([1, 2, 3, 4], np.float32)
    np.testing.assert_array_equal(out.numpy(), expected)
    np.testing.assert_array_equal(np.asarray(carrier.array), expected.ravel())   # flattened on demand
    assert carrier.size == 12


def test_a_write_replaces_the_shaped_values():
    t = sw.tensor(jnp.zeros((2, 3), dtype=jnp.float32))
    t.carrier.scatter_rev(sw.Layout.canonical(sw.Shape([6])), 0, jnp.arange(6, dtype=jnp.float32))
    assert t.carrier.dense_values().shape == (6,)
    np.testing.assert_array_equal(t.numpy(), np.arange(6, dtype=np.float32).reshape(2, 3))


def test_broadcast_gradients_on_shaped_storage_match_numpy():
    a0 = np.linspace(-1, 1, 20, dtype=np.float32).reshape(4, 5)
    w0 = np.linspace(0.5, 1.5, 5, dtype=np.float32).reshape(1, 5)
    a = sw.tensor(jnp.asarray(a0))
    w = sw.tensor(jnp.asarray(w0))
    (sw.exp(a * w) * a).sum().backward()
    e = np.exp(a0 * w0)
    np.testing.assert_allclose(a.grad.numpy(), e * a0 * w0 + e, rtol=1e-5)
    np.testing.assert_allclose(w.grad.numpy(), (e * a0 * a0).sum(axis=0, keepdims=True), rtol=1e-5)
    assert a.grad.layout == a.layout


def test_a_full_reduction_keeps_its_one_value_unreshaped():
    x0 = np.arange(6, dtype=np.float32).reshape(2, 3)
    x = sw.tensor(jnp.asarray(x0))
    loss = sw.sum(x)
    carrier = loss.carrier
    assert carrier.dense_values().shape == () and carrier.size == 1     # as XLA computed it
    np.testing.assert_array_equal(np.asarray(carrier.array), [15.0])      # the 1-D buffer on demand
    y = loss * 2.0 + loss
    np.testing.assert_array_equal(y.numpy(), [45.0])
    y.backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.full((2, 3), 3.0, np.float32))
    loss[0] = 5.0                                                         # a write replaces the value
    np.testing.assert_array_equal(loss.numpy(), [5.0])
    np.testing.assert_array_equal(sw.mean(x, modes=(0, 1), keepdims=True).numpy(), [[2.5]])
