"""The benchmark harness's own logic: pairwise timing, goals, the memory ratio and the report.

No timing is asserted: the contenders here are stand-ins that record calls.
"""
from __future__ import annotations

import types

import pytest

run = pytest.importorskip("benchmarks.run")
from benchmarks import memory, report  # noqa: E402
from benchmarks.workloads import Workload  # noqa: E402


def _recorder(log, name):
    def build():
        def step():
            log.append(name)
        return step
    return build


def test_time_pair_alternates_which_contender_goes_first(monkeypatch):
    log = []
    clock = [0.0]
    # a clock that only the steps advance, A by 1 and B by 10: each time must be its own step's
    monkeypatch.setattr(run, "time", types.SimpleNamespace(perf_counter=lambda: clock[0]))

    def step(name, seconds):
        def run_step():
            log.append(name)
            clock[0] += seconds
        return run_step

    ta, tb = run.time_pair(step("a", 1.0), step("b", 10.0), 4)
    assert log == ["a", "b", "b", "a", "a", "b", "b", "a"]
    assert ta == [1.0] * 4
    assert tb == [10.0] * 4


def test_pair_summary_is_the_ratio_of_medians():
    p = run.pair_summary([3.0, 1.0, 2.0], [1.0, 2.0, 4.0])
    assert p["ratio"] == pytest.approx(1.0)                 # median 2.0 over median 2.0
    assert p["round_ratio_median"] == pytest.approx(0.5)    # round ratios 3, 0.5, 0.5
    assert p["n"] == 3


def _failing_build():
    raise RuntimeError("no such backend")


@pytest.mark.slow  # times real contenders
def test_goals_are_measured_pairwise_and_errors_are_a_miss():
    log = []
    wl = Workload("T1", "stand-ins", [("sw-x", _recorder(log, "sw")), ("anchor", _recorder(log, "anchor")),
                                      ("broken", _failing_build)],
                  budget_s=0.01, min_repeats=2, max_repeats=2, pair_min=3, pair_max=3,
                  goals=[("sw-x", "anchor", 1e9, "always met"), ("sw-x", "broken", 1.0, "anchor fails")])
    res = run.run_workload(wl, warmup=1, log=lambda s: None)
    pair = res["pairs"]["sw-x | anchor"]
    assert pair["status"] == "ok" and pair["n"] == 3
    ok, bad = res["goals"]
    assert ok["met"] and ok["ratio"] == pytest.approx(pair["ratio"]) and ok["rotation_ratio"] is not None
    assert not bad["met"] and bad["ratio"] is None and "no such backend" in bad["why"]
    md = report.markdown({"mode": "quick", "device": "cpu", "elapsed_s": 0.0, "environment": {},
                          "workloads": [res]})
    assert "| T1 | always met | sw-x | anchor |" in md and "PASS" in md and "**MISS**" in md


def test_memory_ratio_uses_one_mode_and_reports_a_missing_row():
    rows = [{"variant": "writable", "mode": "rss", "status": "ok", "peak_mib": 230.0},
            {"variant": "read-only", "mode": "rss", "status": "ok", "peak_mib": 200.0},
            {"variant": "writable", "mode": "tracemalloc", "status": "failed", "error": "timeout"}]
    r, why = memory.ratio(rows, "rss")
    assert r == pytest.approx(1.15) and why is None
    r, why = memory.ratio(rows, "tracemalloc")
    assert r is None and why == "timeout"


def test_memory_child_refuses_an_unknown_variant():
    with pytest.raises(ValueError, match="variant"):
        memory.child("writeable", "rss", 16)
