"""matmul and tensordot over top-level modes, with their gradients.

Nested modes take part as single axes, flattened colexicographically, which
is exactly how canonical storage orders them. Two-mode matmul runs on rev
arrays directly (C^T = B^T A^T), so its result is canonical storage with no
transpose or copy.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .._generate import indent as _indent
from ..autograd.cotangents import EVERY, Request, gradient_values
from ..dtypes import DType, result_type
from ..layout import Layout
from ..layout.order import row_major
from ..tensors.broadcasting import broadcast_modes
from ..tensors.broadcasting import sum_to as _sum_to
from ..tensors.tensor import Tensor, _modes_view, flat_values
from ..tensors.values import cast_values, dense_carrier, mode_operand, operand, operation_kind, reshaped, wrap
from ._primitive import KEEPS_SHAPE_SOURCE, Primitive, flat_operand_source, flat_recorder
from ._storage import flat_capable, storage_flat

__all__ = ["matmul", "tensordot"]

_FLOAT32 = DType.Float32


def _mode_array(tensor: Tensor, kind) -> Any:
    """Natural-order array with one axis per top-level mode."""
    layout = tensor._layout
    sizes = layout.mode_sizes
    rank = len(sizes)
    if rank > 1 and len(layout.rev_leaf_shape) == rank and _c_ordered(layout, sizes):
        carrier = dense_carrier(tensor, kind)
        if carrier is not None:
            # Row-major storage (a wrapped C-ordered array): its buffer in the natural shape, with no
            # pair of transposes (on Dask the chunks the user made, with no alias task per chunk).
            return carrier.shaped(sizes)
    return _modes_view(operand(tensor, kind), layout, kind.namespace)


def _c_ordered(layout: Layout, sizes: tuple) -> bool:
    """Whether a dense ``layout``'s storage is its natural-order array in C order (a row-major wrap;
    with one mode of extent > 1 the canonical layout is too)."""
    perm = layout._storage_perm
    if perm is None:
        return sum(1 for extent in sizes if extent > 1) <= 1
    return perm == tuple(range(len(sizes) - 1, -1, -1))


def _both(read, a: Tensor, b: Tensor, kind) -> tuple[Any, Any]:
    """``read(a)`` and ``read(b)`` in their promoted dtype (PyTorch's products take one dtype only)."""
    av, bv = read(a, kind), read(b, kind)
    if a._dtype is not b._dtype:
        common = result_type(a._dtype, b._dtype)
        av, bv = cast_values(av, common, kind), cast_values(bv, common, kind)
    return av, bv


def _to_rev(xp, natural: Any) -> Any:
    return xp.permute_dims(natural, tuple(range(natural.ndim - 1, -1, -1))) if natural.ndim > 1 else natural


def _natural_to_rev_leaves(xp, natural: Any, layout: Layout, lead: tuple = ()) -> Any:
    """A natural-order mode array (after any ``lead`` batch axis) as a rev array of ``layout``'s leaves."""
    if not lead:
        return xp.reshape(_to_rev(xp, natural), layout.rev_leaf_shape)
    n = natural.ndim
    return xp.reshape(xp.permute_dims(natural, (0, *tuple(range(n - 1, 0, -1)))), lead + layout.rev_leaf_shape)


class Matmul(Primitive):
    """Array API ``matmul`` over top-level modes; ``saved``: a flat forward's operands and their arrays."""

    __slots__ = ()
    composite = False  # forward computes natively, calling no other operation
    reads_result = False

    if TYPE_CHECKING:  # made by ``flat_recorder`` after the class
        @classmethod
        def flat_product(cls, a: Tensor, b: Tensor) -> Tensor | None: ...

    def forward(self, a: Any, b: Any, *, options=None) -> Tensor:
        if not isinstance(a, Tensor) or not isinstance(b, Tensor):
            raise TypeError(f"matmul expects two Tensors, got {type(a).__name__} and {type(b).__name__}")
        kind = operation_kind((a, b), options)
        xp = kind.namespace
        a_modes, b_modes = a._layout._shape_modes, b._layout._shape_modes
        a_sizes, b_sizes = a._layout.mode_sizes, b._layout.mode_sizes
        ka = a_sizes[-1]
        kb = b_sizes[-2] if len(b_modes) > 1 else b_sizes[0]
        if ka != kb:
            raise ValueError(f"matmul: shapes {a.shape} and {b.shape} do not fit: inner extents {ka} and {kb} differ")
        self.kind = kind
        if len(a_modes) == 2 and len(b_modes) == 2:
            out_modes = (a_modes[0], b_modes[1])
            # The array's own ``@`` (the standard's __matmul__) skips the namespace wrapper's checks.
            # Dense operands of one dtype: read as their buffers, and backward takes and returns
            # raw storage-order buffers.
            self.flat = a._dtype is b._dtype and flat_capable((a, b), kind)
            if self.flat and kind[0].natural_products and a._layout._storage_perm == (1, 0) \
                    and all(type(m) is int for m in out_modes):
                # Natural order, a row-major result: over a row-chunked ``a`` it keeps those chunks.
                self.saved = _ROWS
                out = _mode_array(a, kind) @ _mode_array(b, kind)
                # out_modes are ints (checked above); ``_adopt_shaped`` is on the carriers with natural products
                return Tensor._make(kind[0]._adopt_shaped(out, xp, kind[2], kind),  # type: ignore[attr-defined]
                                    row_major(out_modes), 0)  # type: ignore[arg-type]
            if self.flat:
                av, bv = _dense_modes(a, kind), _dense_modes(b, kind)
                if not kind[0].keeps_shape:
                    # Views of the inputs' buffers (no copy where reshapes are views), for backward while
                    # the node holds these inputs (``replace_input`` drops them).
                    self.saved = (av, bv)
            else:
                av, bv = _both(mode_operand, a, b, kind)
            out = bv @ av
        else:
            a_batch = a_modes[:-2] if len(a_modes) > 1 else ()
            b_batch = b_modes[:-2] if len(b_modes) > 1 else ()
            batch = broadcast_modes(a_batch, b_batch) if a_batch or b_batch else ()
            rows = (a_modes[-2],) if len(a_modes) > 1 else ()
            columns = (b_modes[-1],) if len(b_modes) > 1 else ()
            out_modes = batch + rows + columns
            out = _to_rev(xp, xp.matmul(*_both(_mode_array, a, b, kind)))
            out_modes = out_modes or (1,)
        return wrap(out, Layout.canonical(out_modes), kind)

    supports_batched = True

    def replace_input(self, index: int, stand_in: Tensor) -> None:
        if self.saved is not _ROWS:
            self.saved = None  # views of the replaced input's buffer, which a write is about to overwrite
        super().replace_input(index, stand_in)

    def backward_flat(self, g: Any, request: Request = EVERY) -> tuple[tuple, tuple]:
        kind = self.kind
        a, b = self._inputs
        saved = self.saved
        if saved is _ROWS:
            return _backward_rows(self, g, request)
        if saved is not None:
            av, bv = saved
        else:
            av, bv = _dense_modes(a, kind), _dense_modes(b, kind)
        wanted = request.wanted  # ``wants`` inlined: None (the usual case) wants both
        if wanted is None and kind.cls.native_methods:
            # The usual case, ``reshaped`` and ``_product_in_storage`` inlined: two GEMMs, each written in
            # its operand's storage order (canonical, or against rev order: the transposed product).
            g = g.reshape((bv.shape[0], av.shape[1]))  # the rev shape of the result, ``bv @ av``
            perm_a, perm_b = a._layout._storage_perm, b._layout._storage_perm
            grad_a = (bv.T @ g).reshape(-1) if perm_a is None else (g.T @ bv).reshape(-1) if perm_a == (1, 0) \
                else _product_in_storage(bv.T, g, a._layout, kind)
            grad_b = (g @ av.T).reshape(-1) if perm_b is None else (av @ g.T).reshape(-1) if perm_b == (1, 0) \
                else _product_in_storage(g, av.T, b._layout, kind)
            return (grad_a, grad_b), (True, True)  # new GEMM results
        g = reshaped(g, (bv.shape[0], av.shape[1]), kind)
        grad_a = _product_in_storage(bv.T, g, a._layout, kind) if wanted is None or wanted[0] else None
        grad_b = _product_in_storage(g, av.T, b._layout, kind) if wanted is None or wanted[1] else None
        return (grad_a, grad_b), (grad_a is not None, grad_b is not None)  # new GEMM results

    def pullback(self, gradient: Tensor, request: Request = EVERY) -> tuple[tuple, tuple]:
        kind = self.kind
        xp = kind.namespace
        a, b = self._inputs
        if a._layout.rank == 2 and b._layout.rank == 2:
            g, batch = gradient_values(self, gradient)
            lead = () if batch is None else (batch,)
            g = reshaped(g, lead + self._result_layout.mode_sizes[::-1], kind)
            a_rev, b_rev = _both(mode_operand, a, b, kind)
            if batch is None:
                grad_a = b_rev.T @ g if request.wants(0) else None  # 2-D: ``.T`` is the standard's transpose
                grad_b = g @ a_rev.T if request.wants(1) else None
                return self.cotangents((None if grad_a is None else reshaped(grad_a, a._layout.rev_leaf_shape, kind),
                                        None if grad_b is None else reshaped(grad_b, b._layout.rev_leaf_shape, kind)),
                                       owned=True, request=request)  # two new GEMM results
            else:
                # One GEMM per operand for all K cotangents: fold the batch into the free extent.
                n, m = g.shape[1], g.shape[2]
                folded = xp.reshape(xp.permute_dims(g, (1, 0, 2)), (n, batch * m))
                grad_a = xp.permute_dims(xp.reshape(xp.matmul(xp.matrix_transpose(b_rev), folded),
                                                    (b_rev.shape[1], batch, m)), (1, 0, 2))
                grad_b = xp.reshape(xp.matmul(xp.reshape(g, (batch * n, m)), xp.matrix_transpose(a_rev)),
                                    (batch, n, a_rev.shape[0]))
            return self.cotangents((xp.reshape(grad_a, lead + a._layout.rev_leaf_shape),
                                    xp.reshape(grad_b, lead + b._layout.rev_leaf_shape)), batch, request=request)
        A, B = _both(_mode_array, a, b, kind)
        g, batch = gradient_values(self, gradient)
        lead = () if batch is None else (batch,)
        # Natural mode order, any batch axis first.
        out_rank = self._result_layout.rank
        g = xp.reshape(g, lead + self._result_layout.mode_sizes[::-1])
        g = xp.permute_dims(g, tuple(range(len(lead))) + tuple(range(len(lead) + out_rank - 1, len(lead) - 1, -1)))
        if A.ndim == 1:
            A = xp.reshape(A, (1, *tuple(A.shape)))
        if B.ndim == 1:
            B = xp.reshape(B, (*tuple(B.shape), 1))
        g_shape = (*_broadcast_batch(tuple(A.shape[:-2]), tuple(B.shape[:-2])), A.shape[-2], B.shape[-1])
        g = xp.reshape(g, lead + g_shape)
        grad_a = _sum_to(xp, xp.matmul(g, xp.matrix_transpose(B)), tuple(A.shape), lead) if request.wants(0) else None
        grad_b = _sum_to(xp, xp.matmul(xp.matrix_transpose(A), g), tuple(B.shape), lead) if request.wants(1) else None
        return self.cotangents((None if grad_a is None else _natural_to_rev_leaves(xp, grad_a, a._layout, lead),
                                None if grad_b is None else _natural_to_rev_leaves(xp, grad_b, b._layout, lead)),
                               batch, request=request)


_ROWS = ("rows",)  # ``Matmul.saved`` of a product computed in natural order (``natural_products``)


def _backward_rows(node: Matmul, g: Any, request: Request) -> tuple[tuple, tuple]:
    """``backward_flat`` of a product computed in natural order: ``g`` is the row-major result's buffer."""
    kind = node.kind
    a, b = node._inputs
    A, B = _mode_array(a, kind), _mode_array(b, kind)
    G = kind.cls.unflatten(g, (A.shape[0], B.shape[1]))  # type: ignore[attr-defined]  # natural-product carriers
    grad_a = _natural_in_storage(G @ B.T, a._layout, kind) if request.wants(0) else None
    grad_b = _natural_in_storage(A.T @ G, b._layout, kind) if request.wants(1) else None
    return (grad_a, grad_b), (grad_a is not None, grad_b is not None)


def _natural_in_storage(product: Any, layout: Layout, kind) -> Any:
    """A natural-order 2-D ``product`` as 1-D in a dense two-mode ``layout``'s storage order."""
    perm = layout._storage_perm
    if perm == (1, 0):
        return kind.cls.flatten(product)
    if perm is None:
        return kind.cls.flatten(product.T)
    return storage_flat(reshaped(product.T, layout.rev_leaf_shape, kind), layout, kind)


def _dense_modes(tensor: Tensor, kind) -> Any:
    """``mode_operand`` of a Tensor dense over its whole buffer: the buffer reshaped (and transposed
    when it is stored against rev order), with no strided gather."""
    layout = tensor._layout
    perm = layout._storage_perm
    if perm is None:
        return reshaped(flat_values(tensor), layout.mode_sizes[::-1], kind)
    if perm == (1, 0):
        return reshaped(flat_values(tensor), layout._storage_shape, kind).T
    return mode_operand(tensor, kind)


def _dense_modes_source(tensor: str, flat: str, target: str) -> str:
    """Source binding ``target`` to ``_dense_modes``'s array for ``tensor``, whose flat buffer is ``flat``, on a
    carrier whose arrays have the standard's methods (``native_methods``): ``_dense_modes`` inlined."""
    return f"""\
perm = {tensor}._layout._storage_perm
if perm is None:
    {target} = {flat}.reshape({tensor}._layout._mode_sizes[::-1])
elif perm == (1, 0):
    {target} = {flat}.reshape({tensor}._layout._storage_shape).T
else:
    {target} = mode_operand({tensor}, kind)
"""


def _product_in_storage(left: Any, right: Any, layout: Layout, kind) -> Any:
    """``left @ right``, the rev array of a two-mode ``layout``'s modes, as 1-D in its storage order.

    Storage running against rev order (a transposed operand, a row-major
    wrap) takes the transposed product, which the GEMM writes in that order.
    """
    perm = layout._storage_perm
    if perm is None:
        return reshaped(left @ right, (-1,), kind)
    if perm == (1, 0):
        return reshaped(right.T @ left.T, (-1,), kind)
    return storage_flat(reshaped(left @ right, layout.rev_leaf_shape, kind), layout, kind)


def _broadcast_batch(a: tuple, b: tuple) -> tuple:
    n = max(len(a), len(b))
    a, b = (1,) * (n - len(a)) + a, (1,) * (n - len(b)) + b
    return tuple(x if y == 1 else y for x, y in zip(a, b))


Matmul.flat_product = flat_recorder(  # type: ignore[method-assign]
    "flat_product", "cls, a, b", """\
a_layout, b_layout = a._layout, b._layout
if len(a_layout._shape_modes) != 2 or len(b_layout._shape_modes) != 2 \\
        or a_layout._mode_sizes[1] != b_layout._mode_sizes[0]:
    return None  # other ranks, and the error for extents that do not fit, are the general path's
""" + KEEPS_SHAPE_SOURCE.format(tensor="a") + flat_operand_source("a", "values", "kind") \
    + flat_operand_source("b", "other", "other_kind") + """\
if (other_kind is not kind and other_kind != kind) or kind.cls.natural_products:
    return None
if kind.cls.native_methods:
""" + _indent(_dense_modes_source("a", "values", "av") + _dense_modes_source("b", "other", "bv")) + """\
    out = (bv @ av).reshape(-1)
else:
    av, bv = _dense_modes(a, kind), _dense_modes(b, kind)
    out = reshaped(bv @ av, (-1,), kind)
layout = _canonical((a_layout._shape_modes[0], b_layout._shape_modes[1]))
saved = (av, bv)
inputs = (a, b)
""", {"_dense_modes": _dense_modes, "reshaped": reshaped, "_canonical": Layout.canonical, "mode_operand": mode_operand},
    """The product of two Float32 matrices dense on one carrier kind, made and recorded as ``Matmul``'s
    flat forward makes it (a flat node saving both operands' buffers), or None for the general path.
    """, names=("a", "b"))


def matmul(a: Tensor, b: Tensor, *, options=None) -> Tensor:
    """Matrix product over the last two top-level modes (Array API rules, batch modes broadcast)."""
    if options is None and a.__class__ is Tensor and b.__class__ is Tensor and a._dtype is _FLOAT32 \
            and b._dtype is _FLOAT32:
        result = Matmul.flat_product(a, b)  # two dense matrices: made and recorded in one step
        if result is not None:
            return result
    return Matmul()(a, b, options=options)


def _contracted_modes(modes: Any, rank_a: int, rank_b: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    if isinstance(modes, bool):
        raise TypeError(f"tensordot: modes must be an int or a pair of sequences, got {modes!r}")
    if isinstance(modes, int):
        if not 0 <= modes <= min(rank_a, rank_b):
            raise ValueError(f"tensordot: cannot contract {modes} modes of Tensors with {rank_a} and {rank_b} modes")
        return tuple(range(rank_a - modes, rank_a)), tuple(range(modes))
    try:
        first, second = modes
        first = tuple(operator.index(m) % rank_a for m in first)
        second = tuple(operator.index(m) % rank_b for m in second)
    except (TypeError, ValueError):
        raise TypeError(f"tensordot: modes must be an int or a pair of int sequences, got {modes!r}") from None
    if len(first) != len(second) or len(set(first)) != len(first) or len(set(second)) != len(second):
        raise ValueError(f"tensordot: modes {modes!r} must pair distinct modes one to one")
    return first, second


class Tensordot(Primitive):
    """Contract the given top-level modes; ``saved`` holds the contracted mode pairs."""

    __slots__ = ()
    reads_result = False

    def forward(self, a: Any, b: Any, *, modes: Any = 2, options=None) -> Tensor:
        if not isinstance(a, Tensor) or not isinstance(b, Tensor):
            raise TypeError(f"tensordot expects two Tensors, got {type(a).__name__} and {type(b).__name__}")
        kind = operation_kind((a, b), options)
        xp = kind.namespace
        ia, ib = _contracted_modes(modes, a._layout.rank, b._layout.rank)
        a_modes, b_modes = a._layout.shape.modes, b._layout.shape.modes
        for i, j in zip(ia, ib):
            if a_modes[i] != b_modes[j]:
                raise ValueError(f"tensordot: mode {i} of shape {a.shape} and mode {j} of shape {b.shape} differ")
        self.kind = kind
        self.saved = (ia, ib)
        out = xp.tensordot(*_both(_mode_array, a, b, kind), axes=(list(ia), list(ib)))
        out_modes = tuple(m for i, m in enumerate(a_modes) if i not in ia) + \
            tuple(m for j, m in enumerate(b_modes) if j not in ib)
        return wrap(_to_rev(xp, out), Layout.canonical(out_modes or (1,)), kind)

    def pullback(self, gradient: Tensor, request: Request = EVERY) -> tuple[tuple, tuple]:
        kind = self.kind
        xp = kind.namespace
        a, b = self._inputs
        ia, ib = self.saved
        A, B = _both(_mode_array, a, b, kind)
        fa = [i for i in range(A.ndim) if i not in ia]
        fb = [j for j in range(B.ndim) if j not in ib]
        g = xp.reshape(_modes_view(operand(gradient, kind), gradient._layout, xp),
                       tuple(A.shape[i] for i in fa) + tuple(B.shape[j] for j in fb))
        grad_a = xp.tensordot(g, B, axes=(list(range(len(fa), len(fa) + len(fb))), fb))
        order_a = fa + [ia[k] for k in sorted(range(len(ib)), key=lambda k: ib[k])]
        grad_a = xp.permute_dims(grad_a, tuple(order_a.index(i) for i in range(A.ndim)))
        grad_b = xp.tensordot(A, g, axes=(fa, list(range(len(fa)))))
        order_b = [ib[k] for k in sorted(range(len(ia)), key=lambda k: ia[k])] + fb
        grad_b = xp.permute_dims(grad_b, tuple(order_b.index(j) for j in range(B.ndim)))
        return self.cotangents((_natural_to_rev_leaves(xp, grad_a, a._layout),
                                _natural_to_rev_leaves(xp, grad_b, b._layout)), request=request)


def tensordot(a: Tensor, b: Tensor, modes: int | Sequence[Sequence[int]] = 2, *, options=None) -> Tensor:
    """Contract top-level ``modes`` of ``a`` and ``b`` (an int N: last N of a with first N of b)."""
    return Tensordot()(a, b, modes=modes, options=options)
