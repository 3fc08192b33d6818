"""Every skip the conformance report can show is justified by a test: the skipped check really cannot run.

A skip reason is a claim ("this carrier lacks the function", "central
differences measure something else", "the bridge cannot carry this"). A
claim nobody checks can hide a wrong value: the Dask carrier's cholesky was
skipped as missing while it returned the upper factor. Here every skip in
the catalogue is enumerated and its claim checked: the call raises on that
carrier, finite differences disagree with the analytic gradient, the bridge
gives a different gradient. A skip kind without a check fails the suite.
"""

from __future__ import annotations

import contextlib
from dataclasses import replace

import numpy as np
import pytest

from conformance.catalogue import CATALOGUE, Case, select
from conformance.inputs import prepare_inputs
from conformance.interop import BRIDGES, LAYOUT, _native, _skip_reason, _through_jax, _through_torch
from conformance.runner import _analytic, _compare, _cotangents, _numeric, resolve_carriers

INSTALLED = resolve_carriers(None)


def skips() -> list[tuple[Case, str, str | None]]:
    """(case, kind, carrier) for every check the catalogue skips."""
    found: list[tuple[Case, str, str | None]] = []
    for case in CATALOGUE:
        found += [(case, "unavailable", carrier) for carrier, _reason in case.unavailable]
        if not case.fd:
            found.append((case, "fd", None))
        if case.ref is None:
            found.append((case, "native", None))
        prepared = prepare_inputs(case.inputs, LAYOUT, case.seed)
        found += [(case, "bridge", carrier) for carrier in BRIDGES if _skip_reason(case, prepared, carrier)]
    return found


@contextlib.contextmanager
def _scheduler(carrier: str):
    if carrier != "dask":
        yield
        return
    import dask

    with dask.config.set(scheduler="synchronous"):
        yield


def _setup(case: Case, layout: str):
    prepared = prepare_inputs(case.inputs, layout, case.seed)
    out_shape = tuple(int(s) for s in case.fn(*[p.tensor("numpy") for p in prepared]).layout.mode_sizes)
    return prepared, _cotangents(case, out_shape), out_shape


def unavailable_holds(case: Case, carrier: str) -> tuple[bool, str]:
    """Whether the case's gradient really raises on ``carrier`` (the claim of an ``unavailable`` skip)."""
    prepared, cots, _ = _setup(case, case.layouts()[0])
    try:
        with _scheduler(carrier):
            _analytic(case, prepared, carrier, cots)
    except Exception as exc:
        return True, f"raises {type(exc).__name__}: {exc}"
    return False, f"{case.name} runs on {carrier}: its check must run, not be skipped"


def fd_holds(case: Case) -> tuple[bool, str]:
    """Whether central differences really disagree with the analytic gradient (the claim of ``fd=False``)."""
    prepared, cots, out_shape = _setup(case, case.layouts()[0])
    ok, err, where = _compare(case, _analytic(case, prepared, "numpy", cots), _numeric(case, prepared, cots),
                              case.tol.fd_rtol, case.tol.fd_atol, out_shape)
    return not ok, f"worst error / tolerance {err:.3g} at {where}"


def bridge_holds(case: Case, carrier: str) -> tuple[bool, str]:
    """Whether the bridge really gives a different gradient, or raises (the claim of a bridge skip)."""
    prepared, cots, out_shape = _setup(case, LAYOUT)
    home = BRIDGES[carrier][1]
    want = _native(case, [p.tensor(home) for p in prepared], cots)
    arrays = [p.tensor(carrier).to_array() for p in prepared]
    try:
        got = (_through_torch if carrier == "torch" else _through_jax)(case, arrays, cots)
    except Exception as exc:
        return True, f"raises {type(exc).__name__}: {exc}"
    ok, err, where = _compare(case, got, want, case.tol.agree_rtol, case.tol.agree_atol, out_shape)
    return not ok, f"worst error / tolerance {err:.3g} at {where}"


def native_holds(case: Case) -> tuple[bool, str]:
    """A case without a native reference skips a check for want of code: write its ``ref``."""
    return False, f"{case.name} has no ref (native_note {case.native_note!r}): write one"


SKIPS = skips()


@pytest.mark.parametrize(("case", "kind", "carrier"), SKIPS,
                         ids=[f"{case.name}-{kind}-{carrier}" for case, kind, carrier in SKIPS])
def test_skip_reason_holds(case, kind, carrier):
    if carrier is not None and carrier not in INSTALLED:
        pytest.skip(f"{carrier} is not installed")
    if kind == "unavailable":
        holds, detail = unavailable_holds(case, carrier)
    elif kind == "fd":
        holds, detail = fd_holds(case)
    elif kind == "bridge":
        pytest.importorskip(carrier)
        holds, detail = bridge_holds(case, carrier)
    else:
        holds, detail = native_holds(case)
    assert holds, f"{case.name}: the {kind} skip on {carrier} does not hold: {detail}"


def test_every_kind_of_skip_the_catalogue_has_is_checked():
    assert {kind for _, kind, _ in SKIPS} <= {"unavailable", "fd", "bridge", "native"}
    assert {kind for _, kind, _ in SKIPS} >= {"fd", "bridge"}  # the catalogue's current skips are found


@pytest.mark.skipif("dask" not in INSTALLED, reason="dask is not installed")
def test_a_skip_that_hides_a_working_call_is_caught():
    # Dask's cholesky was once skipped as missing (while returning the upper factor).
    (case,) = select("xp_cholesky")
    holds, detail = unavailable_holds(replace(case, unavailable=(("dask", "missing"),)), "dask")
    assert not holds and "runs on dask" in detail


@pytest.mark.skipif("torch" not in INSTALLED, reason="torch is not installed")
def test_a_bridge_skip_that_hides_an_agreeing_gradient_is_caught():
    # Nested input modes were once skipped at the bridges; their gradients agree there.
    (case,) = select("matmul_nested_contraction")
    holds, detail = bridge_holds(case, "torch")
    assert not holds and np.isfinite(float(detail.split()[4]))
