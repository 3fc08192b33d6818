"""A full Jacobian from one batched ``sw.grad`` call.

With ``batched=True`` the cotangent has one extra leading batch mode: its
layout is ``(K, *output modes)`` with the output's own layout after the
batch mode. Feeding the K = n basis vectors returns J one row per batch
index, without touching any ``.grad``.
"""

import numpy as np

import strideweave as sw


def f(x):
    """f: R^3 -> R^2, f(x) = (x0 * x1, sin(x2) + x0^2)."""
    a, b, c = x[0:1], x[1:2], x[2:3]   # one-element slices keep layout (1):(1); x[i] would be 0-d
    return sw.concat([a * b, sw.sin(c) + a ** 2.0])


def basis_cotangents(y):
    """The K = y.size basis cotangents for ``y``, batched: layout (K, *y modes) : (cosize, *y strides)."""
    k, cosize = y.size, y.layout.cosize
    layout = sw.Layout(sw.Shape([k, *y.layout.shape.modes]), sw.Stride([cosize, *y.layout.stride.modes]))
    storage = np.zeros(k * cosize, dtype=np.float32)
    for i in range(k):
        storage[i * cosize + y.layout(i)] = 1.0   # batch i: a one at y's i-th element (colexicographic)
    return sw.Tensor.from_storage(storage, layout)


x = sw.tensor([1.0, 2.0, 0.5])
y = f(x)

cotangents = basis_cotangents(y)
print("cotangent layout:", cotangents.layout, "for y.layout", y.layout)
(jac,) = sw.grad(y, [x], cotangents, batched=True)

print("y =", y.tolist())
print("J layout:", jac.layout, "(batch stride = cosize of one gradient)")
print("J =")
print(np.array2string(jac.numpy(), precision=4))

analytic = np.array([[2.0, 1.0, 0.0],
                     [2.0, 0.0, np.cos(0.5)]], dtype=np.float32)
print("matches the analytic Jacobian:", np.allclose(jac.numpy(), analytic, atol=1e-6))
print("x.grad untouched:", x.grad is None)
