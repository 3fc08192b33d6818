"""``Primitive``: the base of the built-in operations.

Forward state lives in slots, not the ``context`` dict; ``cotangents`` turns
per-input gradient arrays into cotangents in each input's exact layout;
``record_flat`` is the elementwise hot path's recording step.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..autograd.cotangents import EVERY, Ones, Request, cotangent_for_batched, cotangent_record
from ..carriers import CarrierKind
from ..dtypes import DType
from ..layout import Layout
from ..operation import _UNWRITTEN, Operation, _state, trace_lost_precision, versions_of
from ..tensors.tensor import Tensor, flat_values
from ..tensors.values import dense_buffer

__all__ = ["Primitive"]

_FLOAT32 = DType.Float32


class Primitive(Operation):
    """Base of the built-in operations.

    Built-ins keep their forward state in two slots rather than the
    ``context`` dict: ``place`` (the carrier kind they ran on) and ``saved``
    (whatever backward needs beyond the saved inputs). A million-node graph
    then costs no dict per node. Release drops both with the rest.
    """

    __slots__ = ("flat", "place", "saved")
    place: CarrierKind
    saved: Any
    flat: bool
    builtin = True
    #: whether backward also takes batched cotangents (see ``gradient_values``)
    supports_batched = False
    #: whether backward multiplies a unit cotangent only through ``times`` (the elementwise
    #: rules flagged ``linear_in_g``), so that ``ones_for`` may offer ``autograd.cotangents.Ones``
    takes_ones = False

    def __new__(cls, *args: Any, **kwargs: Any) -> Primitive:
        # ``Operation.__new__``'s fields and these in one call: one node per operation
        # (tests/ops/test_inline_constructors.py holds the two alike).
        self = object.__new__(cls)
        self._inputs = ()
        self._versions = ()
        self._released = False
        self._result_layout = None  # type: ignore[assignment]  # set when the node is recorded
        self._result_state = None
        self.place = None  # type: ignore[assignment]  # unset until forward; backward only runs after it
        self.saved = None
        # Set by forward when backward can run on raw arrays (``backward_flat``): every saved
        # input and the result are dense on ``place`` (elementwise: in one shared layout).
        self.flat = False
        return self

    @classmethod
    def record_flat(cls, inputs: tuple, out: Any, layout: Layout, kind: CarrierKind, saved: Any = None,
                    values: Any = None) -> Tensor:
        """The result of a flat forward run outside ``__call__``, recorded as a node of this class.

        The elementwise hot path: every Tensor in ``inputs`` is Float32 and
        dense in ``layout`` on ``kind``, and ``out`` is the flat result in
        their storage order (``values``: the first input's buffer, where the
        caller has it). Recording follows ``Operation.__call__`` (grad mode,
        saved versions, content watch) without its generic checks.
        """
        native = out.dtype
        first = inputs[0]
        if values is None:
            values = flat_values(first)
        dtype = first._dtype if native is values.dtype else kind[0]._sw_dtype_in(kind[1], native)
        result = Tensor._from_raw(out, layout, kind, dtype)
        if dtype is not _FLOAT32 or not _state.enabled:
            if dtype is not _FLOAT32 and _state.enabled and dtype.kind in ("float", "complex"):
                trace_lost_precision(cls.__name__, inputs, result)
            return result
        node = object.__new__(cls)
        node._inputs = inputs
        node._released = False
        node._result_layout = layout
        node._result_state = None  # the result has no carrier yet (see Tensor._materialize)
        node.place = kind
        node.saved = saved
        node.flat = True
        # A lone result made by ``_from_raw`` has no carrier yet, so nothing wrote to it: version 0.
        node._versions = _UNWRITTEN if len(inputs) == 1 and first._raw is not None else versions_of(inputs)
        result._ctx = node
        return result

    def flat_cotangent(self, gradient: Tensor) -> Any:
        """A flat node's cotangent Tensor as its raw buffer in the result's storage order, or None."""
        layout = gradient._layout
        if layout is self._result_layout or layout == self._result_layout:
            return dense_buffer(gradient, self.place)
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
            return Ones((self._result_layout.size,), dtype)
        return None

    def release(self) -> None:
        # ``Operation.release`` inlined (it runs once per node of every released graph); keep the two alike.
        self._inputs = ()
        self._versions = ()
        if self._context is not None:
            self._context = None
        self._result_state = None
        self._released = True
        self.place = None  # type: ignore[assignment]  # a released node runs no backward
        self.saved = None

    def cotangents(self, grads: Sequence[Any], batch: int | None = None,
                   fresh: bool | tuple[bool, ...] = False, request: Request = EVERY) -> tuple[tuple, tuple]:
        """Per-input gradient rev arrays (or None) as cotangents in each input's layout, and which are owned.

        ``fresh``: the rule allocated every one of ``grads`` itself, each for its input alone
        (or one such flag per input). ``request``: the call's (see ``pullback``).
        """
        kind = self.place
        wanted = request.wanted
        defer = request.defer
        # ``__class__ is`` (the hot path's test) is not a narrowing a type checker follows
        flags: tuple[bool, ...] = (
            fresh if fresh.__class__ is tuple else (fresh,) * len(grads))  # type: ignore[assignment]
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
