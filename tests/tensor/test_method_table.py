"""The one method table (``strideweave._methods``): every row attached once, each one declared for type checkers."""

from __future__ import annotations

import ast
import pathlib

import numpy as np
import pytest

import strideweave as sw
from strideweave import _methods

TENSOR_PY = pathlib.Path(sw.__file__).parent / "tensors" / "tensor.py"


def _rows() -> list[str]:
    return [name for group in _methods._table() for name in group]


def _declared() -> set[str]:
    """The methods ``tensors/tensor.py`` declares under ``if TYPE_CHECKING:`` for the attached ones
    (a block with an ``else:`` defines its names in place, as the generated constructors are)."""
    tree = ast.parse(TENSOR_PY.read_text())
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test) and not node.orelse:
            found.update(child.name for child in node.body if isinstance(child, ast.FunctionDef))
    return found


def test_every_row_stands_once():
    rows = _rows()
    assert len(rows) == len(set(rows)), sorted({n for n in rows if rows.count(n) > 1})


def test_the_table_and_the_declarations_name_the_same_methods():
    # object's own __format__ and __reduce_ex__ are known to type checkers without a declaration.
    assert set(_rows()) - {"__format__", "__reduce_ex__"} == _declared()


def test_every_row_is_what_tensor_has():
    for group in _methods._table():
        for name in group:
            assert name in vars(sw.Tensor), name


def test_a_name_in_two_groups_is_refused(monkeypatch):
    table = _methods._table()
    monkeypatch.setattr(_methods, "_table", lambda: (*table, {"__add__": lambda self, other: None}))
    with pytest.raises(RuntimeError, match="__add__"):
        _methods.attach()
    # the refusal came before the second row was set: __add__ is still the operator
    monkeypatch.undo()
    _methods.attach()
    t = sw.tensor(np.array([1.0, 2.0]))
    assert (t + t).tolist() == [2.0, 4.0]


@pytest.mark.parametrize("carrier", ["numpy", "torch"])
def test_matmul_operator_is_the_namespace_matmul(carrier):
    a = sw.tensor(np.array([1.0, 2.0]), carrier=carrier)
    out = a @ a
    assert out.shape == () and float(out) == 5.0
    assert (2.0 - a).tolist() == [1.0, 0.0] and (a - 2.0).tolist() == [-1.0, 0.0]
