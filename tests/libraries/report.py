"""Print the library gradient agreement table as Markdown.

The libraries: scikit-learn, SciPy, xarray, marray, einops, array-api-extra.

Run from the repository root::

    python -m tests.libraries.report            # counts per library and carrier
    python -m tests.libraries.report --details  # and every case's outcome, every failure with its error
    python -m tests.libraries.report --causes   # and the idioms each failing case's library code uses

Each case runs the library function through its Array API path on StrideWeave
arrays on every available carrier and compares the gradient with
torch.autograd in float64 on the same library code (``_library_harness``).
"""

from __future__ import annotations

import argparse
import os
import pathlib
import sys
import warnings

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
os.environ.setdefault("SCIPY_ARRAY_API", "1")  # before anything imports SciPy

from _library_harness import CARRIERS, markdown_details, markdown_table, require_scipy_array_api, run_all


def _versions() -> str:
    import importlib.metadata

    names = ["strideweave", "scikit-learn", "scipy", "xarray", "marray", "einops", "array-api-extra", "opt-einsum",
             "torch", "jax", "array-api-strict", "array-api-compat"]
    found = []
    for name in names:
        try:
            found.append(f"{name} {importlib.metadata.version(name)}")
        except importlib.metadata.PackageNotFoundError:
            continue
    return ("Measured with " + ", ".join(found) + "; reference: torch.autograd in float64 on the same library "
            "code, else float64 central differences of it on NumPy.")


def main(argv=None) -> None:
    """Run every case on the chosen carriers and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--details", action="store_true", help="also list every case and every failure")
    parser.add_argument("--causes", action="store_true",
                        help="trace the in-place writes, exports and Float64 casts of every case that did not agree")
    parser.add_argument("--carrier", action="append", choices=CARRIERS, help="only these carriers (repeatable)")
    args = parser.parse_args(argv)
    require_scipy_array_api()
    import _consumer_cases
    import _scipy_cases
    import _sklearn_cases
    import _xarray_cases

    cases = _sklearn_cases.CASES + _scipy_cases.CASES + _consumer_cases.CASES + _xarray_cases.CASES
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        outcomes = run_all(cases, args.carrier)
    print(_versions() + "\n")
    print(markdown_table(outcomes))
    if args.details:
        print()
        print(markdown_details(outcomes))
    if args.causes:
        from _library_trace import trace

        print("\n| case | idioms met on Tensors with history (numpy carrier) |\n| --- | --- |")
        failing = dict.fromkeys(o.case for o in outcomes if o.kind != "agree")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for case in failing:
                met = "; ".join(f"{kind} at `{where}`" + (f" x{n}" if n > 1 else "") for kind, where, n in trace(case))
                print(f"| {case.id} | {met or 'none of them'} |")


if __name__ == "__main__":
    main()
