"""Every name in backticks in CONTRIBUTING.md, README.md and docs/*.md that points into the code exists.

A span outside fenced blocks is checked when it is one of:

- a path (it has a ``/`` or ends in a file extension): the file or folder
  exists relative to the repository root, ``src/strideweave/`` (``ops/views.py``),
  ``src/``, ``docs/`` or ``tests/``; a bare file name (``_library_harness.py``)
  exists somewhere in the repository; ``path::name`` also needs ``name`` defined
  in that file;
- a dotted Python name, with a call's arguments dropped (``sw.tensor(data)``),
  whose root is ``strideweave``, ``sw`` (``strideweave``), ``xp``
  (``strideweave.array_api``), ``np``, a module of the standard library
  (``copy.deepcopy``), a module of the package named from its
  floor (``operation.record``, ``ops.views.view_cotangent``,
  ``cotangents.REQUESTS``) or a class defined in the package
  (``Tensor.backward``, ``Primitive.cotangents``): the attribute chain
  resolves, importing submodules on the way. A root named after a class
  (``layout.cosize``: a Layout) is tried on that class when it is not a
  module's name.

Anything else (a variable of an example, ``t.grad``; another library's names;
a placeholder such as ``carriers/<name>_carrier.py``; a shell command) is
prose and is not checked, and so are the few files of other projects and the
outputs that ``ELSEWHERE`` lists.
"""

from __future__ import annotations

import ast
import functools
import importlib
import inspect
import pathlib
import pkgutil
import re
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
PAGES = [ROOT / "CONTRIBUTING.md", ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
PACKAGE = ROOT / "src" / "strideweave"
PATH_BASES = [ROOT, PACKAGE, ROOT / "src", ROOT / "docs", ROOT / "tests"]
SEARCHED = ["src", "tests", "docs", "benchmarks", "conformance", "examples", "tools", ".ci"]

FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,}).*?^[ \t]*\1[ \t]*$", re.M | re.S)
SPAN = re.compile(r"(?<!`)`(?!`)((?:[^`\n]|\n(?!\s*\n))+?)`(?!`)")
EXTENSION = re.compile(r"\.(py|md|toml|txt|png|svg|json|cfg|ini|yml|yaml)$")
DOTTED = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+")
# Files the pages name that are not the repository's, each with why.
ELSEWHERE = {
    "ad.py": "JAX's reverse-mode interpreter, which architecture.md compares the floors with",
    "lax.py": "JAX's primitives",
    "array_methods.py": "JAX's array methods",
    "tracer.py": "HIPS autograd's tracer",
    "core.py": "HIPS autograd's core",
    "spec/autograd-spec.md": "the autograd specification, kept beside the repository",
    "summary.md": "written by the array-api-tests run into its build folder",
    "summary.json": "written by the array-api-tests run into its build folder",
}
OUTPUTS = ("build/", "conformance-report/", "gpu-check/")  # folders that commands write
ROOTS = {"strideweave": "strideweave", "sw": "strideweave", "xp": "strideweave.array_api", "np": "numpy"}


def spans(text: str) -> list[tuple[int, str]]:
    """(line number, text) of every inline code span outside fenced blocks."""
    blanked = FENCE.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    return [(blanked.count("\n", 0, m.start()) + 1, " ".join(m.group(1).split())) for m in SPAN.finditer(blanked)]


@functools.cache
def _modules() -> dict[str, list[str]]:
    """Each module of the package by its dotted paths below ``strideweave``: ``views`` and ``ops.views``."""
    names: dict[str, list[str]] = {}
    for info in pkgutil.walk_packages([str(PACKAGE)], "strideweave."):
        parts = info.name.split(".")[1:]
        for start in range(len(parts)):
            names.setdefault(".".join(parts[start:]), []).append(info.name)
    return names


@functools.cache
def _classes() -> dict[str, list[type]]:
    """Every class defined in the package, by name (several modules may define one name)."""
    found: dict[str, list[type]] = {}
    for full in sorted({m for ms in _modules().values() for m in ms}):
        try:
            module = importlib.import_module(full)
        except ImportError:  # a face whose optional backend is absent
            continue
        for value in vars(module).values():
            if inspect.isclass(value) and value.__module__ == full:
                found.setdefault(value.__name__, []).append(value)
    return found


def _resolves(obj, attrs: list[str], module_name: str | None) -> bool:
    for attr in attrs:
        if hasattr(obj, attr):
            obj = getattr(obj, attr)
        elif module_name is not None:
            try:
                obj = importlib.import_module(f"{module_name}.{attr}")
            except ModuleNotFoundError:
                return False
        else:
            return False
        module_name = f"{module_name}.{attr}" if inspect.ismodule(obj) and module_name else None
    return True


def _check_dotted(name: str) -> str | None:
    """None when ``name`` resolves or is not the package's; else what is missing."""
    root, *attrs = name.split(".")
    if root in ROOTS or root in sys.stdlib_module_names:
        module_name = ROOTS.get(root, root)
        return None if _resolves(importlib.import_module(module_name), attrs, module_name) else name
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):  # the longest prefix that names a module of the package
        candidates = _modules().get(".".join(parts[:cut]))
        if candidates:
            modules = [importlib.import_module(m) for m in candidates]
            if any(_resolves(m, parts[cut:], m.__name__) for m in modules):
                return None
            if cut == 1 and root[:1].upper() + root[1:] in _classes():
                break  # ``layout.cosize``: the variable of a Layout, tried below
            return name
    classes = _classes().get(root) or _classes().get(root[:1].upper() + root[1:])
    if classes:
        return None if any(_resolves(c, attrs, None) for c in classes) else name
    return None


def _defines(path: pathlib.Path, name: str) -> bool:
    tree = ast.parse(path.read_text())
    return any(isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == name
               for node in ast.walk(tree))


def _check_path(span: str) -> str | None:
    path, _, member = span.partition("::")
    path = path.removeprefix("../")
    if path.startswith(("http:", "https:", "-", *OUTPUTS)) or "*" in path or path in ELSEWHERE:
        return None
    if "/" in path:
        found = next((base / path for base in PATH_BASES if (base / path).exists()), None)
    elif (ROOT / path).exists():
        found = ROOT / path
    else:
        found = next((hit for top in SEARCHED for hit in (ROOT / top).rglob(path)), None)
    if found is None:
        return span
    if member:
        function = re.split(r"[\[(]", member.split("::")[0])[0]
        if found.suffix == ".py" and not _defines(found, function):
            return span
    return None


def check_span(span: str) -> str | None:
    """None when ``span`` is prose or names something that exists; else the missing name."""
    if any(c in span for c in " <>{}$=,'\"") and "(" not in span:
        return None  # a command, an expression, a placeholder
    if "/" in span.split("(")[0] or EXTENSION.search(span.split("::")[0]):
        return _check_path(span) if " " not in span else None
    head = span.split("(")[0].split("[")[0]
    if DOTTED.fullmatch(head):
        return _check_dotted(head)
    return None


def missing_names(text: str) -> list[str]:
    """``line: name`` for every span of ``text`` that points into the code at something absent."""
    problems = []
    for line, span in spans(text):
        missing = check_span(span)
        if missing is not None:
            problems.append(f"{line}: {missing}")
    return problems


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_code_name_on_the_page_exists(page):
    problems = missing_names(page.read_text())
    assert not problems, f"{page.relative_to(ROOT)}: names that do not exist:\n" + "\n".join(problems)


# ----- the checker itself ----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", [
    "sw.no_such_function", "strideweave.ops.no_such_module", "xp.linalg.no_such", "Tensor.no_such_method",
    "operation.NO_SUCH_TABLE", "ops.views.no_such", "np.no_such", "ops/no_such_file.py", "docs/no-such-page.md",
    "tests/ops/test_ops_forward.py::test_no_such_test", "no_such_module_file.py", "sw.no_such(x)",
    "layout.no_such_property", "copy.no_such",
])
def test_a_planted_wrong_name_is_reported(name):
    text = f"A sentence with `{name}` in it.\n\n```python\nsw.another_missing_name\n```\n"
    assert missing_names(text) == [f"1: {name.split('(')[0]}"]


@pytest.mark.parametrize("name", [
    "sw.tensor", "strideweave.ops.views.view_cotangent", "xp.linalg.solve", "Tensor.backward", "operation.record",
    "autograd.cotangents.cotangent_record", "layout.order.row_major", "np.asarray(t)", "ops/views.py",
    "docs/api.md", "tests/ops/test_ops_forward.py", "_library_harness.py", "sw.testing.available_carriers()",
    "t.grad", "x.device", "python -m pytest -n 2", "carriers/<name>_carrier.py", "torch.autograd.Function",
    "layout.cosize", "pyproject.toml", "copy.deepcopy(t)",
    "tests/spec/test_spec_versions.py::test_a_failing_branch_changes_no_grad_whichever_order_it_runs",
])
def test_an_existing_name_or_prose_is_not_reported(name):
    assert missing_names(f"`{name}`\n") == []


def test_fenced_blocks_are_not_read():
    assert missing_names("```text\n`sw.no_such_function`\n```\n") == []
