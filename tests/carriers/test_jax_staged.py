"""StrideWeave staged by JAX: traced arrays (jax.jit, jax.vmap, jax.grad, lax.scan) are Tensors on the JAX carrier.

Every program runs its forward pass and StrideWeave's backward at trace
time; the gradients are compared with ``jax.grad`` of the same program
written in ``jax.numpy``.
"""

import numpy as np
import pytest

import strideweave as sw
import strideweave.array_api as xp
from strideweave.carriers import JaxCarrier

jax = pytest.importorskip("jax")
jnp = jax.numpy

RTOL, ATOL = 1e-4, 1e-5


def _inputs(seed=0):
    rng = np.random.default_rng(seed)
    x = jnp.asarray((0.7 * rng.standard_normal((4, 3))).astype(np.float32))
    w = jnp.asarray((0.7 * rng.standard_normal((3, 3))).astype(np.float32))
    return x, w


def _sw_loss(x, w):
    """Views, a write into a computed array, an inner full reduction, take and cumulative_prod."""
    h = sw.tanh(x @ w) * 1.0
    h[1:3, 0] = 0.5                          # a recorded write
    h += x                                   # in place, recorded
    s = sw.sum(x * x)                        # a full reduction whose gradient is not 1
    picked = sw.take(h, sw.tensor(jnp.asarray([2, 0, 3, 3], jnp.int32)), axis=0)
    prod = sw.cumulative_prod(picked[:, ::2], axis=1)
    return (prod * s).sum() + (h[:, 1] ** 2).sum()


def _jnp_loss(x, w):
    h = jnp.tanh(x @ w)
    h = h.at[1:3, 0].set(0.5)
    h = h + x
    s = jnp.sum(x * x)
    picked = jnp.take(h, jnp.asarray([2, 0, 3, 3]), axis=0)
    prod = jnp.cumprod(picked[:, ::2], axis=1)
    return jnp.sum(prod * s) + jnp.sum(h[:, 1] ** 2)


def _backward_through_strideweave(x, w):
    X, W = sw.tensor(x), sw.tensor(w)
    assert isinstance(X.carrier, JaxCarrier)
    loss = _sw_loss(X, W)
    loss.backward()
    return loss.to_array(), X.grad.to_array(), W.grad.to_array()


def _want(x, w):
    value, (gx, gw) = jax.value_and_grad(_jnp_loss, (0, 1))(x, w)
    return value, gx, gw


def _close(got, want):
    for g, h in zip(got, want):
        np.testing.assert_allclose(np.asarray(g).reshape(np.shape(h)), h, rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("transform", ["jit", "grad", "vmap"])
def test_a_traced_array_becomes_a_tensor_on_the_jax_carrier(transform):
    def f(x):
        return jnp.sum(jnp.asarray(sw.exp(sw.tensor(x)).to_array()))

    def ref(x):
        return jnp.sum(jnp.exp(x))

    x = jnp.asarray(np.linspace(-1.0, 1.0, 6, dtype=np.float32).reshape(2, 3))
    run = {"jit": jax.jit, "grad": jax.grad, "vmap": jax.vmap}[transform]
    np.testing.assert_allclose(run(f)(x), run(ref)(x), rtol=RTOL, atol=ATOL)


def test_a_traced_tensor_says_so_in_its_repr():
    seen = []

    def f(x):
        seen.append(repr(sw.tensor(x) * 2.0))
        return x

    jax.jit(f)(jnp.ones(3))
    assert seen[0].startswith("Tensor(<traced by JAX>, dtype=DType.Float32") and "carrier=JaxCarrier" in seen[0]
    assert repr(sw.tensor(jnp.ones(2))).startswith("Tensor([1., 1.]")


def test_backward_under_jit_matches_jax_grad():
    x, w = _inputs()
    _close(jax.jit(_backward_through_strideweave)(x, w), _want(x, w))
    _close(_backward_through_strideweave(x, w), _want(x, w))  # and eagerly, unchanged


def test_a_jitted_step_is_one_program_without_callbacks():
    x, w = _inputs()
    text = str(jax.make_jaxpr(jax.jit(_backward_through_strideweave))(x, w))
    assert "callback" not in text


def test_sw_grad_batched_and_per_example_under_vmap():
    x, w = _inputs(1)

    def per_example(row, w):
        R, W = sw.tensor(row), sw.tensor(w)
        y = sw.sin(R @ W).sum()
        (g,) = sw.grad(y, [W], xp.ones_like(y))
        return g.to_array()

    got = jax.jit(jax.vmap(per_example, (0, None)))(x, w)
    want = jax.vmap(jax.grad(lambda r, w: jnp.sum(jnp.sin(r @ w)), 1), (0, None))(x, w)
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)

    def rows_of_jacobian(w):
        W = sw.tensor(w)
        y = sw.sum(W * W, modes=(1,))                       # (3,)
        seeds = sw.tensor(jnp.eye(3, dtype=jnp.float32))   # one cotangent per row
        (jac,) = sw.grad(y, [W], seeds, batched=True)
        return jac.to_array()

    got = jax.jit(rows_of_jacobian)(w)
    want = jax.jacrev(lambda w: jnp.sum(w * w, axis=1))(w)
    np.testing.assert_allclose(np.asarray(got).reshape(want.shape), want, rtol=RTOL, atol=ATOL)


def test_jax_grad_differentiates_the_staged_strideweave_program():
    x, w = _inputs(2)

    def forward(x, w):
        return jnp.asarray(_sw_loss(sw.tensor(x), sw.tensor(w)).to_array()).reshape(())

    got = jax.grad(forward, (0, 1))(x, w)
    _close(got, _want(x, w)[1:])
    _close(jax.jit(jax.grad(forward, (0, 1)))(x, w), _want(x, w)[1:])


def test_lax_scan_body_runs_strideweave_with_its_backward():
    x, w = _inputs(3)

    def step(w, row):
        R, W = sw.tensor(row), sw.tensor(w)
        loss = (sw.tanh(R @ W) ** 2).sum()
        loss.backward()
        return (W - 0.1 * W.grad).to_array(), loss.to_array().reshape(())

    def jnp_step(w, row):
        loss, g = jax.value_and_grad(lambda w: jnp.sum(jnp.tanh(row @ w) ** 2))(w)
        return w - 0.1 * g, loss

    got = jax.jit(lambda w, xs: jax.lax.scan(step, w, xs))(w, x)
    want = jax.lax.scan(jnp_step, w, x)
    _close(got, want)


def test_spec_errors_are_raised_at_trace_time():
    x, w = _inputs()

    def modified_after_use(x, w):
        W = sw.tensor(w)
        h = W * 1.0
        y = (h * h).sum()          # saves h for backward
        h[0, 0] = 2.0              # then h changes
        y.backward()

    def backward_twice(x, w):
        W = sw.tensor(w)
        y = (W * W).sum()
        y.backward()
        y.backward()

    def write_into_a_leaf(x, w):
        X, W = sw.tensor(x), sw.tensor(w)
        W[0] = X[0] * 2.0          # a Float32 value into a wrapped leaf: refused, as eagerly
        (W * W).sum().backward()

    with pytest.raises(sw.errors.InPlaceModificationError):
        jax.jit(modified_after_use)(x, w)
    with pytest.raises(sw.errors.GraphReleasedError):
        jax.jit(backward_twice)(x, w)
    with pytest.raises(sw.errors.LeafWriteError):
        jax.jit(write_into_a_leaf)(x, w)


@pytest.mark.parametrize("name", ["nonzero", "unique_values"])
def test_a_data_dependent_shape_raises_jax_concretization_error_naming_the_function(name):
    def f(x):
        return getattr(sw, name)(sw.tensor(x))

    with pytest.raises(jax.errors.ConcretizationTypeError, match=f"strideweave.{name}"):
        jax.jit(f)(jnp.asarray([0.0, 1.0, 1.0]))
    eager = f(jnp.asarray([0.0, 1.0, 1.0]))  # eagerly it still runs
    first = eager[0] if isinstance(eager, tuple) else eager
    assert first.numpy().tolist() == ([1, 2] if name == "nonzero" else [0.0, 1.0])


def _library_center(x, xp):
    """Library code as it is written for NumPy: in-place writes into a copy of its input."""
    y = xp.asarray(x, copy=True)
    y -= xp.mean(x, axis=0)
    y[:, 0] *= 2.0
    y[-1] = x[0]
    return xp.sum(y * y)


def _jnp_center(x):
    y = x - jnp.mean(x, axis=0)
    y = y.at[:, 0].multiply(2.0).at[-1].set(x[0])
    return jnp.sum(y * y)


def test_library_code_with_in_place_writes_differentiates_under_jit():
    x = jnp.asarray(np.random.default_rng(6).standard_normal((5, 3)).astype(np.float32))
    with pytest.raises(TypeError):
        _library_center(x, jnp)                        # jax.numpy cannot run it: its arrays are immutable
    want_value, want_grad = jax.value_and_grad(_jnp_center)(x)

    bridged = sw.interop.jax_function(lambda t: _library_center(t, xp))
    value, g = jax.jit(jax.value_and_grad(bridged))(x)
    assert float(value) == pytest.approx(float(want_value), rel=1e-5)
    np.testing.assert_allclose(g, want_grad, rtol=RTOL, atol=ATOL)
    assert "callback" not in str(jax.make_jaxpr(jax.jit(jax.value_and_grad(bridged)))(x))

    def direct(x):
        X = sw.tensor(x)
        loss = _library_center(X, xp)
        loss.backward()
        return X.grad.to_array()

    np.testing.assert_allclose(jax.jit(direct)(x), want_grad, rtol=RTOL, atol=ATOL)
    # The same function still runs on NumPy, where the writes are real.
    np.testing.assert_allclose(_library_center(np.asarray(x, np.float64), np), float(want_value), rtol=1e-5)


def test_writes_through_index_arrays_and_masks_are_staged():
    x = jnp.asarray(np.random.default_rng(7).standard_normal((4, 3)).astype(np.float32))
    rows, mask = np.array([0, 2]), np.array([True, False, False, True])

    def written(x):
        X = sw.tensor(x)
        y = xp.asarray(X, copy=True)
        y[rows] = X[1] * 3.0
        y[mask, 1] = 7.0
        loss = (y * y).sum()
        loss.backward()
        return y.to_array(), X.grad.to_array()

    def reference(x):
        return x.at[rows].set(x[1] * 3.0).at[mask, 1].set(7.0)

    want = reference(x), jax.grad(lambda x: jnp.sum(reference(x) ** 2))(x)
    _close(jax.jit(written)(x), want)
    _close(written(x), want)


def test_a_traced_index_tensor_raises_jax_concretization_error_naming_indexing():
    def pick(x, i):
        return sw.tensor(x)[sw.tensor(i)].to_array()

    x, i = jnp.ones((4, 3)), jnp.asarray([1, 0], jnp.int32)
    with pytest.raises(jax.errors.ConcretizationTypeError, match=r"strideweave\.Tensor\.__getitem__.*xp\.take"):
        jax.jit(pick)(x, i)
    np.testing.assert_allclose(pick(x, i), np.ones((2, 3)))


def _det_gradient(a):
    t = sw.tensor(a)
    xp.linalg.det(t).backward()
    return t.grad.to_array()


@pytest.mark.parametrize("singular", [False, True], ids=["invertible", "singular"])
def test_det_backward_is_staged_without_reading_values(singular):
    # The solve fast path asks whether any matrix is singular; traced, the general rule runs instead.
    a = np.array([[1.0, 2.0], [2.0, 4.0]] if singular else [[2.0, 1.0], [1.0, 3.0]], np.float32)
    cofactors = np.array([[a[1, 1], -a[1, 0]], [-a[0, 1], a[0, 0]]])  # det(A) A^-T where A is invertible
    np.testing.assert_allclose(np.asarray(jax.jit(_det_gradient)(jnp.asarray(a))), cofactors, rtol=RTOL, atol=ATOL)
