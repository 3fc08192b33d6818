"""A tiny MLP trained with plain gradient descent on the NumPy carrier.

Fits y = sin(3x) on [-1, 1] with one hidden tanh layer. Parameters are
updated in place after each backward pass (forward, backward, then mutate:
the order the version check requires).
"""

import numpy as np

import strideweave as sw

n, hidden = 64, 16
with sw.no_grad():   # data are constants: record no graph for them (every Float32 Tensor is differentiable)
    x = sw.reshape(sw.tensor(np.linspace(-1.0, 1.0, n, dtype=np.float32)), [n, 1])
    target = sw.sin(3.0 * x)

w1 = sw.random.normal([1, hidden], seed=0, std=1.0)
b1 = sw.zeros([hidden])
w2 = sw.random.normal([hidden, 1], seed=1, std=0.3)
b2 = sw.zeros([1])
params = [w1, b1, w2, b2]


def model(inputs):
    h = sw.tanh(sw.matmul(inputs, w1) + b1)   # (n, hidden)
    return sw.matmul(h, w2) + b2              # (n, 1)


learning_rate = 0.1
for step in range(501):
    loss = sw.mean((model(x) - target) ** 2.0)
    for p in params:
        p.grad = None
    loss.backward()
    with sw.no_grad():
        for p in params:
            p.add_(-learning_rate * p.grad)   # in place: bumps the carrier version
    if step % 100 == 0:
        print(f"step {step:3d}  loss {loss.item():.5f}")

with sw.no_grad():
    final = sw.mean((model(x) - target) ** 2.0).item()
print(f"final mse {final:.5f}; parameters and gradients live on {type(w1.grad.carrier).__name__}")
