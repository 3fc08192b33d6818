"""gradcheck's default tolerances: every correct Float32 gradient passes, one 1% or 0.1% off fails, on every carrier.

The correct gradients are the conformance catalogue's programs (every case
in its canonical layout; the contractions, decompositions and programs with
cancellation in every layout), against float64 central differences. The
wrong ones are the same programs with a planted relative error: an identity
operation whose backward scales the cotangent by ``1 + error``.
"""

import re

import numpy as np
import pytest

import strideweave as sw
from conformance.catalogue import CATALOGUE, SMOOTH
from conformance.inputs import prepare_inputs
from strideweave import testing

EAGER = testing.available_carriers()
EVERY = testing.available_carriers(lazy=True)
DIFFERENCED = [case for case in CATALOGUE if case.fd]
UNITS = [(case, layout) for case in DIFFERENCED
         for layout in (case.layouts() if case.tol != SMOOTH else ["canonical"])]


class Planted(sw.Operation):
    """The identity, whose backward scales the cotangent by ``1 + error`` (a deliberately wrong rule)."""

    def forward(self, x, error, *, options=None):
        self.context["factor"] = 1.0 + error
        return sw.multiply(x, 1.0)

    def backward(self, gradient):
        return (sw.multiply(gradient, self.context["factor"]),)


def _cotangent(case, tensors):
    out = case.fn(*tensors)
    shape = np.asarray(out.numpy()).shape
    return np.random.default_rng(case.seed).uniform(-1.0, 1.0, shape).astype(np.float32)


def _inputs(case, layout="canonical"):
    tensors = [p.tensor("numpy") for p in prepare_inputs(case.inputs, layout, case.seed)]
    return tensors, _cotangent(case, tensors)


def _carriers(case, among):
    return [c for c in among if c not in dict(case.unavailable)]


def _planted(case, error, at=0):
    def fn(*xs):
        xs = list(xs)
        xs[at] = Planted()(xs[at], error)
        return case.fn(*xs)
    return fn


@pytest.mark.slow
@pytest.mark.parametrize(("case", "layout"), UNITS, ids=[f"{c.name}-{v}" for c, v in UNITS])
def test_every_correct_catalogue_gradient_passes_with_the_defaults(case, layout):
    tensors, cot = _inputs(case, layout)
    report = testing.gradcheck(case.fn, tensors, cot, carriers=_carriers(case, EAGER))
    assert set(report.max_abs_error) == set(_carriers(case, EAGER))


# Programs with gradients of order one: a relative error shows above the absolute floor. Elementwise,
# a reduction, a contraction, decompositions and programs with cancellation.
PLANTED = ["exp", "sum_mode", "matmul", "xp_svd", "xp_det", "layer_norm", "gmm_loglik", "attention"]
BY_NAME = {case.name: case for case in CATALOGUE}


@pytest.mark.parametrize(("name", "carrier"), [(n, c) for n in PLANTED for c in _carriers(BY_NAME[n], EVERY)])
def test_a_planted_error_of_one_or_a_tenth_of_a_percent_fails(name, carrier):
    case = BY_NAME[name]
    tensors, cot = _inputs(case)
    testing.gradcheck(_planted(case, 0.0), tensors, cot, carriers=[carrier])  # the plant itself is exact
    for error in (1e-2, 1e-3, -1e-3):
        with pytest.raises(AssertionError, match=rf"gradcheck failed: carrier '{carrier}', input 0, element"):
            testing.gradcheck(_planted(case, error), tensors, cot, carriers=[carrier])


@pytest.mark.parametrize("carrier", EVERY)
def test_a_planted_error_in_a_later_input_is_named_with_its_size(carrier):
    case = BY_NAME["matmul"]
    tensors, cot = _inputs(case)
    with pytest.raises(AssertionError, match=rf"carrier '{carrier}', input 1, element") as info:
        testing.gradcheck(_planted(case, 1e-3, at=1), tensors, cot, carriers=[carrier])
    rel = float(re.search(r"rel error ([0-9.e-]+)\)", str(info.value)).group(1))
    assert 0.9e-3 < rel < 1.1e-3
