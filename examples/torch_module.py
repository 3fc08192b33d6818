"""A StrideWeave function as the middle layer of a torch nn.Module, trained by torch.

``sw.interop.torch_function`` turns a function written with StrideWeave into
a function on torch tensors that ``torch.autograd`` differentiates: the
tensors reach StrideWeave without a copy, and backward runs StrideWeave's
engine. The module below trains side by side with its pure-torch twin and
reaches the same losses.
"""

import torch

import strideweave as sw


@sw.interop.torch_function
def gated(h, w, b):
    """A gated layer written once with StrideWeave: tanh(h @ w + b) * sigmoid-ish gate."""
    z = h @ w + b
    return sw.tanh(z) * (0.5 + 0.5 * sw.tanh(0.5 * z))


def gated_torch(h, w, b):
    z = h @ w + b
    return torch.tanh(z) * (0.5 + 0.5 * torch.tanh(0.5 * z))


class Net(torch.nn.Module):
    def __init__(self, middle):
        super().__init__()
        self.middle = middle
        self.inp = torch.nn.Linear(3, 16)
        self.w = torch.nn.Parameter(0.3 * torch.randn(16, 16))
        self.b = torch.nn.Parameter(torch.zeros(16))
        self.out = torch.nn.Linear(16, 1)

    def forward(self, x):
        return self.out(self.middle(torch.tanh(self.inp(x)), self.w, self.b))


torch.manual_seed(0)
x = torch.randn(64, 3)
y = torch.sin(x @ torch.tensor([[1.0], [-2.0], [0.5]]))

twin = Net(gated_torch)
model = Net(gated)
model.load_state_dict(twin.state_dict())
for net in (model, twin):
    opt = torch.optim.SGD(net.parameters(), lr=0.2)
    for _ in range(60):
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(net(x), y)
        loss.backward()
        opt.step()
    net.final = loss.item()

print(f"StrideWeave middle layer: final loss {model.final:.6f}")
print(f"pure torch twin:          final loss {twin.final:.6f}")
assert abs(model.final - twin.final) <= 1e-4 * abs(twin.final) + 1e-6

# The other direction: a torch kernel inside a StrideWeave graph, on any carrier.
softplus = sw.interop.from_torch(torch.nn.functional.softplus)
v = sw.tensor([[-1.0, 0.0, 2.0]], carrier="numpy")
sw.sum(softplus(v) * 2.0).backward()
print("d/dv sum(2 softplus(v)) on", type(v.grad.carrier).__name__, v.grad.numpy().round(4).tolist())
