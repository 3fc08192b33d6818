"""sw.interop.from_torch / from_jax: native differentiable functions as StrideWeave operations."""

import numpy as np
import pytest
from _programs import inputs, sw_program, xp_program

import strideweave as sw

CARRIERS = sw.testing.available_carriers()
LIBRARIES = [name for name in ("torch", "jax") if name in CARRIERS]


def bridge(library):
    return sw.interop.from_torch if library == "torch" else sw.interop.from_jax


def _x64(library):
    """float64 in JAX for the float64 central differences of sw.testing.gradcheck."""
    if library == "jax":
        import jax
        return jax.enable_x64(True)
    import contextlib
    return contextlib.nullcontext()


@pytest.mark.parametrize("library", LIBRARIES)
@pytest.mark.parametrize(("seed", "carrier"), list(enumerate(CARRIERS)))  # a different program on each carrier
def test_random_native_programs_match_strideweave_gradients(seed, carrier, library):
    outputs = 2 if seed % 2 else 1
    native = bridge(library)(xp_program(seed, outputs))
    program = sw_program(seed, outputs)
    leaves = [sw.tensor(a, carrier=carrier) for a in inputs(seed)]
    got, want = native(*leaves), program(*leaves)
    got, want = (got, want) if outputs == 2 else ((got,), (want,))
    rng = np.random.default_rng(seed)
    weights = [sw.tensor(rng.standard_normal(w.to_array().shape).astype(np.float32), carrier=carrier) for w in want]
    for g, w in zip(got, want):
        assert type(g.carrier) is type(w.carrier) and g.autograd_ctx is not None
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-5, atol=1e-6)
    loss_got = sum(sw.sum(g * c) for g, c in zip(got, weights))
    loss_want = sum(sw.sum(w * c) for w, c in zip(want, weights))
    cot = sw.ones((1,), carrier=carrier)
    reached = 0
    for g, w, leaf in zip(sw.grad(loss_got, leaves, cot), sw.grad(loss_want, leaves, cot), leaves):
        if w is None:  # unreached: torch says so too; jax.vjp answers zeros
            assert g is None or (not np.any(g.numpy()) and library == "jax")
            continue
        reached += 1
        assert type(g.carrier) is type(leaf.carrier) and g.layout == leaf.layout
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-4, atol=1e-5)
    assert reached >= 2


@pytest.mark.parametrize("library", LIBRARIES)
@pytest.mark.parametrize("carrier", CARRIERS)
def test_gradcheck_on_every_carrier(carrier, library):
    if library == "torch":
        import torch
        f = sw.interop.from_torch(lambda a, b: torch.tanh(a @ b) * torch.sin(a[:, :2]))
    else:
        import jax.numpy as jnp
        f = sw.interop.from_jax(lambda a, b: jnp.tanh(a @ b) * jnp.sin(a[:, :2]))
    rng = np.random.default_rng(7)
    a = sw.tensor(rng.standard_normal((3, 4)).astype(np.float32), carrier=carrier)
    b = sw.tensor(rng.standard_normal((4, 2)).astype(np.float32), carrier=carrier)
    with _x64(library):
        sw.testing.gradcheck(lambda a, b: sw.sum(f(a, sw.transpose(b)) ** 2), [a, sw.transpose(b)],
                             carriers=[carrier], atol=1e-3, rtol=1e-3)


@pytest.mark.parametrize("library", LIBRARIES)
def test_batched_grad_equals_one_grad_per_cotangent(library):
    xp = __import__(library).numpy if library == "jax" else __import__(library)
    f = bridge(library)(lambda a: xp.sin(a) * a)
    x = sw.tensor(np.linspace(-1.0, 1.0, 6, dtype=np.float32).reshape(2, 3))
    y = f(x)
    cts = sw.Tensor.from_storage(np.eye(6, dtype=np.float32).reshape(-1),
                                 sw.Layout(sw.Shape([6, 2, 3]), sw.Stride([6, *y.layout.stride.modes])))
    (stacked,) = sw.grad(y, [x], cts, batched=True, retain_graph=True)
    for k in range(6):
        single = sw.Tensor.from_storage(np.eye(6, dtype=np.float32)[k], y.layout)
        (g,) = sw.grad(y, [x], single, retain_graph=True)
        np.testing.assert_allclose(stacked.numpy()[k], g.numpy(), rtol=1e-6)


@pytest.mark.parametrize("library", LIBRARIES)
def test_retained_graph_release_no_grad_and_pass_through_arguments(library):
    native = __import__(library)
    array_type = native.Array if library == "jax" else native.Tensor
    calls = []

    def fn(a, k, power):
        calls.append((isinstance(a, array_type), isinstance(k, array_type), power))
        return a ** power * k

    f = bridge(library)(fn)
    x = sw.tensor([1.0, 2.0, 3.0])
    k = sw.tensor([1, 0, 2])
    y = f(x, k, 2)
    np.testing.assert_allclose(y.numpy(), [1.0, 0.0, 18.0])
    assert [t is x or t is k for t in y.autograd_ctx.inputs()] == [True, True]
    loss = sw.sum(y)
    loss.backward(retain_graph=True)
    loss.backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.array([2.0, 0.0, 12.0]))
    with pytest.raises(RuntimeError, match="retain_graph=True"):
        loss.backward()
    with sw.no_grad():
        assert f(x, k, 2).autograd_ctx is None
    # the native function saw the library's arrays for the Tensors, and the int exactly as passed
    assert calls and all(call == (True, True, 2) for call in calls)


@pytest.mark.parametrize("library", LIBRARIES)
def test_mixed_carriers_need_options_and_gradients_return_home(library):
    xp = __import__(library).numpy if library == "jax" else __import__(library)
    f = bridge(library)(lambda a, b: xp.exp(a) * b)
    a = sw.tensor([0.0, 1.0], carrier="numpy")
    b = sw.tensor([2.0, 3.0], carrier=library)
    with pytest.raises(TypeError, match=r"different carriers.*ExecutionOptions"):
        f(a, b)
    y = f(a, b, options=sw.ExecutionOptions(carrier="numpy"))
    assert type(y.carrier) is sw.NumpyCarrier
    sw.sum(y).backward()
    assert type(a.grad.carrier) is sw.NumpyCarrier and type(b.grad.carrier) is type(b.carrier)
    np.testing.assert_allclose(a.grad.numpy(), np.exp([0.0, 1.0]) * [2.0, 3.0], rtol=1e-6)
    np.testing.assert_allclose(b.grad.numpy(), np.exp([0.0, 1.0]), rtol=1e-6)
