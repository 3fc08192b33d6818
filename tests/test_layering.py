"""The house's floors: every import inside src/strideweave points down, inside functions too.

docs/architecture.md draws the floors. Each module belongs to one; it may
import modules of its own floor or of floors below, never above, and no two
files may import each other, directly or around a circle. Imports of
third-party libraries (torch, jax, dask) are not the rule's business: they
stay lazy so that importing StrideWeave loads no backend (tests/test_imports.py).
"""

from __future__ import annotations

import ast
import pathlib
import shutil

import pytest

SRC = pathlib.Path(__file__).resolve().parents[1] / "src"

#: (module prefix, floor), lowest floor first. A module belongs to the floor of its longest prefix.
FLOORS = (
    ("strideweave.layout", "values"),
    ("strideweave.errors", "values"),
    ("strideweave.dtypes", "values"),
    ("strideweave._marks", "values"),
    ("strideweave._locks", "values"),
    ("strideweave._generate", "values"),
    ("strideweave.carriers", "carriers"),
    ("strideweave.tensors", "tensors"),
    ("strideweave.operation", "recording"),
    ("strideweave.autograd", "reverse mode"),
    ("strideweave.ops", "rules"),
    ("strideweave.array_api", "namespace"),
    ("strideweave._methods", "methods"),
    ("strideweave._numpy_methods", "methods"),
    ("strideweave._module_functions", "methods"),
    ("strideweave.interop", "faces"),
    ("strideweave.testing", "faces"),
    ("strideweave.viz", "faces"),
    ("strideweave.random", "faces"),
    ("strideweave", "public names"),
)
ORDER = ("values", "carriers", "tensors", "recording", "reverse mode", "rules", "namespace", "methods", "faces",
         "public names")


def modules(root: pathlib.Path) -> dict[str, pathlib.Path]:
    """Every module under ``root`` (a ``src`` directory) by dotted name."""
    found = {}
    for path in sorted(root.rglob("*.py")):
        name = ".".join(path.relative_to(root).with_suffix("").parts)
        found[name.removesuffix(".__init__")] = path
    return found


def floor_of(module: str) -> str:
    best = max((prefix for prefix, _ in FLOORS if module == prefix or module.startswith(prefix + ".")), key=len)
    return dict(FLOORS)[best]


def _type_only(tree: ast.AST) -> set[int]:
    """ids of the import nodes under ``if TYPE_CHECKING:`` (read by type checkers, never run)."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            out.update(id(inner) for child in node.body for inner in ast.walk(child))
    return out


def imports(root: pathlib.Path, *, run_time_only: bool = False) -> list[tuple[str, str, int]]:
    """``(importer, imported module, line)`` for every strideweave import, module-level and in functions.

    ``run_time_only`` leaves out the imports under ``if TYPE_CHECKING:``, which never run.
    """
    known = modules(root)
    edges = []
    for importer, path in known.items():
        package = importer.split(".") if path.name == "__init__.py" else importer.split(".")[:-1]
        tree = ast.parse(path.read_text(), str(path))
        skipped = _type_only(tree) if run_time_only else set()
        for node in ast.walk(tree):
            if id(node) in skipped:
                continue
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package[:len(package) - node.level + 1]
                    module = ".".join(base + ([node.module] if node.module else []))
                else:
                    module = node.module or ""
                # ``from package import submodule`` imports the submodule itself.
                targets = [f"{module}.{a.name}" if f"{module}.{a.name}" in known else module for a in node.names]
            else:
                continue
            edges.extend((importer, target, node.lineno) for target in targets
                         if target.split(".")[0] == "strideweave" and target != importer)
    return edges


def upward_imports(root: pathlib.Path) -> list[str]:
    """One message per import that climbs to a higher floor."""
    known = modules(root)
    problems = []
    for importer, target, line in imports(root):
        low, high = ORDER.index(floor_of(importer)), ORDER.index(floor_of(target))
        if high > low:
            where = known[importer].relative_to(root)
            there = known.get(target, pathlib.Path(target.replace(".", "/")))
            there = there.relative_to(root) if there.is_absolute() else there
            problems.append(f"{where}:{line} ({floor_of(importer)}) imports {target} ({there}, floor "
                            f"{floor_of(target)}): imports point down only, including inside functions")
    return problems


def circles(root: pathlib.Path) -> list[list[str]]:
    """The groups of files that import each other around a circle when they run (strongly connected, more
    than one); an import for annotations alone, under ``if TYPE_CHECKING:``, never runs and closes no circle."""
    graph: dict[str, set[str]] = {name: set() for name in modules(root)}
    for importer, target, _ in imports(root, run_time_only=True):
        if target in graph:
            graph[importer].add(target)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for start in graph:
        if start in index:
            continue
        # Tarjan's algorithm, iteratively: (node, iterator over its successors).
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, successors = work[-1]
            for successor in successors:
                if successor not in index:
                    index[successor] = low[successor] = len(index)
                    stack.append(successor)
                    on_stack.add(successor)
                    work.append((successor, iter(sorted(graph[successor]))))
                    break
                if successor in on_stack:
                    low[node] = min(low[node], index[successor])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    group = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        group.append(member)
                        if member == node:
                            break
                    if len(group) > 1:
                        found.append(sorted(group))
    return found


def test_every_module_has_a_floor():
    for name in modules(SRC):
        assert floor_of(name) in ORDER, name


def test_imports_point_down_only():
    problems = upward_imports(SRC)
    assert not problems, "\n".join(problems)


def test_no_two_files_import_each_other():
    found = circles(SRC)
    assert not found, "files importing each other around a circle: " + "; ".join(" -> ".join(g) for g in found)


@pytest.fixture
def planted_copy(tmp_path):
    """A copy of the source tree, to plant a bad import in."""
    shutil.copytree(SRC / "strideweave", tmp_path / "strideweave")
    return tmp_path


def test_a_planted_upward_import_inside_a_function_is_named_with_both_files_and_the_line(planted_copy):
    tensor = planted_copy / "strideweave" / "tensors" / "tensor.py"
    lines = tensor.read_text().splitlines()
    lines += ["", "", "def _planted():", "    from ..ops import exp", "    return exp", ""]
    tensor.write_text("\n".join(lines))
    problems = sorted(set(upward_imports(planted_copy)) - set(upward_imports(SRC)))
    assert len(problems) == 1, problems
    assert problems[0].startswith(f"strideweave/tensors/tensor.py:{len(lines) - 2} (tensors) imports strideweave.ops")
    assert "strideweave/ops/__init__.py" in problems[0] and "rules" in problems[0]


def test_a_planted_circle_on_one_floor_is_found(planted_copy):
    creation = planted_copy / "strideweave" / "tensors" / "creation.py"
    creation.write_text(creation.read_text() + "\n\ndef _planted():\n    from .writes import write\n    return write\n")
    assert ["strideweave.tensors.creation", "strideweave.tensors.writes"] in circles(planted_copy)
