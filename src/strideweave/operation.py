"""The Operation base class: recording policy, saved inputs and versions, context, release."""

from __future__ import annotations

import sys
from typing import Any

from ._marks import IdentityMarks
from .autograd.mode import _state
from .dtypes import DType
from .tensor import (_LOST_PRECISION, Tensor, lost_precision_from_graph, lost_precision_origin,
                     record_lost_precision)

__all__ = ["Operation", "ExecutionOptions", "NoGradientPath"]

_FLOAT32 = DType.Float32
_UNWRITTEN = (0,)

#: Cotangent Tensors a built-in backward rule allocated for one input, until the engine claims them.
_ALLOCATED = IdentityMarks()


def allocated(cotangent: Tensor) -> Tensor:
    """Mark a cotangent a backward rule just allocated and hands to exactly one input.

    The engine then owns it: it may add further contributions into it in
    place and make it a ``.grad`` without a copy. Never mark a Tensor that
    shares storage with saved values, the incoming cotangent or another
    returned cotangent.
    """
    return _ALLOCATED.add(cotangent)


class Unplaced:
    """A cotangent for a Tensor whose layout has holes, not yet placed in that layout.

    ``values`` is a rev array of the Tensor's leaves (or one broadcasting to
    them). A built-in backward returns these only inside a traversal
    (``Primitive.defer``): the engine sums all contributions for the Tensor
    first and places the total once, instead of placing every contribution
    into its own padded buffer.
    """

    __slots__ = ("values", "unit")

    def __init__(self, values: Any, unit: bool = False) -> None:
        self.values = values
        # ``values`` is one flagged one (``carriers.base.is_unit``) for a dense Tensor: the
        # engine may hand a flat node ``Ones`` instead of filling a buffer with them.
        self.unit = unit


class Ones:
    """The all-ones cotangent of an elementwise node's result, never filled in memory.

    ``loss.backward()`` seeds a full reduction with one, which it passes on
    as a one for every element of its input. Where the library has no
    stride-0 views (JAX) that is a full pass writing memory. The engine hands
    this instead to a node whose VJPs only scale their cotangent
    (``Primitive.ones_for``), and ``ops._support.times`` returns the other
    factor, broadcast to ``shape``. It supports nothing else: any other use
    fails loudly instead of computing with a wrong value.
    """

    __slots__ = ("shape", "dtype")

    def __init__(self, shape: tuple, dtype: Any) -> None:
        self.shape = shape    # (n,) for a flat node: then any buffer of n elements lines up
        self.dtype = dtype    # native dtype of the cotangent

    def times(self, factor: Any, xp: Any) -> Any:
        """``ones * factor``: ``factor`` itself where it has every element, else broadcast or filled."""
        shape = self.shape
        if not hasattr(factor, "shape"):
            return xp.full(shape, factor, dtype=self.dtype)
        have = tuple(factor.shape)
        if have == shape:
            return factor
        if len(shape) == 1:
            count = 1
            for extent in have:
                count *= extent
            if count == 1 and len(have) <= 1:
                return xp.broadcast_to(factor, shape)  # one value (a 0-d operand): the same for every element
            if count != shape[0]:
                raise RuntimeError(f"a flat node's unit cotangent of {shape[0]} elements was scaled by an array "
                                   f"of shape {have}; flat operands must match the result's buffer")
            return factor
        return xp.broadcast_to(factor, shape)


def claim_allocated(cotangent: Tensor) -> bool:
    """Whether ``cotangent`` was marked by ``allocated``; the mark is consumed (one owner)."""
    return _ALLOCATED.claim(cotangent)


#: Cotangents a built-in backward rule made from its incoming cotangent's storage (see ``handed_on``).
_HANDED_ON = IdentityMarks()


def handed_on(cotangent: Tensor) -> Tensor:
    """Mark a cotangent that reinterprets the rule's incoming cotangent's storage, for one input alone.

    Nothing else the call returns may share that storage. When the engine
    owns the incoming cotangent outright, ownership passes to this one, so
    it may take further contributions in place and become a ``.grad``
    without a copy; otherwise the mark changes nothing.
    """
    return _HANDED_ON.add(cotangent)


def claim_handed_on(cotangent: Tensor) -> bool:
    """Whether ``cotangent`` was marked by ``handed_on``; the mark is consumed."""
    return _HANDED_ON.claim(cotangent)


class ExecutionOptions:
    """Where an operation runs: ``carrier`` (a carrier spec) and ``device``.

    Needed when the operands live on different carriers; cotangents still flow
    back to each input in its own carrier class.
    """

    __slots__ = ("carrier", "device")

    def __init__(self, carrier: Any = None, device: Any = None) -> None:
        self.carrier = carrier
        self.device = device

    def __repr__(self) -> str:
        return f"ExecutionOptions(carrier={self.carrier!r}, device={self.device!r})"


def trace_lost_precision(name: str, args: tuple, result: Tensor) -> None:
    """Remember where operation ``name`` left Float32 while recording, for the error a later backward raises."""
    for arg in args:
        if isinstance(arg, Tensor):
            if arg._dtype is _FLOAT32:
                record_lost_precision(result, f"became {result._dtype!r} in {name} at {_caller()}",
                                      arg._ctx is not None)
                return
            origin = lost_precision_origin(arg)
            if origin is not None:
                record_lost_precision(result, origin, lost_precision_from_graph(arg))
                return


def _origin_among(args: tuple) -> str | None:
    """The lost-precision origin of the first non-Float32 Tensor in ``args`` that carries one."""
    for arg in args:
        if isinstance(arg, Tensor) and arg._dtype is not _FLOAT32:
            origin = lost_precision_origin(arg)
            if origin is not None:
                return origin
    return None


def outside_operation(name: str, args: tuple, results: Any) -> Any:
    """Apply the Float32 rule to ``results`` of ``name`` computed outside ``Operation`` (forward only).

    A Float32 result that depends on a Float32 argument, or on a value that
    left Float32 while recording, gets a node that raises at backward; a
    floating or complex result remembers where it left Float32. Bool and
    integer results carry nothing: their gradient is a true zero.
    """
    if not _state.enabled:
        return results
    for result in results if isinstance(results, tuple) else (results,):
        if not isinstance(result, Tensor) or result._ctx is not None:
            continue
        if result._dtype is _FLOAT32:
            origin = _origin_among(args)
            if origin is None and any(isinstance(a, Tensor) and a._dtype is _FLOAT32 for a in args):
                origin = f"went through {name}, which records no gradient, at {_caller()}"
            if origin is not None:
                cut_loudly(result, origin)
        elif result._dtype.kind in ("float", "complex"):
            trace_lost_precision(name, args, result)
    return results


def written_back(value: Any, target: Tensor) -> Any:
    """``value`` as a write into the Float32 ``target`` (``t[key] = value``, ``copy_``) should store it.

    A floating value that left Float32 while recording is cast back through a
    recorded ``astype``, whose ``NoGradientPath`` node then fails a backward
    that reaches the write, instead of the write cutting its gradient.
    """
    if value.__class__ is Tensor and target._dtype is _FLOAT32 and value._dtype is not _FLOAT32 \
            and value._dtype.kind == "float" and _LOST_PRECISION and _state.enabled \
            and lost_precision_origin(value) is not None:
        from .ops.manipulation import astype

        return astype(value, _FLOAT32)
    return value


def _caller() -> str:
    """The innermost frame outside StrideWeave: the line that asked for the cast."""
    package = __name__.rsplit(".", 1)[0]
    frame = sys._getframe(1)
    while frame is not None and frame.f_globals.get("__name__", "").split(".")[0] == package:
        frame = frame.f_back
    if frame is None:
        return "an unknown place"
    return f"{frame.f_code.co_filename}:{frame.f_lineno} in {frame.f_code.co_name}"


def _unique_carriers(inputs: tuple[Tensor, ...]) -> list:
    """Every constituent carrier of ``inputs`` once, in first-seen order."""
    seen: list = []
    for tensor in inputs:
        for carrier in tensor._carriers:
            for known in seen:
                if carrier is known:
                    break
            else:
                seen.append(carrier)
    return seen


def result_state(result: Tensor) -> tuple:
    """The carriers of a node's result and their versions now: a write to them later makes the
    node's history describe other values, so backward rejects it like a write to a saved input."""
    carriers = tuple(_unique_carriers((result,)))
    return carriers, tuple([c._version for c in carriers])


def versions_of(inputs: tuple[Tensor, ...]) -> tuple[int, ...]:
    """The versions a node saves for ``inputs``: one per unique carrier, after any content check."""
    if len(inputs) == 1 and inputs[0]._raw is not None:
        return _UNWRITTEN  # a result with no carrier object yet: nothing can have written to it
    if len(inputs) == 1 and len(inputs[0]._carriers) == 1:
        carrier = inputs[0]._carriers[0]
        if carrier._watch is not None:
            carrier._watch.capture(carrier)
        return (carrier._version,)
    carriers = _unique_carriers(inputs)
    for carrier in carriers:
        if carrier._watch is not None:
            carrier._watch.capture(carrier)
    return tuple([c._version for c in carriers])


class Operation:
    """One forward call of a differentiable operation, and its autograd node.

    Subclasses implement ``forward(*args, options=None) -> Tensor`` and
    ``backward(gradient) -> tuple`` with one entry (a cotangent Tensor or
    None) per saved Tensor input. Calling the instance runs ``forward`` with
    graph construction disabled and then records the instance as the result's
    ``autograd_ctx`` when the spec's recording conditions hold.
    """

    __slots__ = ("_inputs", "_versions", "_released", "_result_layout", "_result_state", "__dict__")
    # Rarely set, so a class default rather than a slot every node would initialise: the
    # ``context`` dict (custom operations).
    _context: dict | None = None
    #: True for the library's own operations (``ops``' Primitive): the engine may hand their
    #: backward a shared cotangent and set ``wanted``; a custom backward gets a private copy.
    builtin = False
    #: True on a built-in node whose forward ran on flat buffers (``Primitive.backward_flat``)
    flat = False
    #: Whether ``forward`` may call other operations. Recording is switched off around a
    #: forward that may, so its inner calls leave no graph; one computing natively needs no switch.
    composite = True
    #: Whether ``backward`` may read the result's values (True unless a class says otherwise):
    #: a recorded write into the result of a node that does fails that node at backward.
    reads_result = True

    def __new__(cls, *args: Any, **kwargs: Any) -> "Operation":
        # Initialised here rather than in __init__ so subclasses may define
        # their own __init__ without calling ours.
        self = object.__new__(cls)
        self._inputs: tuple[Tensor, ...] = ()
        self._versions: tuple[int, ...] = ()
        self._released = False
        self._result_layout = None
        # (carriers, versions) of the result's storage when recorded; None while the result
        # has no carrier object (``Tensor._from_raw``), which nothing can have written to.
        self._result_state = None
        return self

    # -- the two methods a subclass writes -------------------------------------------
    def forward(self, *args: Any, options: ExecutionOptions | None = None, **kwargs: Any) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} does not implement forward")

    def backward(self, gradient: Tensor) -> tuple:
        raise NotImplementedError(f"{type(self).__name__} does not implement backward")

    # -- recording ----------------------------------------------------------------------
    def __call__(self, *args: Any, options: ExecutionOptions | None = None, **kwargs: Any) -> Tensor:
        if options is not None and not isinstance(options, ExecutionOptions):
            raise TypeError(f"options must be an ExecutionOptions or None, got {options!r}")
        if self._released or self._inputs:
            raise RuntimeError(f"{type(self).__name__} instance was already called; create one per forward call")
        state = _state
        if not state.enabled:
            return self.forward(*args, options=options, **kwargs)
        if not self.composite:
            result = self.forward(*args, options=options, **kwargs) if kwargs else self.forward(*args, options=options)
        else:
            state.enabled = False
            try:
                result = self.forward(*args, options=options, **kwargs) if kwargs \
                    else self.forward(*args, options=options)
            finally:
                state.enabled = True
        if result.__class__ is not Tensor and not isinstance(result, Tensor):
            raise TypeError(f"{type(self).__name__}.forward must return a Tensor, got {type(result).__name__}")
        if result._dtype is not _FLOAT32:
            if self._context is not None:  # not recorded: its saved state is dropped
                self._context = None
            if result._dtype.kind in ("float", "complex"):
                trace_lost_precision(type(self).__name__, args, result)
            return result
        tensors = []
        differentiable = False
        for arg in args:
            if isinstance(arg, Tensor):
                tensors.append(arg)
                if arg is result:
                    # Recording on an input would rewrite that input's history.
                    result = result._alias()
                if arg._dtype is _FLOAT32:
                    differentiable = True
        inputs = args if len(tensors) == len(args) else tuple(tensors)
        origin = _origin_among(inputs) if _LOST_PRECISION else None
        if not differentiable or origin is not None:
            if self._context is not None:
                self._context = None
            # A Float32 result reached through a value that left Float32 (a float64 round trip) cannot be
            # differentiated: a node that raises at backward instead of a leaf that passes None.
            return result if origin is None else cut_loudly(result, origin)
        self._inputs = inputs
        self._result_layout = result._layout
        self._versions = versions_of(inputs)
        if result._raw is None:
            self._result_state = result_state(result)
        result._ctx = self
        return result

    # -- saved state --------------------------------------------------------------------
    def inputs(self) -> tuple[Tensor, ...]:
        """The saved positional Tensor arguments, in argument order (empty once released)."""
        return self._inputs

    def input_versions(self) -> tuple[tuple[Any, int], ...]:
        """``(carrier, version)`` for every unique constituent carrier of the saved inputs."""
        return tuple(zip(_unique_carriers(self._inputs), self._versions))

    @property
    def context(self) -> dict:
        """Saved forward state for ``backward`` (empty after graph release)."""
        if self._context is None:
            self._context = {}
        return self._context

    @property
    def released(self) -> bool:
        """Whether a traversal released this node's saved state."""
        return self._released

    def release(self) -> None:
        """Drop saved inputs, versions and context; the node stays attached to its result."""
        self._inputs = ()
        self._versions = ()
        if self._context is not None:
            self._context = None
        self._result_state = None
        self._released = True

    def _check_versions(self) -> None:
        """Raise RuntimeError when saved storage, or the result's, was modified after the forward pass."""
        inputs = self._inputs
        versions = self._versions
        if self._result_state is not None:
            self._check_result()
        if len(versions) == 1 and len(inputs) == 1:
            if inputs[0]._raw is not None:
                return  # a result with no carrier object yet: nothing can have written to it
            carrier = inputs[0]._carriers[0]
            if carrier._watch is not None:
                carrier._watch.verify(carrier)
            if carrier._version == versions[0]:
                return  # the common case, decided without building a tuple
            current = (carrier._version,)
        else:
            carriers = _unique_carriers(inputs)
            for carrier in carriers:
                if carrier._watch is not None:
                    carrier._watch.verify(carrier)
            current = tuple([c._version for c in carriers])
        if current != self._versions:
            raise RuntimeError(
                f"in-place modification detected: storage saved by {type(self).__name__} for backward was "
                f"modified after the forward pass (saved versions {self._versions}, current versions "
                f"{current}); run backward before mutating saved storage"
            )

    def _check_result(self) -> None:
        carriers, versions = self._result_state
        changed = False
        for carrier, version in zip(carriers, versions):
            if carrier._watch is not None:
                carrier._watch.verify(carrier)
            changed = changed or carrier._version != version
        if not changed:
            return
        where = f"(version {versions} then, {tuple(c._version for c in carriers)} now)"
        raise RuntimeError(
            f"in-place modification detected: the result of {type(self).__name__} was modified after the "
            f"forward pass {where}, so its history no longer describes its values; run backward before "
            f"mutating it, or compute the new values out of place (x = x + y, xp.where)"
        )

    def __repr__(self) -> str:
        state = "released" if self._released else f"{len(self._inputs)} saved inputs"
        return f"<{type(self).__name__} node, {state}>"


class NoGradientPath(Operation):
    """The node of a Float32 result computed through values that cannot carry a gradient.

    Only Float32 is differentiable (spec). When a Float32 result depends on a
    Float32 Tensor through a Float64, Float16 or complex value, or through a
    computation that records no gradient (the fft extension), its gradient
    cannot be computed; a result without a node would pass a gradient of
    None (a silent cut). This node makes the cut loud: a traversal that
    reaches it raises, before any ``.grad`` is written (the engine commits
    all or nothing). It saves no inputs.
    """

    composite = False

    def __init__(self, origin: str) -> None:
        self.origin = origin

    def backward(self, gradient: Tensor) -> tuple:
        raise RuntimeError(
            f"backward reached a Float32 Tensor computed from a Float32 Tensor that {self.origin}; only Float32 "
            "is differentiable (spec), so no gradient flows through that value: keep that computation in float32 "
            "to differentiate through it, or call .detach() on the value where it left float32 if its gradient "
            "should be zero")


def cut_loudly(result: Tensor, origin: str) -> Tensor:
    """Give the Float32 ``result`` a :class:`NoGradientPath` node naming ``origin`` (where the path left Float32)."""
    node = NoGradientPath(origin)
    node._result_layout = result._layout
    result._ctx = node
    return result
