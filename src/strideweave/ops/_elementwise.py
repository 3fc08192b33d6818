"""The elementwise machinery: the unary and binary bases that run every elementwise rule.

The rules are tables in ``ops/elementwise.py`` (as JAX keeps ``lax.py``
apart from ``ad.py``). An operation reads its operands as rev arrays,
broadcasts them over top-level modes and writes a fresh result in the memory
order of its dense operands (canonical when they disagree); operands sharing
one dense layout are combined as flat buffers. Backward runs as forward ran:
on the flat buffers (one dense layout, or a Tensor and a scalar), else, for
two Tensor operands, in the dense result's storage order, each gradient
summed back over the modes broadcasting stretched; only a batched cotangent
(and a scalar beside a Tensor not dense on its carrier, whose canonical
result's storage order is its rev space) runs in the result's rev space.
``Primitive.cotangents`` then puts each gradient into its input's layout.
The rule records and the builders of a rule's class and public function
are in ``ops/_elementwise_rules.py``.

A rule flagged ``linear_in_g`` has a VJP ``g * factor`` whose factor does not
depend on ``g``. For a unit cotangent the base calls it with
``autograd.cotangents.Ones`` as ``g`` (the engine's, or one made here from
an array flagged as all ones), so ``g * factor`` is the factor itself: no
pass over the data for the ones, and on JAX the ones are never filled.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from .._marks import _UNIT_ARRAYS, unit_alias
from .._marks import _UNIT_REFS as _UNIT_FLAGS_REFS
from ..autograd.cotangents import EVERY, Ones, Request, gradient_values
from ..dtypes import DType, result_type, scalar_operand
from ..layout import Layout
from ..tensors.broadcasting import broadcast_modes, expand, unbroadcast
from ..tensors.tensor import Tensor, flat_values
from ..tensors.values import (
    cast_values,
    dense_carrier,
    flat_operand,
    from_storage,
    operand,
    operation_kind,
    reshaped,
    single_operation_kind,
    wrap,
)
from ._args import no_tensor_operand, not_a_tensor
from ._primitive import Primitive, flat_function, flat_operand_source, flat_recorder
from ._storage import (
    buffer_shape,
    flat_gradient,
    result_layout,
    storage_cotangent,
    storage_operand,
    storage_operands,
    summed,
)

__all__ = ["scalar_operator"]

_canonical = Layout.canonical
#: the unit flags' dict (``_marks``), read in place; typed Any so a test ``ref() is g`` leaves ``g`` Any
_UNIT_REFS: dict[int, Any] = _UNIT_FLAGS_REFS
_FLOAT32 = DType.Float32

# ----- the unit cotangent inside a rule ----------------------------------------------------------------

def _returned_g(node: Any) -> TypeError:
    """The error for a rule flagged ``linear_in_g`` whose VJP handed back ``g`` (``Ones``) itself."""
    return TypeError(f"{type(node).__name__}: a rule flagged linear_in_g returned g itself; its VJP must be "
                     "g * factor")


def _allocated(grad: Any, *arguments: Any) -> bool:
    """Whether a VJP allocated ``grad``: by the rule contract it is either new or one of its arguments."""
    if grad is None:
        return False
    for argument in arguments:
        if grad is argument:
            return False
    return True


# ----- binary operations ------------------------------------------------------------------------------

@lru_cache(maxsize=256)
def _stretched(own: tuple, shape: tuple) -> tuple:
    """The axes of ``shape`` along which an operand lined up as ``own`` stretches (extent 1 there)."""
    return tuple(axis for axis, (n, m) in enumerate(zip(own, shape)) if n == 1 and m != 1)


class _Left:
    """A binary operation's scalar first argument (``2.0 - x``), as its node saves it."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value


class _Binary(Primitive):
    """``compute(xp, a, b)`` forward; ``vjp_first`` / ``vjp_second(xp, g, out, a, b)`` in result space.

    A Python scalar operand stays a scalar, since only Tensors are saved
    inputs: ``saved`` holds it as is when it was the second argument (the
    common ``x * 2.0``: no tuple per node) and wrapped in ``_Left`` when it
    was the first. ``takes_ones`` marks a rule linear in ``g``.
    """

    __slots__ = ()
    # set per rule by ``binary_op`` (static functions of the class)
    compute: Callable[..., Any]
    vjp_first: Callable[..., Any]
    vjp_second: Callable[..., Any]
    #: ``BinaryRule.infix``: the operator's symbol where ``compute`` is ``a <infix> b``
    infix: str | None = None
    composite = False
    keeps_result = False
    #: whether the gradient for a Tensor operand paired with a scalar needs that Tensor's values
    scalar_vjp_reads_tensor = True
    #: whether the VJPs of two Tensor operands read their values (not for a rule that reads ``"g"`` alone)
    vjp_reads_operands = True

    def forward(self, a: Any, b: Any, *, options=None) -> Tensor:
        common = None
        if isinstance(a, Tensor):
            if isinstance(b, Tensor):
                kind, layout, av, bv = self._operands(a, b, options)
                if a._dtype is not b._dtype:
                    common = result_type(a._dtype, b._dtype)
            else:
                kind, layout, av = self._tensor_operand(a, options)
                if b.__class__ is float and a._dtype.kind == "float":
                    bv = b  # the common case, decided without the table
                else:
                    bv, common = scalar_operand(b, a._dtype, type(self).__name__), _common_dtype(a, b)
                self.saved = bv
        elif isinstance(b, Tensor):
            kind, layout, bv = self._tensor_operand(b, options)
            if a.__class__ is float and b._dtype.kind == "float":
                av = a
            else:
                av, common = scalar_operand(a, b._dtype, type(self).__name__), _common_dtype(a, b)
            self.saved = _Left(av)
        else:
            raise no_tensor_operand(type(self).__name__, a, b)
        if common is not None:
            self.flat = False  # backward reads the operands as Float32 (``_in_storage_order``)
            av, bv = cast_values(av, common, kind), cast_values(bv, common, kind)
        out = self.compute(kind.namespace, av, bv)
        if self.keeps_result:
            self.saved = (self.saved, out)
        return wrap(out, layout, kind)

    if TYPE_CHECKING:  # made by ``flat_recorder`` after the class
        @classmethod
        def with_scalar(cls, tensor: Tensor, scalar: float, position: int) -> Tensor | None: ...

        @classmethod
        def with_tensor(cls, a: Tensor, b: Tensor) -> Tensor | None: ...

    def _operands(self, a: Tensor, b: Tensor, options) -> tuple:
        """Where two Tensor operands meet, the result layout, and both lined up with it."""
        kind = operation_kind((a, b), options)
        self.kind = kind
        a_modes, b_modes = a._layout._shape_modes, b._layout._shape_modes
        if a_modes == b_modes:
            layout = a._layout
            if (b._layout is layout or b._layout == layout) and dense_carrier(a, kind) is not None \
                    and dense_carrier(b, kind) is not None:
                self.flat = True
                return kind, layout, a._carriers[0]._array, b._carriers[0]._array
            layout = result_layout(a_modes, (a, b))
        else:
            layout = result_layout(broadcast_modes(a_modes, b_modes), (a, b))
        # Operands whose buffers line up with the result (a broadcast row, say) run backward on raw
        # buffers too, where arrays reshape for free (forward undoes this for mixed dtypes).
        self.flat, av, bv = storage_operands(a, b, layout, kind)
        return kind, layout, av, bv

    def _tensor_operand(self, tensor: Tensor, options) -> tuple:
        """The one Tensor operand beside a scalar: its flat buffer when dense, else its rev array."""
        kind, values = single_operation_kind(tensor, options)
        self.kind = kind
        if values is None:
            return kind, _canonical(tensor._layout._shape_modes), operand(tensor, kind)
        self.flat = True
        return kind, tensor._layout, values

    supports_batched = True

    def ones_for(self, dtype: Any) -> Ones | None:
        # Besides flat buffers, two Tensor operands take them: the storage-order route (mixed dtypes too).
        ones = Primitive.ones_for(self, dtype)
        if ones is not None or not self.takes_ones:
            return ones
        saved = self.saved[0] if self.keeps_result else self.saved
        return Ones(self._result_layout._storage_shape, dtype, self.kind.namespace) if saved is None else None

    def pullback(self, gradient: Tensor, request: Request = EVERY) -> tuple[tuple, tuple]:
        # Three routes, each as forward ran: flat buffers, the dense result's storage order, or its rev space.
        if gradient.__class__ is Ones:  # offered by ``ones_for``: the storage-order case
            return self._storage_backward(gradient, request)
        result = self._result_layout
        layout = gradient._layout
        if self.flat and layout is result:
            # Forward ran on the flat buffers (one dense layout, or a scalar): stay flat, in storage order.
            return self.cotangents(self.backward_flat(flat_gradient(gradient, self.kind), request)[0], request=request)
        if len(self._inputs) == 2 and len(layout._shape_modes) == len(result._shape_modes):
            # Two Tensor operands (of mixed dtypes too), which forward lined up with the dense result.
            return self._storage_backward(gradient, request)
        # A Tensor beside a scalar that is not dense on its carrier (its result is canonical, so its storage
        # order is its rev space), or a batched cotangent, whose batch axis comes first.
        return self._rev_backward(gradient, request)

    def backward_flat(self, g: Any, request: Request = EVERY) -> tuple[tuple, tuple]:
        xp = self.kind.namespace
        saved = self.saved
        out = None
        if self.keeps_result:
            saved, out = saved
        inputs = self._inputs
        if saved is None:
            av, bv = flat_values(inputs[0]), flat_values(inputs[1])
            size = g.shape[0]
            if av.shape[0] != size or bv.shape[0] != size:
                return self._lined_up_flat(g, av, bv, out, request)
            if out is not None and out.ndim != 1:
                # Forward ran on operands lined up N-D that hold as many elements as the result
                # (``(2,)`` beside ``(1, 2)``): its saved result is N-D too, and ``g`` is flat.
                out = reshaped(out, (-1,), self.kind)
            # ``is_unit`` inline, its dict read in C (``g in _UNIT_ARRAYS`` is a Python call): the hot path.
            if self.takes_ones and (g.__class__ is Ones or (id(g) in _UNIT_REFS and _UNIT_REFS[id(g)]() is g)):
                ga, gb = self._pair(xp, g, av, bv, out, request, True)
            else:
                wanted = request.wanted
                ga = self.vjp_first(xp, g, out, av, bv) if wanted is None or wanted[0] else None
                gb = self.vjp_second(xp, g, out, av, bv) if wanted is None or wanted[1] else None
            return (ga, gb), (_allocated(ga, g, av, bv, out), gb is not ga and _allocated(gb, g, av, bv, out))
        values = flat_values(inputs[0]) if self.scalar_vjp_reads_tensor else None
        # Beside a scalar only the engine's ``Ones`` come as such: a flagged array is multiplied by the
        # rule as written, exact and no dearer than filling the factor (multiply's is the scalar).
        if saved.__class__ is _Left:
            grad = self.vjp_second(xp, g, out, saved.value, values)
        else:
            grad = self.vjp_first(xp, g, out, values, saved)
        if grad is g and g.__class__ is Ones:
            raise _returned_g(self)
        # By the rule contract a VJP result is new or one of its array arguments.
        return (grad,), (grad is not None and grad is not g and grad is not values and grad is not out,)

    def _pair(self, xp, g, a, b, out, request: Request, unit: bool | None = None) -> tuple:
        """Both operands' gradients (None where not wanted); a unit ``g`` (``unit``: known to be,
        else tested) is taken as ``Ones``: the engine's, or one made of a flagged array."""
        if unit is None:
            unit = self.takes_ones and (g.__class__ is Ones or g in _UNIT_ARRAYS)  # (``in``: ``is_unit`` inline)
        if unit and g.__class__ is not Ones:
            g = Ones(tuple(g.shape), g.dtype, xp)
        wanted = request.wanted
        ga = self.vjp_first(xp, g, out, a, b) if wanted is None or wanted[0] else None
        gb = self.vjp_second(xp, g, out, a, b) if wanted is None or wanted[1] else None
        if g.__class__ is Ones and (ga is g or gb is g):
            raise _returned_g(self)
        return ga, gb

    def _lined_up_flat(self, g: Any, av: Any, bv: Any, out: Any, request: Request) -> tuple[tuple, tuple]:
        """``backward_flat`` where an operand broadcasts: each gradient summed to its own buffer's order.

        Forward lined both buffers up with the result's storage order (``storage_operands`` or
        ``with_lined_up``), so an operand's gradient is the result-shaped one summed over the axes
        its lined-up shape stretches, read flat; ``g`` handed back whole stays the flat ``g``.
        """
        kind = self.kind
        result = self._result_layout
        shape = result._storage_shape
        a, b = self._inputs
        # (Neither is None: forward ran flat only where both buffers line up.)
        a_shape: Any = buffer_shape(a, result)
        b_shape: Any = buffer_shape(b, result)
        flat_g = g
        if g.__class__ is Ones:
            g = Ones(shape, g.dtype, g.xp)
        else:
            g = unit_alias(g, reshaped(g, shape, kind))
        if self.vjp_reads_operands:
            av, bv = reshaped(av, a_shape, kind), reshaped(bv, b_shape, kind)
        else:
            av = bv = None
        if out is not None and out.ndim != len(shape):
            out = reshaped(out, shape, kind)
        grads = self._pair(kind.namespace, g, av, bv, out, request)
        flats: list = []
        owned: list = []
        for grad, own_shape in zip(grads, (a_shape, b_shape)):
            if grad is None:
                flats.append(None)
                owned.append(False)
                continue
            if grad is g and own_shape == shape:
                flats.append(flat_g)
                owned.append(False)
                continue
            made = False
            if tuple(grad.shape) != shape:  # a VJP may hand back a broadcast operand (``Ones * factor``)
                grad = kind.namespace.broadcast_to(grad, shape)
            axes = _stretched(own_shape, shape)
            if axes:
                grad = summed(kind.namespace, grad, axes, True)
                made = True
            flat = reshaped(grad, (-1,), kind)
            flats.append(flat)
            # A reshape that had to copy (a broadcast view of saved values, say) made a new buffer.
            owned.append(made or (flat is not grad and kind.cls._copied(grad, flat)))
        return tuple(flats), tuple(owned)

    def _in_storage_order(self, g: Any, out: Any, request: Request) -> tuple[tuple, tuple]:
        """Each operand's gradient from ``g`` (the cotangent in the dense result's storage shape), as
        ``storage_cotangent`` returns it, and for each whether it is a sum made here."""
        kind = self.kind
        xp = kind.namespace
        result = self._result_layout
        a, b = self._inputs
        av = bv = None
        if self.vjp_reads_operands:
            av, bv = storage_operand(a, result, kind), storage_operand(b, result, kind)
            if a._dtype is not b._dtype:  # a recorded node's result is Float32, so both read as Float32
                av, bv = cast_values(av, _FLOAT32, kind), cast_values(bv, _FLOAT32, kind)
        if out is not None and out.ndim != len(g.shape):
            out = reshaped(out, result._storage_shape, kind)
        ga, gb = self._pair(xp, g, av, bv, out, request)
        # Only a sum made for one operand is owned here: with broadcast operands a VJP
        # may hand back a broadcast view of saved values (``Ones * factor``).
        ca, owned_a = storage_cotangent(ga, a, result, xp)
        cb, owned_b = storage_cotangent(gb, b, result, xp)
        return (ca, cb), (owned_a, owned_b)

    def _storage_backward(self, gradient: Tensor | Ones, request: Request) -> tuple:
        """Backward in the dense result's storage order, as forward ran: no transposes on the way."""
        out = self.saved[1] if self.keeps_result else None
        g = gradient if isinstance(gradient, Ones) else storage_operand(gradient, self._result_layout, self.kind)
        grads, owned = self._in_storage_order(g, out, request)
        return self.cotangents(grads, owned=owned, request=request)

    def _rev_backward(self, gradient: Tensor, request: Request) -> tuple:
        """Backward in the result's rev space (a batched cotangent's batch axis first)."""
        kind = self.kind
        xp = kind.namespace
        saved, out = self.saved if self.keeps_result else (self.saved, None)
        inputs = self._inputs
        if out is not None:
            out = from_storage(out, self._result_layout, xp)
        g, batch = gradient_values(self, gradient)
        modes = self._result_layout._shape_modes
        if saved is None:
            a, b = inputs
            av, bv = operand(a, kind), operand(b, kind)
            if a._dtype is not b._dtype:  # (as in ``_in_storage_order``)
                av, bv = cast_values(av, _FLOAT32, kind), cast_values(bv, _FLOAT32, kind)
            av = expand(av, a._layout._shape_modes, modes, xp)
            bv = expand(bv, b._layout._shape_modes, modes, xp)
            ga, gb = self._pair(xp, g, av, bv, out, request)
            return self.cotangents((None if ga is None else unbroadcast(ga, a._layout._shape_modes, modes, xp, batch),
                                    None if gb is None else unbroadcast(gb, b._layout._shape_modes, modes, xp, batch)),
                                   batch, request=request)
        tensor_values = operand(inputs[0], kind) if self.scalar_vjp_reads_tensor else None
        # (No ``Ones`` reach this path; a flagged array is multiplied, as in ``backward_flat``.)
        if saved.__class__ is _Left:
            return self.cotangents((self.vjp_second(xp, g, out, saved.value, tensor_values),), batch, request=request)
        return self.cotangents((self.vjp_first(xp, g, out, tensor_values, saved),), batch, request=request)


#: ``with_scalar``'s head after its operand test: the product of the flat buffer and the scalar
_SCALAR_COMPUTE = """\
out = cls.compute(kind.namespace, values, scalar) if position else cls.compute(kind.namespace, scalar, values)
"""
_SCALAR_HEAD = _SCALAR_COMPUTE + """\
saved = scalar if position else _Left(scalar)
if cls.keeps_result:
    saved = (saved, out)
inputs = (tensor,)
layout = tensor._layout
"""

_Binary.with_scalar = flat_recorder(  # type: ignore[method-assign]
    "with_scalar", "cls, tensor, scalar, position", flat_operand_source("tensor", "values", "kind") + _SCALAR_HEAD,
    {"_Left": _Left},
    """Hot path for a dense Float32 Tensor and a float (``position``: the scalar's argument index).

    None when ``tensor`` is not dense on its carrier; the caller then takes the general path.
    The result is made and recorded by the flat recording step inline (``flat_recorder``): this
    runs once per operator such as ``x * 2.0``.
    """, names=("tensor",))


def scalar_operator(op_class: type[_Binary], name: str, reflected: bool, fallback: Callable) -> Callable:
    """The Tensor operator ``name`` of ``op_class`` (``t * 2.0``; ``reflected``: ``2.0 - t``).

    A float beside a Float32 Tensor dense on its carrier is ``with_scalar``'s work written into the
    operator itself (the hot path of a chain of elementwise operations: one call, not two);
    two Float32 Tensors try ``with_tensor``; anything else goes to ``fallback(self, other)``.
    """
    refuse = "return fallback(self, other)"
    head = f"""\
if other.__class__ is not float or self._dtype is not _FLOAT32:
    if other.__class__ is Tensor and self._dtype is _FLOAT32 and other._dtype is _FLOAT32:
        result = cls.with_tensor({"other, self" if reflected else "self, other"})  # (two dense Tensors)
        if result is not None:
            return result
    {refuse}
tensor, scalar = self, other
""" + flat_operand_source("tensor", "values", "kind", refuse) + _SCALAR_HEAD
    infix = op_class.infix
    if infix is not None:  # the rule's forward is the operator itself: written here, not called
        head = head.replace(_SCALAR_COMPUTE, f"out = scalar {infix} values\n" if reflected
                            else f"out = values {infix} scalar\n")
    return flat_function(name, "self, other", head, {
        "cls": op_class, "fallback": fallback, "position": 0 if reflected else 1, "_Left": _Left},
        f"``{name}`` of a Tensor (``{op_class.__name__}``).", names=("tensor",))


_Binary.with_tensor = flat_recorder(  # type: ignore[method-assign]
    "with_tensor", "cls, a, b", """\
layout = a._layout
other = b._layout  # one layout (its modes compared first: a broadcast operand leaves at once)
if other is not layout and (other._shape_modes != layout._shape_modes or other != layout):
    return None
""" + flat_operand_source("a", "values", "kind") + flat_operand_source("b", "other", "other_kind") + """\
if other_kind is not kind and other_kind != kind:
    return None
out = cls.compute(kind.namespace, values, other)
saved = (None, out) if cls.keeps_result else None
inputs = (a, b)
""", {},
    """Hot path for two Float32 Tensors dense in one layout on one carrier kind (``a * b``).

    None otherwise; the caller then takes the general path, which computes the same node
    (flat buffers, ``flat`` set) through ``Operation.__call__``. Made by ``flat_recorder`` as
    ``with_scalar`` is.
    """, names=("a", "b"))


def _common_dtype(a: Any, b: Any):
    """The dtype both operands are computed in, when one of them must be cast (else None).

    One rule on every carrier (``dtypes.result_type``), never the backend's own.
    """
    a_tensor, b_tensor = isinstance(a, Tensor), isinstance(b, Tensor)
    if a_tensor and b_tensor:
        return None if a._dtype is b._dtype else result_type(a._dtype, b._dtype)
    tensor, scalar = (a, b) if a_tensor else (b, a)
    if scalar.__class__ is float and tensor._dtype.kind == "float":
        return None  # the common case, decided without the table
    common = result_type(tensor._dtype, scalar)
    return None if common is tensor._dtype else common


# ----- unary operations -------------------------------------------------------------------------------

class _Unary(Primitive):
    """``compute(xp, x)`` forward, ``vjp(xp, g, out, x)`` backward; ``out`` kept only if needed."""

    __slots__ = ()
    # set per rule by ``unary_op`` (static functions of the class)
    compute: Callable[..., Any]
    vjp: Callable[..., Any]
    composite = False
    keeps_result = False
    needs_input = True

    def forward(self, x: Any, *, options=None) -> Tensor:
        if not isinstance(x, Tensor):
            raise not_a_tensor(type(self).__name__, x)
        kind, values = single_operation_kind(x, options)
        self.kind = kind
        self.flat = values is not None
        out = self.compute(kind.namespace, operand(x, kind) if values is None else values)
        if self.keeps_result:
            self.saved = out
        return wrap(out, _canonical(x._layout._shape_modes) if values is None else x._layout, kind)

    @classmethod
    def on_flat(cls, x: Tensor) -> Tensor | None:
        """Hot path for a dense Float32 Tensor; None when it is not dense on its carrier."""
        flat = flat_operand(x)
        if flat is None:
            return None
        values, kind = flat
        out = cls.compute(kind.namespace, values)
        return cls.record_flat((x,), out, x._layout, kind, out if cls.keeps_result else None, values)

    supports_batched = True

    def backward_flat(self, g: Any, request: Request = EVERY) -> tuple[tuple, tuple]:
        xp = self.kind.namespace
        values = flat_values(self._inputs[0]) if self.needs_input else None
        saved = self.saved
        # ``is_unit`` inline, as in ``_Binary.backward_flat``: this is the hot path.
        if self.takes_ones and id(g) in _UNIT_REFS and _UNIT_REFS[id(g)]() is g:
            g = Ones(tuple(g.shape), g.dtype, xp)
        grad = self.vjp(xp, g, saved, values)
        if grad is g and g.__class__ is Ones:
            raise _returned_g(self)
        # (``_allocated`` inline: by the rule contract a VJP result is new or one of its array arguments.)
        return (grad,), (grad is not None and grad is not g and grad is not values and grad is not saved,)

    def pullback(self, gradient: Tensor, request: Request = EVERY) -> tuple[tuple, tuple]:
        kind = self.kind
        x = self._inputs[0]
        if self.flat and gradient._layout is self._result_layout:
            # Forward ran on the flat buffer: stay flat (``saved`` is flat too).
            return self.cotangents(self.backward_flat(flat_gradient(gradient, kind))[0], request=request)
        values = None
        if self.needs_input:
            values = operand(x, kind)
        g, batch = gradient_values(self, gradient)
        saved = self.saved
        xp = kind.namespace
        if self.flat and saved is not None:
            saved = from_storage(saved, x._layout, xp)
        if self.takes_ones and g in _UNIT_ARRAYS:  # (no ``Ones`` reach this path but flagged arrays)
            g = Ones(tuple(g.shape), g.dtype, xp)
        grad = self.vjp(xp, g, saved, values)
        if grad is g and g.__class__ is Ones:
            raise _returned_g(self)
        return self.cotangents((grad,), batch, request=request)
