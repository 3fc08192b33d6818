"""sw.interop.torch_function: StrideWeave functions differentiated by torch.autograd."""

import numpy as np
import pytest
from _programs import inputs, sw_program, xp_program

import strideweave as sw

torch = pytest.importorskip("torch")
torch_function = sw.interop.torch_function


def _leaves(seed, device="cpu"):
    return [torch.tensor(a, device=device, requires_grad=True) for a in inputs(seed)]


def _grads(outputs, leaves, cotangents):
    return torch.autograd.grad(outputs, leaves, cotangents, allow_unused=True)


@pytest.mark.parametrize("outputs", [1, 2])
@pytest.mark.parametrize("seed", range(6))
def test_random_programs_match_torch_autograd(seed, outputs):
    bridged = torch_function(sw_program(seed, outputs))
    native = xp_program(seed, outputs)
    leaves = _leaves(seed)
    got, want = bridged(*leaves), native(*leaves)
    got, want = (got, want) if outputs == 2 else ((got,), (want,))
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == torch.float32
        np.testing.assert_allclose(g.detach().numpy(), w.detach().numpy(), rtol=1e-5, atol=1e-6)
    rng = np.random.default_rng(seed + 100)
    cts = [torch.tensor(rng.standard_normal(tuple(w.shape)).astype(np.float32)) for w in want]
    for g, w in zip(_grads(got, leaves, cts), _grads(want, leaves, cts)):
        assert (g is None) == (w is None)
        if g is not None:
            np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-4, atol=1e-5)


def test_inputs_and_outputs_share_storage_with_torch():
    x = torch.randn(3, 4, requires_grad=True)
    seen = {}

    def f(t):
        seen["ptr"] = t.to_array().data_ptr()
        return sw.transpose(t)          # a view: the output is the input's own storage

    out = torch_function(f)(x)
    assert seen["ptr"] == x.data_ptr()
    assert out.data_ptr() == x.data_ptr() and out.shape == (4, 3)
    out.backward(torch.ones(4, 3))
    np.testing.assert_array_equal(x.grad.numpy(), np.ones((3, 4), np.float32))


@pytest.mark.filterwarnings("ignore:Input #.* double precision")
def test_gradcheck_at_float32_tolerances_including_strided_inputs():
    f = torch_function(lambda a, b, w: (sw.tanh(a @ w) * b, sw.sum(sw.exp(b) * a, modes=(0,))))
    a = torch.randn(3, 4, requires_grad=True)
    b = torch.randn(4, 3).T.requires_grad_()          # column-major: wrapped with its own strides
    w = (0.5 * torch.randn(4, 4)).requires_grad_()
    assert not b.is_contiguous()
    assert torch.autograd.gradcheck(f, (a, b, w), eps=1e-3, atol=2e-3, rtol=2e-2)


def test_non_tensor_arguments_and_keywords_pass_through():
    f = torch_function(lambda x, power, *, shift: sw.sum(x ** power + shift))
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    out = f(x, 2, shift=1.0)
    assert out.item() == pytest.approx(17.0)
    out.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 4.0, 6.0])


def test_retain_graph_then_a_second_backward_is_refused_by_torch():
    x = torch.randn(5, requires_grad=True)
    out = torch_function(lambda t: sw.sum(sw.sin(t)))(x)
    out.backward(retain_graph=True)
    out.backward(retain_graph=True)
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.cos(x.detach().numpy()), rtol=1e-6)
    out.backward()
    with pytest.raises(RuntimeError, match="second time"):
        out.backward()


def test_create_graph_gives_first_order_gradients_and_refuses_double_backward():
    x = torch.randn(4, requires_grad=True)
    out = torch_function(lambda t: sw.sum(t * t * t))(x)
    (g,) = torch.autograd.grad(out, x, create_graph=True)
    np.testing.assert_allclose(g.detach().numpy(), 3 * x.detach().numpy() ** 2, rtol=1e-6)
    with pytest.raises(RuntimeError, match=r"first order.*double backward"):
        g.sum().backward()


def test_no_grad_and_inputs_that_do_not_require_grad():
    f = torch_function(lambda a, b: a * b)
    a = torch.randn(3, requires_grad=True)
    b = torch.randn(3)
    with torch.no_grad():
        out = f(a, b)
    assert out.grad_fn is None and not out.requires_grad
    assert not f(b, b).requires_grad
    out = f(a, b)
    out.sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), b.numpy())
    assert b.grad is None


def test_integer_arguments_and_outputs_are_not_differentiated():
    def f(x, k):
        return x * sw.astype(k, sw.DType.Float32), sw.astype(k, sw.DType.Int32)

    x = torch.randn(3, requires_grad=True)
    k = torch.tensor([1, 2, 3], dtype=torch.int32)
    out, ints = torch_function(f)(x, k)
    assert ints.dtype == torch.int32 and not ints.requires_grad
    out.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [1.0, 2.0, 3.0])


def test_an_input_the_outputs_do_not_use_gets_no_gradient():
    x = torch.randn(3, requires_grad=True)
    y = torch.randn(3, requires_grad=True)
    out = torch_function(lambda a, b: sw.exp(a))(x, y)
    gx, gy = torch.autograd.grad(out.sum(), [x, y], allow_unused=True)
    np.testing.assert_allclose(gx.numpy(), np.exp(x.detach().numpy()), rtol=1e-6)
    assert gy is None


@pytest.mark.cuda
def test_cuda_tensors_stay_on_the_device_without_copies():
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    x = torch.randn(64, 32, device="cuda", requires_grad=True)
    w = torch.randn(32, 16, device="cuda", requires_grad=True)
    seen = {}

    def f(a, b):
        seen["ptr"] = a.to_array().data_ptr()
        return sw.tanh(a @ b)

    out = torch_function(f)(x, w)
    assert seen["ptr"] == x.data_ptr() and out.device.type == "cuda"
    out.sum().backward()
    ref_x, ref_w = x.detach().clone().requires_grad_(), w.detach().clone().requires_grad_()
    torch.tanh(ref_x @ ref_w).sum().backward()
    assert x.grad.device.type == "cuda"
    torch.testing.assert_close(x.grad, ref_x.grad, rtol=1e-4, atol=1e-5)
    torch.testing.assert_close(w.grad, ref_w.grad, rtol=1e-4, atol=1e-5)
    assert torch.autograd.gradcheck(torch_function(lambda a: sw.sin(a) * a),
                                    (torch.randn(5, device="cuda", requires_grad=True),), eps=1e-3, atol=2e-3,
                                    rtol=2e-2)
