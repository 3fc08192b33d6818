"""The scaling benchmark's harness: its table structure on two operations at tiny sizes, and its flag rules.

No timing is asserted: the flag rules are fed planted times.
"""
from __future__ import annotations

import pytest

scaling = pytest.importorskip("benchmarks.scaling")
pytest.importorskip("torch")
pytest.importorskip("array_api_compat")
from benchmarks.scaling_cases import CASES, UNBENCHMARKED, Case  # noqa: E402

TINY = scaling.Settings(sizes=(8, 16, 32), repeats=1, limit_s=5.0)


def _by_name(name):
    return next(c for c in CASES if c.name == name)


def test_two_operations_at_tiny_sizes_fill_the_table():
    cases = [_by_name("exp"), _by_name("argmax")]
    doc = scaling.run_all(cases, TINY, log=lambda s: None)
    exp, argmax = doc["rows"]
    for row in (exp, argmax):
        assert row["status"] == "ok" and row["sizes"] == [8, 16, 32]
        assert len(row["sw_s"]) == len(row["torch_s"]) == len(row["sw_bytes"]) == 3
        assert all(t > 0 for t in row["sw_s"] + row["torch_s"]) and all(b > 0 for b in row["sw_bytes"])
        assert row["time_exp_sw"] is not None and row["time_exp_torch"] is not None
        assert row["ratio"] == pytest.approx(row["sw_s"][-1] / row["torch_s"][-1])
    assert exp["backward"] is True and argmax["backward"] is False   # an Int result is not differentiated
    text = scaling.markdown(doc)
    assert "| operation | backward | time at largest n (sw / torch = ratio) |" in text
    assert "| `exp` | yes |" in text and "| `argmax` | forward only |" in text
    assert "Not benchmarked:" in text and "- `finfo`: dtype introspection" in text


def test_an_operation_that_raises_is_a_row_with_its_error():
    def broken(xp, a):
        raise RuntimeError("not this one")

    (row,) = scaling.run_all([Case("broken", broken, ("x",))], TINY, log=lambda s: None)["rows"]
    assert row["status"] == "error" and "not this one" in row["note"] and row["flags"] == []
    assert "- `broken`: RuntimeError: not this one" in scaling.markdown(
        {"sizes": [8], "repeats": 1, "rows": [row], "unbenchmarked": {}, "elapsed_s": 0.0})


def _row(sw, torch, growth=1.0, sizes=(1_000, 4_000, 16_000)):
    row = {"sizes": list(sizes), "growth": growth, "time_exp_sw": scaling.slope(sizes, sw),
           "time_exp_torch": None if torch is None else scaling.slope(sizes, torch),
           "ratio": None if torch is None else sw[-1] / torch[-1]}
    return row, scaling.flags(row)


def test_a_planted_quadratic_operation_is_flagged_and_a_linear_one_is_not():
    ns = (1_000, 4_000, 16_000)
    linear = [n * 1e-8 for n in ns]
    quadratic = [n * n * 1e-12 for n in ns]             # cheaper than torch at the small sizes
    row, why = _row(quadratic, linear)
    assert row["time_exp_sw"] == pytest.approx(2.0) and row["time_exp_torch"] == pytest.approx(1.0)
    assert any("time exponent 2.00 > torch's 1.00" in w for w in why)
    assert _row([2 * t for t in linear], linear)[1] == []               # 2x torch, same growth
    assert _row([t * (1 + 0.4 * i) for i, t in enumerate(linear)], linear)[1] == []   # within the margin


def test_ratio_rule_and_the_expected_growth_without_torch():
    ns = (1_000, 4_000, 16_000)
    linear = [n * 1e-8 for n in ns]
    assert any("11.0x torch" in w for w in _row([11 * t for t in linear], linear)[1])
    assert _row([n * n * 1e-12 for n in ns], None, growth=1.0)[1] == [
        "time exponent 2.00 > expected 1.00 + 0.5"]
    assert _row([n ** 1.5 * 1e-10 for n in ns], None, growth=1.5)[1] == []


def test_slope_needs_two_positive_points():
    assert scaling.slope((1, 2, 4), [0.0, None, 3.0]) is None
    assert scaling.slope((1, 4), [1.0, 16.0]) == pytest.approx(2.0)


def test_every_name_of_the_namespace_is_a_row_or_listed_with_a_reason():
    import strideweave.array_api as xp

    rows = {c.name.split(" ")[0] for c in CASES}
    missing = [n for n in xp.__all__ if n not in rows and n not in UNBENCHMARKED]
    assert missing == []
    for module in ("linalg", "fft"):
        names = getattr(xp, module).__all__
        assert [n for n in names if f"{module}.{n}" not in rows] == []


def test_a_row_that_cannot_reach_the_largest_size_is_flagged():
    # One probe point: quadratic growth is assumed, so a row slow at the first probe stops before the next.
    t, m = scaling._predicted([(1_000, 0.1, None, 4e6, None)], 4_000)
    assert t == pytest.approx(1.6) and m == pytest.approx(6.4e7)
    stop = "stopped before n=4,000: predicted 1.6 s, 61 MiB traced"
    assert scaling.flags({"sizes": [1_000], "time_exp_sw": None, "time_exp_torch": None, "ratio": 2.0,
                          "stopped": stop}) == [stop]
