"""No silent cut: a Float32 result reached through a value that cannot carry a gradient raises at backward.

Only Float32 is differentiable (spec). Through Float64, Float16 or complex
values, ``dtype=`` in a reduction or the fft extension the gradient cannot be
computed, so backward raises a RuntimeError naming the line (in this file)
where the value left Float32, and no ``.grad`` changes. Through Bool and
integer values the gradient is a true zero, as in torch. On every carrier;
torch.autograd (float64) gives the reference gradients.
"""

import numpy as np
import pytest

import strideweave as sw
import strideweave.array_api as xp
from strideweave.carriers import missing_wide_types, resolve

torch = pytest.importorskip("torch")

X = [0.5, -1.0, 2.0]


def values(t):
    return np.asarray(t.numpy())


def _leaving(carrier):
    """A dtype outside Float32 the carrier stores: Float64, else (JAX without x64) Float16."""
    return sw.DType.Float16 if "float64" in missing_wide_types(resolve(carrier)) else xp.float64


def _raises_at(line_text):
    """``pytest.raises`` for the cut error naming this file (``line_text`` is a part of the message)."""
    return pytest.raises(RuntimeError, match=rf"{line_text}.* at .*test_no_silent_cut\.py:\d+ in test_.*"
                                             r"only Float32 is differentiable.*\.detach\(\)")


def test_float64_round_trip_raises_and_changes_no_grad(carrier):
    x = xp.asarray(X, device=carrier)
    xp.sum(x * x).backward()
    before = values(x.grad).copy()
    wide = xp.astype(x, _leaving(carrier))          # the line the error names
    loss = xp.sum(xp.astype(wide * 2, xp.float32)) + xp.sum(x)
    with _raises_at("became DType.Float(64|16) in Astype"):
        loss.backward()
    np.testing.assert_array_equal(values(x.grad), before)  # all or nothing: the good path wrote nothing


def test_reduction_in_float64_raises_or_stays_float32(carrier):
    x = xp.asarray(X, device=carrier)
    if "float64" in missing_wide_types(resolve(carrier)):  # JAX without x64: dtype=float64 stays Float32
        with pytest.warns(UserWarning, match="truncated to dtype float32"):
            total = xp.sum(x * x, dtype=xp.float64)
        assert total.dtype is xp.float32
        total.backward()
        np.testing.assert_allclose(values(x.grad), 2 * np.asarray(X), rtol=1e-6)
        return
    total = xp.sum(x * x, dtype=xp.float64)
    with _raises_at("became DType.Float64 in Astype"):
        xp.astype(total, xp.float32).backward()
    assert x.grad is None


def test_asarray_with_dtype_float32_of_a_wide_value_raises(carrier):
    x = xp.asarray(X, device=carrier)
    wide = xp.astype(x * 3, _leaving(carrier))
    back = xp.asarray(wide, dtype=xp.float32)
    assert not back.is_leaf
    with _raises_at("became DType.Float(64|16) in Astype"):
        xp.sum(back).backward()
    assert x.grad is None


def test_promotion_with_a_float16_value_that_left_float32_raises(carrier):
    # float32 * float16 is float32: the result has a Float32 input, and still cannot be differentiated.
    x = xp.asarray(X, device=carrier)
    leaving = _leaving(carrier)
    narrow = xp.astype(x, leaving)
    out = x * xp.astype(narrow, xp.float32) if leaving is xp.float64 else x * narrow
    assert out.dtype is xp.float32
    with _raises_at("became DType.Float(64|16) in Astype"):
        xp.sum(out).backward()
    assert x.grad is None


def test_fft_round_trip_raises(carrier):
    x = xp.asarray(X, device=carrier)
    y = xp.fft.irfft(xp.fft.rfft(x), n=3)
    assert y.dtype is xp.float32
    np.testing.assert_allclose(values(y), X, atol=1e-6)
    with _raises_at("became DType.Complex64 in fft.rfft"):
        xp.sum(y * y).backward()
    assert x.grad is None


def test_complex_intermediate_raises(carrier):
    x = xp.asarray(X, device=carrier)
    z = x * (1 + 2j)
    y = xp.real(z) + xp.abs(z)
    assert y.dtype is xp.float32
    with _raises_at("became DType.Complex64 in multiply"):
        xp.sum(y).backward()
    assert x.grad is None


def test_forward_only_function_of_float32_raises(carrier):
    # torch does not differentiate unique either: it raises at backward.
    x = xp.asarray([2.0, 1.0, 2.0], device=carrier)
    u = xp.unique_values(x * 1.0)
    with _raises_at("went through unique_values, which records no gradient"):
        xp.sum(u).backward()
    t = torch.tensor([2.0, 1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="not implemented"):
        torch.unique(t * 1.0).sum().backward()


def test_detaching_where_it_leaves_float32_makes_a_constant(carrier):
    x = xp.asarray(X, device=carrier)
    scale = xp.astype(xp.astype(x, _leaving(carrier)).detach() * 2, xp.float32)
    xp.sum(x * scale).backward()
    t = torch.tensor(X, dtype=torch.float64, requires_grad=True)
    (t * (t.detach() * 2)).sum().backward()
    np.testing.assert_allclose(values(x.grad), t.grad.numpy(), rtol=1e-3)


def test_bool_and_integer_paths_give_a_true_zero(carrier):
    x = xp.asarray(X, device=carrier)
    mask = xp.astype(x > 0, xp.float32)                    # a comparison: Bool
    whole = xp.astype(xp.astype(x * 3, xp.int32), xp.float32)  # integers
    picked = xp.take(x, xp.argmax(x, keepdims=True))      # integer indices into x
    loss = xp.sum(x * mask) + xp.sum(x * whole) + xp.sum(picked)
    loss.backward()
    t = torch.tensor(X, dtype=torch.float64, requires_grad=True)
    ref = (t * (t > 0).double()).sum() + (t * (t * 3).int().double()).sum() + t[t.argmax(keepdim=True)].sum()
    ref.backward()
    np.testing.assert_allclose(values(x.grad), t.grad.numpy(), rtol=1e-6)


def test_no_grad_records_nothing(carrier):
    x = xp.asarray(X, device=carrier)
    with sw.no_grad():
        y = xp.astype(xp.astype(x, _leaving(carrier)), xp.float32)
    assert y.is_leaf


def test_sequence_of_tensors_is_stacked_differentiably(carrier):
    x = xp.asarray(X, device=carrier)
    v = xp.asarray([x[0] * 2, x[2], 1.0])
    xp.sum(v * v).backward()
    t = torch.tensor(X, dtype=torch.float64, requires_grad=True)
    w = torch.stack([t[0] * 2, t[2], torch.tensor(1.0, dtype=torch.float64)])
    (w * w).sum().backward()
    np.testing.assert_allclose(values(x.grad), t.grad.numpy(), rtol=1e-6)


def test_sequence_copied_through_the_host_raises(carrier):
    x = xp.asarray(X, device=carrier)
    v = xp.asarray([[x[0], x[1]], [1.0, 2.0]])  # rows of different kinds: copied through the host
    with _raises_at("went through asarray, which records no gradient"):
        xp.sum(v).backward()


def test_fftshift_of_float32_differentiates(carrier):
    x = xp.asarray([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], device=carrier)
    w = xp.asarray([[1.0, -2.0, 3.0], [0.5, 7.0, -1.0]], device=carrier)
    xp.sum(xp.fft.ifftshift(xp.fft.fftshift(x, axes=1) * w)).backward()
    t = torch.tensor(values(x), dtype=torch.float64, requires_grad=True)
    torch.fft.ifftshift(torch.fft.fftshift(t, dim=1) * torch.tensor(values(w), dtype=torch.float64)).sum().backward()
    np.testing.assert_allclose(values(x.grad), t.grad.numpy(), rtol=1e-6)
    np.testing.assert_array_equal(values(xp.fft.fftshift(x)), np.fft.fftshift(values(x)))


@pytest.mark.parametrize("write", ["setitem into a buffer", "setitem into a result", "copy_", "add_"])
def test_writing_a_value_that_left_float32_raises(carrier, write):
    x = xp.asarray(X, device=carrier)
    wide = xp.astype(x, _leaving(carrier)) * 2
    if write == "setitem into a buffer":
        b = xp.zeros(3, device=carrier)
        b[0:2] = wide[0:2]
    elif write == "setitem into a result":
        b = x * 1.0
        b[0:2] = wide[0:2]
    elif write == "copy_":
        b = xp.zeros(3, device=carrier)
        b.copy_(wide)
    else:
        b = xp.zeros(3, device=carrier)
        b.add_(wide)
    np.testing.assert_allclose(values(b)[:2], [1.0, -2.0])
    with _raises_at("became DType.Float(64|16) in Astype"):
        xp.sum(b * b).backward()
    assert x.grad is None
