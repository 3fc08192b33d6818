"""What the consumer libraries (xarray, marray, opt_einsum) call beyond the standard, on every carrier.

``xp.einsum``, NumPy's NaN-skipping reductions through the NumPy protocol,
NumPy index arrays, ``pad`` / ``isin`` / ``quantile`` / ``gradient`` /
``lib.stride_tricks.sliding_window_view``, ``ddof=``, ``Tensor.round(decimals)``
and what opt_einsum reaches through the module name ``strideweave``: values
against NumPy, gradients against torch.autograd in float64.
"""

import warnings

import numpy as np
import pytest

import strideweave as sw
import strideweave.array_api as xp

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(5)


def grad_of(program, arrays, carrier):
    """StrideWeave's value and gradients of ``sum(program(*xs) * w)`` (w: fixed random weights)."""
    xs = [xp.asarray(a, device=carrier) for a in arrays]
    out = program(*xs)
    w = np.random.default_rng(9).standard_normal(out.shape).astype(np.float32)
    xp.sum(out * xp.asarray(w, device=carrier)).backward()
    return out.numpy(), [x.grad.numpy() for x in xs], w


def torch_grad_of(program, arrays, w):
    ts = [torch.tensor(a.astype(np.float64), requires_grad=True) for a in arrays]
    out = program(*ts)
    (out * torch.tensor(w.astype(np.float64))).sum().backward()
    return out.detach().numpy(), [t.grad.numpy() for t in ts]


EINSUMS = [
    ("ij,jk->ik", [(3, 4), (4, 5)]), ("ij,jk", [(3, 4), (4, 5)]), ("ii->i", [(3, 3)]), ("ii", [(3, 3)]),
    ("ij->", [(3, 4)]), ("...ij,...jk->...ik", [(2, 3, 4), (4, 5)]), ("i,i", [(4,), (4,)]),
    ("i,j->ij", [(3,), (4,)]), ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]), ("ij,ij->i", [(3, 4), (3, 4)]),
    ("...i,...i", [(2, 3), (3,)]), ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)]), ("ji", [(3, 4)]),
    ("iij->ij", [(3, 3, 2)]), ("ab...,b->...a", [(2, 3, 4), (3,)]), (" i j , j k -> k i ", [(2, 3), (3, 2)]),
]


@pytest.mark.parametrize(("subscripts", "shapes"), EINSUMS, ids=[s for s, _ in EINSUMS])
def test_einsum_matches_numpy_and_torch_gradients(carrier, subscripts, shapes):
    arrays = [RNG.standard_normal(s).astype(np.float32) for s in shapes]
    value, grads, w = grad_of(lambda *xs: xp.einsum(subscripts, *xs), arrays, carrier)
    np.testing.assert_allclose(value, np.einsum(subscripts, *arrays), rtol=1e-5, atol=1e-5)
    _want_value, want = torch_grad_of(lambda *ts: torch.einsum(subscripts.replace(" ", ""), *ts), arrays, w)
    for got, ref in zip(grads, want):
        np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-5)


def test_einsum_refuses_bad_subscripts():
    a = xp.ones((2, 3))
    with pytest.raises(ValueError, match="name 2 operands, got 1"):
        xp.einsum("ij,jk->ik", a)
    with pytest.raises(ValueError, match="'ijk' names 3 axes"):
        xp.einsum("ijk->i", a)
    with pytest.raises(ValueError, match="output label 'z'"):
        xp.einsum("ij->z", a)
    with pytest.raises(TypeError, match="subscripts must be a str"):
        xp.einsum(a, [0, 1])


# ----- NaN-skipping reductions ----------------------------------------------------------------------

def _torch_nan(name, t, axis):
    m = torch.isnan(t)
    dim = tuple(range(t.ndim)) if axis is None else axis
    filled = torch.where(m, 0.0, t)
    count = (~m).sum(dim=dim, keepdim=True).to(t.dtype)
    if name == "nansum":
        return filled.sum(dim=dim)
    if name == "nanmean":
        return (filled.sum(dim=dim, keepdim=True) / count).squeeze(dim) if axis is not None else \
            filled.sum() / count.sum()
    if name in ("nanvar", "nanstd"):
        centred = torch.where(m, 0.0, t - filled.sum(dim=dim, keepdim=True) / count)
        var = (centred * centred).sum(dim=dim, keepdim=True) / (count - 1)
        var = var.reshape(()) if axis is None else var.squeeze(axis)
        # torch's std: a constant slice gets zero gradient
        return var if name == "nanvar" else torch.where(var > 0, torch.sqrt(torch.where(var > 0, var, 1.0)), var * 0)
    if name == "nanmax":
        return torch.amax(torch.where(m, -torch.inf, t), dim=dim)
    if name == "nanmin":
        return torch.amin(torch.where(m, torch.inf, t), dim=dim)
    if name == "nanprod":
        return torch.where(m, 1.0, t).reshape(-1).prod() if axis is None else torch.where(m, 1.0, t).prod(dim=axis)
    if name == "nancumsum":
        return torch.cumsum(filled.reshape(-1), 0) if axis is None else torch.cumsum(filled, dim=axis)
    raise AssertionError(name)


NAN_INPUT = np.random.default_rng(3).standard_normal((4, 5)).astype(np.float32)
NAN_INPUT[0, 1] = NAN_INPUT[2, 3] = np.nan
NAN_INPUT[1, :] = 0.5      # a constant row: std's zero-gradient point
NAN_INPUT[3, 0] = NAN_INPUT[3, 2]  # a tie in the row's max or min


@pytest.mark.parametrize("axis", [None, 0, 1])
@pytest.mark.parametrize("name", ["nansum", "nanmean", "nanvar", "nanstd", "nanmax", "nanmin", "nanprod",
                                  "nancumsum"])
def test_nan_reductions_through_the_numpy_protocol(carrier, name, axis):
    kwargs = {"ddof": 1} if name in ("nanvar", "nanstd") else {}
    value, (grad,), w = grad_of(lambda x: getattr(np, name)(x, axis=axis, **kwargs), [NAN_INPUT], carrier)
    np.testing.assert_allclose(value, getattr(np, name)(NAN_INPUT.astype(np.float64), axis=axis, **kwargs),
                               rtol=1e-5, atol=1e-5)
    _, (want,) = torch_grad_of(lambda t: _torch_nan(name, t, axis), [NAN_INPUT], w)
    np.testing.assert_allclose(grad, want, rtol=1e-4, atol=1e-5)
    assert np.all(grad[np.isnan(NAN_INPUT)] == 0)  # NaN entries get zero gradient


def test_nan_reductions_on_all_nan_slices_follow_numpy(carrier):
    a = np.array([[np.nan, np.nan], [1.0, np.nan]], dtype=np.float32)
    x = xp.asarray(a, device=carrier)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for name in ("nanmax", "nanmin", "nanmean", "nansum", "nanprod"):
            np.testing.assert_array_equal(getattr(np, name)(x, axis=1).numpy(), getattr(np, name)(a, axis=1))
    np.testing.assert_array_equal(np.nanargmin(x[1:], axis=1).numpy(), [0])
    with pytest.raises(ValueError, match="All-NaN slice"):
        np.nanargmax(x, axis=1)
    with pytest.raises(TypeError, match="where="):
        np.nansum(x, where=np.ones((2, 2), bool))
    with pytest.raises(TypeError, match=r"np\.nanpercentile is not run"):
        np.nanpercentile(x, 50)


def test_nanargmax_matches_numpy(carrier):
    a = NAN_INPUT.copy()
    x = xp.asarray(a, device=carrier)
    for axis in (None, 0, 1):
        np.testing.assert_array_equal(np.nanargmax(x, axis=axis).numpy(), np.nanargmax(a, axis=axis))
        np.testing.assert_array_equal(np.nanargmin(x, axis=axis).numpy(), np.nanargmin(a, axis=axis))


# ----- index arrays, NumPy extras --------------------------------------------------------------------

def test_numpy_index_arrays_are_indices(carrier):
    a = RNG.standard_normal((5, 3)).astype(np.float32)
    index = np.array([4, 0, 4])
    value, (grad,), w = grad_of(lambda x: x[index, 1:], [a], carrier)
    np.testing.assert_array_equal(value, a[index, 1:])
    want = np.zeros_like(a)
    np.add.at(want, (index, slice(1, None)), w)
    np.testing.assert_allclose(grad, want, rtol=1e-6)
    mask = a[:, 0] > 0
    np.testing.assert_array_equal(xp.asarray(a, device=carrier)[mask].numpy(), a[mask])
    with pytest.raises(IndexError, match="integer or boolean dtype"):
        xp.asarray(a, device=carrier)[np.array([0.5])]


@pytest.mark.parametrize(("program", "reference"), [
    (lambda x: xp.pad(x, ((1, 2), (0, 1)), constant_values=0.5), lambda t: torch.nn.functional.pad(t, (0, 1, 1, 2),
                                                                                                   value=0.5)),
    (lambda x: xp.quantile(x, [0.1, 0.5, 0.9], axis=0), lambda t: torch.quantile(t, torch.tensor(
        [0.1, 0.5, 0.9], dtype=t.dtype), dim=0)),
    (lambda x: xp.quantile(x, 0.3), lambda t: torch.quantile(t, 0.3)),
    (lambda x: xp.lib.stride_tricks.sliding_window_view(x, 3, axis=0),
     lambda t: t.unfold(0, 3, 1)),
    (lambda x: xp.std(x, axis=0, ddof=1), lambda t: torch.std(t, dim=0, correction=1)),
    (lambda x: xp.transpose(x, (1, 0)) * 1.0, lambda t: t.permute(1, 0)),
    (lambda x: x.round(1) + x * x, lambda t: torch.round(t, decimals=1) + t * t),
], ids=["pad", "quantile", "quantile_flat", "sliding_window_view", "std_ddof", "transpose", "round_decimals"])
def test_numpy_extras_match_torch(carrier, program, reference):
    a = RNG.standard_normal((5, 4)).astype(np.float32)
    value, (grad,), w = grad_of(program, [a], carrier)
    want_value, (want,) = torch_grad_of(reference, [a], w)
    np.testing.assert_allclose(value, want_value, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(grad, want, rtol=1e-4, atol=1e-5)


def test_gradient_matches_numpy(carrier):
    a = RNG.standard_normal((6, 3)).astype(np.float32)
    coords = np.array([0.0, 0.5, 1.5, 2.0, 3.5, 4.0])
    value, (grad,), w = grad_of(lambda x: xp.gradient(x, coords, axis=0), [a], carrier)
    np.testing.assert_allclose(value, np.gradient(a.astype(np.float64), coords, axis=0), rtol=1e-5, atol=1e-5)
    # linear in x: the VJP is np.gradient's matrix transposed applied to w
    matrix = np.stack([np.gradient(e, coords) for e in np.eye(6)], axis=1)
    np.testing.assert_allclose(grad, matrix.T @ w, rtol=1e-4, atol=1e-5)
    with pytest.raises(NotImplementedError, match="edge_order"):
        xp.gradient(xp.asarray(a, device=carrier), coords, axis=0, edge_order=2)


def test_isin_and_refusals(carrier):
    x = xp.asarray(np.array([1.0, 2.0, 3.0, 2.0], dtype=np.float32), device=carrier)
    assert xp.isin(x, [2.0, 5.0]).numpy().tolist() == [False, True, False, True]
    assert xp.isin(x, [2.0], invert=True).numpy().tolist() == [True, False, True, False]
    with pytest.raises(NotImplementedError, match="mode='constant'"):
        xp.pad(x, 1, mode="reflect")
    with pytest.raises(NotImplementedError, match="method='linear'"):
        xp.quantile(x, 0.5, method="nearest")
    with pytest.raises(NotImplementedError, match="holds NaN"):
        np.nanquantile(xp.asarray(np.array([1.0, np.nan], dtype=np.float32), device=carrier), 0.5)
    with pytest.raises(TypeError, match="not both"):
        xp.std(x, ddof=1, correction=1)


# ----- opt_einsum through the module name ----------------------------------------------------------------

def test_opt_einsum_dispatches_through_the_module_name(carrier):
    opt_einsum = pytest.importorskip("opt_einsum")
    arrays = [RNG.standard_normal(s).astype(np.float32) for s in [(3, 4), (4, 5), (5, 2)]]
    value, grads, w = grad_of(lambda a, b, c: opt_einsum.contract("ij,jk,kl->il", a, b, c), arrays, carrier)
    np.testing.assert_allclose(value, np.einsum("ij,jk,kl->il", *arrays), rtol=1e-5, atol=1e-5)
    _, want = torch_grad_of(lambda *ts: torch.einsum("ij,jk,kl->il", *ts), arrays, w)
    for got, ref in zip(grads, want):
        np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-5)
    full = opt_einsum.contract("ij,ij->", xp.asarray(arrays[0], device=carrier), xp.asarray(arrays[0], device=carrier))
    assert full.shape == () and np.isclose(float(full), float(np.sum(arrays[0] ** 2)), rtol=1e-5)


def test_module_tensordot_takes_numpy_axes():
    a = xp.asarray(RNG.standard_normal((3, 4)).astype(np.float32))
    assert sw.tensordot(a, a, axes=2).shape == ()           # NumPy: a full contraction is 0-d
    assert sw.tensordot(a, a, 2).shape == (1,)              # layout-native modes=: (1)
    with pytest.raises(TypeError, match="options="):
        sw.tensordot(a, a, axes=2, options=sw.ExecutionOptions(carrier="numpy"))


# ----- NumPy's names and keywords that xarray passes (cumsum for skipna=False, np.any's out=None) ---------

@pytest.mark.parametrize(("program", "reference"), [
    (lambda x: xp.cumsum(x, axis=0), lambda t: torch.cumsum(t, dim=0)),
    (lambda x: xp.cumsum(x), lambda t: torch.cumsum(t.reshape(-1), dim=0)),
    (lambda x: xp.cumprod(x, axis=1), lambda t: torch.cumprod(t, dim=1)),
], ids=["cumsum", "cumsum_flat", "cumprod"])
def test_numpy_cumulative_names_match_torch(carrier, program, reference):
    a = RNG.uniform(0.5, 1.5, (5, 4)).astype(np.float32)
    value, (grad,), w = grad_of(program, [a], carrier)
    want_value, (want,) = torch_grad_of(reference, [a], w)
    np.testing.assert_allclose(value, want_value, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(grad, want, rtol=1e-4, atol=1e-5)


def test_any_all_take_numpys_out_none(carrier):
    a = np.array([[0.5, -1.0, 2.0], [-0.5, -1.0, 3.0]], dtype=np.float32)
    x = xp.asarray(a, device=carrier)
    for name in ("any", "all"):
        for axis in (None, 0, 1):
            got = getattr(xp, name)(x > 0, axis=axis, out=None)
            np.testing.assert_array_equal(got.numpy(), getattr(np, name)(a > 0, axis=axis))
        with pytest.raises(TypeError, match=rf"{name}: out= is not supported .* got ndarray, expected None"):
            getattr(xp, name)(x > 0, out=np.zeros(3, dtype=bool))
    with pytest.raises(TypeError, match="cumsum: out= is not supported"):
        xp.cumsum(x, axis=0, out=np.zeros((2, 3)))
