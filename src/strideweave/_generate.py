"""Functions made once, at import, from source text: the constructors and recorders built from one field list.

The hottest paths (a Tensor, a node and its recording per elementwise
operation) cannot afford a call per object, so their bodies are written out
from the field lists (``tensors.tensor.TENSOR_FIELDS``, ``operation.NODE_FIELDS``)
and the recording step (``operation.recording_step``) rather than copied by hand: a
new field is one line in its list.
"""

from __future__ import annotations
import __future__

import linecache
import textwrap
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["assignments", "function", "indent"]


def assignments(target: str, fields: Mapping[str, str | None], values: Mapping[str, str],
                omit: tuple[str, ...] = ()) -> str:
    """Source lines setting every field of ``target``: the expression in ``values``, else the field's start value.

    ``fields`` maps each field to the expression a new object starts with
    (None: every constructor must give one); ``omit`` names fields another
    part of the generated code sets.
    """
    unknown = values.keys() - fields.keys()
    if unknown:
        raise ValueError(f"no such field(s) {sorted(unknown)}; the fields are {list(fields)}")
    lines = []
    for name, start in fields.items():
        if name in omit:
            continue
        value = values.get(name, start)
        if value is None:
            raise ValueError(f"the field {name!r} has no start value and none was given for {target!r}")
        lines.append(f"{target}.{name} = {value}\n")
    return "".join(lines)


def indent(source: str, levels: int = 1) -> str:
    """``source`` indented by ``levels`` blocks of four spaces, to splice it into a function body."""
    return textwrap.indent(source, "    " * levels)


def function(name: str, source: str, namespace: dict[str, Any], qualname: str | None = None,
             doc: str | None = None) -> Callable[..., Any]:
    """The function ``name`` that ``source`` defines, compiled once with ``namespace`` (a module's globals).

    The source is registered with ``linecache``, so tracebacks, debuggers and
    ``inspect.getsource`` show the generated lines.
    """
    filename = f"<strideweave generated {qualname or name}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    defined: dict[str, Any] = {}
    # Annotations in ``source`` stay unevaluated strings, as in the modules (``from __future__ import annotations``).
    code = compile(source, filename, "exec", flags=__future__.annotations.compiler_flag, dont_inherit=True)
    exec(code, namespace, defined)  # our own text, made at import
    made = defined[name]
    made.__qualname__ = qualname or name
    if doc is not None:
        made.__doc__ = doc
    return made
