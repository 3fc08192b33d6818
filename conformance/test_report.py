"""The report's header and the console say the same counts, name the interop section's share, and never cut numbers."""

import io
import re

import pytest

pytest.importorskip("rich")

from rich.console import Console

from conformance import report
from conformance.runner import Check, RunResult

CARRIERS = ["numpy", "torch", "jax", "array_api_strict", "dask"]


def _result():
    checks = []
    for case in ("a_case_with_a_long_name", "b"):
        for layout in ("canonical", "holes"):
            for carrier in CARRIERS:
                checks.append(Check(case, "fam", layout, carrier, "fd", "pass", error=1.2345e-7, rtol=1e-4))
    checks.append(Check("b", "fam", "holes", "dask", "numpy", "fail", error=3.2e-3, rtol=1e-4, element="(0, 1)"))
    checks.append(Check("a_case_with_a_long_name", "fam", "canonical", "torch", "torch_function", "pass",
                        error=1e-7, rtol=1e-4))
    checks.append(Check("b", "fam", "canonical", "jax", "jax_function+jit", "skip", message="skipped: why"))
    return RunResult(carriers=CARRIERS, cases=["a_case_with_a_long_name", "b"], checks=checks, seconds=1.5)


def test_header_and_console_agree_and_name_the_interop_section(tmp_path):
    result = _result()
    out = io.StringIO()
    report.print_table(result, Console(file=out, width=80, color_system=None))
    console = " ".join(out.getvalue().split())
    report.write_markdown(result, tmp_path / "report.md")
    header = " ".join((tmp_path / "report.md").read_text().splitlines()[2].split())
    line = report.summary_line(result)
    assert line in console and line in header
    assert "23 checks (1 fail, 21 pass, 1 skip) = 21 carrier checks (1 fail, 20 pass) + 2 interop checks" in line
    assert "torch_function and jax_function (1 pass, 1 skip)" in line


def test_console_table_keeps_every_number_at_80_columns():
    result = _result()
    out = io.StringIO()
    report.print_table(result, Console(file=out, width=80, color_system=None))
    text = out.getvalue()
    assert "…" not in text
    assert "a_case_with_a_long_name" in text and "array_api_strict" in text
    row = next(line for line in text.splitlines() if line.strip().startswith("b "))
    assert re.findall(r"\d\.\de-\d\d", row) == ["1.2e-07"] * 4 + ["3.2e-03"]
    assert "FAIL" in row


def test_interop_checks_stay_out_of_the_carrier_table():
    summary = report.summarise(_result())
    # torch's cell for the long case holds only its carrier checks, not the torch_function one
    cell = summary["carrier"]["a_case_with_a_long_name", "torch"]
    assert cell["check"].check == "fd"
    assert summary["units"] == 4
