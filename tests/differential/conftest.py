"""The differential tester's summary at the end of the run, from every xdist worker too."""

import json

import pytest
from _diff_runner import TALLY

_KEY = "strideweave_differential"


def pytest_sessionfinish(session):
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:  # an xdist worker: hand the tally to the controller
        workeroutput[_KEY] = json.dumps(TALLY.as_dict())


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    data = getattr(node, "workeroutput", {}).get(_KEY)
    if data:
        TALLY.merge(json.loads(data))


def pytest_terminal_summary(terminalreporter):
    text = TALLY.summary()
    if text:
        terminalreporter.write_sep("=", "differential programs")
        terminalreporter.write_line(text)
