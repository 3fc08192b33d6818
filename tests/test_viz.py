"""strideweave.viz: offset grids agree with the layout, pictures render, DOT text is well formed."""

import itertools

import pytest

import strideweave as sw
from strideweave import Layout, Shape, Stride, viz

LAYOUTS = [
    Layout(Shape([4, 2])),
    Layout(Shape([2, [2, 3]])),
    Layout(Shape([4, 2]), Stride([0, 1])),
    Layout(Shape([4, 2]), Stride([1, 1])),
    Layout(Shape(5), Stride(2)),
]


@pytest.mark.parametrize("layout", LAYOUTS, ids=str)
def test_grid_is_the_layout_function(layout):
    grid = viz.layout_grid(layout)
    if layout.rank == 1:
        assert grid == [[layout(i) for i in range(layout.size)]]
    else:
        rows, cols = layout.mode_sizes
        for i, j in itertools.product(range(rows), range(cols)):
            assert grid[i][j] == layout(i, j)


def test_text_marks_aliasing_and_names_the_layout():
    text = viz.layout_text(Layout(Shape([4, 2]), Stride([0, 1])))
    assert text.splitlines()[0].startswith("(4,2):(0,1)  (broadcast")
    assert "0*" in text
    assert "*" not in viz.layout_text(Layout(Shape([4, 2]))).split("\n", 1)[1]


def test_tensor_accepted_and_rank_three_rejected():
    assert viz.layout_grid(sw.zeros([2, 3])) == viz.layout_grid(Layout(Shape([2, 3])))
    with pytest.raises(ValueError, match="rank 3"):
        viz.layout_grid(Layout(Shape([2, 2, 2])))
    with pytest.raises(TypeError, match="expects a Layout"):
        viz.layout_text("(4,2):(1,4)")


def test_png_written(tmp_path):
    pytest.importorskip("matplotlib")
    path = tmp_path / "layout.png"
    fig = viz.layout_png(Layout(Shape([2, [2, 3]])), path)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert fig.axes


def test_graph_dot_walks_the_graph():
    x = sw.tensor([1.0, 2.0])
    y = sw.sum(sw.exp(x) * x)
    dot = viz.graph_dot(y, {id(x): "x"})
    assert dot.startswith("digraph autograd {") and dot.rstrip().endswith("}")
    for name in ("Sum", "Multiply", "Exp", '"x\\n(2):(1)'):
        assert name in dot
    assert dot.count("fillcolor=lightblue") == 1          # one leaf
    y.backward()
    assert "style=dashed" in viz.graph_dot(y)            # released node drawn dashed


def test_graph_dot_is_iterative():
    x = sw.tensor([1.0])
    y = x
    for _ in range(3000):
        y = y + 1.0
    assert viz.graph_dot(y).count("Add") == 3000
