"""Every basic index (ints, positive-step slices, ``...``, ``None``, in any mix) is one view.

Checked on every carrier against NumPy (values, which key makes a view) and
torch float64 (gradients, writes through a view of a result): the view
shares the carrier, a write through it reaches the base and bumps the
version, and out-of-range keys raise ``IndexError``.
"""

import numpy as np
import pytest

import strideweave as sw
import strideweave.array_api as xp

torch = pytest.importorskip("torch")

_CARRIERS = {"numpy": "numpy", "torch": "torch", "jax": "jax", "array_api_strict": "array_api_strict"}

E = Ellipsis
S = slice
KEYS = [
    (E, S(None, None, 2)),
    (E, 1),
    (1, E),
    (None, S(0, 2)),
    (None, E, None, S(1, None, 2)),
    (E,),
    (),
    (None,),
    (1, 2, 3),
    (E, 1, 2, 3),
    (0, None, 1, None),
    (S(None), None, E, None, 2),
    (S(1, 2), E, S(None, None, 3)),
    (-1, S(None, None, 2), E),
    (E, None),
    (S(2, 2), E),  # empty
    (None, None, 1, E, S(1, 3)),
    1,
    None,
    E,
]


@pytest.fixture(params=list(_CARRIERS))
def carrier(request):
    pytest.importorskip(_CARRIERS[request.param])
    return request.param


def _data():
    return np.arange(24, dtype=np.float32).reshape(2, 3, 4) * 0.5 + 1.0


@pytest.mark.parametrize("key", KEYS, ids=repr)
def test_read_is_a_view_that_writes_through(carrier, key):
    base = _data()
    t = xp.asarray(base.copy(), device=carrier)
    v = t[key]
    expected = base[key]
    assert v.shape == expected.shape
    np.testing.assert_array_equal(v.numpy(), expected)
    assert v._carriers[0] is t._carriers[0], "a basic index must share the carrier"
    before = t._carriers[0].version
    v[...] = 0
    want = base.copy()
    want[key] = 0
    np.testing.assert_array_equal(t.numpy(), want)
    if expected.size:
        assert t._carriers[0].version > before
    if expected.ndim:
        t2 = xp.asarray(base.copy(), device=carrier)
        v2 = t2[key]
        if v2.shape[0]:
            v2[0] = 5
            want = base.copy()
            want[key][0] = 5  # NumPy's basic index is a view too
            np.testing.assert_array_equal(t2.numpy(), want)


@pytest.mark.parametrize("key", KEYS, ids=repr)
def test_setitem_through_the_key_writes_the_base(carrier, key):
    base = _data()
    t = xp.asarray(base.copy(), device=carrier)
    t[key] = 7
    want = base.copy()
    want[key] = 7
    np.testing.assert_array_equal(t.numpy(), want)


@pytest.mark.parametrize("key", KEYS, ids=repr)
def test_gradient_through_the_view_matches_torch(carrier, key):
    base = _data()
    weights = np.random.default_rng(0).standard_normal(base[key].shape).astype(np.float32)
    x = xp.asarray(base.copy(), device=carrier)
    loss = xp.sum(x[key] * xp.asarray(weights, device=x.device))
    loss.backward()
    tx = torch.tensor(base, dtype=torch.float64, requires_grad=True)
    (tx[key] * torch.tensor(weights, dtype=torch.float64)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("key", [k for k in KEYS if np.empty((2, 3, 4))[k].ndim], ids=repr)
def test_write_through_a_view_of_a_result_matches_torch(carrier, key):
    base = _data()
    weights = np.random.default_rng(1).standard_normal(base.shape).astype(np.float32)
    x = xp.asarray(base.copy(), device=carrier)
    r = x * 2.0
    v = r[key]
    v[...] = 0.0
    if v.shape[0]:
        v[0] = 5.0
    loss = xp.sum(r * xp.asarray(weights, device=x.device))
    loss.backward()
    tx = torch.tensor(base, dtype=torch.float64, requires_grad=True)
    tr = tx * 2.0
    tv = tr[key]
    tv[...] = 0.0
    if tv.shape[0]:
        tv[0] = 5.0
    tloss = (tr * torch.tensor(weights, dtype=torch.float64)).sum()
    tloss.backward()
    np.testing.assert_allclose(float(loss), float(tloss.detach()), rtol=1e-5)
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-6, atol=1e-6)


def test_no_grad_write_through_view_of_a_leaf_is_an_update(carrier):
    x = xp.asarray(_data(), device=carrier)
    with sw.no_grad():
        v = x[..., ::2]
        v[...] = 0.0
    xp.sum(x * 3.0).backward()
    want = _data()
    want[..., ::2] = 0
    np.testing.assert_array_equal(x.numpy(), want)
    np.testing.assert_array_equal(x.grad.numpy(), np.full(want.shape, 3.0, np.float32))


@pytest.mark.parametrize("key", [(E, 4), (3, E), (None, 2), (E, -5), (0, 0, 0, 0), (E, 0, E), (None, 1, 2, 3, 4)],
                         ids=repr)
def test_out_of_range_raises_index_error(carrier, key):
    t = xp.asarray(_data(), device=carrier)
    before = t._carriers[0].version
    with pytest.raises(IndexError):
        t[key]
    with pytest.raises(IndexError):
        t[key] = 1.0
    assert t._carriers[0].version == before


def test_nested_mode_index_decomposes_colexicographically(carrier):
    # Shape (2, (2, 3)): the second top-level mode is nested; an int into it is colexicographic.
    layout = sw.Layout(sw.Shape([2, [2, 3]]))
    storage = np.arange(12, dtype=np.float32)
    t = sw.Tensor.from_storage(storage, layout, carrier=carrier)
    natural = np.array(t.numpy(), copy=True)  # one axis per top-level mode, nested modes colexicographic
    for key in [(E, 1), (E, 4), (None, 1, E), (1, None, S(1, 5, 2)), (E, None, 5)]:
        v = t[key]
        np.testing.assert_array_equal(np.asarray(v.numpy()), natural[key])
        assert v._carriers[0] is t._carriers[0]
    v = t[None, ..., 4]
    v[...] = -1.0
    natural[None, ..., 4] = -1.0
    np.testing.assert_array_equal(np.asarray(t.numpy()), natural)


def test_none_inserted_into_a_canonical_tensor_stays_canonical():
    t = sw.zeros(sw.Shape([3, 4]))
    assert t[None]._layout.is_canonical()
    assert t[:, None]._layout.is_canonical()


def test_negative_steps_read_right_values(carrier):
    # No layout with non-negative strides walks backwards: negative steps gather (a copy).
    base = _data()
    x = xp.asarray(base.copy(), device=carrier)
    for key in [(E, S(None, None, -1)), (None, E, None, S(None, None, -2)), (S(None, None, -1), 1)]:
        np.testing.assert_array_equal(x[key].numpy(), base[key])
    x[..., ::-2] = 0.0
    want = base.copy()
    want[..., ::-2] = 0
    np.testing.assert_array_equal(x.numpy(), want)
