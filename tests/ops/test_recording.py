"""The one recording step and the constructors generated from the field lists, seen from outside.

Every recorder (``Operation.__call__`` through ``record``, ``Primitive.record_flat``, the operators'
scalar hot path ``_Binary.with_scalar``) runs one recording step, and every Tensor and node
constructor is made from one field list: a result of any path is a whole Tensor, recorded alike.
"""

import numpy as np
import pytest

import strideweave as sw
from strideweave import _generate
from strideweave.operation import NODE_FIELDS, Operation
from strideweave.ops._primitive import FIELDS, Primitive
from strideweave.tensors.tensor import TENSOR_FIELDS, Tensor
from strideweave.testing import available_carriers

CARRIERS = available_carriers()
_TENSOR_SLOTS = [s for s in Tensor.__slots__ if s != "__weakref__"]


def _fields(t):
    """Every field, read: an unset slot raises AttributeError here."""
    return {s: getattr(t, s) for s in _TENSOR_SLOTS}


def test_the_field_lists_are_the_slots():
    assert set(_TENSOR_SLOTS) == set(TENSOR_FIELDS)
    assert set(Operation.__slots__) - {"__dict__"} == set(NODE_FIELDS)
    assert set(Operation.__slots__) - {"__dict__"} | set(Primitive.__slots__) == set(FIELDS)


@pytest.mark.parametrize("make", [
    lambda: sw.tensor(np.arange(4, dtype=np.float32)),                     # __init__ / _make
    lambda: sw.tensor(np.arange(4, dtype=np.float32)) * 2.0,               # with_scalar
    lambda: sw.exp(sw.tensor(np.arange(4, dtype=np.float32))),             # record_flat
    lambda: sw.tensor(np.arange(4, dtype=np.float32)) < 2.0,               # with_scalar, not recorded
    lambda: sw.tensor(np.ones((2, 2), np.float32)) + sw.tensor(np.ones(2, np.float32)),  # __call__
    lambda: sw.tensor(np.arange(4, dtype=np.float32))._alias(),
], ids=["leaf", "scalar", "unary", "bool", "general", "alias"])
def test_every_constructor_sets_every_field(make):
    t = make()
    fields = _fields(t)
    assert fields["_grad"] is None and fields["_retains_grad"] is False and fields["_blocks"] is None
    assert (fields["_carrier_tuple"] is None) != (fields["_raw"] is None)


@pytest.mark.parametrize("carrier", CARRIERS)
@pytest.mark.parametrize("position", [1, 0], ids=["x * 2.0", "2.0 - x"])
@pytest.mark.parametrize("chained", [False, True], ids=["on a leaf", "on a lazy result"])
def test_a_scalar_result_is_lazy_recorded_and_differentiates(carrier, position, chained):
    values = np.array([1.0, -2.0, 3.0], np.float32)
    x = sw.tensor(values, carrier=carrier)
    base = x * 1.5 if chained else x
    y = base * 2.0 if position else 2.0 - base
    assert y._raw is not None and y._carrier_tuple is None, "the hot path's result has no carrier until read"
    node = y.autograd_ctx
    assert node is not None and node.inputs() == (base,) and node.flat and not node.released
    assert node._result_state is None
    assert y._carrier_tuple is None, "recording made the result's carrier"
    y.sum().backward()
    factor = (1.5 if chained else 1.0) * (2.0 if position else -1.0)
    np.testing.assert_allclose(x.grad.numpy(), np.full(3, factor, np.float32))
    assert node.released and node.inputs() == () and node.kind is None and node.saved is None


@pytest.mark.parametrize("make", [lambda x: x * 2.0, lambda x: sw.exp(x)], ids=["scalar", "unary"])
def test_a_flat_result_records_nothing_without_grad_mode_and_stays_lazy(make):
    x = sw.tensor(np.arange(3, dtype=np.float32))
    with sw.no_grad():
        y = make(x)
    assert y.autograd_ctx is None and y._raw is not None and y.dtype is sw.DType.Float32


def test_a_bool_flat_result_is_not_recorded():
    x = sw.tensor(np.arange(3, dtype=np.float32))
    y = x < 1.5
    assert y.autograd_ctx is None and y.dtype is sw.DType.Bool
    np.testing.assert_array_equal(y.numpy(), [True, True, False])


@pytest.mark.parametrize("make", [lambda x: x ** 2.0, lambda x: sw.exp(x)], ids=["scalar", "unary"])
def test_a_saved_input_written_after_a_flat_recording_fails_backward(make):
    x = sw.tensor(np.arange(3, dtype=np.float32)) * 1.0   # a lazy result, saved with version 0
    leaf = sw.tensor(np.arange(3, dtype=np.float32))      # a leaf, saved with its carrier's version
    for saved in (x, leaf):
        y = make(saved)
        saved += 1.0
        with pytest.raises(sw.InPlaceModificationError, match="in-place modification"):
            y.sum().backward()


def test_a_lazy_result_made_and_written_after_recording_fails_backward():
    x = sw.tensor(np.arange(3, dtype=np.float32))
    y = sw.exp(x)            # lazy, and recorded: its node notes the carrier when it is made
    y += 1.0                 # makes the carrier, then writes into it
    with pytest.raises(sw.InPlaceModificationError, match="result of Exp"):
        y.sum().backward()


def test_the_general_recorder_saves_versions_and_result_state():
    a = sw.tensor(np.ones((2, 2), np.float32))
    b = sw.tensor(np.ones(4, np.float32))[::2]
    y = a + b                # broadcasting a strided view: ``Operation.__call__`` and ``record``
    node = y.autograd_ctx
    assert node.inputs()[0] is a and node.inputs()[1].shape == (2,) and len(node.input_versions()) == 2
    carriers, versions = node._result_state
    assert carriers == (y.carrier,) and versions == (y.carrier.version,)


def test_a_new_node_starts_from_its_field_list_and_release_keeps_the_rest():
    class Plain(Operation):
        pass

    class Built(Primitive):
        __slots__ = ()

    plain, built = Plain(), Built()
    for node, fields in ((plain, NODE_FIELDS), (built, FIELDS)):
        assert {f: getattr(node, f) for f in fields} == {f: eval(start) for f, (start, _) in fields.items()}
        node._result_layout = "kept"
        node.context["saved"] = 1
        node.release()
        assert node.released and node.inputs() == () and node.context == {}
        assert node._result_layout == "kept"
    assert built.flat is False and built.kind is None


def test_a_generated_function_shows_its_source():
    import inspect
    assert "self._carrier_tuple = (carrier,)" in inspect.getsource(Tensor._make)
    assert "node._versions = versions" in inspect.getsource(type(sw.exp(sw.tensor([1.0]))._ctx).record_flat)


def test_a_field_list_names_what_a_constructor_gets_wrong():
    with pytest.raises(ValueError, match=r"no such field\(s\) \['_nope'\]"):
        _generate.assignments("t", TENSOR_FIELDS, {"_nope": "1"})
    with pytest.raises(ValueError, match="'_layout' has no start value"):
        _generate.assignments("t", TENSOR_FIELDS, {"_carrier_tuple": "c", "_dtype": "d"})


_PAIRS = {
    "a * b": (lambda a, b: a * b, lambda a, b: (b, a)),
    "a + b": (lambda a, b: a + b, lambda a, b: (np.ones_like(a), np.ones_like(b))),
    "a - b": (lambda a, b: a - b, lambda a, b: (np.ones_like(a), -np.ones_like(b))),
    "a / b": (lambda a, b: a / b, lambda a, b: (1 / b, -a / (b * b))),
}


@pytest.mark.parametrize("carrier", CARRIERS)
@pytest.mark.parametrize("op", list(_PAIRS))
@pytest.mark.parametrize("chained", [False, True], ids=["leaves", "lazy results"])
def test_two_dense_tensors_take_the_flat_recorder_and_differentiate(carrier, op, chained):
    forward, grads = _PAIRS[op]
    a0 = np.array([[1.0, -2.0], [3.0, 0.5]], np.float32)
    b0 = np.array([[0.5, 4.0], [-1.5, 2.0]], np.float32)
    a, b = sw.tensor(a0, carrier=carrier), sw.tensor(b0, carrier=carrier)
    p, q = (a * 1.0, b * 1.0) if chained else (a, b)
    y = forward(p, q)
    node = y.autograd_ctx
    assert y._raw is not None and y._carrier_tuple is None, "the hot path's result has no carrier until read"
    assert node.flat and node.inputs() == (p, q) and node._result_state is None and len(node._versions) == 2
    if chained:
        assert p._carrier_tuple is None and q._carrier_tuple is None, "recording made an input's carrier"
    (y * y).sum().backward()
    # d sum(f^2) = 2 f df, against NumPy in float64
    a64, b64 = a0.astype(np.float64), b0.astype(np.float64)
    f = forward(a64, b64)
    for leaf, grad in zip((a, b), grads(a64, b64)):
        np.testing.assert_allclose(np.asarray(leaf.grad.to_array()), 2 * f * grad, rtol=1e-5)


def test_the_same_lazy_tensor_twice_is_saved_once():
    x = sw.tensor(np.array([1.0, -2.0, 3.0], np.float32))
    y = x * 1.0
    z = y * y
    assert z.autograd_ctx._versions == (0,) and y._carrier_tuple is None
    z.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, -4.0, 6.0])


def test_a_lazy_input_of_two_written_after_recording_fails_backward():
    x = sw.tensor(np.array([1.0, -2.0, 3.0], np.float32))
    w = sw.tensor(np.array([0.5, 0.5, 0.5], np.float32))
    y = x * 2.0
    z = y * w
    y += 1.0  # makes y's carrier, then writes into it
    with pytest.raises(sw.InPlaceModificationError, match="Multiply"):
        z.sum().backward()


def _row_sums_in_first_row(a):
    grad = np.zeros((2, 3))
    grad[0] = a.sum(axis=0)
    return grad


def _in_first_three_columns(a):
    grad = np.zeros((2, 4))
    grad[:, :3] = a
    return grad


@pytest.mark.parametrize(("shape", "select", "numpy_select", "c_grad"), [
    ((2, 3), lambda c: c[0], lambda c: c[0], _row_sums_in_first_row),      # broadcast: another shape
    ((3, 2), lambda c: c.T, lambda c: c.T, lambda a: a.T),                  # dense in another layout
    ((2, 4), lambda c: c[:, :3], lambda c: c[:, :3], _in_first_three_columns),  # not dense over its buffer
], ids=["broadcast", "other layout", "not dense"])
def test_operands_the_flat_recorder_refuses_take_the_general_path(shape, select, numpy_select, c_grad):
    a0 = np.arange(6, dtype=np.float32).reshape(2, 3) - 2.0
    c0 = np.arange(6 if shape != (2, 4) else 8, dtype=np.float32).reshape(shape) / 4.0
    a, c = sw.tensor(a0), sw.tensor(c0)
    y = a * select(c)
    assert y._raw is None, "the general path makes its result's carrier"
    y.sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), np.broadcast_to(numpy_select(c0.astype(np.float64)), (2, 3)))
    np.testing.assert_allclose(c.grad.numpy(), c_grad(a0.astype(np.float64)))


@pytest.mark.parametrize("carrier", CARRIERS)
@pytest.mark.parametrize("row_major", [False, True], ids=["canonical", "row-major"])
def test_a_product_of_dense_matrices_and_its_full_sum_take_flat_recorders(carrier, row_major):
    a0 = np.array([[1.0, -2.0, 0.5], [3.0, 0.25, -1.0]], np.float32)
    b0 = np.array([[0.5, 4.0], [-1.5, 2.0], [1.0, -0.5]], np.float32)
    if row_major:
        a, b = sw.tensor(a0, carrier=carrier), sw.tensor(b0, carrier=carrier)
    else:
        a, b = (sw.Tensor.from_storage(np.asfortranarray(v).ravel(order="K"), sw.Layout.canonical(v.shape),
                                       carrier=carrier) for v in (a0, b0))
    y = a @ b
    loss = (y * y).sum()
    product, total = y.autograd_ctx, loss.autograd_ctx
    if carrier not in ("jax", "dask"):  # carriers keeping N-D buffers take the general forward
        assert y._raw is not None and product.flat and product.inputs() == (a, b)
        assert loss._raw is not None and total.flat and loss.shape == ()
    loss.backward()
    a64, b64 = a0.astype(np.float64), b0.astype(np.float64)
    g = 2 * (a64 @ b64)
    np.testing.assert_allclose(np.asarray(a.grad.to_array()), g @ b64.T, rtol=1e-5)
    np.testing.assert_allclose(np.asarray(b.grad.to_array()), a64.T @ g, rtol=1e-5)
    assert float(loss) == pytest.approx(float(((a64 @ b64) ** 2).sum()), rel=1e-5)


def test_a_full_mean_of_a_dense_tensor_takes_the_flat_recorder_and_differentiates():
    x = sw.tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
    m = sw.array_api.mean(x)
    assert m._raw is not None and m.autograd_ctx.flat and m.shape == ()
    m.backward()
    np.testing.assert_allclose(x.grad.numpy(), np.full((2, 3), 1 / 6))


@pytest.mark.parametrize("make", [
    lambda X, w: (X * w).sum(),                # a full reduction of a 2-D result
    lambda X, w: X @ sw.transpose(X),          # a product of two dense matrices
], ids=["full sum", "matmul"])
def test_flat_recorders_read_no_flat_view_of_an_nd_jax_buffer(make, monkeypatch):
    # A JAX carrier keeps its buffer N-D; its flat view is a reshape of the whole buffer, which the flat
    # recorders must not ask for before they know the carrier keeps N-D buffers.
    jnp = pytest.importorskip("jax.numpy")
    rng = np.random.default_rng(0)
    X0, w0 = rng.standard_normal((64, 64)).astype(np.float32), rng.standard_normal((1, 64)).astype(np.float32)
    X, w = sw.tensor(jnp.asarray(X0)), sw.tensor(jnp.asarray(w0))
    expected = make(sw.tensor(X0.astype(np.float64)), sw.tensor(w0.astype(np.float64))).numpy()
    reshapes = []
    reshape = jnp.reshape
    monkeypatch.setattr(jnp, "reshape", lambda a, *args, **kw: reshapes.append(tuple(a.shape))
                        or reshape(a, *args, **kw))
    out = make(X, w)
    assert [shape for shape in reshapes if shape == (64, 64)] == []
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-4, atol=1e-3)
