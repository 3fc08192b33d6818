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


FAMILIES = sorted({c.family for c in CASES})


def _check_unit_seed(case, carrier):
    xs = _inputs(case, carrier)
    out = case.fn(*xs)
    if not out.is_differentiable():
        return f"{case.name}: a {out.dtype!r} result from Float32 inputs"
    sw.sum(out).backward()
    bad = [x.grad.dtype for x in xs if x.grad is not None and not (x.grad.dtype is F32 and _native_is_float32(x.grad))]
    return f"{case.name}: gradients of dtype {bad}" if bad else None


def _check_integer_cotangent(case, carrier):
    xs = _inputs(case, carrier)
    out = case.fn(*xs)
    if not out.layout.is_injective():
        return None  # a broadcast-aliased result takes its cotangent in another layout
    cotangent = sw.Tensor.from_storage(np.ones(out.layout.cosize, np.int32), out.layout, carrier=carrier)
    bad = [g.dtype for g in sw.grad(out, xs, cotangent)
           if g is not None and not (g.dtype is F32 and _native_is_float32(g))]
    return f"{case.name}: gradients of dtype {bad}" if bad else None


@pytest.mark.parametrize("family", FAMILIES)
def test_gradients_are_float32_for_every_catalogue_case(family, carrier):
    """Both paths, for every case of one family (one test per family keeps the suite's overhead low)."""
    problems = []
    for case in CASES:
        if case.family == family:
            problems += [p for p in (_check_unit_seed(case, carrier), _check_integer_cotangent(case, carrier)) if p]
    assert not problems, problems


def test_mixed_integer_operand_keeps_float32_gradients(carrier):
    x = sw.tensor([1.0, 2.0, 3.0], carrier=carrier)
    k = sw.arange(3, carrier=carrier)
    loss = sw.sum(x * k)
    loss.backward()
    assert x.grad.dtype is F32 and _native_is_float32(x.grad)
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 1.0, 2.0])
