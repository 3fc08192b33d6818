"""Mix torch, JAX and NumPy arrays in one differentiable program.

Each array is wrapped as a Tensor on its own carrier. An operation whose
operands live on different carriers is told where to run with
``ExecutionOptions``; the gradients come back to each input on its own
carrier class.
"""

import jax.numpy as jnp
import numpy as np
import torch

import strideweave as sw

weights = sw.tensor(torch.tensor([[0.5, -1.0], [2.0, 0.25]]))   # TorchCarrier, no copy
inputs = sw.tensor(jnp.asarray([[1.0, 2.0], [3.0, 4.0]]))       # JaxCarrier
bias = sw.tensor(np.array([0.1, -0.2], dtype=np.float32))        # NumpyCarrier, no copy

on_torch = sw.ExecutionOptions(carrier="torch")
try:
    sw.matmul(inputs, weights)
except TypeError as err:
    print("without options:", err)

hidden = sw.matmul(inputs, weights, options=on_torch)             # runs on torch
out = sw.add(hidden, bias, options=on_torch)                      # bias broadcasts over rows
loss = sw.sum(sw.tanh(out) * sw.tanh(out))
loss.backward()

print("loss:", round(loss.item(), 5), "computed on", type(loss.carrier).__name__)
for name, t in [("weights", weights), ("inputs", inputs), ("bias", bias)]:
    native = t.grad.to_array()
    print(f"{name:8s} grad on {type(t.grad.carrier).__name__:13s} ({type(native).__module__}): {t.grad.tolist()}")
