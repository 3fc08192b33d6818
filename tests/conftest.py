"""Options shared by the whole test suite."""

import os

import pytest

# SciPy reads this once, at its first import: tests/libraries differentiates its Array API paths.
os.environ.setdefault("SCIPY_ARRAY_API", "1")


def pytest_addoption(parser):
    parser.addoption("--soak", action="store_true", default=False,
                     help="long randomized runs: many more hypothesis examples and stress repetitions")


def pytest_configure(config):
    # Read by test modules at import time, to size their hypothesis budgets.
    if config.getoption("--soak"):
        os.environ["STRIDEWEAVE_SOAK"] = "1"


# The differential tester's summary (tests/differential): each xdist worker hands its tally to
# the controller, which prints one table at the end of the run. These hooks live here, not in
# tests/differential/conftest.py, because an xdist controller loads only this conftest.
_DIFFERENTIAL = "strideweave_differential"


def _differential_tally():
    import sys
    from pathlib import Path
    if "_diff_runner" not in sys.modules:
        sys.path.insert(0, str(Path(__file__).parent / "differential"))
    import _diff_runner
    return _diff_runner.TALLY


def pytest_sessionfinish(session):
    import json
    import sys
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None and "_diff_runner" in sys.modules:
        workeroutput[_DIFFERENTIAL] = json.dumps(sys.modules["_diff_runner"].TALLY.as_dict())


def pytest_testnodedown(node, error):
    import json
    data = getattr(node, "workeroutput", {}).get(_DIFFERENTIAL)
    if data:
        _differential_tally().merge(json.loads(data))


pytest_testnodedown = pytest.hookimpl(optionalhook=True)(pytest_testnodedown)


def pytest_terminal_summary(terminalreporter):
    import sys
    if "_diff_runner" in sys.modules and sys.modules["_diff_runner"].TALLY.counts:
        terminalreporter.write_sep("=", "differential programs")
        terminalreporter.write_line(sys.modules["_diff_runner"].TALLY.summary())
