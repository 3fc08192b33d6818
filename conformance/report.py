"""Render a :class:`~conformance.runner.RunResult`: terminal table, Markdown, JSON and a PNG heatmap.

The cell value everywhere is the *worst relative error* over every layout
variant, ``max |got - want| / (|want| + atol / rtol)``; a check passes when
it is at most the case's ``rtol``. The heatmap shows ``log10(error / rtol)``
so that 0 is the tolerance line whatever the check.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from pathlib import Path

from .inputs import VARIANTS
from .runner import Check, RunResult, checks_for, condense

__all__ = [
    "columns",
    "is_interop",
    "print_table",
    "summarise",
    "summary_line",
    "write_all",
    "write_heatmap",
    "write_json",
    "write_markdown",
]

_STATUS_RANK = {"skip": 0, "pass": 1, "fail": 2, "error": 3}


def is_interop(check: Check) -> bool:
    """Whether ``check`` belongs to the interop section (a case through torch_function / jax_function)."""
    from .interop import BRIDGES

    return check.check in {name for name, _ in BRIDGES.values()}


def columns(carriers: list[str]) -> list[tuple[str, str]]:
    """(carrier, check) pairs in report order."""
    return [(c, chk) for c in carriers for chk in checks_for(c)]


def _worst(checks: list[Check]) -> dict:
    """Aggregate checks into status (worst), error (max), ratio (max) and the worst check."""
    ran = [c for c in checks if c.status != "skip"]
    if not ran:
        return {"status": "skip", "error": None, "ratio": None, "check": checks[0] if checks else None}
    worst = max(ran, key=lambda c: (_STATUS_RANK[c.status], c.ratio or 0.0))
    errors = [c.error for c in ran if c.error is not None]
    return {"status": worst.status, "error": max(errors) if errors else None,
            "ratio": max((c.ratio for c in ran if c.ratio is not None), default=None), "check": worst}


def summarise(result: RunResult) -> dict:
    """Nested summaries: by case -> carrier, and by case -> (carrier, check)."""
    by_carrier, by_column = defaultdict(list), defaultdict(list)
    counts, carrier_counts, interop_counts = defaultdict(int), defaultdict(int), defaultdict(int)
    for c in result.checks:
        by_column[(c.case, c.carrier, c.check)].append(c)
        counts[c.status] += 1
        if is_interop(c):
            interop_counts[c.status] += 1
        else:  # the case x carrier table holds the carrier checks; the interop section has its own
            by_carrier[(c.case, c.carrier)].append(c)
            carrier_counts[c.status] += 1
    units = {(c.case, c.layout) for c in result.checks if not is_interop(c)}
    return {
        "carrier": {k: _worst(v) for k, v in by_carrier.items()},
        "column": {k: _worst(v) for k, v in by_column.items()},
        "counts": dict(counts),
        "carrier_counts": dict(carrier_counts),
        "interop_counts": dict(interop_counts),
        "units": len(units),
        "layouts": {case: [v for v in VARIANTS if (case, v) in units] for case in result.cases},
    }


def _fmt(err: float | None) -> str:
    if err is None:
        return "-"
    return "inf" if math.isinf(err) else f"{err:.1e}"


def _counts_text(counts: dict) -> str:
    return ", ".join(f"{v} {k}" for k, v in sorted(counts.items()))


def summary_line(result: RunResult, summary: dict | None = None) -> str:
    """How many checks ran and how they ended, the interop section's share named.

    The header and the console say it alike.
    """
    summary = summary or summarise(result)
    carrier_checks = sum(summary["carrier_counts"].values())
    interop_checks = sum(summary["interop_counts"].values())
    text = (f"{len(result.cases)} cases, {summary['units']} case x layout units on {len(result.carriers)} carriers "
            f"({', '.join(result.carriers)}): {len(result.checks)} checks (" + _counts_text(summary["counts"]) + ")")
    if interop_checks:
        text += (f" = {carrier_checks} carrier checks (" + _counts_text(summary["carrier_counts"]) + ") + "
                 f"{interop_checks} interop checks, each case's gradients through sw.interop.torch_function and "
                 f"jax_function (" + _counts_text(summary["interop_counts"]) + ")")
    return text + f", {result.seconds:.1f} s"


def _cell_text(cell: dict) -> str:
    if cell["status"] == "error":
        return "ERROR"
    if cell["status"] == "skip":
        return "skip"
    return _fmt(cell["error"]) + (" FAIL" if cell["status"] == "fail" else "")


# ----- terminal ------------------------------------------------------------------------------------


def print_table(result: RunResult, console=None) -> None:
    """A rich table: worst relative error per case x carrier, coloured by status, then the failures."""
    from rich import box
    from rich.console import Console
    from rich.table import Table

    console = console or Console()
    summary = summarise(result)
    table = Table(title="StrideWeave conformance: worst relative error per case x carrier "
                        "(all layouts, all carrier checks)", box=box.SIMPLE_HEAD)
    table.add_column("case", style="bold", no_wrap=True)
    table.add_column("layouts", justify="right", style="dim")
    for carrier in result.carriers:
        table.add_column(carrier, justify="right", no_wrap=True)
    style = {"pass": "green", "fail": "bold red", "error": "bold magenta", "skip": "dim"}
    for case in result.cases:
        row = [case, str(len(summary["layouts"].get(case, [])))]
        for carrier in result.carriers:
            cell = summary["carrier"].get((case, carrier))
            row.append("-" if cell is None else f"[{style[cell['status']]}]{_cell_text(cell)}[/]")
        table.add_row(*row)
    # Not narrower than the table: rich would cut the numbers (1.2e-0...) to fit an 80-column default.
    from rich.measure import Measurement

    needed = Measurement.get(console, console.options.update_width(10_000), table).maximum
    if console.width < needed:
        console.width = needed
    console.print(table)
    console.print(summary_line(result, summary), markup=False, highlight=False)
    for line in condense(result.failures):
        console.print(line, style="red", markup=False, highlight=False)


# ----- files -----------------------------------------------------------------------------------------


def write_json(result: RunResult, path: Path) -> None:
    """Every check, the run's metadata and the summary counts."""
    data = result.to_dict()
    data["summary"] = {k: v for k, v in summarise(result).items() if k in ("counts", "units", "layouts")}
    data["failures"] = condense(result.failures)
    path.write_text(json.dumps(data, indent=1, default=str))


def _md_escape(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def write_markdown(result: RunResult, path: Path, heatmap: str | None = None) -> None:
    """The human report: summary, case x carrier/check table, failures, skips."""
    from .catalogue import CATALOGUE
    from .interop import markdown as interop_markdown

    notes = {c.name: c.note for c in CATALOGUE}
    summary = summarise(result)
    cols = columns(result.carriers)
    status = "PASS" if not result.failures else f"FAIL ({len(result.failures)} failing checks)"
    lines = [
        "# StrideWeave cross-carrier gradient conformance",
        "",
        f"**Result: {status}.** {summary_line(result, summary)}.",
        "",
        "Versions: " + ", ".join(f"{k} {v}" for k, v in result.versions.items()) + ".",
        "",
        ("Checks: `fd` = float64 central differences; `numpy` = the numpy carrier's gradient; "
         "`torch.autograd` / `jax.vjp` = the backend's own autodiff of the same math. "
         "Cell: worst relative error `|got - want| / (|want| + atol/rtol)` over all layout variants "
         "(canonical, transposed, holes, broadcast, nested where meaningful); FAIL when above the "
         "case's rtol."),
        "",
    ]
    if heatmap:
        lines += [f"![worst error per case x carrier/check]({heatmap})", ""]
    lines += ["| case | layouts | " + " | ".join(f"{c} / {k}" for c, k in cols) + " |",
              "|---|---|" + "---|" * len(cols)]
    for case in result.cases:
        cells = []
        for carrier, chk in cols:
            cell = summary["column"].get((case, carrier, chk))
            cells.append("" if cell is None else _cell_text(cell))
        layouts = ", ".join(summary["layouts"].get(case, []))
        lines.append(f"| {case} | {layouts} | " + " | ".join(cells) + " |")
    lines += interop_markdown(result.checks)
    lines += ["", "## Failures", ""]
    lines += [f"- {_md_escape(line)}" for line in condense(result.failures)] or ["None."]
    skips = sorted({(c.case, c.check, c.message) for c in result.checks if c.status == "skip"})
    lines += ["", "## Skipped checks", ""]
    lines += [f"- {case}: `{chk}` {_md_escape(msg)}" for case, chk, msg in skips] or ["None."]
    noted = [(c, notes[c]) for c in result.cases if notes.get(c)]
    if noted:
        lines += ["", "## Case notes", ""] + [f"- {c}: {_md_escape(n)}" for c, n in noted]
    slow = sorted(result.unit_seconds.items(), key=lambda kv: -kv[1])[:5]
    if slow:
        lines += ["", "Slowest units: " + ", ".join(f"{k} {v:.2f} s" for k, v in slow) + "."]
    path.write_text("\n".join(lines) + "\n")


def write_heatmap(result: RunResult, path: Path) -> None:
    """PNG heatmap of log10(worst error / rtol) per case (rows) x carrier/check (columns)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np
    from matplotlib.colors import TwoSlopeNorm

    summary = summarise(result)
    cols = columns(result.carriers)
    grid = np.full((len(result.cases), len(cols)), np.nan)
    marks = {}
    for i, case in enumerate(result.cases):
        for j, (carrier, chk) in enumerate(cols):
            cell = summary["column"].get((case, carrier, chk))
            if cell is None or cell["status"] == "skip":
                marks[i, j] = "s"
                continue
            if cell["status"] == "error":
                grid[i, j], marks[i, j] = 2.0, "E"
                continue
            ratio = cell["ratio"] or 0.0
            grid[i, j] = max(math.log10(ratio), -8.0) if ratio > 0 else -8.0
            if cell["status"] == "fail":
                marks[i, j] = "X"
    fig, ax = plt.subplots(figsize=(2.0 + 0.9 * len(cols), 1.2 + 0.24 * len(result.cases)))
    cmap = plt.get_cmap("RdYlGn_r").with_extremes(bad="#dddddd")
    image = ax.imshow(np.ma.masked_invalid(grid), aspect="auto", cmap=cmap,
                      norm=TwoSlopeNorm(vmin=-8.0, vcenter=0.0, vmax=2.0))
    for (i, j), mark in marks.items():
        ax.text(j, i, mark, ha="center", va="center", fontsize=7, color="black")
    ax.set_xticks(range(len(cols)), [f"{c}\n{k}" for c, k in cols], fontsize=7, rotation=45, ha="right")
    ax.set_yticks(range(len(result.cases)), result.cases, fontsize=7)
    ax.set_title("worst error / tolerance (log10); 0 = tolerance, X = fail, E = error, s = skipped",
                 fontsize=8)
    fig.colorbar(image, ax=ax, label="log10(worst relative error / rtol)", shrink=0.6)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def write_all(result: RunResult, out_dir: str | Path) -> dict[str, Path]:
    """report.json, report.md and heatmap.png in ``out_dir`` (created)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = {"json": out / "report.json", "markdown": out / "report.md", "heatmap": out / "heatmap.png"}
    write_json(result, paths["json"])
    write_heatmap(result, paths["heatmap"])
    write_markdown(result, paths["markdown"], heatmap=paths["heatmap"].name)
    return paths
