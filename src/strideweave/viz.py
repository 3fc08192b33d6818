"""Pictures: a layout as a grid of offsets (text or PNG), an autograd graph as DOT text.

The grid convention follows CuTe's ``print_layout``: a rank-2 layout shows
top-level mode 0 down the rows and mode 1 across the columns; a rank-1
layout is one row. A nested mode counts as one axis whose coordinates are
decomposed colexicographically, exactly as ``layout(i)`` does. Each cell holds
the storage offset of that coordinate.

Matplotlib is needed only for :func:`layout_png` and is imported when called
(``pip install "strideweave[report]"``). No pyplot state is touched: the
figure is built directly, so this works on headless machines and inside
other plotting code.
"""

from __future__ import annotations

from typing import Any

from .errors import MissingBackendError
from .layout import Layout
from .tensors.tensor import Tensor

__all__ = ["graph_dot", "layout_grid", "layout_png", "layout_text"]


# ----- layouts as grids --------------------------------------------------------------------------

def _check_layout(layout: Any, what: str) -> Layout:
    if isinstance(layout, Tensor):
        return layout.layout
    if not isinstance(layout, Layout):
        raise TypeError(f"{what} expects a Layout (or a Tensor), got {type(layout).__name__}: {layout!r}")
    if layout.rank > 2:
        raise ValueError(f"{what} draws layouts of rank 1 or 2; {layout} has rank {layout.rank} "
                         "(draw a sub-layout such as layout[0], or coalesce/flatten it first)")
    return layout


def layout_grid(layout: Layout | Tensor) -> list[list[int]]:
    """The offsets of a rank-1 or rank-2 layout as a list of rows.

    ``layout_grid(L)[i][j] == L(i, j)`` for rank 2; a rank-1 layout gives one
    row, ``[[L(0), L(1), ...]]``. Passing a Tensor draws its layout.
    """
    layout = _check_layout(layout, "layout_grid")
    if layout.rank == 1:
        return [[layout(i) for i in range(layout.size)]]
    rows, cols = layout.mode_sizes
    row_layout, col_layout = layout[0], layout[1]
    return [[row_layout(i) + col_layout(j) for j in range(cols)] for i in range(rows)]


def _aliased(grid: list[list[int]]) -> set[int]:
    seen: dict[int, int] = {}
    for row in grid:
        for offset in row:
            seen[offset] = seen.get(offset, 0) + 1
    return {offset for offset, count in seen.items() if count > 1}


def layout_text(layout: Layout | Tensor) -> str:
    """A plain-text table of offsets headed by the layout in CuTe notation.

    Offsets that more than one coordinate reaches (aliasing) are marked
    with ``*``.
    """
    layout = _check_layout(layout, "layout_text")
    grid = layout_grid(layout)
    shared = _aliased(grid)
    cells = [[f"{v}*" if v in shared else str(v) for v in row] for row in grid]
    width = max([len(c) for row in cells for c in row] + [len(str(len(grid[0]) - 1)), 1])
    label = len(str(len(grid) - 1))
    lines = [f"{layout}  ({layout.aliasing()}, size {layout.size}, cosize {layout.cosize})"]
    lines.append(" " * (label + 3) + " ".join(str(j).rjust(width) for j in range(len(grid[0]))))
    rule = " " * (label + 1) + "+" + "-" * ((width + 1) * len(grid[0]) + 1)
    lines.append(rule)
    for i, row in enumerate(cells):
        lines.append(str(i).rjust(label) + " | " + " ".join(c.rjust(width) for c in row))
    if shared:
        lines.append("* offset reached by more than one coordinate")
    return "\n".join(lines)


def layout_png(layout: Layout | Tensor, path: Any = None, *, title: str | None = None,
               cell_inches: float = 0.45, dpi: int = 100) -> Any:
    """Draw the offset grid with matplotlib; save it to ``path`` when given.

    Cells are coloured by offset, so equal colours mean equal storage
    slots; aliased offsets are drawn in bold red. Returns the
    ``matplotlib.figure.Figure``.
    """
    layout = _check_layout(layout, "layout_png")
    try:
        from matplotlib.figure import Figure
    except ImportError:  # pragma: no cover - depends on the environment
        raise MissingBackendError('layout_png needs matplotlib: pip install "strideweave[report]"') from None
    grid = layout_grid(layout)
    rows, cols = len(grid), len(grid[0]) if grid and grid[0] else 0
    shared = _aliased(grid)
    fig = Figure(figsize=(max(cols, 1) * cell_inches + 0.8, max(rows, 1) * cell_inches + 0.8), dpi=dpi)
    ax = fig.add_axes((0.08, 0.04, 0.88, 0.8 if rows > 1 else 0.6))
    top = max(layout.cosize - 1, 1)
    ax.imshow([[v / top for v in row] for row in grid] if cols else [[0]], cmap="YlGnBu",
              vmin=0, vmax=1.7, aspect="equal")  # vmax > 1 keeps every cell light enough for text
    for i, row in enumerate(grid):
        for j, v in enumerate(row):
            ax.text(j, i, str(v), ha="center", va="center", fontsize=9,
                    color="#b00000" if v in shared else "black",
                    fontweight="bold" if v in shared else "normal")
    ax.set_xticks(range(cols))
    ax.set_yticks(range(rows))
    ax.tick_params(length=0, labelsize=7, labeltop=True, labelbottom=False)
    for spine in ax.spines.values():
        spine.set_visible(False)
    ax.set_title(title if title is not None else str(layout), fontsize=10, pad=14)
    if path is not None:
        fig.savefig(path, dpi=dpi)
    return fig


# ----- autograd graphs as DOT --------------------------------------------------------------------

def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _tensor_label(t: Tensor, name: str | None) -> str:
    carrier = "+".join(sorted({type(c).__name__ for c in t.carriers}))
    head = f"{name}\n" if name else ""
    return f"{head}{t.layout}\n{getattr(t.dtype, 'name', t.dtype)} on {carrier}"


def graph_dot(output: Tensor, names: dict | None = None) -> str:
    """The autograd graph reachable from ``output`` as Graphviz DOT text.

    Tensors are boxes (layout, dtype, carrier), operations are ellipses;
    edges run from each saved input to the operation and from the
    operation to its result, so the picture reads in forward order. A
    released node is drawn dashed (its inputs are gone). ``names`` maps
    Tensors (by identity) to labels, e.g. ``{id(x): "x"}``. The walk is
    iterative, so deep graphs are fine (the text grows with the graph).
    """
    if not isinstance(output, Tensor):
        raise TypeError(f"graph_dot expects a Tensor, got {type(output).__name__}: {output!r}")
    names = names or {}
    ids: dict[int, str] = {}

    def node_id(obj: Any, prefix: str) -> str:
        key = id(obj)
        if key not in ids:
            ids[key] = f"{prefix}{len(ids)}"
        return ids[key]

    lines = ["digraph autograd {", "  rankdir=BT;", '  node [fontname="Helvetica", fontsize=10];']
    stack = [output]
    seen_tensors: set[int] = set()
    keep_alive = []  # hold Tensors so id() stays unique during the walk
    while stack:
        t = stack.pop()
        if id(t) in seen_tensors:
            continue
        seen_tensors.add(id(t))
        keep_alive.append(t)
        tid = node_id(t, "t")
        fill = "lightblue" if t.is_differentiable() and t.autograd_ctx is None else "white"
        lines.append(f"  {tid} [shape=box, style=filled, fillcolor={fill}, "
                     f"label={_quote(_tensor_label(t, names.get(id(t))))}];")
        op = t.autograd_ctx
        if op is None:
            continue
        oid = node_id(op, "op")
        keep_alive.append(op)
        style = ", style=dashed" if op.released else ""
        lines.append(f"  {oid} [shape=ellipse{style}, label={_quote(type(op).__name__)}];")
        lines.append(f"  {oid} -> {tid};")
        for position, source in enumerate(op.inputs()):
            lines.append(f"  {node_id(source, 't')} -> {oid} [label=\"{position}\", fontsize=8];")
            stack.append(source)
    lines.append("}")
    # An operation reached from several results appears once per result edge; drop repeated lines.
    unique = list(dict.fromkeys(lines))
    return "\n".join(unique) + "\n"
