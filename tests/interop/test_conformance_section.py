"""The conformance report's interop section runs each case through both bridges and catches a wrong gradient."""

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("jax")

import conformance.interop as interop
from conformance.catalogue import select


def test_cases_pass_through_both_bridges_and_skips_say_why():
    checks = interop.run_interop(select("affine_tanh,view_layout"), ["numpy", "torch", "jax"])
    got = {(c.case, c.carrier, c.check): c for c in checks}
    assert {k[0] for k in got} == {"affine_tanh", "view_layout"}
    assert got["affine_tanh", "torch", "torch_function"].status == "pass"
    assert got["affine_tanh", "jax", "jax_function+jit"].status == "pass"
    assert got["view_layout", "torch", "torch_function"].status == "pass"   # strides cross the torch bridge
    skipped = got["view_layout", "jax", "jax_function+jit"]
    assert skipped.status == "skip" and "no strides" in skipped.message
    lines = interop.markdown(checks)
    assert lines[1].startswith("## Interop") and any(line.startswith("| affine_tanh |") for line in lines)


def test_a_wrong_bridge_gradient_fails_the_check(monkeypatch):
    right = interop._through_torch
    monkeypatch.setattr(interop, "_through_torch", lambda *a: [1.01 * g for g in right(*a)])
    (check,) = interop.run_interop(select("affine_tanh"), ["torch"])
    assert check.status == "fail" and check.error > check.rtol
    assert np.isfinite(check.error)
