"""Every gradient of a Float32 Tensor is Float32, on every carrier and every path (unit seed included).

The programs are the whole conformance catalogue (every differentiable
operation and the composite programs), each differentiated twice: through
``loss.backward()`` with its implicit unit seed, and through ``sw.grad`` with
an integer-valued cotangent of another dtype. A third path mixes an integer
Tensor into the program, so promotion must carry the Float32 result back.
"""

import numpy as np
import pytest

import strideweave as sw
from conformance.catalogue import CATALOGUE
from conformance.inputs import prepare_inputs

F32 = sw.DType.Float32
CASES = [c for c in CATALOGUE if c.fd]


def _native_is_float32(t):
    return "float32" in str(t.carrier.array.dtype)


def _inputs(case, carrier):
    return [p.tensor(carrier) for p in prepare_inputs(case.inputs, "canonical", case.seed)]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_unit_seed_gradients_are_float32(case, carrier):
    xs = _inputs(case, carrier)
    out = case.fn(*xs)
    if not out.is_differentiable():
        pytest.fail(f"{case.name} gave a {out.dtype!r} result from Float32 inputs")
    sw.sum(out).backward()
    for x in xs:
        if x.grad is not None:
            assert x.grad.dtype is F32 and _native_is_float32(x.grad), (case.name, x.grad.dtype)


@pytest.mark.parametrize("case", CASES[:24], ids=[c.name for c in CASES[:24]])
def test_integer_cotangent_gives_float32_gradients(case, carrier):
    xs = _inputs(case, carrier)
    out = case.fn(*xs)
    cotangent = sw.Tensor.from_storage(np.ones(out.layout.cosize, np.int32), out.layout, carrier=carrier) \
        if out.layout.is_injective() else None
    if cotangent is None:
        pytest.skip("broadcast-aliased result: the cotangent needs another layout")
    grads = sw.grad(out, xs, cotangent)
    for g in grads:
        if g is not None:
            assert g.dtype is F32 and _native_is_float32(g), (case.name, g.dtype)


def test_mixed_integer_operand_keeps_float32_gradients(carrier):
    x = sw.tensor([1.0, 2.0, 3.0], carrier=carrier)
    k = sw.arange(3, carrier=carrier)
    loss = sw.sum(x * k)
    loss.backward()
    assert x.grad.dtype is F32 and _native_is_float32(x.grad)
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 1.0, 2.0])
