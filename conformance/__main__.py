"""``python -m conformance``: the cross-carrier gradient agreement report.

    python -m conformance                         # every case, every installed carrier
    python -m conformance --carriers numpy,torch --cases 'matmul*,attention'
    python -m conformance --out /tmp/report --quiet --jobs 1

Writes report.md, report.json and heatmap.png to ``--out`` and exits with
status 1 when any check fails or raises (each one named on stderr), 2 on a
usage error, 0 otherwise.
"""

from __future__ import annotations

import argparse
import os
import sys

from .catalogue import select
from .inputs import DEVICES_VARIABLE, parse_devices
from .interop import run_interop
from .report import print_table, write_all
from .runner import CARRIERS, condense, resolve_carriers, run, unit_count


def _parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m conformance",
        description="Compare StrideWeave gradients across carriers, against float64 central differences "
                    "and against torch.autograd / jax.vjp, over every catalogue case and layout variant.")
    parser.add_argument("--carriers", default=None,
                        help=f"comma-separated subset of {','.join(CARRIERS)} (default: all installed)")
    parser.add_argument("--cases", default=None,
                        help="comma-separated fnmatch patterns or substrings of case names or families")
    parser.add_argument("--out", default="conformance-report", help="report directory (default: %(default)s)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar and no table; failures only")
    parser.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1),
                        help="worker processes (default: %(default)s)")
    parser.add_argument("--devices", default=None,
                        help="where each carrier's Tensors live, e.g. torch=cuda,jax=gpu (default: each "
                             "carrier's default device)")
    parser.add_argument("--list", action="store_true", help="list the selected cases and their layouts, then exit")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    """Run the suite; returns the exit status."""
    args = _parse(argv)
    try:
        carriers = resolve_carriers(args.carriers.split(",") if args.carriers else None)
    except ValueError as exc:
        print(f"conformance: {exc}", file=sys.stderr)
        return 2
    try:
        parse_devices(args.devices)
    except ValueError as exc:
        print(f"conformance: {exc}", file=sys.stderr)
        return 2
    if args.devices:
        os.environ[DEVICES_VARIABLE] = args.devices
    cases = select(args.cases)
    if not cases:
        print(f"conformance: no case matches {args.cases!r}", file=sys.stderr)
        return 2
    if args.list:
        for case in cases:
            print(f"{case.name:26s} {case.family:13s} {', '.join(case.layouts())}")
        return 0

    total = unit_count(cases)
    if args.quiet:
        result = run(cases, carriers, jobs=args.jobs)
    else:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        columns = (TextColumn("[bold]conformance"), BarColumn(), MofNCompleteColumn(), TextColumn("units"),
                   TimeElapsedColumn(), TextColumn("{task.description}"))
        with Progress(*columns, transient=False) as progress:
            task = progress.add_task("", total=total)
            result = run(cases, carriers, jobs=args.jobs,
                         on_progress=lambda label, n: progress.update(task, advance=n, description=label))

    # The interop section: the same cases through sw.interop.torch_function / jax_function. It runs
    # before the table is printed, so that the console's counts and failures are the report's.
    result.checks.extend(run_interop(cases, carriers))
    if not args.quiet:
        print_table(result)
    paths = write_all(result, args.out)
    if result.failures:
        if args.quiet:  # otherwise print_table already named each one
            for line in condense(result.failures):
                print(line, file=sys.stderr)
        print(f"conformance: {len(result.failures)} of {len(result.checks)} checks failed; "
              f"report in {paths['markdown']}", file=sys.stderr)
        return 1
    if not args.quiet:
        print(f"report: {paths['markdown']}, {paths['json']}, {paths['heatmap']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
