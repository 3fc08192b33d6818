"""Random programs through ``sw.interop.torch_function`` and ``sw.interop.jax_function`` (eagerly and under
``jax.jit``), with float32, float64 and integer arguments passed positionally and by keyword, against the
same program in torch float64 (``_diff_bridges``).

Outcomes as in ``test_differential``: a silent difference or a crash fails
with a minimal reproducer; refusals where torch runs are counted and listed
(``Float32RuleError`` where a gradient is asked through a float64 value,
``LeafWriteError`` for a write into a lent argument, ...). Budget: a few
programs per bridge in CI; ``pytest --soak`` (or ``STRIDEWEAVE_SOAK=1``)
runs 1,500 per bridge, ``STRIDEWEAVE_DIFF_EXAMPLES`` any other number.
"""

import os
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("torch")
pytest.importorskip("array_api_compat")

from _diff_bridges import MODES, bridge_reproducer, classify_bridge, draw_case, run_bridge, run_reference
from _diff_programs import HypothesisChooser, Program
from _diff_runner import AGREE, FAILURES, LOUD, SILENT, TALLY, Tally, judge, minimize

SOAK = bool(os.environ.get("STRIDEWEAVE_SOAK"))
EXAMPLES = int(os.environ.get("STRIDEWEAVE_DIFF_EXAMPLES", "1500" if SOAK else "10"))
#: JAX compiles every new shape of every primitive it runs eagerly: its CI share is smaller
CI_EXAMPLES = {"jax_function": 2, "jax_function+jit": 4}
MAX_MINIMISED = 12


def _needs(mode):
    if mode.startswith("jax"):
        pytest.importorskip("jax")


@pytest.mark.parametrize("mode", MODES)
def test_random_programs_through_the_bridges_agree_with_torch(mode):
    _needs(mode)
    examples = EXAMPLES if SOAK or "STRIDEWEAVE_DIFF_EXAMPLES" in os.environ else CI_EXAMPLES.get(mode, EXAMPLES)
    tally = Tally()
    seen = set()

    @given(st.data())
    @settings(max_examples=examples, deadline=None, database=None, print_blob=False,
              suppress_health_check=list(HealthCheck))
    def one_case(data):
        case = draw_case(HypothesisChooser(data))
        outcome = classify_bridge(case, mode)
        tally.add(mode, outcome)
        if outcome.kind in FAILURES and len(seen) < MAX_MINIMISED:
            small = case.with_program(minimize(
                case.program, mode, outcome.kind,
                classify=lambda p, m, singular=False: classify_bridge(case.with_program(p), m)))
            signature = (outcome.kind, re.sub(r"[\d.]+", "#", small.program.body()))
            if signature not in seen:
                seen.add(signature)
                tally.failures.append((mode, outcome.kind, bridge_reproducer(small, mode,
                                                                              classify_bridge(small, mode))))

    one_case()
    TALLY.merge(tally.as_dict())
    print(tally.summary())
    row = tally.counts[mode]
    failed = sum(row[k] for k in FAILURES)
    assert not failed, f"{failed} of {examples} programs differ from torch without an error through {mode}\n" + \
        tally.summary()
    assert row[AGREE] >= examples // 4, tally.summary()


# ----- the bridge harness sees what it is there to see -----

def _case(lines, roles, *leaves):
    import numpy as np
    data = [np.asarray(v, dtype=np.float32) for v in leaves]
    from _diff_bridges import Case
    return Case(Program(tuple((f"x{i}", d) for i, d in enumerate(data)), tuple(lines)),
                {id(d): r for d, r in zip(data, roles)})


@pytest.mark.parametrize("mode", MODES)
def test_mixed_arguments_by_keyword_agree(mode):
    _needs(mode)
    case = _case(["v0 = x0 * x1 + x2", "v1 = xp.sum(v0 * x0, axis=0)"],
                 [("grad", True), ("int", False), ("f64cast", True)],
                 [[0.5, -1.25], [1.5, 0.75]], [[1.0, 2.0], [-0.5, 0.25]], [0.25, 1.75])
    assert classify_bridge(case, mode).kind == AGREE


@pytest.mark.parametrize("mode", MODES)
def test_a_gradient_through_float64_is_loud_with_the_float32_rule(mode):
    _needs(mode)
    case = _case(["v0 = xp.mean((x1 - x0) ** 2)"], [("grad", False), ("f64", True)], [1.0, 0.5, -0.25], [0.0, 1.0, 2.0])
    outcome = classify_bridge(case, mode)
    assert outcome.kind == LOUD and "Float32RuleError" in outcome.detail


def test_a_dropped_cotangent_is_a_silent_difference(monkeypatch):
    # the bug the Float32 rule fixed, planted again: the bridge's output detached from torch's graph
    import strideweave as sw
    case = _case(["v0 = x0 * x1", "v1 = xp.sum(v0)"], [("grad", False), ("grad", True)], [1.0, 0.5], [2.0, -1.0])
    assert classify_bridge(case, "torch_function").kind == AGREE
    bridge = sw.interop.torch_function

    def detached(fn):
        wrapped = bridge(fn)
        return lambda *a, **k: tuple(o.detach() for o in wrapped(*a, **k))
    monkeypatch.setattr(sw.interop, "torch_function", detached)
    mine = run_bridge(case, "torch_function")
    outcome = judge(case.program, mine, run_reference(case))
    assert outcome.kind == SILENT and "gradient of x" in outcome.detail


def test_the_reproducer_runs_as_printed():
    import contextlib
    import io
    case = _case(["v0 = xp.sin(x0) * x1"], [("grad", False), ("const", True)], [0.5, -1.0], [2.0, 3.0])
    for mode in ("torch_function", "jax_function+jit"):
        _needs(mode)
        text = bridge_reproducer(case, mode, classify_bridge(case, mode))
        with contextlib.redirect_stdout(io.StringIO()) as out:
            exec(text, {})  # the reproducer is the subject
        assert out.getvalue().strip()
