"""Random Array API programs: every StrideWeave carrier against torch.autograd float64.

Each program (see ``_diff_programs``) is drawn by hypothesis from the
standard's vocabulary and run twice: through ``strideweave.array_api`` with
Float32 leaves on the carrier, and through ``array_api_compat.torch`` with
float64 ``requires_grad`` leaves. Every variable's final value and every
leaf's gradient must agree (``_diff_runner``). A program torch refuses is
skipped; a StrideWeave refusal where torch runs is counted and listed in the
summary, and must be one of the expected error types; a silent difference
fails the test with a minimal, copy-pastable reproducer.

On Dask the programs also draw the standard's ``xp.linalg`` (``_diff_linalg``)
and run on the synchronous scheduler, leaves in chunks of two.

Budget: a few dozen programs per carrier in CI (Dask: a few, each op builds a graph); ``pytest --soak`` (or
``STRIDEWEAVE_SOAK=1``) runs 2,500 per carrier, ``STRIDEWEAVE_DIFF_EXAMPLES``
sets any other number. ``STRIDEWEAVE_DIFF_SINGULAR=1`` draws values from a
small grid with zeros and ties and lifts the singular-point guards (see
``_diff_guard``). ``STRIDEWEAVE_DIFF_REPORT=path`` appends every failure's
reproducer to ``path``.
"""

import os
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("torch")
pytest.importorskip("array_api_compat")

from _diff_linalg import WITH_LINALG
from _diff_programs import TABLE, HypothesisChooser, draw_program
from _diff_runner import FAILURES, LOUD, TALLY, Tally, classify, minimize, reproducer

CARRIERS = ["numpy", "torch", "jax", "array_api_strict", "dask"]
SOAK = bool(os.environ.get("STRIDEWEAVE_SOAK"))
EXAMPLES = int(os.environ.get("STRIDEWEAVE_DIFF_EXAMPLES", "2500" if SOAK else "30"))
#: JAX compiles every new shape of every primitive, and Dask builds and computes a graph per program,
#: so their CI shares are smaller
CI_EXAMPLES = {"jax": 10, "dask": 6}
#: the statement kinds drawn per carrier
KINDS = {"dask": WITH_LINALG}
SINGULAR = os.environ.get("STRIDEWEAVE_DIFF_SINGULAR", "") not in ("", "0")
#: at most this many programs are minimised per carrier (each reproducer listed once)
MAX_MINIMISED = 24


@pytest.mark.parametrize("carrier", CARRIERS)
def test_random_programs_agree_with_torch(carrier):
    pytest.importorskip(carrier)
    examples = EXAMPLES if SOAK or "STRIDEWEAVE_DIFF_EXAMPLES" in os.environ else CI_EXAMPLES.get(carrier, EXAMPLES)
    tally = Tally()
    seen, minimised = set(), []

    @given(st.data())
    @settings(max_examples=examples, deadline=None, database=None, print_blob=False,
              suppress_health_check=list(HealthCheck))
    def one_program(data):
        program = draw_program(HypothesisChooser(data), singular=SINGULAR, kinds=KINDS.get(carrier, TABLE))
        outcome = classify(program, carrier, singular=SINGULAR)
        tally.add(carrier, outcome)
        report = os.environ.get("STRIDEWEAVE_DIFF_REPORT")
        loud_first = (outcome.kind == LOUD and report
                      and tally.loud[(carrier, outcome.detail.splitlines()[0][:160])] == 1)
        if (outcome.kind in FAILURES or loud_first) and len(minimised) < MAX_MINIMISED:
            small = minimize(program, carrier, outcome.kind, singular=SINGULAR)
            minimised.append(small)
            # one reproducer per minimal program, whatever its numbers and names
            signature = (outcome.kind, re.sub(r"[\d.]+", "#", small.body()))
            if signature not in seen:
                seen.add(signature)
                text = reproducer(small, carrier, classify(small, carrier, singular=SINGULAR))
                if outcome.kind in FAILURES:
                    tally.failures.append((carrier, outcome.kind, text))
                if report:  # with a report file, the first program of every refusal message too
                    with open(report, "a") as f:
                        f.write(text + "\n")

    one_program()
    TALLY.merge(tally.as_dict())
    print(tally.summary())
    row = tally.counts[carrier]
    failed = sum(row[k] for k in FAILURES)
    assert not failed, (f"{failed} of {examples} programs differ from torch without an error on {carrier}\n"
                        + tally.summary())
    # the tester must exercise something: most programs run to a comparison on both sides
    assert row["agree"] >= examples // 4, tally.summary()
