"""Gradients of every gather against torch.autograd float64, on every carrier (Dask included).

take, take_along_axis, repeat, integer-array and boolean-mask indexing,
several index arrays, negative-step slices, and writes through such keys
(``y[key] += v``, ``y[key] = v``): repeated indices must accumulate, and a
negative step must send each cotangent back to the element it read. The torch
side reads the same elements by their flat positions (torch has no negative
steps), so it is an independent reference.
"""

import numpy as np
import pytest

import strideweave as sw
import strideweave.array_api as xp
from strideweave.testing import available_carriers

torch = pytest.importorskip("torch")

CARRIERS = available_carriers(lazy=True)
RNG = np.random.default_rng(7)
X = RNG.uniform(-2, 2, (5, 6)).astype(np.float32)
DUPS = np.array([4, 0, 4, -1, 2, 4])            # repeated and negative indices
ROWS = np.array([True, False, True, True, False])


def _positions(key, shape=X.shape):
    return np.arange(int(np.prod(shape))).reshape(shape)[key]


def _sw(values, carrier):
    values = np.array(values)
    if values.dtype.kind == "i":
        values = values.astype(np.int32)  # JAX stores int64 only in x64 mode
    return sw.tensor(values, carrier=carrier)


# name -> (StrideWeave function of (x, carrier), torch function of x)
READS = {
    "take_axis0": (lambda x, c: xp.take(x, _sw(DUPS, c), axis=0),
                   lambda t: torch.index_select(t, 0, torch.tensor(DUPS % 5))),
    "take_axis1": (lambda x, c: xp.take(x, _sw(DUPS, c), axis=1),
                   lambda t: torch.index_select(t, 1, torch.tensor(DUPS % 6))),
    "take_along_axis1": (lambda x, c: xp.take_along_axis(x, _sw(np.tile([5, 5, 0, -2], (5, 1)), c), axis=1),
                         lambda t: torch.take_along_dim(t, torch.tensor(np.tile([5, 5, 0, 4], (5, 1))), dim=1)),
    "take_along_axis0_broadcast": (lambda x, c: xp.take_along_axis(x, _sw([[1, 1, 3, 0, 1, 4]] * 2, c), axis=0),
                                   lambda t: torch.take_along_dim(t, torch.tensor([[1, 1, 3, 0, 1, 4]] * 2), dim=0)),
    "sort": (lambda x, c: xp.sort(x, axis=1), lambda t: torch.sort(t, dim=1).values),
    "repeat_int": (lambda x, c: xp.repeat(x, 3, axis=1), lambda t: torch.repeat_interleave(t, 3, dim=1)),
    "repeat_counts": (lambda x, c: xp.repeat(x, _sw([2, 0, 1, 3, 1], c), axis=0),
                      lambda t: torch.repeat_interleave(t, torch.tensor([2, 0, 1, 3, 1]), dim=0)),
    "repeat_flat": (lambda x, c: xp.repeat(x, 2), lambda t: torch.repeat_interleave(t.reshape(-1), 2)),
}
# indexing keys: the torch side gathers the same flat positions
KEYS = {
    "int_array": lambda c: _sw(DUPS, c),
    "int_array_2d": lambda c: _sw(DUPS.reshape(2, 3), c),
    "int_array_axis1": lambda c: (slice(None), _sw(DUPS, c)),
    "int_array_after_ellipsis": lambda c: (Ellipsis, _sw(DUPS, c)),
    "row_mask": lambda c: _sw(ROWS, c),
    "full_mask": lambda c: _sw(X > 0.3, c),
    "two_arrays": lambda c: (_sw([0, 4, 0, 0], c), _sw([5, 1, 5, -1], c)),
    "array_and_slice": lambda c: (slice(1, None), _sw([3, 3, 0], c)),
    "reversed": lambda c: slice(None, None, -1),
    "reversed_step2": lambda c: slice(4, 0, -2),
    "reversed_both_axes": lambda c: (slice(None, None, -1), slice(-1, 1, -3)),
    "reversed_with_none_and_int": lambda c: (None, slice(None, None, -2), 3),
    "reversed_empty": lambda c: slice(2, 2, -1),
}


def _host(key):
    parts = key if isinstance(key, tuple) else (key,)
    return tuple(p.numpy() if isinstance(p, sw.Tensor) else p for p in parts)


def _compare(carrier, sw_fn, torch_fn, extra=()):
    """Values and gradients of ``sum(fn(x, *extra) * w)`` on the carrier and in torch float64."""
    x = _sw(X, carrier)
    others = [_sw(e, carrier) for e in extra]
    out = sw_fn(x, *others)
    t = torch.tensor(X, dtype=torch.float64, requires_grad=True)
    t_others = [torch.tensor(e, dtype=torch.float64, requires_grad=True) for e in extra]
    want = torch_fn(t, *t_others)
    np.testing.assert_allclose(out.numpy(), want.detach().numpy(), rtol=1e-6, atol=1e-6)
    w = RNG.uniform(-1, 1, tuple(want.shape))
    xp.sum(out * _sw(w.astype(np.float32), carrier)).backward()
    (want * torch.tensor(w)).sum().backward()
    for mine, theirs in zip([x, *others], [t, *t_others]):
        np.testing.assert_allclose(mine.grad.numpy(), theirs.grad.numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("carrier", CARRIERS)
@pytest.mark.parametrize("name", list(READS))
def test_gather_functions(name, carrier):
    sw_fn, torch_fn = READS[name]
    _compare(carrier, lambda x: sw_fn(x, carrier), torch_fn)


@pytest.mark.parametrize("carrier", CARRIERS)
@pytest.mark.parametrize("name", list(KEYS))
def test_indexing(name, carrier):
    key = KEYS[name](carrier)
    positions = torch.tensor(_positions(_host(key)).copy())
    _compare(carrier, lambda x: x[key], lambda t: t.reshape(-1)[positions.reshape(-1)].reshape(positions.shape))


# write keys select distinct elements: NumPy and torch differ on which of two writes to one element wins
WRITES = {
    "int_array_axis1": lambda c: (slice(None), _sw([4, 0, 2], c)),
    "row_mask": KEYS["row_mask"],
    "two_arrays": lambda c: (_sw([0, 4, 1, 0], c), _sw([5, 1, 5, -2], c)),
    "reversed_step2": KEYS["reversed_step2"],
    "reversed_both_axes": KEYS["reversed_both_axes"],
}


@pytest.mark.parametrize("carrier", CARRIERS)
@pytest.mark.parametrize("add", [True, False], ids=["add", "assign"])
@pytest.mark.parametrize("name", list(WRITES))
def test_writes(name, add, carrier):
    key = WRITES[name](carrier)
    positions = _positions(_host(key))
    assert np.unique(positions).size == positions.size
    value = RNG.uniform(-1, 1, positions.shape[-1:]).astype(np.float32)  # broadcast along leading axes
    flat = torch.tensor(positions.copy()).reshape(-1)

    def sw_fn(x, v):
        y = x * 1.5
        if add:
            y[key] += v
        else:
            y[key] = v
        return y

    def torch_fn(t, v):
        y = (t * 1.5).reshape(-1)
        written = torch.broadcast_to(v, positions.shape).reshape(-1)
        y = y.index_put((flat,), written, accumulate=add)
        return y.reshape(X.shape)

    _compare(carrier, sw_fn, torch_fn, extra=(value,))


@pytest.mark.parametrize("carrier", CARRIERS)
def test_a_reversed_slice_reads_a_view_and_writes_into_its_source(carrier):
    x = _sw(X, carrier)
    with sw.no_grad():
        y = xp.asarray(x, copy=True)
        y[5:0:-2] = _sw(np.arange(6, dtype=np.float32), carrier)  # one row for every selected row
        y[..., ::-1] = 7.0 * y[..., ::-1]
    want = X.copy()
    want[5:0:-2] = np.arange(6)
    want[..., ::-1] = 7.0 * want[..., ::-1]
    np.testing.assert_allclose(y.numpy(), want, rtol=1e-6)
    with pytest.raises(ValueError, match=r"shape \(4,\)"):
        y[::-1] = _sw(np.zeros(4, dtype=np.float32), carrier)
    with pytest.raises(TypeError, match="cannot assign list"):
        y[::-1] = [0.0] * 6
    np.testing.assert_allclose(y.numpy(), want, rtol=1e-6)  # nothing written
