"""Helpers shared by the autograd spec suite: tensor builders and observable custom Operations."""

from __future__ import annotations

import numpy as np

import strideweave as sw

F32 = sw.DType.Float32


def layout(shape, stride=None):
    return sw.Layout(sw.Shape(shape), None if stride is None else sw.Stride(stride))


def vec(values, carrier):
    """A canonical Float32 Tensor from nested lists (``values[i][j]`` at coordinate (i, j))."""
    return sw.tensor(np.asarray(values, dtype=np.float32).tolist(), carrier=carrier)


def stored(storage, lay, carrier):
    """A Float32 Tensor viewing flat ``storage`` through ``lay`` as is."""
    return sw.Tensor.from_storage([float(v) for v in storage], lay, carrier=carrier)


def canonical(values, lay, carrier):
    """Float32 Tensor whose logical values (numpy, one axis per top-level mode) are ``values``,
    stored through the injective layout ``lay``: each logical position written at its offset."""
    values = np.asarray(values, dtype=np.float64)
    storage = np.zeros(max(lay.cosize, 1))
    flat = values.reshape(-1, order="F") if values.ndim > 1 else values.reshape(-1)
    for i in range(lay.size):
        storage[lay(i)] = flat[i]
    return stored(storage, lay, carrier)


def arr(tensor):
    """Logical values as a float64 numpy array."""
    return np.asarray(tensor.numpy(), dtype=np.float64)


def snapshot(tensors):
    """(grad object, grad values) for each Tensor, to prove nothing changed."""
    out = []
    for t in tensors:
        g = t.grad
        out.append((g, None if g is None else arr(g).copy()))
    return out


def assert_unchanged(tensors, before):
    for t, (g, values) in zip(tensors, before):
        assert t.grad is g
        if g is not None:
            np.testing.assert_array_equal(arr(t.grad), values)


def alias(x):
    """A new Tensor over ``x``'s storage with no history (not an autograd operation)."""
    return sw.Tensor(x.carrier, x.layout, x.offset)


class Probe(sw.Operation):
    """Identity operation recording every backward call (cotangent values and carrier class)."""

    def __init__(self, log=None, name="probe"):
        self.calls = []
        self.carrier_types = []
        self.log = log
        self.name = name

    def forward(self, x, options=None):
        return x * 1.0

    def backward(self, gradient):
        self.calls.append(arr(gradient).copy())
        self.carrier_types.append(type(gradient.carrier))
        if self.log is not None:
            self.log.append(self.name)
        return (gradient,)


class PassThrough(sw.Operation):
    """Identity whose backward hands the received cotangent object straight back."""

    def forward(self, x, options=None):
        return x * 1.0

    def backward(self, gradient):
        return (gradient,)


class Scale(sw.Operation):
    """y = k * x with a backward that computes through public operations."""

    def __init__(self, k):
        self.k = k
        self.calls = 0

    def forward(self, x, options=None):
        return x * self.k

    def backward(self, gradient):
        self.calls += 1
        return (gradient * self.k,)


class FirstOnly(sw.Operation):
    """y = a + b, but backward propagates only to the first input."""

    def __init__(self):
        self.calls = 0

    def forward(self, a, b, options=None):
        return a + b

    def backward(self, gradient):
        self.calls += 1
        return (gradient, None)


class Returns(sw.Operation):
    """y = x * 1, whose backward returns whatever ``make(gradient)`` builds."""

    def __init__(self, make):
        self.make = make

    def forward(self, *args, options=None):
        return args[0] * 1.0

    def backward(self, gradient):
        return self.make(gradient)


class Raises(sw.Operation):
    """y = x * 1, whose backward raises."""

    def forward(self, x, options=None):
        return x * 1.0

    def backward(self, gradient):
        raise ArithmeticError("backward failed on purpose")


class AliasProbe(sw.Operation):
    """y = x viewed through the same layout and storage; backward records the cotangent and passes it on."""

    def __init__(self):
        self.calls = []
        self.layouts = []
        self.carrier_types = []

    def forward(self, x, options=None):
        return sw.Tensor(x.carrier, x.layout, x.offset)

    def backward(self, gradient):
        self.calls.append(arr(gradient).copy())
        self.layouts.append(gradient.layout)
        self.carrier_types.append(type(gradient.carrier))
        return (gradient,)
