"""Composite programs people actually differentiate.

Each program is written twice: with StrideWeave (``fn``) and against the
Array API (``ref``, run by torch.autograd and jax.vjp). Numerically stable
forms (max subtraction) are used where a practitioner would use them.
"""

from __future__ import annotations

import math

import strideweave as sw

from ..catalogue import MATMUL, SENSITIVE, SMOOTH, Case
from ..inputs import InputSpec as In
from ..native import stop_gradient

P = "program"


# ----- helpers, one StrideWeave and one Array API version each ------------------------------


def _sw_logsumexp(z, mode, detach_max):
    m = sw.max(z, modes=(mode,), keepdims=True)
    if detach_max:
        m = sw.detach(m)
    return sw.log(sw.sum(sw.exp(z - m), modes=(mode,), keepdims=True)) + m


def _xp_logsumexp(xp, z, axis, detach_max):
    m = xp.max(z, axis=axis, keepdims=True)
    if detach_max:
        m = stop_gradient(xp, m)
    return xp.log(xp.sum(xp.exp(z - m), axis=axis, keepdims=True)) + m


def _sw_softmax(s, mode):
    e = sw.exp(s - sw.detach(sw.max(s, modes=(mode,), keepdims=True)))
    return e / sw.sum(e, modes=(mode,), keepdims=True)


def _xp_softmax(xp, s, axis):
    e = xp.exp(s - stop_gradient(xp, xp.max(s, axis=axis, keepdims=True)))
    return e / xp.sum(e, axis=axis, keepdims=True)


# ----- the programs ----------------------------------------------------------------------------------


def affine_tanh(x, w, b):
    return sw.tanh(x @ w + b)


def affine_tanh_ref(xp, x, w, b):
    return xp.tanh(x @ w + b)


def mlp(x, w1, b1, w2, b2):
    out = sw.tanh(x @ w1 + b1) @ w2 + b2
    return sw.mean(out * out)


def mlp_ref(xp, x, w1, b1, w2, b2):
    out = xp.tanh(x @ w1 + b1) @ w2 + b2
    return xp.mean(out * out)


def cross_entropy(z, p):
    return -sw.sum(p * (z - _sw_logsumexp(z, 1, detach_max=True))) / 5.0


def cross_entropy_ref(xp, z, p):
    return -xp.sum(p * (z - _xp_logsumexp(xp, z, 1, detach_max=True))) / 5.0


def layer_norm(x, gamma, beta):
    xc = x - sw.mean(x, modes=(1,), keepdims=True)
    var = sw.mean(xc * xc, modes=(1,), keepdims=True)
    return xc / sw.sqrt(var + 1e-5) * gamma + beta


def layer_norm_ref(xp, x, gamma, beta):
    xc = x - xp.mean(x, axis=1, keepdims=True)
    var = xp.mean(xc * xc, axis=1, keepdims=True)
    return xc / xp.sqrt(var + 1e-5) * gamma + beta


def attention(q, k, v):
    return _sw_softmax(q @ sw.transpose(k) / 2.0, 1) @ v


def attention_ref(xp, q, k, v):
    return _xp_softmax(xp, q @ xp.permute_dims(k, (1, 0)) / 2.0, 1) @ v


def conv1d(x, w):
    """A 3-tap valid convolution built from slices of x and of the kernel."""
    return x[0:8] * w[0:1] + x[1:9] * w[1:2] + x[2:10] * w[2:3]


def conv1d_ref(xp, x, w):
    return x[0:8] * w[0:1] + x[1:9] * w[1:2] + x[2:10] * w[2:3]


def stencil2d(x):
    """tanh of a 5-point Laplacian over the interior, from overlapping 2-D slices."""
    lap = x[1:5, 1:4] * 4.0 - x[0:4, 1:4] - x[2:6, 1:4] - x[1:5, 0:3] - x[1:5, 2:5]
    return sw.tanh(lap)


def stencil2d_ref(xp, x):
    lap = x[1:5, 1:4] * 4.0 - x[0:4, 1:4] - x[2:6, 1:4] - x[1:5, 0:3] - x[1:5, 2:5]
    return xp.tanh(lap)


def horner(x, c):
    """Polynomial with coefficients c[0] + c[1] x + ... evaluated by Horner's rule."""
    p = c[4:5]
    for k in (3, 2, 1, 0):
        p = p * x + c[k:k + 1]
    return p


def horner_ref(xp, x, c):
    p = c[4:5]
    for k in (3, 2, 1, 0):
        p = p * x + c[k:k + 1]
    return p


def broadcast_chain(a, b, c, d):
    t = sw.tanh(a * b + c) * (a - b)
    u = sw.broadcast_to(c, (2, 3, 4)) * t + d
    return sw.sum(u * u, modes=(0,)) / (1.0 + a * a)


def broadcast_chain_ref(xp, a, b, c, d):
    t = xp.tanh(a * b + c) * (a - b)
    u = xp.broadcast_to(c, (2, 3, 4)) * t + d
    return xp.sum(u * u, axis=0) / (1.0 + a * a)


def nested_reductions(x):
    """Reductions over a nested mode: softmax-normalised energy per row plus the row maximum."""
    e = sw.exp(x)
    energy = sw.sum(e * x, modes=(1,)) / sw.sum(e, modes=(1,))
    return energy + sw.max(x, modes=(1,)) + sw.mean(x * x)


def nested_reductions_ref(xp, x):
    e = xp.exp(x)
    energy = xp.sum(e * x, axis=1) / xp.sum(e, axis=1)
    return energy + xp.max(x, axis=1) + xp.mean(x * x)


_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)


def gmm_loglik(x, mu, log_sigma, logit_w):
    """Log-likelihood of 8 points under a 3-component 1-D Gaussian mixture."""
    z = (sw.reshape(x, (8, 1)) - mu) / sw.exp(log_sigma)
    log_w = logit_w - sw.log(sw.sum(sw.exp(logit_w)))
    logp = log_w - z * z * 0.5 - log_sigma - _HALF_LOG_2PI
    return sw.sum(_sw_logsumexp(logp, 1, detach_max=True))


def gmm_loglik_ref(xp, x, mu, log_sigma, logit_w):
    z = (xp.reshape(x, (8, 1)) - mu) / xp.exp(log_sigma)
    log_w = logit_w - xp.log(xp.sum(xp.exp(logit_w)))
    logp = log_w - z * z * 0.5 - log_sigma - _HALF_LOG_2PI
    return xp.sum(_xp_logsumexp(xp, logp, 1, detach_max=True))


def jacobian_tanh(w, x):
    return sw.tanh(w @ x)


def jacobian_tanh_ref(xp, w, x):
    return xp.tanh(w @ x)


def heads(x):
    """Split 6 features into 2 heads of 3, per-head Gram matrices, tanh, sum over heads."""
    h = sw.permute(sw.reshape(x, (4, 2, 3)), (1, 0, 2))
    return sw.sum(sw.tanh(h @ sw.permute(h, (0, 2, 1))), modes=(0,))


def heads_ref(xp, x):
    from ..native import reshape_colex

    h = xp.permute_dims(reshape_colex(xp, x, (4, 2, 3)), (1, 0, 2))
    return xp.sum(xp.tanh(h @ xp.permute_dims(h, (0, 2, 1))), axis=0)


def mse(x, w, y):
    r = x @ w - y
    return sw.mean(r * r)


def mse_ref(xp, x, w, y):
    r = x @ w - y
    return xp.mean(r * r)


def bilinear(x, a, y):
    return x @ a @ y


def bilinear_ref(xp, x, a, y):
    return x @ a @ y


CASES: list[Case] = [
    Case("affine_tanh", P, affine_tanh, (In((5, 4), nested=((5, 1), (2, 2))), In((4, 3)), In((3,))), MATMUL,
         ref=affine_tanh_ref),
    Case("mlp", P, mlp, (In((6, 4)), In((4, 8), low=-0.7, high=0.7), In((8,)), In((8, 3), low=-0.7, high=0.7),
                         In((3,))), MATMUL, ref=mlp_ref),
    Case("softmax_cross_entropy", P, cross_entropy, (In((5, 4), low=-2, high=2), In((5, 4), low=0, high=1)),
         SENSITIVE, ref=cross_entropy_ref, note="soft targets p are differentiated too"),
    Case("logsumexp", P, lambda z: _sw_logsumexp(z, 1, detach_max=False),
         (In((4, 6), low=-2, high=2, nested=(4, (2, 3))),), SMOOTH,
         ref=lambda xp, z: _xp_logsumexp(xp, z, 1, detach_max=False),
         note="the max is not detached: its gradient must cancel"),
    Case("layer_norm", P, layer_norm, (In((4, 6), low=-2, high=2), In((6,)), In((6,))), SENSITIVE,
         ref=layer_norm_ref),
    Case("attention", P, attention, (In((3, 4)), In((5, 4)), In((5, 2))), SENSITIVE, ref=attention_ref,
         note="scaled dot-product attention, d = 4"),
    Case("conv1d", P, conv1d, (In((10,)), In((3,))), SMOOTH, ref=conv1d_ref,
         note="valid 3-tap convolution from overlapping slices"),
    Case("stencil2d", P, stencil2d, (In((6, 5)),), SMOOTH, ref=stencil2d_ref),
    Case("polynomial", P, horner, (In((8,), low=-1.5, high=1.5), In((5,))), SMOOTH, ref=horner_ref,
         note="Horner's rule, coefficients sliced from one Tensor"),
    Case("broadcast_chain", P, broadcast_chain, (In((3, 1)), In((1, 4)), In((4,)), In((2, 3, 4))), SENSITIVE,
         ref=broadcast_chain_ref),
    Case("nested_reductions", P, nested_reductions, (In((2, (3, 4)), broadcast_leaf=2),), SMOOTH,
         ref=nested_reductions_ref, note="reductions over a nested mode; broadcast variant at depth 2"),
    Case("gmm_loglik", P, gmm_loglik, (In((8,), low=-2, high=2), In((3,)), In((3,), low=-0.5, high=0.5),
                                       In((3,))), SENSITIVE, ref=gmm_loglik_ref),
    Case("batched_jacobian", P, jacobian_tanh, (In((4, 3), nested=((2, 2), 3)), In((3,))), MATMUL,
         ref=jacobian_tanh_ref, cotangent="basis",
         note="the full 4x(inputs) Jacobian from one sw.grad(..., batched=True) call"),
    Case("attention_heads", P, heads, (In((4, 6)),), MATMUL, ref=heads_ref,
         note="reshape + permute into heads, batched matmul"),
    Case("mse_regression", P, mse, (In((6, 3)), In((3,)), In((6,))), MATMUL, ref=mse_ref),
    Case("bilinear", P, bilinear, (In((4,)), In((4, 5)), In((5,))), MATMUL, ref=bilinear_ref),
]
