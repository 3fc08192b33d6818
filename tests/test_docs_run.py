"""Every ```python block in README.md and docs/*.md runs as written, and prints what it shows.

A page's blocks run in order in one namespace, as a reader pastes them into
one session. The convention (CONTRIBUTING.md, "Code blocks in the docs"):

- ``print(...)  # -> text``: what that print writes. ``...`` stands for any
  text (with the spaces around it), runs of whitespace compare equal (doctest's ELLIPSIS and
  NORMALIZE_WHITESPACE). A print that runs several times (in a loop) must
  match every time. Lines that hold nothing but ``# -> more`` continue the
  output of the line above (a multi-line output, or one too long for a line).
- ``statement  # -> raises TypeError: message``: that top-level statement
  raises that exception (its class or a base class), with a message that
  matches; the page goes on with the next statement.
- Every print in a block shows its output, and ``# ->`` appears only on a
  line that prints or raises.

Blocks that are not meant to run (shell commands, output, sketches) use
another fence tag: ``bash``, ``text``. Every fence has a tag.
"""

from __future__ import annotations

import ast
import builtins
import doctest
import io
import pathlib
import re
import sys
import tokenize
import warnings

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^(?P<indent>[ \t]*)```(?P<tag>[^\s`]*)[^\n]*\n(?P<body>.*?)^(?P=indent)```[ \t]*$", re.M | re.S)
MARK = "# ->"
RAISES = re.compile(r"raises (?P<type>[A-Za-z_][\w.]*)(?::\s*(?P<message>.*))?$", re.S)
NEEDS = {"interop.md": ("torch", "jax"), "scale-out.md": ("dask", "distributed"), "xarray.md": ("xarray",)}
# Every page that mentions a carrier's name in a block needs that backend.
BACKENDS = {"torch": "torch", "jax": "jax", "array_api_strict": "array_api_strict", "dask": "dask"}

_CHECKER = doctest.OutputChecker()
_FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def python_blocks(text: str) -> list[tuple[int, str]]:
    """(line number of the block's first line, dedented source) of each ```python block."""
    blocks = []
    for match in FENCE.finditer(text):
        if match["tag"] != "python":
            continue
        indent = len(match["indent"])
        first = text.count("\n", 0, match.start("body")) + 1
        lines = [line[indent:] if line[:indent].strip() == "" else line for line in match["body"].splitlines()]
        blocks.append((first, "\n".join(lines) + "\n"))
    return blocks


def expectations(source: str) -> dict[int, str]:
    """Line number (1-based, in ``source``) -> the text shown after ``# ->`` there, continuations joined."""
    shown: dict[int, list[str]] = {}
    code_lines = set()
    tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    for tok in tokens:
        if tok.type not in (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT,
                            tokenize.ENDMARKER):
            code_lines.update(range(tok.start[0], tok.end[0] + 1))
    for tok in tokens:
        if tok.type != tokenize.COMMENT or not tok.string.startswith(MARK):
            continue
        line = tok.start[0]
        text = tok.string[len(MARK):].strip()
        if line not in code_lines:  # a comment-only line: it continues the nearest code line above
            above = [n for n in code_lines if n < line]
            if not above:
                raise AssertionError(f"line {line}: a '{MARK}' line with no code above it")
            line = max(above)
        shown.setdefault(line, []).append(text)
    return {line: "\n".join(parts) for line, parts in shown.items()}


class _Printed:
    """Collects what each print call of one block writes, keyed by the call's line range."""

    def __init__(self, filename: str, calls: list[tuple[int, int]]):
        self.filename, self.calls = filename, calls
        self.outputs: dict[tuple[int, int], list[str]] = {c: [] for c in calls}

    def __call__(self, *args, **kwargs):
        frame = sys._getframe(1)
        if frame.f_code.co_filename != self.filename:
            return builtins.print(*args, **kwargs)
        buffer = io.StringIO()
        builtins.print(*args, **{**kwargs, "file": buffer})
        line = frame.f_lineno
        call = max((c for c in self.calls if c[0] <= line <= c[1]), key=lambda c: c[0])
        self.outputs[call].append(buffer.getvalue())
        return None


def _matches(want: str, got: str) -> bool:
    # "a ... b" reads as "a, then anything, then b": the spaces around an ellipsis are part of it.
    want = re.sub(r"\s*\.\.\.\s*", "...", want.strip())
    return _CHECKER.check_output(want + "\n", got.strip() + "\n", _FLAGS)


def run_page(page: pathlib.Path) -> list[str]:
    """Run every python block of ``page``; return one message per mismatch (empty: the page is right)."""
    problems: list[str] = []
    namespace: dict = {"__name__": "__docs__"}
    text = page.read_text()
    for first, source in python_blocks(text):
        offset = first - 1
        filename = f"{page.relative_to(ROOT)}:{first}"

        def where(line, offset=offset):
            return f"{page.relative_to(ROOT)}:{line + offset}"

        try:
            shown = expectations(source)
        except AssertionError as err:
            problems.append(f"{filename}: {err}")
            continue
        tree = ast.parse(source, filename)
        calls = sorted({(n.lineno, n.end_lineno) for n in ast.walk(tree) if isinstance(n, ast.Call)
                        and isinstance(n.func, ast.Name) and n.func.id == "print"})
        print_of = {}
        for line in shown:
            holding = [c for c in calls if c[0] <= line <= c[1]]
            if holding:
                print_of[line] = max(holding)
        for call in calls:
            if not any(print_of.get(line) == call for line in shown):
                problems.append(f"{where(call[0])}: this print shows no '{MARK}' output")
        printed = _Printed(filename, calls)
        namespace["print"] = printed
        for statement in tree.body:
            span = range(statement.lineno, statement.end_lineno + 1)
            raising = [line for line in span if line in shown and line not in print_of]
            expected = RAISES.match(shown[raising[-1]]) if raising else None
            if raising and expected is None:
                problems.append(f"{where(raising[-1])}: '{MARK} {shown[raising[-1]]}' is on a line that does not "
                                f"print; write '{MARK} raises ExceptionType: message' for an exception")
            code = compile(ast.Module([statement], type_ignores=[]), filename, "exec")
            try:
                exec(code, namespace)
            except Exception as err:  # the page says which exception, or it is a failure
                names = {cls.__name__ for cls in type(err).__mro__} | {type(err).__qualname__}
                message = expected["message"] if expected else None
                if expected and expected["type"].split(".")[-1] in names and (
                        not message or _matches(message, str(err))):
                    continue
                problems.append(f"{where(statement.lineno)}: raised {type(err).__name__}: {err}")
                break
            else:
                if expected:
                    problems.append(f"{where(raising[-1])}: expected {shown[raising[-1]]!r}, nothing was raised")
        else:
            for line, call in print_of.items():
                outputs = printed.outputs[call]
                if not outputs:
                    problems.append(f"{where(line)}: shows '{shown[line]}' but never printed")
                for got in outputs:
                    if not _matches(shown[line], got):
                        problems.append(f"{where(line)}: shows {shown[line]!r}, printed {got.strip()!r}")
                        break
            continue
        break  # a failed statement: later blocks depend on it
    return problems


def _needs(page: pathlib.Path) -> list[str]:
    code = "\n".join(source for _, source in python_blocks(page.read_text()))
    names = set(NEEDS.get(page.name, ()))
    names |= {module for word, module in BACKENDS.items() if re.search(rf"\b{word}\b", code)}
    return sorted(names)


def test_every_fence_says_what_it_holds():
    # An untagged fence would be neither run nor marked as not runnable.
    untagged = [f"{page.relative_to(ROOT)}:{page.read_text().count(chr(10), 0, m.start()) + 1}"
                for page in PAGES for m in FENCE.finditer(page.read_text()) if not m["tag"]]
    assert not untagged, f"fences without a tag (python, bash, text): {untagged}"


def test_every_page_has_its_python_blocks_found():
    found = {page.name: len(python_blocks(page.read_text())) for page in PAGES}
    assert found["README.md"] >= 1 and found["user-guide.md"] >= 20 and found["layouts.md"] >= 5, found


@pytest.mark.parametrize("page", [p for p in PAGES if python_blocks(p.read_text())], ids=lambda p: p.name)
def test_page_runs_and_prints_what_it_shows(page):
    for module in _needs(page):
        pytest.importorskip(module)
    import strideweave as sw

    try:
        with warnings.catch_warnings():
            # interop.md runs torch's gradcheck on float32 inputs, which torch warns about; anything else
            # a page makes Python warn about is shown by pytest.
            warnings.filterwarnings("ignore", message=r"Input #\d+ requires gradient and is not a double",
                                    category=UserWarning)
            problems = run_page(page)
    finally:
        sw.set_default_carrier("numpy")
    assert not problems, "\n".join(problems)


# ----- the checker itself --------------------------------------------------------------------------------


def _page(tmp_path, body: str) -> pathlib.Path:
    docs = tmp_path / "docs"
    docs.mkdir(exist_ok=True)
    page = docs / "page.md"
    page.write_text(body)
    return page


@pytest.fixture
def fake_root(tmp_path, monkeypatch):
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    return tmp_path


def test_checker_accepts_matching_output_loops_and_raises(fake_root):
    page = _page(fake_root, "```python\nx = 2\nprint(x, 'and', x * 2)  # -> 2 and ...\n"
                            "for i in range(2):\n    print(i * 0)      # -> 0\nint('a')  # -> raises ValueError: "
                            "invalid literal ...\nprint(\n  'a very long', 'line')\n# -> a very long\n# -> line\n"
                            "```\n\n```bash\nnot python\n```\n\n```python\nprint(x)  # -> 2\n```\n")
    assert run_page(page) == []


@pytest.mark.parametrize(("body", "problem"), [
    ("print(1)  # -> 2\n", "shows '2', printed '1'"),
    ("print(1)\n", "this print shows no '# ->' output"),
    ("x = 1  # -> 1\n", "is on a line that does not print"),
    ("int('1')  # -> raises ValueError\n", "nothing was raised"),
    ("int('a')  # -> raises TypeError\n", "raised ValueError"),
    ("if False:\n    print(1)  # -> 1\n", "never printed"),
    ("for i in range(2):\n    print(i)  # -> 0\n", "shows '0', printed '1'"),
    ("undefined_name\nprint(1)  # -> 1\n", "raised NameError"),
])
def test_checker_reports_each_mismatch(fake_root, body, problem):
    page = _page(fake_root, "```python\n" + body + "```\n")
    problems = run_page(page)
    assert problems and problem in problems[0], problems
    assert problems[0].startswith("docs/page.md:")
