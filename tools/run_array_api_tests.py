"""Run data-apis/array-api-tests against ``strideweave.array_api`` once per carrier, and array_api_strict itself.

Usage::

    python tools/run_array_api_tests.py /path/to/array-api-tests [--max-examples 5] [--workers 2]
        [--carriers numpy,torch,jax,array_api_strict] [--files test_creation_functions.py,...]
        [--out build/array-api-tests]

The checkout must include its ``array-api`` spec submodule at the pinned
commit. Each run writes a JUnit XML file; the summary (passed / failed /
skipped / errors per run, and the failing tests) goes to ``summary.md`` and
``summary.json`` in ``--out``. The suite is not part of the pytest run in CI.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

CARRIERS = ("numpy", "torch", "jax", "array_api_strict")


def run_one(label: str, suite: Path, env_extra: dict, args, out: Path) -> dict:
    """One pytest run of the suite; returns the counts and the failing test ids."""
    xml = out / f"{label}.xml"
    env = dict(os.environ, **env_extra)
    targets = [str(suite / "array_api_tests" / f) for f in args.files] if args.files else ["array_api_tests"]
    cmd = [sys.executable, "-m", "pytest", *targets, f"--max-examples={args.max_examples}", "-q", "-p",
           "no:cacheprovider", f"--junitxml={xml}", "--disable-warnings", "--hypothesis-disable-deadline",
           "-o", "addopts="]
    if args.workers > 1:
        cmd += ["-n", str(args.workers)]
    log = out / f"{label}.log"
    with log.open("w") as fh:
        subprocess.run(cmd, cwd=suite, env=env, stdout=fh, stderr=subprocess.STDOUT, check=False)
    return parse(xml)


def parse(xml: Path) -> dict:
    """Counts and failing test ids from a JUnit XML report."""
    counts = {"passed": 0, "failed": 0, "skipped": 0, "errors": 0}
    failing: list[str] = []
    if not xml.exists():
        return {**counts, "failing": ["<no report: the run crashed, see the log>"]}
    for case in ET.parse(xml).getroot().iter("testcase"):
        name = f"{case.get('classname', '')}::{case.get('name', '')}"
        if case.find("skipped") is not None:
            counts["skipped"] += 1
        elif case.find("failure") is not None:
            counts["failed"] += 1
            failing.append(name)
        elif case.find("error") is not None:
            counts["errors"] += 1
            failing.append(name)
        else:
            counts["passed"] += 1
    return {**counts, "failing": sorted(failing)}


def main(argv=None) -> int:
    """Parse arguments, run every requested configuration, write the summary."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("suite", type=Path, help="a checkout of data-apis/array-api-tests")
    parser.add_argument("--max-examples", type=int, default=5)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--carriers", default=",".join(CARRIERS))
    parser.add_argument("--files", default="", help="comma-separated test files (default: the whole suite)")
    parser.add_argument("--no-strict-baseline", action="store_true", help="skip array_api_strict's own run")
    parser.add_argument("--out", type=Path, default=Path("build/array-api-tests"))
    args = parser.parse_args(argv)
    args.files = [f for f in args.files.split(",") if f]
    suite = args.suite.resolve()
    if not (suite / "array_api_tests").is_dir() or not any((suite / "array-api").iterdir()):
        parser.error(f"{suite} is not an array-api-tests checkout with its array-api submodule")
    args.out.mkdir(parents=True, exist_ok=True)
    out = args.out.resolve()
    results = {}
    for carrier in [c for c in args.carriers.split(",") if c]:
        if carrier not in CARRIERS:
            parser.error(f"unknown carrier {carrier!r}; expected some of {CARRIERS}")
        env = {"ARRAY_API_TESTS_MODULE": "strideweave.array_api", "STRIDEWEAVE_CARRIER": carrier}
        results[f"strideweave-{carrier}"] = run_one(f"strideweave-{carrier}", suite, env, args, out)
        print(carrier, {k: v for k, v in results[f"strideweave-{carrier}"].items() if k != "failing"}, flush=True)
    if not args.no_strict_baseline:
        results["array_api_strict"] = run_one("array_api_strict", suite, {"ARRAY_API_TESTS_MODULE": "array_api_strict"},
                                              args, out)
        print("array_api_strict", {k: v for k, v in results["array_api_strict"].items() if k != "failing"})
    (out / "summary.json").write_text(json.dumps(results, indent=1))
    lines = ["| run | passed | failed | errors | skipped | pass rate (non-skipped) |", "|---|---|---|---|---|---|"]
    for label, r in results.items():
        ran = r["passed"] + r["failed"] + r["errors"]
        rate = f"{100 * r['passed'] / ran:.1f}%" if ran else "-"
        lines.append(f"| {label} | {r['passed']} | {r['failed']} | {r['errors']} | {r['skipped']} | {rate} |")
    for label, r in results.items():
        lines += ["", f"## {label}: failing", ""] + [f"- `{name}`" for name in r["failing"]]
    (out / "summary.md").write_text("\n".join(lines) + "\n")
    print((out / "summary.md").read_text().split("\n## ")[0])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
