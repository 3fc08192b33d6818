"""Check one backend against another: the same program, differentiated on every carrier.

``sw.testing.assert_carriers_agree`` does this in one call when available;
the loop below spells out what it checks.
"""

import numpy as np

import strideweave as sw


def program(x, w):
    """A small differentiable program mixing views, broadcasting and reductions."""
    y = sw.matmul(x, w)                       # (3, 2)
    y = y - sw.mean(y, modes=(0,))            # centre each column: (3, 2) - (2)
    scale = sw.exp(sw.transpose(x)[0:2, 0])   # a strided view of x, shape (2)
    return sw.sum(sw.sin(y) * scale)


x_values = sw.random.normal([3, 4], seed=0).tolist()
w_values = sw.random.normal([4, 2], seed=1).tolist()

results = {}
for name in sw.testing.available_carriers():   # the carriers whose backend is installed
    x = sw.tensor(x_values, carrier=name)
    w = sw.tensor(w_values, carrier=name)
    loss = program(x, w)
    loss.backward()
    results[name] = (loss.item(), x.grad.numpy(), w.grad.numpy())
    print(f"{name:17s} loss={loss.item():+.6f}  |dx|={np.abs(x.grad.numpy()).sum():.6f}  "
          f"grad carrier={type(x.grad.carrier).__name__}")

reference = results["numpy"]
for value, gx, gw in results.values():
    np.testing.assert_allclose(value, reference[0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(gx, reference[1], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(gw, reference[2], rtol=1e-4, atol=1e-5)
print(f"gradients agree on {len(results)} carriers")

agree = getattr(sw.testing, "assert_carriers_agree", None)
if agree is not None:
    agree(program, [sw.tensor(x_values), sw.tensor(w_values)])
    print("sw.testing.assert_carriers_agree: ok")
