"""Pytest entry to the conformance catalogue: one test per case, every installed carrier, every layout.

Each test runs the case exactly as ``python -m conformance`` does and fails
naming every disagreeing (layout, carrier, check, element). A second group
checks the suite's own machinery (selection, layout variants, reports).
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import strideweave as sw
from conformance.catalogue import CATALOGUE, select
from conformance.inputs import VARIANTS, prepare_inputs
from conformance.report import write_all
from conformance.runner import CARRIERS, condense, resolve_carriers, run, run_case, run_unit

INSTALLED = resolve_carriers(None)
# The lazy Dask carrier pays a scheduler round trip per value read; here it runs
# each case in its first layout variant on a 2-worker LocalCluster (the
# `dask_client` fixture); `python -m conformance` runs every variant on it.
EAGER = [c for c in INSTALLED if c != "dask"]


@pytest.mark.parametrize("case", CATALOGUE, ids=[c.name for c in CATALOGUE])
def test_case_agrees_everywhere(case):
    _assert_agree(case, run_case(case, EAGER))


@pytest.mark.parametrize("case", CATALOGUE, ids=[c.name for c in CATALOGUE])
def test_case_agrees_on_dask(case, request):
    pytest.importorskip("dask.array")
    request.getfixturevalue("dask_client")
    _assert_agree(case, run_unit(case, case.layouts()[0], ["dask"]))


def _assert_agree(case, checks):
    assert checks, f"{case.name} produced no checks"
    bad = [c for c in checks if c.status in ("fail", "error")]
    if bad:
        pytest.fail(f"{len(bad)} of {len(checks)} checks disagree:\n" + "\n".join(condense(bad)), pytrace=False)


# ----- the suite's own machinery ----------------------------------------------------------------


def test_catalogue_covers_every_differentiable_operation():
    """Every differentiable public op appears in some case's source."""
    import inspect

    source = "".join(inspect.getsource(m) for m in {inspect.getmodule(c.fn) for c in CATALOGUE})
    ops = ["add", "subtract", "multiply", "divide", "negative", "power", "exp", "log", "sqrt", "sin", "cos",
           "tanh", "abs", "maximum", "minimum", "where", "clip", "sum", "mean", "max", "min", "prod", "matmul",
           "tensordot", "concat", "stack", "astype", "copy", "detach", "view", "permute", "transpose",
           "reshape", "broadcast_to"]
    missing = [op for op in ops if f"sw.{op}(" not in source and f".{op}(" not in source]
    assert not missing, f"operations without a conformance case: {missing}"
    programs = [c for c in CATALOGUE if c.family == "program"]
    assert len(programs) >= 12


def test_layout_variants_keep_logical_values_and_put_nan_in_holes():
    case = select("affine_tanh")[0]
    base = prepare_inputs(case.inputs, "canonical", case.seed)
    for variant in VARIANTS:
        for p, q in zip(base, prepare_inputs(case.inputs, variant, case.seed)):
            t = q.tensor("numpy")
            np.testing.assert_array_equal(t.numpy(), q.logical)
            if variant in ("transposed", "holes", "nested"):
                np.testing.assert_array_equal(q.logical, p.logical)
            if variant == "holes":
                assert np.isnan(q.storage).sum() == q.storage.size - q.logical.size
            if variant == "broadcast" and q.layout != p.layout:
                assert q.layout.aliasing() == "broadcast"


def test_select_patterns():
    assert [c.name for c in select("layer_norm")] == ["layer_norm"]
    assert {c.family for c in select("program")} == {"program"}
    assert {c.name for c in select("mat*")} >= {"matmul", "matvec"}
    assert select(None) == CATALOGUE


def test_resolve_carriers_rejects_unknown_names():
    with pytest.raises(ValueError, match="unknown carrier"):
        resolve_carriers(["numpy", "cupy"])
    assert resolve_carriers(["numpy"]) == ["numpy"]
    assert set(INSTALLED) <= set(CARRIERS)


def test_a_wrong_reference_is_caught_and_named(tmp_path):
    """A deliberately wrong native reference fails, names the element, and lands in every report."""
    import dataclasses

    case = select("multiply")[0]
    broken = dataclasses.replace(case, ref=lambda xp, x, y: x * y * 1.01, variants=("canonical",))
    native = [c for c in INSTALLED if c in ("torch", "jax")]
    checks = run_case(broken, ["numpy", *native])
    fails = [c for c in checks if c.status == "fail"]
    assert len(fails) == len(native)
    assert all("got" in c.element and "[" in c.element for c in fails)

    result = run([broken], ["numpy", *native])
    paths = write_all(result, tmp_path)
    data = json.loads(paths["json"].read_text())
    assert len(data["failures"]) == len(native)
    assert "FAIL" in paths["markdown"].read_text()
    assert paths["heatmap"].stat().st_size > 0


def test_batched_jacobian_rows_match_single_cotangent_grads():
    """The batched Jacobian case really is one sw.grad(batched=True) call equal to K single VJPs."""
    case = select("batched_jacobian")[0]
    prepared = prepare_inputs(case.inputs, "holes", case.seed)
    w, x = (p.tensor("numpy") for p in prepared)
    out = case.fn(w, x)
    eye = np.eye(out.size, dtype=np.float32)
    stacked = sw.grad(out, [w], sw.tensor(eye), batched=True, retain_graph=True)[0].numpy()
    for k in range(out.size):
        row = sw.grad(out, [w], sw.tensor(eye[k]), retain_graph=True)[0].numpy()
        np.testing.assert_allclose(stacked[k], row, rtol=1e-6)
