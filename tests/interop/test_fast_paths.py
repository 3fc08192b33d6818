"""The bridges' per-call fast paths give what the general ones give: wrapping, cotangents, the VJP, packed callbacks."""

import numpy as np
import pytest

import strideweave as sw
import strideweave.array_api as xp
from strideweave.interop import _common, jax_bridge
from strideweave.interop._common import cotangent_from_native, wrap_native
from strideweave.tensors import creation

CARRIERS = sw.testing.available_carriers()
STRIDED = [c for c in ("numpy", "torch") if c in CARRIERS]  # the libraries whose arrays carry strides

# How the array reaches the wrap: every form a caller's array can take, as NumPy views of one base.
FORMS = {
    "row-major": lambda a: a,
    "transposed": lambda a: a.T,
    "every other row": lambda a: a[::2],
    "column slice": lambda a: a[:, 1:3],
    "one column": lambda a: a[:, 2],
    "one row": lambda a: a[1],  # contiguous 1-D, away from the start of the storage
    "size-one axis": lambda a: a[1:2],
    "0-d": lambda a: a[1, 1],
    "empty": lambda a: a[:0],
    "reversed": lambda a: a[::-1],  # negative strides: NumPy only
}


def _native(carrier, values):
    """``values`` (a NumPy view) as a native array of ``carrier``, strides kept where the library has them."""
    if carrier == "numpy":
        return values
    if carrier == "torch":
        import torch
        return torch.from_numpy(values)
    return sw.tensor(np.ascontiguousarray(values), carrier=carrier).to_array()


def _forms(carrier):
    names = FORMS if carrier == "numpy" else [n for n in FORMS if n != "reversed"]
    return [(carrier, name) for name in names]


@pytest.mark.parametrize(("carrier", "form"), [f for c in CARRIERS for f in _forms(c)])
def test_wrap_native_builds_the_tensor_sw_tensor_builds(carrier, form):
    base = np.arange(24, dtype=np.float32).reshape(4, 6)
    values = FORMS[form](base)
    if values.ndim == 0:
        values = np.asarray(values)  # a NumPy scalar is data, not an array; the 0-d array is
    for _ in range(2):  # the second call is served by the cache
        native = _native(carrier, values)
        # a 0-d argument is a 0-d Tensor on its own carrier (sw.tensor lays it out with shape (1,))
        got, want = wrap_native(native), (sw.tensor(native) if native.ndim else xp.reshape(sw.tensor(native), ()))
        assert got.layout == want.layout and got.dtype == want.dtype
        assert got.carrier.kind == want.carrier.kind
        np.testing.assert_array_equal(got.numpy(), np.asarray(values))
        assert got.autograd_ctx is None


@pytest.mark.parametrize("carrier", STRIDED)
def test_wrap_native_shares_storage_and_sees_writes_through_the_array(carrier):
    base = np.ones((3, 4), np.float32)
    native = _native(carrier, base[:, ::2])  # strided: the storage is a view, not a copy
    x = wrap_native(native)
    y = sw.sum(x * x)
    native[0, 0] = 5.0  # through the caller's array, after x was saved for backward
    assert base[0, 0] == 5.0 and x.numpy()[0, 0] == 5.0
    with pytest.raises(RuntimeError, match="in-place modification"):
        sw.grad(y, [x], sw.ones((1,), carrier=carrier))


def _shares(t, native):
    """Whether Tensor ``t``'s storage is ``native``'s memory."""
    buffer = t.carrier.array
    if isinstance(native, np.ndarray):
        return np.shares_memory(buffer, native)
    return buffer.untyped_storage().data_ptr() == native.untyped_storage().data_ptr()


def _column_major_output(carrier):
    a = sw.tensor(np.ones((3, 2), np.float32), carrier=carrier)
    b = sw.tensor(np.ones((2, 4), np.float32), carrier=carrier)
    return a @ b


@pytest.mark.parametrize("carrier", CARRIERS)
@pytest.mark.parametrize("order", ["C", "F"])
def test_cotangents_take_the_output_layout_from_any_strides(carrier, order):
    target = _column_major_output(carrier)
    values = np.asarray(np.arange(12, dtype=np.float32).reshape(3, 4), order=order)
    native = _native(carrier, values)
    got = cotangent_from_native(target, native, "out")
    assert got.layout == target.layout and got.dtype == sw.DType.Float32
    assert type(got.carrier) is type(target.carrier)
    np.testing.assert_array_equal(got.numpy(), values)
    # One copy at most, and none when the strides already give the layout.
    if carrier in STRIDED:
        strides = tuple(s // values.itemsize for s in values.strides)
        assert _shares(got, native) == (strides == target.layout.stride.modes)


@pytest.mark.parametrize("carrier", CARRIERS)
def test_cotangents_follow_each_target_layout_when_targets_alternate(carrier):
    # The layout facts behind a cotangent are kept per layout: targets of one shape but other
    # layouts, met in turn, must each get their own (a plan kept per shape would mix them up).
    targets = {"column-major": _column_major_output(carrier),
               "row-major": sw.zeros((3, 4), carrier=carrier, layout=sw.Layout((3, 4), (4, 1))),
               "broadcast": sw.broadcast_to(sw.tensor(np.ones(4, np.float32), carrier=carrier), (3, 4))}
    assert len({str(t.layout) for t in targets.values()}) == 3
    values = np.arange(12, dtype=np.float32).reshape(3, 4)
    for _ in range(2):
        for name, target in targets.items():
            got = cotangent_from_native(target, _native(carrier, values), "out")
            want = target.layout if name != "broadcast" else sw.Layout.canonical((3, 4))
            assert got.layout == want, name
            np.testing.assert_array_equal(got.numpy(), values)


@pytest.mark.parametrize("carrier", STRIDED)
def test_broadcast_targets_get_canonical_cotangents_and_bad_values_are_named(carrier):
    row = sw.tensor(np.arange(4, dtype=np.float32), carrier=carrier)
    target = sw.broadcast_to(row, (3, 4))
    values = np.arange(12, dtype=np.float32).reshape(3, 4)
    got = cotangent_from_native(target, _native(carrier, values), "out")
    assert got.layout == sw.Layout.canonical((3, 4))
    np.testing.assert_array_equal(got.numpy(), values)
    with pytest.raises(TypeError, match=r"out: cotangent has dtype .*Float64.*expected Float32"):
        cotangent_from_native(target, _native(carrier, values.astype(np.float64)), "out")
    with pytest.raises(ValueError, match=r"out: cotangent has shape \(4, 3\), expected \(3, 4\)"):
        cotangent_from_native(target, _native(carrier, values.T.copy()), "out")


def test_torch_cotangents_from_non_contiguous_values_are_fresh_copies():
    # A row-major output's cotangent from a non-contiguous torch tensor (a sum's expanded ones, a
    # transpose, a size-one axis with an odd stride), and a column-major output's (a product's) from
    # expanded values (every stride 0, one value; a row repeated down the columns), is one fresh copy:
    # same values, the output's layout, and storage the traversal may write into without touching the
    # caller's tensor.
    torch = pytest.importorskip("torch")
    target = sw.zeros((3, 4), carrier="torch", layout=sw.Layout((3, 4), (4, 1)))
    row = sw.zeros((1, 4), carrier="torch", layout=sw.Layout((1, 4), (4, 1)))
    columns = _column_major_output("torch")
    assert columns.layout.stride.modes == (1, 3)
    base = torch.arange(12, dtype=torch.float32)
    cases = {"expanded": (target, torch.ones(()).expand(3, 4)),
             "transposed": (target, base.reshape(4, 3).T),
             "size-one axis": (row, base.as_strided((1, 4), (7, 1))),
             "column-major, every stride 0": (columns, torch.tensor(2.5).expand(3, 4)),
             "column-major, a row repeated": (columns, torch.arange(4, dtype=torch.float32).expand(3, 4))}
    for name, (out, native) in cases.items():
        before = native.clone()
        got = cotangent_from_native(out, native, "out")
        assert got.layout == out.layout and got.dtype == sw.DType.Float32, name
        np.testing.assert_array_equal(got.numpy(), native.numpy(), err_msg=name)
        assert not _shares(got, native), name
        got.carrier.array.fill_(-1.0)
        assert torch.equal(native, before), name


def test_a_torch_step_through_a_column_major_output_gets_torchs_gradient():
    # The output of ``h @ w`` is column-major; the sum's cotangent reaches it expanded (every stride 0).
    torch = pytest.importorskip("torch")
    layer = sw.interop.torch_function(lambda h, w: sw.tanh(h @ w))
    h = torch.linspace(-1.0, 1.0, 6).reshape(3, 2)
    w = torch.linspace(-0.5, 0.7, 8).reshape(2, 4).requires_grad_()
    w64 = w.detach().double().requires_grad_()
    (2.5 * layer(h, w).sum()).backward()
    (2.5 * torch.tanh(h.double() @ w64).sum()).backward()
    np.testing.assert_allclose(w.grad.numpy(), w64.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_a_gradient_of_an_earlier_traversal_still_refuses_an_unreached_input():
    torch = pytest.importorskip("torch")
    a = sw.tensor(torch.ones(3))
    (g,) = sw.grad(sw.sum(a * a), [a], sw.ones((1,), carrier="torch"))
    f = sw.interop.torch_function(lambda x, y: x * g)  # y is not used; g is a detached gradient
    x, y = torch.ones(3, requires_grad=True), torch.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="earlier traversal"):
        f(x, y).sum().backward()
    h = sw.interop.torch_function(lambda x, y: x * g + y)  # every input reached: first-order gradients
    h(x, y).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2.0 * np.ones(3))
    np.testing.assert_allclose(y.grad.numpy(), np.ones(3))


def _callback_operands(f, *args):
    """The number of operands of each ``pure_callback`` in ``f``'s jaxpr, forward and backward."""
    import jax
    from jax.extend.core import jaxprs_in_params
    counts = []

    def walk(jaxpr):
        for eqn in jaxpr.eqns:
            if eqn.primitive.name == "pure_callback":
                counts.append(len(eqn.invars))
            for sub in jaxprs_in_params(eqn.params):
                walk(sub)
    walk(jax.make_jaxpr(f)(*args).jaxpr)
    return counts


@pytest.mark.parametrize("pack_bytes", [0, 1 << 20])
def test_jit_callbacks_pack_small_arrays_of_one_dtype(monkeypatch, pack_bytes):
    jax = pytest.importorskip("jax")
    jnp = jax.numpy
    monkeypatch.setattr(jax_bridge, "_PACK_BYTES", pack_bytes)

    @sw.interop.jax_function
    def layer(h, index, w, b):
        b.numpy()  # a value read: the call runs on the host, through callbacks
        return sw.tanh(h @ w + b) * sw.array_api.astype(index, sw.array_api.float32)

    rng = np.random.default_rng(3)
    h, w = (jnp.asarray(rng.standard_normal(s).astype(np.float32)) for s in ((5, 3), (3, 4)))
    b, index = jnp.asarray(rng.standard_normal(4).astype(np.float32)), jnp.arange(4, dtype=jnp.int32)

    def loss(h, index, w, b, f):
        return jnp.sum(f(h, index, w, b) ** 2)

    def reference(h, index, w, b):
        return jnp.tanh(h @ w + b) * index.astype(jnp.float32)

    step = jax.value_and_grad(lambda *a: loss(*a, layer), argnums=(0, 2, 3))
    value, grads = jax.jit(step)(h, index, w, b)
    want_value, want_grads = jax.value_and_grad(lambda *a: loss(*a, reference), argnums=(0, 2, 3))(h, index, w, b)
    np.testing.assert_allclose(value, want_value, rtol=1e-5)
    for g, want in zip(grads, want_grads):
        np.testing.assert_allclose(g, want, rtol=1e-3, atol=1e-4)
    # Forward: h, w, b in one float32 operand beside the int32 one; backward: the cotangent joins them.
    assert _callback_operands(step, h, index, w, b) == ([2, 2] if pack_bytes else [4, 5])
    per_example = jax.vmap(jax.grad(lambda *a: loss(*a, layer), argnums=2), (0, None, None, None))
    want_per_example = jax.vmap(jax.grad(lambda *a: loss(*a, reference), argnums=2), (0, None, None, None))
    np.testing.assert_allclose(jax.jit(per_example)(h[:, None, :], index, w, b),
                               want_per_example(h[:, None, :], index, w, b), rtol=1e-3, atol=1e-4)


@pytest.mark.parametrize("library", ["numpy", "torch"])
def test_the_wrap_cache_stays_bounded(monkeypatch, library):
    make = np.zeros if library == "numpy" else pytest.importorskip("torch").zeros
    monkeypatch.setattr(creation, "_WRAPS", {})
    monkeypatch.setattr(creation, "_WRAPS_LIMIT", 8)
    for n in range(1, 30):
        assert wrap_native(make(n)).shape == (n,)
        assert 0 < len(creation._WRAPS) <= 8


# -- torch_function hands a tensor passed again the Tensor of its previous call, while nothing it depends on changed


def _recording(body):
    """``torch_function(body)`` and the list of the Tensor arguments each call of ``body`` received."""
    seen = []

    def fn(*tensors):
        seen.append(tensors)
        return body(*tensors)
    return sw.interop.torch_function(fn), seen


def test_a_tensor_passed_again_reaches_fn_as_the_same_leaf():
    torch = pytest.importorskip("torch")
    f, seen = _recording(lambda x: sw.sum(x * x))
    x = torch.arange(6.0).reshape(2, 3).requires_grad_()
    for _ in range(3):
        x.grad = None
        f(x).backward()
        np.testing.assert_allclose(x.grad.numpy(), 2 * x.detach().numpy())
    assert seen[-1][0] is seen[-2][0]
    assert seen[-1][0].autograd_ctx is None and seen[-1][0].carrier.kind.cls.backend == "torch"


def test_a_tensor_changed_between_calls_reaches_fn_as_it_is_now():
    torch = pytest.importorskip("torch")
    f, seen = _recording(lambda x: x * 1.0)
    x = torch.arange(9.0).reshape(3, 3)
    for _ in range(3):
        np.testing.assert_array_equal(f(x).numpy(), x.numpy())
    changes = {
        "transposed in place (same memory and shape, other strides)": lambda: x.t_(),
        "written in place": lambda: x.mul_(2.0),
        "given other memory of the same shape and strides":
            lambda: setattr(x, "data", torch.empty_strided(x.shape, x.stride()).fill_(7.0)),
        "retyped (same memory)": lambda: setattr(x, "data", x.data.view(torch.int32)),
    }
    for change, apply in changes.items():
        apply()
        held = seen[-1][0]
        np.testing.assert_array_equal(f(x).numpy(), x.numpy(), err_msg=change)
        assert (seen[-1][0] is held) == (change == "written in place"), change


def test_gradients_after_a_write_between_calls_are_those_of_the_new_values():
    torch = pytest.importorskip("torch")
    f = sw.interop.torch_function(lambda x: sw.sum(x * x * x))
    x = torch.ones(4, requires_grad=True)
    for scale in (1.0, 2.0, 3.0, 3.0):
        with torch.no_grad():
            x.fill_(scale)
        x.grad = None
        f(x).backward()
        np.testing.assert_allclose(x.grad.numpy(), np.full(4, 3 * scale ** 2))
    out = f(x)
    with torch.no_grad():
        x.add_(1.0)  # between this call's forward and its backward: torch's own version check refuses
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.backward()


def test_one_tensor_in_two_positions_is_two_leaves_with_their_own_gradients():
    torch = pytest.importorskip("torch")
    f, seen = _recording(lambda a, b: sw.sum(a * b * b))
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    for _ in range(3):
        x.grad = None
        f(x, x).backward()
        np.testing.assert_allclose(x.grad.numpy(), 3 * x.detach().numpy() ** 2)
        assert seen[-1][0] is not seen[-1][1]


def test_a_leaf_fn_changed_is_not_handed_out_again():
    torch = pytest.importorskip("torch")

    def body(x):
        x.grad = sw.ones((3,), carrier="torch")  # a leaf with a .grad is no longer a plain wrap
        return sw.sum(x * x)
    f, seen = _recording(body)
    x = torch.ones(3, requires_grad=True)
    for _ in range(3):
        f(x)
    assert seen[-1][0] is not seen[-2][0]


def test_held_wraps_die_with_their_tensors_and_stay_bounded(monkeypatch):
    torch = pytest.importorskip("torch")
    monkeypatch.setattr(_common, "_HELD", {})
    f = sw.interop.torch_function(lambda x: x * 2.0)
    x = torch.ones(3)
    for _ in range(3):
        f(x)
    assert len(_common._HELD) == 1
    del x
    assert len(_common._HELD) == 0  # the entry, and the view of the storage it kept, went with the tensor
    monkeypatch.setattr(_common, "_HELD_LIMIT", 4)
    kept = [torch.ones(3) for _ in range(10)]
    for t in kept:
        f(t)
        f(t)
        assert len(_common._HELD) <= 4


def test_native_views_of_torch_tensors_are_to_array_over_the_same_storage():
    # Every route of the torch bridge's ``native_view`` (the buffer itself, one ``view``, ``as_strided``)
    # gives to_array's values and strides over StrideWeave's storage; only a whole 1-D gradient is the buffer.
    torch = pytest.importorskip("torch")
    from strideweave.interop.torch_bridge import native_view

    base = sw.tensor(np.arange(60, dtype=np.float32), carrier="torch")
    step2 = sw.tensor(torch.arange(120, dtype=torch.float32)[::2]).carrier  # a buffer with step 2
    cases = {"row-major": sw.Tensor(base.carrier, sw.Layout((4, 6), (6, 1))),
             "1-D whole": base,
             "1-D at an offset": base[6:18],
             "row-major at an offset": sw.Tensor(base.carrier, sw.Layout((4, 6), (6, 1)), 6),
             "row-major, part of the buffer": sw.Tensor(base.carrier, sw.Layout((2, 6), (6, 1))),
             "transposed": sw.Tensor(base.carrier, sw.Layout((6, 10), (1, 6))),
             "size-one axis, odd stride": sw.Tensor(base.carrier, sw.Layout((1, 60), (7, 1))),
             "step-2 buffer": sw.Tensor(step2, sw.Layout((6, 10), (10, 1)))}
    for name, t in cases.items():
        for whole in (False, True):
            got, want = native_view(t, whole=whole), t.to_array()
            assert torch.equal(got, want) and got.shape == want.shape, name
            assert got.untyped_storage().data_ptr() == t.carrier.array.untyped_storage().data_ptr(), name
            if got.numel() > 1:
                assert got.stride() == want.stride(), name
            assert (got is t.carrier.array) == (whole and name == "1-D whole"), name
