"""A StrideWeave layer inside real training loops: torch nn.Module with SGD, JAX jit-compiled SGD.

The model with a StrideWeave middle layer must train to the same losses, step
by step, as the same model written purely in the native library.
"""

import numpy as np
import pytest

import strideweave as sw

STEPS = 50


def sw_layer(h, w, b):
    """The middle layer, written once with StrideWeave."""
    return sw.tanh(h @ w + b)


def _data(seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((16, 4)).astype(np.float32)
    y = np.sin(x.sum(axis=1, keepdims=True)).astype(np.float32)
    return x, y


def test_torch_module_with_a_strideweave_layer_trains_like_pure_torch():
    torch = pytest.importorskip("torch")
    bridged = sw.interop.torch_function(sw_layer)

    class Net(torch.nn.Module):
        def __init__(self, middle):
            super().__init__()
            self.middle = middle
            self.inp = torch.nn.Linear(4, 8)
            self.w = torch.nn.Parameter(0.3 * torch.randn(8, 8))
            self.b = torch.nn.Parameter(0.1 * torch.randn(8))
            self.out = torch.nn.Linear(8, 1)

        def forward(self, x):
            return self.out(self.middle(torch.tanh(self.inp(x)), self.w, self.b))

    torch.manual_seed(0)
    native = Net(lambda h, w, b: torch.tanh(h @ w + b))
    mixed = Net(bridged)
    mixed.load_state_dict(native.state_dict())
    x, y = (torch.from_numpy(a) for a in _data())

    def train(model):
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        losses = []
        for _ in range(STEPS):
            opt.zero_grad()
            loss = torch.mean((model(x) - y) ** 2)
            loss.backward()
            opt.step()
            losses.append(loss.item())
        return np.array(losses)

    expected, got = train(native), train(mixed)
    assert expected[-1] < 0.5 * expected[0]  # it does learn
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-6)
    for p, q in zip(native.parameters(), mixed.parameters()):
        np.testing.assert_allclose(q.detach().numpy(), p.detach().numpy(), rtol=1e-4, atol=1e-5)


def test_jax_jit_sgd_with_a_strideweave_layer_trains_like_pure_jax():
    jax = pytest.importorskip("jax")
    jnp = jax.numpy
    bridged = sw.interop.jax_function(sw_layer)

    def make_loss(middle):
        def loss(params, x, y):
            h = jnp.tanh(x @ params["inp"])
            h = middle(h, params["w"], params["b"])
            return jnp.mean((h @ params["out"] - y) ** 2)
        return loss

    def make_step(loss):
        @jax.jit
        def step(params, x, y):
            value, grads = jax.value_and_grad(loss)(params, x, y)
            return value, jax.tree_util.tree_map(lambda p, g: p - 0.1 * g, params, grads)
        return step

    rng = np.random.default_rng(1)
    init = {"inp": rng.standard_normal((4, 8)).astype(np.float32) * 0.5,
            "w": rng.standard_normal((8, 8)).astype(np.float32) * 0.3,
            "b": rng.standard_normal(8).astype(np.float32) * 0.1,
            "out": rng.standard_normal((8, 1)).astype(np.float32) * 0.5}
    x, y = (jnp.asarray(a) for a in _data())

    def train(middle):
        step = make_step(make_loss(middle))
        params = {k: jnp.asarray(v) for k, v in init.items()}
        losses = []
        for _ in range(STEPS):
            value, params = step(params, x, y)
            losses.append(float(value))
        return np.array(losses), params

    expected, native_params = train(lambda h, w, b: jnp.tanh(h @ w + b))
    got, mixed_params = train(bridged)
    assert expected[-1] < 0.5 * expected[0]
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-6)
    for k in init:
        np.testing.assert_allclose(mixed_params[k], native_params[k], rtol=1e-4, atol=1e-5)
