"""Write an Operation once and differentiate it on every carrier.

``forward`` may use any StrideWeave op (it runs with graph construction
off) and keeps what ``backward`` needs in ``self.context``. ``backward``
returns one cotangent per saved Tensor input (None for "no gradient"),
each in exactly that input's layout.
"""

import numpy as np

import strideweave as sw


def like(target, values):
    """``values`` as a cotangent in ``target``'s exact layout, on ``target``'s carrier."""
    if not target.layout.is_injective():          # broadcast input: the canonical layout
        return sw.copy(values)
    buffer = sw.zeros(target.layout.shape, carrier=target.carrier, layout=target.layout)
    return buffer.copy_(values)


class ScaledSoftplus(sw.Operation):
    """``y = log(1 + exp(beta * x)) / beta`` with a Tensor ``x`` and a Python float ``beta``."""

    def forward(self, x, beta, *, options=None):
        self.context["sigmoid"] = 1.0 / (1.0 + sw.exp(-beta * x))   # dy/dx
        return sw.log(1.0 + sw.exp(beta * x)) / beta

    def backward(self, gradient):
        (x,) = self.inputs()                      # beta is not a Tensor, so it is not saved
        return (like(x, gradient * self.context["sigmoid"]),)


def scaled_softplus(x, beta=2.0):
    return ScaledSoftplus()(x, beta)              # one Operation instance per call


values = [[-1.0, 0.0, 0.5], [1.0, 2.0, -3.0]]
expected = 1.0 / (1.0 + np.exp(-2.0 * np.array(values).T))   # gradient through the transposed view

for carrier in ["numpy", "torch", "jax", "array_api_strict"]:
    try:
        x = sw.tensor(values, carrier=carrier)
    except ImportError as err:
        print(f"{carrier:17s} skipped ({err})")
        continue
    y = scaled_softplus(sw.transpose(x))          # a non-canonical input layout on purpose
    loss = sw.sum(y)
    loss.backward()
    ok = np.allclose(x.grad.numpy(), expected.T, atol=1e-6)
    print(f"{carrier:17s} loss={loss.item():.5f} grad on {type(x.grad.carrier).__name__:15s} matches: {ok}")

report = getattr(sw.testing, "gradcheck", None)
if report is not None:
    report(lambda t: sw.sum(scaled_softplus(t)), [sw.tensor(values)])
    print("sw.testing.gradcheck: ok")
