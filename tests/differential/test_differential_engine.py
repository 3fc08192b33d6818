"""The differential tester itself: it sees a wrong value, a wrong gradient, a crash and a refusal.

Each check plants a fault in ``strideweave.array_api`` (monkeypatched for one
test) and asserts the classifier names it; the reproducer it prints runs as
printed.
"""

import contextlib
import io
import re

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("array_api_compat")

from _diff_programs import Program, RandomChooser, draw_program, shadow
from _diff_runner import (
    AGREE,
    BOTH_REFUSED,
    CRASH,
    LOUD,
    SILENT,
    SINGULAR,
    TORCH_REFUSED,
    classify,
    minimize,
    reproducer,
)

import strideweave.array_api as xp

LEAF = (("x0", np.array([[0.5, -1.25, 0.75], [1.5, 0.25, -0.5]], dtype=np.float32)),)
SIN = Program(LEAF, ("v0 = xp.sin(x0)", "v1 = xp.sum(v0, axis=1)"))


def test_a_right_program_agrees():
    assert classify(SIN, "numpy").kind == AGREE


def test_a_wrong_value_is_a_silent_difference(monkeypatch):
    monkeypatch.setattr(xp, "sin", xp.cos)
    outcome = classify(SIN, "numpy")
    assert outcome.kind == SILENT and "value of v0" in outcome.detail


def test_a_wrong_gradient_is_a_silent_difference(monkeypatch):
    sin = xp.sin
    monkeypatch.setattr(xp, "sin", lambda x: sin(x) + 0.0 * (sin(x) - sin(x)).detach())
    assert classify(SIN, "numpy").kind == AGREE  # the planted function is right so far
    monkeypatch.setattr(xp, "sin", lambda x: sin(x.detach()) + 0.0 * x)
    outcome = classify(SIN, "numpy")
    assert outcome.kind == SILENT and "gradient of x0" in outcome.detail


def test_an_unexpected_exception_is_a_crash_and_an_expected_one_is_loud(monkeypatch):
    def fails(kind):
        def sin(x):
            raise kind("planted")
        return sin
    monkeypatch.setattr(xp, "sin", fails(KeyError))
    assert classify(SIN, "numpy").kind == CRASH
    monkeypatch.setattr(xp, "sin", fails(RuntimeError))
    outcome = classify(SIN, "numpy")
    assert outcome.kind == LOUD and "planted" in outcome.detail and "xp.sin" in outcome.detail


def test_programs_torch_refuses_are_skipped():
    # torch refuses any in-place write into a leaf that requires grad
    kind = classify(Program(LEAF, ("x0 += 1.0",)), "numpy").kind
    assert kind in (TORCH_REFUSED, BOTH_REFUSED)


def test_negative_steps_masks_and_repeated_indices_are_compared_with_torch(monkeypatch):
    program = Program(LEAF, ("v0 = x0[::-1, 2:0:-2]", "v1 = x0[x0 > 0.6]",
                             "v2 = x0[..., xp.asarray([2, 0, 2], device=x0.device)]",
                             "v3 = xp.asarray(x0, copy=True)", "v3[::-1, :] *= 2.0"))
    assert classify(program, "numpy").kind == AGREE
    # a planted fault: reversed slices that read forwards
    monkeypatch.setattr("strideweave.array_api._indexing.flip", lambda x, axis=None: x)
    outcome = classify(program, "numpy")
    assert outcome.kind == SILENT and "v0" in outcome.detail


def test_drawn_programs_use_negative_steps_masks_and_repeated_indices():
    bodies = "\n".join(draw_program(RandomChooser(seed)).body() for seed in range(60))
    assert re.search(r"\[[^\]]*:-\d\]", bodies)                              # a negative step
    assert re.search(r"\[xp\.asarray\(\[(True|False)|\[\w+ [<>] ", bodies)      # a boolean mask
    assert re.search(r"xp\.asarray\(\[(-?\d+), [^\]]*\b\1\]", bodies)          # a repeated index


def test_a_tie_is_skipped_unless_singular_points_are_asked_for():
    program = Program(LEAF, ("v0 = xp.maximum(x0, x0)",))
    assert classify(program, "numpy").kind == SINGULAR
    assert classify(program, "numpy", singular=True).kind != SINGULAR


def test_the_minimal_reproducer_keeps_only_what_fails_and_runs_as_printed(monkeypatch):
    program = Program(LEAF, ("v0 = xp.exp(x0)", "v1 = xp.sin(x0)", "v2 = v0 * 2.0"))
    monkeypatch.setattr(xp, "sin", xp.cos)
    small = minimize(program, "numpy", SILENT)
    assert small.lines == ("v0 = xp.sin(x0)",)  # cut to the one wrong statement, renumbered
    monkeypatch.undo()
    text = reproducer(small, "numpy", classify(small, "numpy"))
    with contextlib.redirect_stdout(io.StringIO()) as out:
        exec(text, {})  # the reproducer is the subject
    assert "x0" in out.getvalue()


@pytest.mark.parametrize("seed", range(5))
def test_drawn_programs_run_in_the_shadow_and_their_leaves_print_exactly(seed):
    program = draw_program(RandomChooser(seed))
    assert program.lines and shadow(program) is not None
    from _diff_programs import leaf_literal

    namespace = {"np": np}
    for _, data in program.leaves:
        again = np.asarray(eval(leaf_literal(data), namespace), dtype=np.float32)
        assert np.array_equal(again, data)


# ----- Dask: the same classification, leaves in chunks, linalg statements --------------------------

SPD = (("x0", np.array([[1.5, 0.25, -0.5], [0.75, 1.25, 0.5], [-0.25, 0.5, 1.75]], dtype=np.float32)),)
CHOLESKY = Program(SPD, ("v0 = xp.linalg.cholesky(x0 @ x0.mT + 1.0 * xp.eye(3, dtype=x0.dtype, device=x0.device))",
                         "v1 = xp.linalg.det(x0)"))


def test_dask_linalg_agrees_and_an_upper_factor_is_a_silent_difference(monkeypatch):
    pytest.importorskip("dask.array")
    assert classify(CHOLESKY, "dask").kind == AGREE
    cholesky = xp.linalg.cholesky
    monkeypatch.setattr(xp.linalg, "cholesky", lambda a, upper=False: cholesky(a, upper=not upper))
    outcome = classify(CHOLESKY, "dask")
    assert outcome.kind == SILENT and "value of v0" in outcome.detail


def test_a_dask_reproducer_runs_as_printed():
    pytest.importorskip("dask.array")
    text = reproducer(CHOLESKY, "dask", classify(CHOLESKY, "dask"))
    assert "da.from_array(" in text and "scheduler='synchronous'" in text
    with contextlib.redirect_stdout(io.StringIO()) as out:
        exec(text, {})  # the reproducer is the subject
    assert "x0" in out.getvalue()


@pytest.mark.parametrize("seed", range(5))
def test_drawn_linalg_programs_run_in_the_shadow(seed):
    from _diff_linalg import WITH_LINALG

    program = draw_program(RandomChooser(seed), kinds=WITH_LINALG)
    assert program.lines and shadow(program) is not None
