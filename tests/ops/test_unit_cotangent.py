"""The unit-cotangent flag: a full reduction's gradient of ones skips the multiply on every backend."""

import numpy as np
import pytest

import strideweave as sw
from strideweave._marks import is_unit
from strideweave.autograd.cotangents import cotangent_for
from strideweave.tensors.values import kind_of

CARRIERS = [c for c in sw.testing.available_carriers() if c in ("numpy", "torch", "jax")]


@pytest.mark.parametrize("carrier", CARRIERS)
@pytest.mark.parametrize(("value", "flagged"), [(1.0, True), (2.0, False)])
def test_one_value_for_every_element_is_flagged_only_when_it_is_one(carrier, value, flagged):
    target = sw.ones(sw.Shape([2, 3]), carrier=carrier)
    kind = kind_of(target.carrier)
    seed = kind.namespace.full((1, 1), value, dtype=target.carrier.array.dtype)
    cotangent = cotangent_for(target, seed, kind)
    g = cotangent.carrier.array
    assert is_unit(g) is flagged
    np.testing.assert_array_equal(cotangent.numpy(), np.full((2, 3), value, np.float32))
    node = sw.exp(target * 3.0).autograd_ctx   # a rule linear in g (``g * y``), run on the flat buffer
    (product,), (owned,) = node.backward_flat(g)
    assert (product is node.saved) is flagged   # the flagged product is the values themselves
    assert owned is not flagged                 # ... which the traversal must not add into
    np.testing.assert_allclose(np.asarray(sw.tensor(product).numpy()), np.full(6, value * np.exp(3.0)), rtol=1e-6)


@pytest.mark.parametrize("carrier", CARRIERS)
def test_gradients_through_the_unit_seed_match_numpy(carrier):
    x0 = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)
    x = sw.Tensor.from_storage(sw.tensor(x0.ravel(order="F"), carrier=carrier).carrier.array,
                               sw.Layout.canonical(sw.Shape([3, 4])))
    w = sw.tensor(np.full((1, 4), 0.5, np.float32), carrier=carrier)
    (sw.exp(x) * x * w).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.exp(x0) * (x0 + 1) * 0.5, rtol=1e-5)
    np.testing.assert_allclose(w.grad.numpy(), (np.exp(x0) * x0).sum(axis=0, keepdims=True), rtol=1e-5)


def test_the_flag_dies_with_its_array():
    from strideweave._marks import _UNIT_ARRAYS, mark_unit

    before = len(_UNIT_ARRAYS)
    ones = mark_unit(np.ones(4, np.float32))
    assert is_unit(ones) and len(_UNIT_ARRAYS) == before + 1
    del ones
    assert len(_UNIT_ARRAYS) == before
    assert not is_unit(np.ones(4, np.float32))   # a new array, perhaps at the same address


@pytest.mark.parametrize("carrier", CARRIERS)
def test_the_backward_seed_is_known_ones_only_where_arrays_are_immutable(carrier):
    from strideweave.autograd.buffers import unit_cotangent

    loss = sw.sum(sw.ones(sw.Shape([2, 3]), carrier=carrier))
    seed = unit_cotangent(loss).carrier
    np.testing.assert_array_equal(np.asarray(sw.tensor(seed.array).numpy()), [1.0])
    # A mutable buffer could be written after it was flagged; an immutable one cannot.
    assert is_unit(seed.dense_values()) is type(seed).immutable_arrays


@pytest.mark.skipif("jax" not in CARRIERS, reason="needs jax")
def test_a_flagged_reduction_cotangent_is_taken_as_ones_without_reading_it():
    # The flag stands for the value: an asynchronous backend is not waited on to read it back.
    # (The array below holds 2.0 under a unit flag, so a read-back would show in the result.)
    from strideweave._marks import mark_unit

    target = sw.ones(sw.Shape([2, 3]), carrier="jax")
    kind = kind_of(target.carrier)
    flagged = mark_unit(kind.namespace.full((1, 1), 2.0, dtype=target.carrier.array.dtype))
    cotangent = cotangent_for(target, flagged, kind)
    assert is_unit(cotangent.carrier.dense_values())
    np.testing.assert_array_equal(cotangent.numpy(), np.ones((2, 3), np.float32))


# ----- the unfilled unit cotangent (``operation.Ones``) ---------------------------------------------

ALL_CARRIERS = [c for c in sw.testing.available_carriers() if c in ("numpy", "torch", "jax", "array_api_strict")]
X0 = np.linspace(-1.5, 2.0, 12, dtype=np.float32).reshape(3, 4)


def _leaf(carrier):
    return sw.tensor(X0.copy(), carrier=carrier)


def _cotangent_kinds(monkeypatch, method):
    """The types of the cotangents ``Multiply.<method>`` receives from now on."""
    from strideweave.ops.elementwise import RULES

    seen = []
    original = getattr(RULES["multiply"], method)
    monkeypatch.setattr(RULES["multiply"], method,
                        lambda self, g, *request: (seen.append(type(g)), original(self, g, *request))[1])
    return seen


@pytest.mark.skipif("jax" not in CARRIERS, reason="needs jax")
def test_a_scaling_node_under_a_full_sum_gets_ones_that_are_never_filled(monkeypatch):
    from strideweave.autograd.cotangents import Ones
    from strideweave.ops.elementwise import RULES

    seen = _cotangent_kinds(monkeypatch, "backward_flat")
    x = _leaf("jax")
    (sw.exp(x) * x).sum().backward()
    assert seen == [Ones]
    np.testing.assert_allclose(x.grad.numpy(), np.exp(X0) * (X0 + 1), rtol=1e-6)
    assert RULES["exp"].takes_ones and not RULES["log"].takes_ones and not RULES["add"].takes_ones


@pytest.mark.parametrize("carrier", ALL_CARRIERS)
@pytest.mark.parametrize(("program", "expected"), [
    # scaling rules, one of them by a Python scalar (filled with the scalar, not with ones)
    (lambda x: (sw.exp(x) * x).sum(), lambda x: np.exp(x) * (x + 1)),
    (lambda x: (x * 3.0).sum(), lambda x: np.full_like(x, 3.0)),
    (lambda x: (2.0 * sw.tanh(x)).sum(), lambda x: 2 * (1 - np.tanh(x) ** 2)),
    (lambda x: (sw.sin(x) + sw.abs(x)).sum(), lambda x: np.cos(x) + np.sign(x)),
    # rules that read their cotangent otherwise get the ones filled
    (lambda x: sw.log(x * x).sum(), lambda x: 2 / x),
    (lambda x: (x + x).sum(), lambda x: np.full_like(x, 2.0)),
    # the sum's input is a leaf: its .grad is the ones themselves
    (lambda x: x.sum(), lambda x: np.ones_like(x)),
    # two unit contributions meet before the node runs, or a unit one meets a computed one
    (lambda x: (lambda z: z.sum() + z.sum())(sw.exp(x)), lambda x: 2 * np.exp(x)),
    (lambda x: (lambda z: z.sum() + (z * z).sum())(sw.exp(x)), lambda x: np.exp(x) + 2 * np.exp(2 * x)),
])
def test_gradients_through_a_unit_reduction_cotangent(carrier, program, expected):
    x = _leaf(carrier)
    program(x).backward()
    np.testing.assert_allclose(x.grad.numpy(), expected(X0), rtol=1e-5)


@pytest.mark.parametrize("carrier", ALL_CARRIERS)
def test_observed_unit_cotangents_are_filled(carrier):
    x = _leaf(carrier)
    z = sw.exp(x) * x
    z.retain_grad()
    z.sum().backward()
    np.testing.assert_array_equal(z.grad.numpy(), np.ones((3, 4), np.float32))
    np.testing.assert_allclose(x.grad.numpy(), np.exp(X0) * (X0 + 1), rtol=1e-6)

    x = _leaf(carrier)
    z = sw.exp(x) * x
    loss = z.sum()
    gz, gx = sw.grad(loss, [z, x], sw.ones(loss.layout.shape, carrier=carrier))
    np.testing.assert_array_equal(gz.numpy(), np.ones((3, 4), np.float32))
    np.testing.assert_allclose(gx.numpy(), np.exp(X0) * (X0 + 1), rtol=1e-6)


@pytest.mark.parametrize("carrier", ALL_CARRIERS)
def test_writes_into_a_scaling_result_meet_filled_ones(carrier):
    x = _leaf(carrier)
    z = x * 2.0
    z[0, 0] = 5.0                                     # recorded: the multiply gets a zero there
    z.sum().backward()
    expected = np.full((3, 4), 2.0, np.float32)
    expected[0, 0] = 0.0
    np.testing.assert_array_equal(x.grad.numpy(), expected)
    x = _leaf(carrier)
    z = x * 2.0
    with sw.no_grad():
        z[0, 0] = 5.0                                 # unrecorded: the ones reach a stale position
    with pytest.raises(RuntimeError, match="in-place modification"):
        z.sum().backward()
    assert x.grad is None


def test_ones_take_only_a_factor_of_their_own_size():
    from strideweave.autograd.cotangents import Ones

    flat = Ones((4,), np.float32, np)
    factor = np.arange(4, dtype=np.float32)
    assert flat * factor is factor and factor * flat is factor  # either side: NumPy defers to ``Ones``
    assert (flat * factor.reshape(2, 2)).shape == (2, 2)  # a flat buffer in any storage shape
    np.testing.assert_array_equal(flat * 2.5, np.full(4, 2.5, np.float32))
    np.testing.assert_array_equal(2.5 * flat, np.full(4, 2.5, np.float32))
    with pytest.raises(RuntimeError, match="shape"):
        flat * np.ones(3, np.float32)
    for other_use in (lambda: -flat, lambda: flat + factor, lambda: factor - flat, lambda: flat / 2.0,
                      lambda: np.exp(flat), lambda: np.sum(flat)):
        with pytest.raises(TypeError):
            other_use()  # anything but the product fails
    shaped = Ones((3, 4), np.float32, np)
    row = np.arange(4, dtype=np.float32).reshape(1, 4)
    np.testing.assert_array_equal(shaped * row, np.broadcast_to(row, (3, 4)))
    with pytest.raises(ValueError):
        shaped * np.ones((2, 4), np.float32)


@pytest.mark.parametrize("carrier", CARRIERS)
def test_ones_scale_by_a_native_factor_on_either_side(carrier):
    from strideweave.autograd.cotangents import Ones

    factor = sw.tensor(X0.copy(), carrier=carrier).carrier.array
    kind = kind_of(sw.tensor(X0, carrier=carrier).carrier)
    ones = Ones(tuple(factor.shape), factor.dtype, kind.namespace)
    assert ones * factor is factor and factor * ones is factor  # each library defers to ``Ones``
    with pytest.raises(TypeError):
        factor + ones


@pytest.mark.skipif("jax" not in CARRIERS, reason="needs jax")
def test_a_broadcasting_product_in_storage_order_gets_ones_that_are_never_filled(monkeypatch):
    from strideweave.autograd.cotangents import Ones

    seen = _cotangent_kinds(monkeypatch, "pullback")
    a = sw.tensor(X0.copy(), carrier="jax")            # row-major: a JAX array as users hold it
    w = sw.tensor(X0[:1] * 0.5, carrier="jax")
    loss = (a * w).sum()
    (gw,) = sw.grad(loss, [w], sw.ones(loss.shape, carrier="jax"))  # an explicit cotangent of ones
    assert seen == [Ones]
    np.testing.assert_allclose(gw.numpy(), X0.sum(axis=0, keepdims=True), rtol=1e-6)
    counts = sw.tensor(np.arange(1, 5, dtype=np.int32).reshape(1, 4), carrier="jax")
    (a * counts).sum().backward()                       # mixed dtypes: the same route, never filled either
    assert seen == [Ones, Ones]
    np.testing.assert_allclose(a.grad.numpy(), np.broadcast_to(np.arange(1, 5, dtype=np.float32), X0.shape))


@pytest.mark.parametrize("carrier", ALL_CARRIERS)
def test_gradients_of_a_broadcasting_product_under_a_full_sum(carrier):
    a, w = sw.tensor(X0.copy(), carrier=carrier), sw.tensor(X0[:1] * 0.5, carrier=carrier)
    (a * w).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), np.broadcast_to(X0[:1] * 0.5, X0.shape), rtol=1e-6)
    np.testing.assert_allclose(w.grad.numpy(), X0.sum(axis=0, keepdims=True), rtol=1e-6)
    loss = (sw.exp(a) * w).sum()
    gw, ga = sw.grad(loss, [w, a], sw.full(loss.shape, 2.0, carrier=carrier))  # not ones: multiplied
    np.testing.assert_allclose(gw.numpy(), 2 * np.exp(X0).sum(axis=0, keepdims=True), rtol=1e-5)
    np.testing.assert_allclose(ga.numpy(), 2 * np.exp(X0) * (X0[:1] * 0.5), rtol=1e-5)
    counts = sw.tensor(np.arange(4, dtype=np.int32).reshape(1, 4), carrier=carrier)
    a = sw.tensor(X0.copy(), carrier=carrier)
    (a * counts).sum().backward()                      # mixed dtypes: in storage order too
    np.testing.assert_allclose(a.grad.numpy(), np.broadcast_to(np.arange(4, dtype=np.float32), X0.shape))


@pytest.mark.parametrize("carrier", ALL_CARRIERS)
def test_ones_made_by_sw_ones_are_known_only_while_they_are_ones(carrier):
    from strideweave._marks import is_unit

    x = _leaf(carrier)
    out = sw.exp(x) * x
    cot = sw.ones(out.layout.shape, carrier=carrier, layout=out.layout)
    assert is_unit(cot.carrier.dense_values()) is type(cot.carrier).immutable_arrays
    cot[0, 0] = 5.0                                   # the written buffer is a new array, not flagged
    assert not is_unit(cot.carrier.dense_values())
    (gx,) = sw.grad(out, [x], cot)
    expected = np.exp(X0) * (X0 + 1)
    expected[0, 0] *= 5.0
    np.testing.assert_allclose(gx.numpy(), expected, rtol=1e-5)


@pytest.mark.parametrize("carrier", ALL_CARRIERS)
@pytest.mark.parametrize(("loss", "expected"), [
    (lambda x: x.sum() + x.sum(), lambda x0: np.full_like(x0, 2.0)),          # two unfilled ones, summed
    (lambda x: sw.exp(x).sum() + x.sum(), lambda x0: np.exp(x0) + 1),         # ones beside a computed gradient
    (lambda x: (lambda e: e.sum() + (e * 2.0).sum())(sw.exp(x)), lambda x0: 3 * np.exp(x0)),
    (lambda x: (sw.transpose(x) * sw.transpose(x)).sum(), lambda x0: 2 * x0),
], ids=["sum+sum", "exp+sum", "shared", "transposed"])
def test_unit_cotangents_that_meet_sum_exactly(carrier, loss, expected):
    x = _leaf(carrier)
    loss(x).backward()
    np.testing.assert_allclose(x.grad.numpy(), expected(X0), rtol=1e-5, atol=1e-6)
    x = _leaf(carrier)
    (gx,) = sw.grad(loss(x), [x])
    np.testing.assert_allclose(gx.numpy(), expected(X0), rtol=1e-5, atol=1e-6)
