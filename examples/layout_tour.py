"""A tour of layouts: CuTe notation, offsets, aliasing and the layout algebra."""

import numpy as np

import strideweave as sw
from strideweave import Layout, Shape, Stride, viz

print("== canonical layouts (first mode fastest) ==")
for shape in ([4, 2], [2, [4, 3]], [4, 1, 2]):
    print(f"canonical{tuple(Shape(shape).modes)!s:14s} = {Layout.canonical(Shape(shape))}")

print("\n== a layout maps coordinates to offsets ==")
nested = Layout(Shape([2, [2, 3]]))
print(viz.layout_text(nested))
print("nested(1, (1, 2)) =", nested(1, (1, 2)), "  nested(7) =", nested(7), "(7 -> (1, 3) colexicographically)")

print("\n== aliasing classes ==")
for layout in (Layout(Shape([4, 2]), Stride([1, 4])),
               Layout(Shape([4, 2]), Stride([1, 8])),
               Layout(Shape([4, 2]), Stride([0, 1])),
               Layout(Shape([4, 2]), Stride([1, 1]))):
    print(f"{layout!s:14s} aliasing={layout.aliasing():11s} compact={layout.is_compact()!s:5s} "
          f"size={layout.size} cosize={layout.cosize}")

print("\n== the algebra (CuTe semantics) ==")
print("coalesce   (2,(2,3)):(1,(2,4))          ->", nested.coalesce())
a, b = Layout(Shape([6, 2]), Stride([8, 2])), Layout(Shape([4, 3]), Stride([3, 1]))
print(f"composition {a} o {b} ->", a.composition(b))
print("complement (4):(2) in 24               ->", Layout(Shape(4), Stride(2)).complement(24))
m = Layout(Shape([4, 2, 3]), Stride([2, 1, 8]))
print(f"logical_divide {m} / (4):(2) ->", m.logical_divide(Layout(Shape(4), Stride(2))))

print("\n== Tensors are views through layouts ==")
t = sw.Tensor.from_storage(np.arange(12, dtype=np.float32), Layout(Shape([3, 4])))
print("t =", t.layout, t.tolist())
print("t[1]      ->", t[1].layout, "offset", t[1].offset, t[1].tolist())
print("t[:, 1:3] ->", t[:, 1:3].layout, "offset", t[:, 1:3].offset)
print("transpose ->", sw.transpose(t).layout, "(same storage)")
print("reshape   ->", sw.reshape(t, [6, 2]).layout, sw.reshape(t, [6, 2]).tolist()[0:2], "...")
row = sw.tensor([10.0, 20.0, 30.0, 40.0])
print("broadcast ->", sw.broadcast_to(row, [3, 4]).layout, "(stride 0: three rows share storage)")
