"""Options shared by the whole test suite."""

import os

# SciPy reads this once, at its first import: tests/libraries differentiates its Array API paths.
os.environ.setdefault("SCIPY_ARRAY_API", "1")


def pytest_addoption(parser):
    parser.addoption("--soak", action="store_true", default=False,
                     help="long randomized runs: many more hypothesis examples and stress repetitions")


def pytest_configure(config):
    # Read by test modules at import time, to size their hypothesis budgets.
    if config.getoption("--soak"):
        os.environ["STRIDEWEAVE_SOAK"] = "1"
