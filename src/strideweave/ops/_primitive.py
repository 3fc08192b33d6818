"""``Primitive``: the base of the built-in operations.

Forward state lives in slots, not the ``context`` dict; ``cotangents`` turns
per-input gradient arrays into cotangents in each input's exact layout;
``record_flat`` (made by ``flat_recorder``) records the elementwise hot path's results.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .._generate import function, indent
from ..autograd.cotangents import EVERY, Ones, Request, cotangent_for_batched, cotangent_record
from ..carriers import CarrierKind
from ..dtypes import DType
from ..layout import Layout
from ..operation import (
    _UNWRITTEN,
    NODE_FIELDS,
    RECORDED_FIELDS,
    Operation,
    _state,
    node_fields,
    node_methods,
    recording_step,
    result_state,
    trace_lost_precision,
    versions_of,
)
from ..tensors.tensor import Tensor, flat_values, tensor_fields
from ..tensors.values import dense_buffer, flat_operand

__all__ = ["Primitive"]

_FLOAT32 = DType.Float32


#: ``NODE_FIELDS`` and the fields a built-in node adds (see ``Primitive``); its ``__new__`` and
#: ``release`` are generated from them.
FIELDS = {
    **NODE_FIELDS,
    "kind": ("None", "None"),  # the carrier kind forward ran on: unset until then, and after release
    "saved": ("None", "None"),
    # Set by forward when backward can run on raw arrays (``backward_flat``): every saved
    # input and the result are dense on ``kind`` (elementwise: in one shared layout).
    "flat": ("False", None),
}
PRIMITIVE_FIELDS = tuple(name for name in FIELDS if name not in NODE_FIELDS)


class Primitive(Operation):
    """Base of the built-in operations.

    Built-ins keep their forward state in two slots rather than the
    ``context`` dict: ``kind`` (the carrier kind they ran on) and ``saved``
    (whatever backward needs beyond the saved inputs). A million-node graph
    then costs no dict per node. Release drops both with the rest.
    """

    __slots__ = PRIMITIVE_FIELDS
    kind: CarrierKind
    saved: Any
    flat: bool
    builtin = True
    #: whether backward also takes batched cotangents (see ``gradient_values``)
    supports_batched = False
    #: whether backward only scales its cotangent (the elementwise rules flagged ``linear_in_g``),
    #: so that ``ones_for`` may offer ``autograd.cotangents.Ones`` in its place
    takes_ones = False
    #: whether ``pullback`` also takes, for a broadcast result, ``Unplaced`` sums over each storage slot
    #: (extent 1 on every stride-0 axis, ``autograd.buffers.slot_sums``) in place of the full cotangent
    takes_slot_sums = False

    if TYPE_CHECKING:  # generated after the class, as the rest of the recording step
        @classmethod
        def record_flat(cls, inputs: tuple, out: Any, layout: Layout, kind: CarrierKind, saved: Any = None,
                        values: Any = None) -> Tensor:
            """The result of a flat forward run outside ``__call__``, recorded as a node of this class."""

    def flat_cotangent(self, gradient: Tensor) -> Any:
        """A flat node's cotangent Tensor as its raw buffer in the result's storage order, or None."""
        layout = gradient._layout
        if layout is self._result_layout or layout == self._result_layout:
            return dense_buffer(gradient, self.kind)
        return None

    def backward(self, gradient: Tensor) -> tuple:
        """One cotangent Tensor (or None) per saved input: ``pullback``'s values, for a caller outside a traversal."""
        return self.pullback(gradient)[0]

    def pullback(self, gradient: Tensor, request: Request = EVERY) -> tuple[tuple, tuple]:
        """The rule: one cotangent (or None) per saved input, and for each whether the traversal owns it.

        ``gradient`` is the result's cotangent Tensor (or ``Ones``, where ``ones_for`` offered
        them); ``request`` says what this traversal asks of the call (see ``Request``).
        """
        raise NotImplementedError(f"{type(self).__name__} does not implement pullback")

    def backward_flat(self, g: Any, request: Request = EVERY) -> tuple[tuple, tuple]:
        """Backward of a flat node on raw arrays (see ``autograd/engine.py``).

        ``g`` is the cotangent as a 1-D array in the result's storage order.
        Returns one 1-D array (or None) per saved input, in that input's
        storage order, and for each whether the traversal owns it (the
        engine may then add into it in place and hand it out as a ``.grad``):
        an array this call allocated for that input alone, or ``g`` itself
        handed on to one input when ``request.owned``.
        Besides elementwise nodes, matmul, full reductions and whole-buffer
        views run flat where their Tensors are dense (``flat_capable``).
        """
        raise NotImplementedError(f"{type(self).__name__} ran flat but has no backward_flat")

    def ones_for(self, dtype: Any) -> Ones | None:
        """An unfilled unit cotangent this node's backward takes in place of a Tensor, or None.

        A flat node takes it in ``backward_flat`` as the flat buffer.
        """
        if self.takes_ones and self.flat:
            return Ones((self._result_layout.size,), dtype, self.kind.namespace)
        return None

    def cotangents(self, grads: Sequence[Any], batch: int | None = None,
                   owned: bool | tuple[bool, ...] = False, request: Request = EVERY) -> tuple[tuple, tuple]:
        """Per-input gradient rev arrays (or None) as cotangents in each input's layout, and which are owned.

        ``owned``: the rule owns every one of ``grads``, allocated for its input alone (or one such
        flag per input); a cotangent that broadcasts it is not owned. ``request``: the call's (see ``pullback``).
        """
        kind = self.kind
        wanted = request.wanted
        defer = request.defer
        # ``__class__ is`` (the hot path's test) is not a narrowing a type checker follows
        flags: tuple[bool, ...] = (
            owned if owned.__class__ is tuple else (owned,) * len(grads))  # type: ignore[assignment]
        if batch is None and wanted is None and len(grads) == 1:
            t = self._inputs[0]
            g = grads[0]
            if g is None or t._dtype is not _FLOAT32:
                return (None,), (False,)
            value, owned = cotangent_record(t, g, kind, flags[0], defer)
            return (value,), (owned,)
        wanted = wanted or (True,) * len(grads)
        if True in flags and len(grads) > 1:
            # One owner per buffer: an array handed to several inputs is owned by none of them.
            flags = tuple([f and sum(g is other for other in grads) == 1 for g, f in zip(grads, flags)])
        if batch is not None:
            return tuple(None if g is None or not w or t._dtype is not _FLOAT32
                         else cotangent_for_batched(t, g, kind, batch)
                         for t, g, w in zip(self._inputs, grads, wanted)), (False,) * len(grads)
        records = [(None, False) if g is None or not w or t._dtype is not _FLOAT32
                   else cotangent_record(t, g, kind, f, defer)
                   for t, g, w, f in zip(self._inputs, grads, wanted, flags)]
        return tuple([value for value, _ in records]), tuple([owned for _, owned in records])


node_methods(Primitive, FIELDS)


#: Source for a flat recorder's ``head``: return None where ``{tensor}``'s carrier keeps N-D buffers
#: (JAX), asked before its operand is read, since a flat view of such a buffer is a reshape of all of it.
KEEPS_SHAPE_SOURCE = """\
if ({tensor}._kind.cls if {tensor}._raw is not None
        else ({tensor}._carrier_tuple or {tensor}._materialize())[0].__class__).keeps_shape:
    return None
"""


def flat_operand_source(tensor: str, values: str, kind: str, refuse: str = "return None") -> str:
    """Source for a flat recorder's ``head``: ``values`` and ``kind`` bound to ``tensor``'s flat buffer and
    carrier kind, running ``refuse`` where it is not dense on its carrier (``flat_operand``, whose first
    case, a lazy result, is inlined)."""
    return f"""\
{values} = {tensor}._raw
if {values} is not None:
    {kind} = {tensor}._kind
else:
    flat = flat_operand({tensor})
    if flat is None:
        {refuse}
    {values}, {kind} = flat
"""


def flat_recorder(name: str, parameters: str, head: str, namespace: dict[str, Any], doc: str,
                  names: tuple[str, ...] | None = None) -> Any:
    """A classmethod of a flat node class: ``head`` (source) and then the flat recording step
    (``flat_function``, whose first parameter is the class, ``cls``)."""
    return classmethod(flat_function(name, parameters, head, namespace, doc, names))


def flat_function(name: str, parameters: str, head: str, namespace: dict[str, Any], doc: str,
                  names: tuple[str, ...] | None = None) -> Any:
    """A function running ``head`` (source) and then the flat recording step.

    ``head`` leaves the names the step reads: ``inputs`` (Tensors, every one Float32 and dense
    in ``layout`` on ``kind``), ``out`` (the flat result in their storage order), ``values`` (the
    first input's flat buffer), ``layout``, ``kind`` and ``saved``. The step makes the result
    (``Tensor._from_raw``'s fields, from ``TENSOR_FIELDS``), decides whether it is recorded (a
    Float32 result in grad mode), and makes its node of class ``cls`` (``FIELDS``) and records it
    (``recording_step``, as ``Operation.__call__`` does without its generic checks). Written out
    once per recorder rather than called, as a call would cost as much as the step on the
    elementwise hot path; ``namespace``: the globals ``head`` needs (``cls`` among them unless a
    parameter); ``names``: the names ``head`` gives the inputs, where it knows how many there are.
    """
    lazy = {"_carrier_tuple": "None", "_raw": "out", "_kind": "kind", "_layout": "layout"}
    step = f"""\
if out.dtype is values.dtype and _state.enabled:  # a Float32 result, recorded: made here, without a call
    result = object.__new__(Tensor)
{indent(tensor_fields("result", omit=("_ctx",), _dtype="_FLOAT32", **lazy))}\
else:
    dtype = inputs[0]._dtype if out.dtype is values.dtype else kind.cls._sw_dtype_in(kind.namespace, out.dtype)
    result = Tensor._from_raw(out, layout, kind, dtype)
    if dtype is not _FLOAT32 or not _state.enabled:
        if _state.enabled:
            trace_lost_precision(cls.__name__, inputs, result)
        return result
node = object.__new__(cls)
{node_fields("node", FIELDS, RECORDED_FIELDS, kind="kind", saved="saved", flat="True")}\
{recording_step("True", lazy_result=True, names=names)}\
return result
"""
    scope = {"Tensor": Tensor, "_FLOAT32": _FLOAT32, "_state": _state, "trace_lost_precision": trace_lost_precision,
             "versions_of": versions_of, "result_state": result_state, "flat_operand": flat_operand,
             "_UNWRITTEN": _UNWRITTEN, "__name__": __name__, **namespace}  # (a frame of the package: ``_caller``)
    return function(name, f"def {name}({parameters}):\n{indent(head + step)}", scope, name, doc)


Primitive.record_flat = flat_recorder(  # type: ignore[method-assign]
    "record_flat", "cls, inputs, out, layout, kind, saved=None, values=None",
    "if values is None:\n    values = flat_values(inputs[0])\n", {"flat_values": flat_values},
    """The result of a flat forward run outside ``__call__``, recorded as a node of this class.

    The elementwise hot path: every Tensor in ``inputs`` is Float32 and dense in ``layout`` on
    ``kind``, and ``out`` is the flat result in their storage order (``values``: the first
    input's buffer, where the caller has it). See ``flat_recorder``.
    """)
