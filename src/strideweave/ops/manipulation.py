"""Joining, selecting and converting: concat, stack, where, clip, astype, copy, detach."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..autograd.cotangents import EVERY, Request, gradient_values
from ..dtypes import CompoundDType, SimpleDType
from ..layout import Layout
from ..layout.order import row_major
from ..tensors.broadcasting import broadcast_modes, expand, leaves_of, unbroadcast
from ..tensors.tensor import Tensor
from ..tensors.values import as_array_like, mode_operand, operand, operation_kind, wrap
from ._args import axis as _axis
from ._args import not_a_tensor
from ._natural import natural, wrap_natural
from ._primitive import Primitive

__all__ = ["astype", "clip", "concat", "copy", "detach", "stack", "where"]


def _check_tensors(tensors: Sequence[Any], name: str) -> tuple[Tensor, ...]:
    tensors = tuple(tensors)
    if not tensors:
        raise ValueError(f"{name} needs at least one Tensor")
    for t in tensors:
        if not isinstance(t, Tensor):
            raise TypeError(f"{name} expects Tensors, got {type(t).__name__}: {t!r}")
    return tensors


# ----- concat / stack ---------------------------------------------------------------------------------

class Concat(Primitive):
    """Join Tensors along one top-level mode; ``saved`` holds (rev axis, extents)."""

    __slots__ = ()
    reads_result = False  # backward slices the cotangent alone: a write into the result is recorded on its own

    def forward(self, *tensors: Tensor, mode: int = 0, options=None) -> Tensor:
        tensors = _check_tensors(tensors, "concat")
        first = tensors[0]
        rank = first._layout.rank
        mode = _axis(mode, rank, "concat", "mode")
        modes = first._layout.shape.modes
        for t in tensors:
            other = t._layout.shape.modes
            if len(other) != rank or any(a != b for i, (a, b) in enumerate(zip(modes, other)) if i != mode):
                raise ValueError(f"concat: shapes {first.shape} and {t.shape} differ outside mode {mode}")
            if not isinstance(other[mode], int):
                raise ValueError(f"concat: mode {mode} of shape {t.shape} is nested; concatenate along a leaf mode")
        kind = operation_kind(tensors, options)
        axis = rank - 1 - mode
        extents = tuple(t._layout.mode_sizes[mode] for t in tensors)
        self.kind = kind
        self.saved = (axis, extents)
        out_modes = (*modes[:mode], sum(extents), *modes[mode + 1:])
        if all(t._layout == row_major(t._layout.mode_sizes) for t in tensors):
            # C-ordered operands (arrays wrapped as they are): joined in their own order, the result is
            # row-major too; joining their reversed views would leave a transposed result to copy.
            out = kind.namespace.concat([natural(t, kind) for t in tensors], axis=mode)
            return wrap_natural(out, kind)
        out = kind.namespace.concat([mode_operand(t, kind) for t in tensors], axis=axis)
        return wrap(out, Layout.canonical(out_modes), kind)

    def pullback(self, gradient: Tensor, request: Request = EVERY) -> tuple[tuple, tuple]:
        kind = self.kind
        axis, extents = self.saved
        g = mode_operand(gradient, kind)
        grads, start = [], 0
        for t, extent in zip(self._inputs, extents):
            index = tuple(slice(start, start + extent) if a == axis else slice(None) for a in range(g.ndim))
            grads.append(kind.namespace.reshape(g[index], t._layout.rev_leaf_shape))
            start += extent
        return self.cotangents(grads, request=request)


def concat(tensors: Sequence[Tensor], mode: int = 0, *, options=None) -> Tensor:
    """Concatenate Tensors along top-level ``mode`` (a leaf mode); other modes must match."""
    return Concat()(*_check_tensors(tensors, "concat"), mode=mode, options=options)


class Stack(Primitive):
    """Stack equal-shape Tensors along a new top-level mode; ``saved`` is the rev axis."""

    __slots__ = ()
    reads_result = False  # backward indexes the cotangent alone

    def forward(self, *tensors: Tensor, mode: int = 0, options=None) -> Tensor:
        tensors = _check_tensors(tensors, "stack")
        modes = tensors[0]._layout.shape.modes
        for t in tensors:
            if t._layout.shape.modes != modes:
                raise ValueError(f"stack: shapes {tensors[0].shape} and {t.shape} differ")
        rank = len(modes) + 1
        mode = _axis(mode, rank, "stack", "mode")
        kind = operation_kind(tensors, options)
        axis = rank - 1 - mode
        self.kind = kind
        self.saved = axis
        out = kind.namespace.stack([mode_operand(t, kind) for t in tensors], axis=axis)
        return wrap(out, Layout.canonical((*modes[:mode], len(tensors), *modes[mode:])), kind)

    def pullback(self, gradient: Tensor, request: Request = EVERY) -> tuple[tuple, tuple]:
        kind = self.kind
        g = mode_operand(gradient, kind)
        axis = self.saved
        grads = []
        for i, t in enumerate(self._inputs):
            index = tuple(i if a == axis else slice(None) for a in range(g.ndim))
            grads.append(kind.namespace.reshape(g[index], t._layout.rev_leaf_shape))
        return self.cotangents(grads, request=request)


def stack(tensors: Sequence[Tensor], mode: int = 0, *, options=None) -> Tensor:
    """Stack equal-shape Tensors along a new top-level ``mode``."""
    return Stack()(*_check_tensors(tensors, "stack"), mode=mode, options=options)


# ----- selection --------------------------------------------------------------------------------------

class _Selecting(Primitive):
    """Ops over several broadcast operands, some of which may be Python scalars."""

    __slots__ = ()
    reads_result = False  # backward reads the operands (condition, x, bounds), never the result

    def operands(self, args: Sequence[Any], options) -> tuple:
        tensors = [a for a in args if isinstance(a, Tensor)]
        if not tensors:
            raise TypeError(f"{type(self).__name__.lower()} needs at least one Tensor operand")
        kind = operation_kind(tensors, options)
        modes = tensors[0]._layout.shape.modes
        for t in tensors[1:]:
            modes = broadcast_modes(modes, t._layout.shape.modes)
        values = [expand(operand(a, kind), a._layout.shape.modes, modes, kind.namespace)
                  if isinstance(a, Tensor) else a for a in args]
        return kind, modes, values


class Where(_Selecting):
    """``where(condition, a, b)``; ``saved`` holds the non-Tensor operands and their positions."""

    __slots__ = ()

    def forward(self, condition: Any, a: Any, b: Any, *, options=None) -> Tensor:
        if not isinstance(condition, Tensor):
            raise TypeError(f"where: condition must be a Bool Tensor, got {type(condition).__name__}")
        kind, modes, (c, av, bv) = self.operands((condition, a, b), options)
        xp = kind.namespace
        like = av if not isinstance(av, (int, float)) else bv
        if isinstance(like, (int, float)):
            raise TypeError("where needs at least one of a and b to be a Tensor")
        av, bv = as_array_like(av, like, xp), as_array_like(bv, like, xp)
        self.kind = kind
        self.saved = tuple(isinstance(x, Tensor) for x in (condition, a, b))
        return wrap(xp.where(c, av, bv), Layout.canonical(modes), kind)

    def pullback(self, gradient: Tensor, request: Request = EVERY) -> tuple[tuple, tuple]:
        kind = self.kind
        xp = kind.namespace
        g = operand(gradient, kind)
        modes = gradient._layout.shape.modes
        inputs = iter(self._inputs)
        condition = next(inputs)
        c = expand(operand(condition, kind), condition._layout.shape.modes, modes, xp)
        zero = xp.zeros_like(g)
        grads = [None]
        for is_tensor, picked in zip(self.saved[1:], (xp.where(c, g, zero), xp.where(c, zero, g))):
            if is_tensor:
                t = next(inputs)
                grads.append(unbroadcast(picked, t._layout.shape.modes, modes, xp))
        return self.cotangents(grads, request=request)


def where(condition: Tensor, a: Any, b: Any, *, options=None) -> Tensor:
    """``a`` where ``condition`` holds, else ``b`` (broadcast; the condition gets no gradient)."""
    return Where()(condition, a, b, options=options)


class Clip(_Selecting):
    """``clip(x, min, max)``: the gradient flows to whichever operand is selected."""

    __slots__ = ()

    def forward(self, x: Any, low: Any = None, high: Any = None, *, options=None) -> Tensor:
        if not isinstance(x, Tensor):
            raise not_a_tensor("clip", x)
        args = [a for a in (x, low, high) if a is not None]
        kind, modes, values = self.operands(args, options)
        xp = kind.namespace
        xv = values[0]
        bounds = dict(zip([n for n, a in (("low", low), ("high", high)) if a is not None], values[1:]))
        out = xv
        if "low" in bounds:
            out = xp.maximum(out, as_array_like(bounds["low"], xv, xp))
        if "high" in bounds:
            out = xp.minimum(out, as_array_like(bounds["high"], xv, xp))
        self.kind = kind
        self.saved = tuple((name, isinstance(a, Tensor), a if not isinstance(a, Tensor) else None)
                           for name, a in (("low", low), ("high", high)) if a is not None)
        shape = tuple(reversed(leaves_of(modes)))
        # A result owns a writable buffer: never x's own values (no bound), nor a broadcast_to view of the
        # right shape (read-only on NumPy, so a later write into the result would fail there).
        if out is xv:
            out = xp.asarray(out, copy=True)
        if tuple(out.shape) != shape:
            out = xp.asarray(xp.broadcast_to(out, shape), copy=True)
        return wrap(out, Layout.canonical(modes), kind)

    def pullback(self, gradient: Tensor, request: Request = EVERY) -> tuple[tuple, tuple]:
        kind = self.kind
        xp = kind.namespace
        modes = gradient._layout.shape.modes
        g = operand(gradient, kind)
        inputs = list(self._inputs)
        x = inputs.pop(0)
        xv = expand(operand(x, kind), x._layout.shape.modes, modes, xp)
        zero = xp.zeros_like(g)
        bounds = {}
        for name, is_tensor, scalar in self.saved:
            bound = inputs.pop(0) if is_tensor else None
            # ``bound`` is a Tensor where ``is_tensor``
            bounds[name] = (bound, expand(operand(bound, kind), bound._layout.shape.modes, modes, xp)  # type: ignore[union-attr,arg-type]
                            if is_tensor
                            else as_array_like(scalar, xv, xp))
        # torch's clamp rule: x keeps the gradient inside [low, high], bounds included; the result is
        # ``high`` wherever low > high, so ``low`` gets it only below a low bound that is under high.
        keep = None
        grads = []
        low, high = bounds.get("low"), bounds.get("high")
        if low is not None:
            keep = xv >= low[1]
        if high is not None:
            keep = xv <= high[1] if keep is None else keep & (xv <= high[1])
        if low is not None and low[0] is not None:
            picked = xv < low[1] if high is None else (xv < low[1]) & (low[1] < high[1])
            grads.append((low[0], xp.where(picked, g, zero)))
        if high is not None and high[0] is not None:
            picked = xv > high[1] if low is None else (xv > high[1]) | (high[1] < low[1])
            grads.append((high[0], xp.where(picked, g, zero)))
        grad_x = xp.where(keep, g, zero) if keep is not None else g
        out = [unbroadcast(grad_x, x._layout.shape.modes, modes, xp)]
        out += [unbroadcast(gb, b._layout.shape.modes, modes, xp) for b, gb in grads]
        return self.cotangents(out, request=request)


def clip(x: Tensor, min: Any = None, max: Any = None, *, options=None) -> Tensor:  # noqa: A002
    """Limit ``x`` to ``[min, max]`` (scalars or Tensors); the gradient goes to the selected operand."""
    return Clip()(x, min, max, options=options)


# ----- conversion ----------------------------------------------------------------------------------

class Astype(Primitive):
    """Convert to another SimpleDType (recorded only Float32 -> Float32, per the spec)."""

    __slots__ = ()

    def forward(self, x: Any, *, dtype: SimpleDType, options=None) -> Tensor:
        if not isinstance(x, Tensor):
            raise not_a_tensor("astype", x)
        if not isinstance(dtype, SimpleDType) or isinstance(dtype, CompoundDType):
            raise TypeError(f"astype expects a SimpleDType such as DType.Float32, got {dtype!r}")
        kind = operation_kind((x,), options)
        self.kind = kind
        carrier = x._carriers[0]
        native = carrier.native_dtype(dtype)
        values = kind.namespace.astype(operand(x, kind), native)
        return wrap(values, Layout.canonical(x._layout.shape.modes), kind)

    supports_batched = True

    def pullback(self, gradient: Tensor, request: Request = EVERY) -> tuple[tuple, tuple]:
        g, batch = gradient_values(self, gradient)
        return self.cotangents((g,), batch, request=request)


def astype(x: Tensor, dtype: SimpleDType, *, options=None) -> Tensor:
    """A copy of ``x`` converted to ``dtype``, in fresh canonical storage."""
    return Astype()(x, dtype=dtype, options=options)


class Copy(Primitive):
    """Identity into fresh canonical storage."""

    __slots__ = ()
    reads_result = False

    def forward(self, x: Any, *, options=None) -> Tensor:
        if not isinstance(x, Tensor):
            raise not_a_tensor("copy", x)
        kind = operation_kind((x,), options)
        self.kind = kind
        values = operand(x, kind)
        xp = kind.namespace
        # reshape(-1) may return a view of x's storage; a copy must not alias it.
        flat = xp.asarray(xp.reshape(values, (-1,)), copy=True)
        return Tensor._make(kind.cls.from_array(flat), Layout.canonical(x._layout.shape.modes), 0)

    supports_batched = True

    def pullback(self, gradient: Tensor, request: Request = EVERY) -> tuple[tuple, tuple]:
        g, batch = gradient_values(self, gradient)
        return self.cotangents((g,), batch, request=request)


def copy(x: Tensor, *, options=None) -> Tensor:
    """A differentiable copy of ``x`` in fresh canonical storage (on ``options.carrier`` if given)."""
    return Copy()(x, options=options)


def detach(x: Tensor) -> Tensor:
    """A Tensor sharing ``x``'s storage with no autograd history (never recorded)."""
    if not isinstance(x, Tensor):
        raise not_a_tensor("detach", x)
    return x._alias()
