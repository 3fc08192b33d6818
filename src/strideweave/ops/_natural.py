"""Operations written over natural arrays: one axis per top-level mode, first mode first.

The Array API functions that work along an axis (sort, cumulative sums,
take, flip, linalg, ...) are easiest to state, and to check against the
standard, on the arrays a user sees. A :class:`Natural` operation reads each
Tensor operand as such an array (nested modes merged, as ``to_array`` does),
runs a rule ``forward(xp, *arrays, **params) -> (out, saved)`` and a rule
``vjp(xp, g, saved, *arrays, **params) -> grads`` in the same terms. Results
are row-major Tensors (the C-ordered array is their storage, no transpose);
gradients go back through the shared ``Primitive.cotangents``.

Functions with several outputs (eigh, svd, qr, slogdet) record one node
whose result packs the outputs flat; :func:`unpack` hands each out through a
differentiable slice, so an unused output contributes a zero cotangent.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

from ..autograd.cotangents import EVERY, Request
from ..layout.order import row_major
from ..tensors.tensor import Tensor
from ..tensors.values import mode_operand, operation_kind, wrap
from ._primitive import Primitive

__all__ = ["Natural", "natural", "natural_op", "unpack"]


def natural(tensor: Tensor, kind) -> Any:
    """``tensor``'s values as a native array with one axis per top-level mode, first mode first.

    Read afresh at every call (no cache keyed on the Tensor): a write between two
    calls is seen, and nothing here keeps ``tensor`` alive.
    """
    values = mode_operand(tensor, kind)
    if values.ndim < 2:
        return values
    return kind.namespace.permute_dims(values, tuple(range(values.ndim - 1, -1, -1)))


def wrap_natural(values: Any, kind) -> Tensor:
    """A row-major Tensor holding the native array ``values`` (axes = top-level modes)."""
    return wrap(values, row_major(tuple(int(n) for n in values.shape)), kind)


def own_storage(result: Tensor, tensors: tuple) -> Tensor:
    """``result`` in memory of its own: a native function may return a view of its operand (NumPy's
    ``flip`` and ``reshape``), and a second carrier over an operand's memory would see writes that the
    operand's version never counts, and the other way round. Where the library cannot tell
    (``Carrier._copied``), the values are copied."""
    carrier = result._carriers[0]
    cls = carrier.__class__
    if not cls.writes_in_place:
        return result
    mine = carrier._array
    for tensor in tensors:
        buffers = (tensor._raw,) if tensor._raw is not None else [c._array for c in tensor._carriers]
        for buffer in buffers:
            if buffer.__class__ is mine.__class__ and not cls._copied(buffer, mine):
                copied = carrier._xp.asarray(mine, copy=True)
                return Tensor._make(cls._adopt(copied, carrier._xp, carrier._device, carrier._kind),
                                    result._layout, 0)
    return result


def _to_rev(grad: Any, target: Tensor, xp: Any) -> Any:
    """A natural-axes gradient as ``target``'s rev array (the form ``cotangents`` takes)."""
    if grad.ndim > 1:
        grad = xp.permute_dims(grad, tuple(range(grad.ndim - 1, -1, -1)))
    leaves = target._layout.rev_leaf_shape
    return grad if tuple(grad.shape) == leaves else xp.reshape(grad, leaves)


class Natural(Primitive):
    """Base of natural-axes operations; subclasses are made by :func:`natural_op`.

    ``saved`` holds (params, whatever the forward rule kept); the inputs are
    read again at backward only when the rule says its VJP needs them.
    """

    __slots__ = ()
    # set per operation by ``natural_op`` and ``packed_op`` (static functions of the class)
    forward_rule: Callable[..., Any]
    vjp_rule: Callable[..., Any]
    outputs_rule: Callable[..., Any]
    reads_inputs = True

    def forward(self, *tensors: Tensor, params: dict, options=None) -> Tensor:
        kind = operation_kind(tensors, options)
        arrays = [natural(t, kind) for t in tensors]
        out, kept = self.forward_rule(kind.namespace, *arrays, **params)
        self.kind = kind
        self.saved = (params, kept)
        return own_storage(wrap_natural(out, kind), tensors)

    def pullback(self, gradient: Tensor, request: Request = EVERY) -> tuple[tuple, tuple]:
        kind = self.kind
        xp = kind.namespace
        params, kept = self.saved
        arrays = [natural(t, kind) for t in self._inputs] if self.reads_inputs else ()
        grads = self.vjp_rule(xp, natural(gradient, kind), kept, *arrays, **params)
        return self.cotangents(tuple(None if g is None else _to_rev(g, t, xp)
                                     for g, t in zip(grads, self._inputs)), request=request)


def _no_vjp(self, gradient: Tensor, request: Request = EVERY) -> tuple[tuple, tuple]:
    return (None,) * len(self._inputs), (False,) * len(self._inputs)


def natural_op(name: str, forward: Callable, vjp: Callable | None = None, *,
               reads_inputs: bool = True) -> type[Natural]:
    """A :class:`Natural` operation class from its two rules (``vjp=None``: not differentiable)."""
    attrs = {"__slots__": (), "forward_rule": staticmethod(forward), "reads_inputs": reads_inputs}
    if vjp is None:
        attrs["pullback"] = _no_vjp
    else:
        attrs["vjp_rule"] = staticmethod(vjp)
    return cast("type[Natural]", type("".join(part.title() for part in name.split("_")), (Natural,), attrs))


# ----- several outputs through one node ------------------------------------------------------------

def _pack_forward(rule):
    def forward(xp, *arrays, **params):
        outs = tuple(rule(xp, *arrays, **params))
        shapes = tuple(tuple(int(n) for n in out.shape) for out in outs)
        flat = xp.concat([xp.reshape(out, (-1,)) for out in outs], axis=0)
        return flat, (shapes, outs)
    return forward


def _pack_vjp(rule):
    def vjp(xp, g, saved, *arrays, **params):
        shapes, outs = saved
        parts, start = [], 0
        for shape in shapes:
            size = 1
            for extent in shape:
                size *= extent
            parts.append(xp.reshape(g[start:start + size], shape))
            start += size
        return rule(xp, tuple(parts), outs, *arrays, **params)
    return vjp


def packed_op(name: str, forward: Callable, vjp: Callable, *, reads_inputs: bool = False) -> type[Natural]:
    """A multi-output operation: ``forward(xp, *arrays, **params) -> outputs`` and
    ``vjp(xp, gs, outputs, *arrays, **params)``, ``gs`` one cotangent per output: the
    natural convention with the outputs as what the forward kept."""
    op_class = natural_op(name, _pack_forward(forward), _pack_vjp(vjp), reads_inputs=reads_inputs)
    op_class.outputs_rule = staticmethod(forward)  # the outputs one by one, for calls that record no node
    return op_class


def _part_forward(xp, flat, *, start, shape):
    size = 1
    for extent in shape:
        size *= extent
    # A copy: each part gets storage of its own. A view would share the packed buffer, and with it
    # torch's version counter, so a write into one part would look like a write into every other.
    return xp.reshape(xp.asarray(flat[start:start + size], copy=True), shape), (flat.shape[0], size)


def _part_vjp(xp, g, kept, *, start, shape):
    total, size = kept
    flat = xp.reshape(g, (size,))
    pieces = [xp.zeros((start,), dtype=g.dtype, device=getattr(g, "device", None)), flat,
              xp.zeros((total - start - size,), dtype=g.dtype, device=getattr(g, "device", None))]
    return (xp.concat(pieces, axis=0),)


_Part = natural_op("part", _part_forward, _part_vjp, reads_inputs=False)
_Part.reads_result = False  # it keeps only shapes


def unpack(packed: Tensor, shapes: tuple) -> tuple[Tensor, ...]:
    """The outputs a packed operation computed, each a differentiable slice of ``packed``."""
    outs, start = [], 0
    for shape in shapes:
        outs.append(_Part()(packed, params={"start": start, "shape": tuple(shape)}))
        size = 1
        for extent in shape:
            size *= extent
        start += size
    return tuple(outs)
