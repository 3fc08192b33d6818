"""Regenerate the pictures in docs/img/ (run from the repository root: python docs/gen_images.py)."""

import pathlib

from strideweave import Layout, Shape, Stride, viz

OUT = pathlib.Path(__file__).resolve().parent / "img"

PICTURES = {
    "canonical_4x2.png": (Layout(Shape([4, 2])), "canonical (4,2):(1,4)"),
    "row_major_4x2.png": (Layout(Shape([4, 2]), Stride([2, 1])), "row-major (4,2):(2,1)"),
    "nested_2x2x3.png": (Layout(Shape([2, [2, 3]])), "nested (2,(2,3)):(1,(2,4))"),
    "broadcast_4x2.png": (Layout(Shape([4, 2]), Stride([0, 1])), "broadcast (4,2):(0,1)"),
    "holes_4x2.png": (Layout(Shape([4, 2]), Stride([1, 8])), "holes (4,2):(1,8)"),
    "overlapping_4x2.png": (Layout(Shape([4, 2]), Stride([1, 1])), "overlapping (4,2):(1,1)"),
    "logical_divide.png": (Layout(Shape(8)).logical_divide(Layout(Shape(4), Stride(2))),
                           "(8):(1) / (4):(2) = (4,2):(2,1)"),
}

if __name__ == "__main__":
    OUT.mkdir(exist_ok=True)
    for name, (layout, title) in PICTURES.items():
        viz.layout_png(layout, OUT / name, title=title, dpi=80)
        print(OUT / name)
