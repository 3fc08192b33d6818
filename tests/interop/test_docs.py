"""docs/interop.md's code blocks run as written, top to bottom."""

import pathlib
import re
import warnings

import pytest

pytest.importorskip("torch")
pytest.importorskip("jax")

PAGE = pathlib.Path(__file__).resolve().parents[2] / "docs" / "interop.md"


def test_interop_page_runs(capsys):
    blocks = re.findall(r"```python\n(.*?)```", PAGE.read_text(), re.S)
    assert len(blocks) >= 5
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # gradcheck's float32 notice
        exec(compile("\n".join(blocks), str(PAGE), "exec"), {})
    printed = capsys.readouterr().out
    assert "True" in printed and "NumpyCarrier (1, 3)" in printed and "(5, 3, 3)\n(3, 3)\n" in printed
