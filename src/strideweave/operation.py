"""Recording: grad mode, ExecutionOptions, the Operation base (saved inputs and versions, context, release)."""

from __future__ import annotations

import functools
import sys
import threading
from types import FrameType
from typing import TYPE_CHECKING, Any

from ._generate import assignments, function, indent
from .carriers import ContentWatch
from .dtypes import DType
from .errors import Float32RuleError, InPlaceModificationError
from .layout import Layout
from .tensors.tensor import (
    _LOST_PRECISION,
    Tensor,
    lost_precision_from_graph,
    lost_precision_origin,
    record_lost_precision,
)
from .tensors.values import placed_kind

_UNWRITTEN = (0,)  # the versions of a node whose one input has no carrier object yet

__all__ = ["ExecutionOptions", "NoGradientPath", "Operation", "is_grad_enabled", "no_grad", "set_grad_enabled"]

_FLOAT32 = DType.Float32

# ----- grad mode: whether operations record, per thread ---------------------------------------------

class _GradState(threading.local):
    # A threading.local subclass gives every thread its own ``enabled``,
    # initialised to True the first time that thread touches it.
    enabled = True


_state = _GradState()


def is_grad_enabled() -> bool:
    """Return whether the calling thread records autograd graphs (True unless changed)."""
    return _state.enabled


def set_grad_enabled(enabled: bool) -> None:
    """Turn graph construction on or off for the calling thread only."""
    if not isinstance(enabled, bool):
        raise TypeError(f"set_grad_enabled expects a bool, got {enabled!r} of type {type(enabled).__name__}")
    _state.enabled = enabled


class no_grad:
    """Context manager (and decorator) that disables graph construction in this thread.

    On exit, even through an exception, the state observed on entry is restored,
    so nested blocks each restore their own entry state.
    """

    __slots__ = ("_saved",)

    def __init__(self) -> None:
        self._saved: list[bool] = []

    def __enter__(self) -> no_grad:
        self._saved.append(_state.enabled)
        _state.enabled = False
        return self

    def __exit__(self, *exc_info) -> None:
        _state.enabled = self._saved.pop()

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with no_grad():
                return fn(*args, **kwargs)

        return wrapper


class ExecutionOptions:
    """Where an operation runs: ``carrier`` (a carrier spec) and ``device``.

    Needed when the operands live on different carriers; cotangents still flow
    back to each input in its own carrier class. ``device`` without
    ``carrier`` runs on the operands' carrier, on that device. A carrier with
    a device it does not have raises ``ValueError`` here; a device alone is
    checked against the operands' carrier when the operation runs.
    """

    __slots__ = ("carrier", "device")

    def __init__(self, carrier: Any = None, device: Any = None) -> None:
        if carrier is not None and device is not None:
            placed_kind(carrier, device)  # a device the carrier does not have: ValueError now, not later
        self.carrier = carrier
        self.device = device

    def __repr__(self) -> str:
        return f"ExecutionOptions(carrier={self.carrier!r}, device={self.device!r})"


def trace_lost_precision(name: str, args: tuple, result: Tensor) -> None:
    """Remember where operation ``name`` left Float32 while recording, for the error a later backward raises.

    Only a floating or complex ``result`` carries the note: a bool or integer one has a true zero gradient.
    """
    if result._dtype.kind not in ("float", "complex"):
        return
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
        else:
            trace_lost_precision(name, args, result)
    return results


def _caller() -> str:
    """The innermost frame outside StrideWeave: the line that asked for the cast."""
    package = __name__.rsplit(".", 1)[0]
    frame: FrameType | None = sys._getframe(1)
    while frame is not None and frame.f_globals.get("__name__", "").split(".")[0] == package:
        frame = frame.f_back
    if frame is None:
        return "an unknown place"
    return f"{frame.f_code.co_filename}:{frame.f_lineno} in {frame.f_code.co_name}"


def _unique_carriers(inputs: tuple[Tensor, ...], make: bool = True) -> list:
    """Every constituent carrier of ``inputs`` once, in first-seen order.

    ``make=False``: a result with no carrier object yet (``Tensor._from_raw``) is not given one; the
    Tensor itself stands for the carrier it will make, at version 0, in the same place.
    """
    seen: list = []
    for tensor in inputs:
        # The ``_carriers`` property inlined: this runs at every recording and every backward check.
        for carrier in (tensor,) if not make and tensor._raw is not None \
                else tensor._carrier_tuple or tensor._materialize():
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


def versions_of(inputs: tuple[Tensor, ...], reads: bool = True) -> tuple[int, ...]:
    """The versions a node saves for ``inputs``: one per unique carrier, after any content check.

    ``reads``: the node reads its inputs' values (every node but a view's), so
    a fresh buffer among them stops being one (``Carrier._unread``): a later
    Float32 write into it would change values this node already used. A lazy
    result is saved at version 0 without making its carrier (nothing can have
    written to it), as the one-input recorders do.
    """
    unique = _unique_carriers(inputs, False)
    for carrier in unique:
        if isinstance(carrier, Tensor):
            continue
        if carrier._watch is not None:
            carrier._watch.capture(carrier)
        if carrier._unread and reads:
            carrier._unread = False
    return tuple([0 if isinstance(c, Tensor) else c._version for c in unique])


def _carrier_version(tensor: str, index: int, reads: str) -> str:
    """Source for an input ``tensor`` that has its carrier objects: ``key{index}`` its one carrier (None where
    it has several) and ``version{index}`` that carrier's version after any content check."""
    key, version = f"key{index}", f"version{index}"
    return f"""\
carriers = {tensor}._carrier_tuple or {tensor}._materialize()
{key} = carriers[0] if len(carriers) == 1 else None
if {key} is not None:
    if {key}._watch is not None:
        {key}._watch.capture({key})
    if {key}._unread{"" if reads == "True" else f" and {reads}"}:
        {key}._unread = False
    {version} = {key}._version
"""


def _input_version(tensor: str, index: int, reads: str) -> str:
    """``_carrier_version``'s source for any input: a lazy result (no carrier object yet) stands for its
    carrier itself, at version 0."""
    return f"""\
if {tensor}._raw is not None:
    key{index}, version{index} = {tensor}, 0  # no carrier object yet: unwritten
else:
{indent(_carrier_version(tensor, index, reads))}"""


def recording_step(reads: str, lazy_result: bool = False, names: tuple[str, ...] | None = None) -> str:
    """The recording step, as source: ``node`` saves ``inputs``, their carriers' versions and ``result``'s
    layout and storage state, and becomes ``result``'s node (``reads``: an expression, see ``versions_of``;
    ``lazy_result``: the result is known to be made by ``Tensor._from_raw`` in ``layout``;
    ``names``: the names of the inputs, where the recorder knows how many there are).

    Every recorder runs it: ``record`` (``Operation.__call__``) and the flat recorders generated with
    it inline (``Primitive.record_flat``, ``_Binary.with_scalar``, ``_Binary.with_tensor``), where a call
    would cost as much as the step. One or two inputs each on one carrier, and a result on one, are
    decided here without a call (``versions_of`` decides the rest, alike).
    """
    result_state_source = "node._result_state = None\n" if lazy_result else """\
if result._raw is not None:
    node._result_state = None  # no carrier yet, as above; ``_materialized`` sets it when one is made
elif len(result._carrier_tuple) == 1:
    node._result_state = (result._carrier_tuple, (result._carrier_tuple[0]._version,))
else:
    node._result_state = result_state(result)
"""
    first, second = names if names and len(names) == 2 else ((names or ("inputs[0]",))[0], "inputs[1]")
    one = f"""\
if {first}._raw is not None:
    versions = _UNWRITTEN  # no carrier object yet (``Tensor._from_raw``): one shared tuple, not one per node
else:
{indent(_carrier_version(first, 0, reads))}\
    versions = (version0,) if key0 is not None else versions_of(inputs, {reads})
"""
    two = f"""\
{_input_version(first, 0, reads)}\
{_input_version(second, 1, reads)}\
if key0 is None or key1 is None:
    versions = versions_of(inputs, {reads})
else:
    versions = (version0,) if key1 is key0 else (version0, version1)
"""
    if names:
        versions_source = one if len(names) == 1 else two
    else:
        versions_source = f"""\
count = len(inputs)
if count == 1:
{indent(one)}\
elif count == 2:
{indent(two)}\
else:
    versions = versions_of(inputs, {reads})
"""
    return f"""\
{versions_source}\
node._inputs = inputs
node._versions = versions
node._result_layout = {"layout" if lazy_result else "result._layout"}
{result_state_source}\
result._ctx = node
"""


#: the fields the recording step sets (a recorder that makes its node inline leaves them to it)
RECORDED_FIELDS = ("_inputs", "_versions", "_result_layout", "_result_state")

record = function("record", f"def record(node, inputs, result, reads=True):\n{indent(recording_step('reads'))}"
                  "    return result\n", globals(), doc="""Record ``node`` as ``result``'s node (the recording step,
    ``recording_step``) and return ``result``: ``inputs`` are its saved Tensor arguments.""")

#: Every field of a node (its slots) as (the expression a new node starts with, the one ``release``
#: gives it, None: kept). ``__new__`` and ``release`` are generated from it (``node_methods``), here
#: and for ``Primitive``, which adds its own fields.
NODE_FIELDS: dict[str, tuple[str, str | None]] = {
    "_inputs": ("()", "()"),
    "_versions": ("()", "()"),
    "_released": ("False", "True"),
    "_result_layout": ("None", None),  # set when the node is recorded; only a recorded node's is read
    # (carriers, versions) of the result's storage when recorded; None while the result has no
    # carrier object (``Tensor._from_raw``), which nothing can have written to
    "_result_state": ("None", "None"),
}


def node_fields(target: str, fields: dict[str, tuple[str, str | None]], omit: tuple[str, ...] = (),
                **values: str) -> str:
    """Source setting every field of the new node ``target``: ``values``' expressions, else the start values."""
    return assignments(target, {name: start for name, (start, _) in fields.items()}, values, omit)


def node_methods(cls: type[Operation], fields: dict[str, tuple[str, str | None]]) -> None:
    """Give ``cls`` the ``__new__`` and ``release`` that set ``fields`` (``NODE_FIELDS`` and the class's own)."""
    name = cls.__name__
    cls.__new__ = staticmethod(function(  # type: ignore[method-assign]
        "__new__", f"def __new__(cls, *args: Any, **kwargs: Any) -> {name}:\n    self = object.__new__(cls)\n"
        f"{indent(node_fields('self', fields))}    return self\n", globals(), f"{name}.__new__",
        "A node with every field at its start value (``NODE_FIELDS``); set here rather than in ``__init__``\n"
        "so that subclasses may define their own ``__init__`` without calling ours."))
    dropped = "".join(f"self.{field} = {value}\n" for field, (_, value) in fields.items() if value is not None)
    # ``_context`` is a class default, rarely set, rather than a slot every node would initialise
    cls.release = function(  # type: ignore[method-assign]
        "release", f"def release(self):\n    if self._context is not None:\n        self._context = None\n"
        f"{indent(dropped)}", globals(), f"{name}.release",
        "Drop saved inputs, versions and context; the node stays attached to its result.")


class Operation:
    """One forward call of a differentiable operation, and its autograd node.

    Subclasses implement ``forward(*args, options=None) -> Tensor`` and
    ``backward(gradient) -> tuple`` with one entry (a cotangent Tensor or
    None) per saved Tensor input. Calling the instance runs ``forward`` with
    graph construction disabled and then records the instance as the result's
    ``autograd_ctx`` when the spec's recording conditions hold.
    """

    __slots__ = ("__dict__", *NODE_FIELDS)
    _inputs: tuple[Tensor, ...]
    _versions: tuple[int, ...]
    _released: bool
    _result_layout: Layout  # None until the node is recorded; only a recorded node's is read
    _result_state: tuple | None
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
    #: Whether the node's result shares its input's storage without reading its values (a view):
    #: recording it leaves a fresh buffer fresh (``versions_of``).
    views_input = False

    if TYPE_CHECKING:  # generated from ``NODE_FIELDS`` after the class (``node_methods``)
        def __new__(cls, *args: Any, **kwargs: Any) -> Operation: ...

    # -- the two methods a subclass writes -------------------------------------------
    # ``*args, **kwargs`` (``options`` among them) so that a subclass may name its own parameters.
    def forward(self, *args: Any, **kwargs: Any) -> Tensor:
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
        return record(self, inputs, result, not self.views_input)

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

    if TYPE_CHECKING:  # generated with ``__new__``
        def release(self) -> None:
            """Drop saved inputs, versions and context; the node stays attached to its result."""

    def _materialized(self, carriers: tuple) -> None:
        """The lazy result's carrier was just made (``Tensor._materialize``): from now on it can be written,
        so the node checks that it was not (``_check_result``)."""
        if not self._released:
            self._result_state = (carriers, (0,))

    def _check_versions(self) -> None:
        """Raise RuntimeError when saved storage, or the result's, was modified after the forward pass."""
        # ``ContentWatch.verify``'s first test is inlined below: within a traversal a buffer is
        # digested once, and most checks find it was.
        inputs = self._inputs
        versions = self._versions
        state = self._result_state
        if state is not None:
            carriers = state[0]
            if len(carriers) == 1:  # ``_check_result``'s common case inlined: one carrier, not written
                carrier = carriers[0]
                watch = carrier._watch
                if watch is not None and (watch.verified_epoch != ContentWatch.epoch
                                          or watch.verified_version != carrier._version):
                    watch.verify(carrier)
                if carrier._version != state[1][0]:
                    self._check_result()
            else:
                self._check_result()
        if len(versions) == 1 and len(inputs) == 1:
            if inputs[0]._raw is not None:
                return  # a result with no carrier object yet: nothing can have written to it
            carrier = (inputs[0]._carrier_tuple or inputs[0]._materialize())[0]
            watch = carrier._watch
            if watch is not None and (watch.verified_epoch != ContentWatch.epoch
                                      or watch.verified_version != carrier._version):
                watch.verify(carrier)
            if carrier._version == versions[0]:
                return  # the common case, decided without building a tuple
            current: tuple[int, ...] = (carrier._version,)
        else:
            epoch = ContentWatch.epoch
            now = []  # (a loop, not a comprehension after it: one call less per node)
            for carrier in _unique_carriers(inputs, False):  # a lazy input's carrier is not made to be checked
                if isinstance(carrier, Tensor):
                    now.append(0)
                    continue
                watch = carrier._watch
                if watch is not None and (watch.verified_epoch != epoch or watch.verified_version != carrier._version):
                    watch.verify(carrier)
                now.append(carrier._version)
            current = tuple(now)
        if current != self._versions and not (self._routes and self._writes_accepted()):
            raise InPlaceModificationError(
                f"in-place modification detected: storage saved by {type(self).__name__} for backward was "
                f"modified after the forward pass (saved versions {self._versions}, current versions "
                f"{current}); run backward before mutating saved storage"
            )

    def _check_result(self) -> None:
        carriers, versions = self._result_state  # type: ignore[misc]  # checked by the caller
        changed = False
        for carrier, version in zip(carriers, versions):
            if carrier._watch is not None:
                carrier._watch.verify(carrier)
            changed = changed or carrier._version != version
        if not changed:
            return
        where = f"(version {versions} then, {tuple(c._version for c in carriers)} now)"
        raise InPlaceModificationError(
            f"in-place modification detected: the result of {type(self).__name__} was modified after the "
            f"forward pass {where}, so its history no longer describes its values; run backward before "
            f"mutating it, or compute the new values out of place (x = x + y, xp.where)"
        )

    def __repr__(self) -> str:
        state = "released" if self._released else f"{len(self._inputs)} saved inputs"
        return f"<{type(self).__name__} node, {state}>"

    # -- recorded in-place writes (array_api/_writes.py): what a write into saved storage asks of a node ----
    #: ids of the saved carriers whose recorded writes this node accepts (``routes_through``): a per-forward
    #: fact, set when a write finds the node routing cotangents through that storage.
    _routes: frozenset = frozenset()

    def replace_input(self, index: int, stand_in: Tensor) -> None:
        """Save ``stand_in`` in place of input ``index``, whose storage a recorded write is about to
        overwrite: it holds that input's values and history from before the write (over the storage
        itself or over a copy of it). The node keeps the versions it saved; a carrier new to it (the
        copy) is saved at its version now."""
        before = _unique_carriers(self._inputs)
        saved = {id(c): v for c, v in zip(before, self._versions)}
        inputs = list(self._inputs)
        inputs[index] = stand_in
        self._inputs = tuple(inputs)
        after = _unique_carriers(self._inputs)
        self._versions = tuple([saved.get(id(c), c._version) for c in after])
        if self._routes:  # a carrier the node no longer saves leaves its routes (its id may be reused)
            self._routes = self._routes & {id(c) for c in after}

    def routes_through(self, carriers: tuple) -> None:
        """Note that backward reads none of the values this node saved in ``carriers``, only routes
        cotangents through them: recorded writes into them from now on change nothing it computes, so
        its version check accepts them (``accept_recorded_write``). Storage changed otherwise since the
        node saved it stays refused."""
        wanted = {id(c) for c in carriers}
        routed = {id(c) for c, v in self.input_versions() if id(c) in wanted and self._sees(c, v)}
        if routed:
            self._routes = self._routes | routed

    def stale_in(self, carriers: tuple) -> bool:
        """Whether the version check refuses a change made to one of ``carriers`` since the node saved it."""
        wanted = {id(c) for c in carriers}
        return any(id(c) in wanted and not self._sees(c, v) for c, v in self.input_versions())

    def stop_result_check(self) -> None:
        """Leave the check of the result's storage to another node, unless backward reads the result
        (``reads_result``): a recorded write overwrites that storage while this history lives on in a
        stand-in or in the write's ``before``, or (a view of a written base) the base's node checks it."""
        if not self.reads_result:
            self._result_state = None

    def _sees(self, carrier: Any, version: int) -> bool:
        """Whether ``carrier``, saved at ``version``, passes the version check."""
        return carrier._version == version or (id(carrier) in self._routes and _recorded_since(carrier, version))

    def _writes_accepted(self) -> bool:
        """Whether every change to the saved storage is a recorded write into storage the node routes through."""
        return all(self._sees(c, v) for c, v in self.input_versions())


def accept_recorded_write(carriers: tuple, before: tuple) -> None:
    """A recorded write just moved ``carriers`` on from the versions ``before``.

    Each carrier keeps the run of versions its recorded writes span
    (``_recorded_run``, from its start to the version now): a node that routes
    cotangents through the storage (``Operation.routes_through``) accepts the
    change from its saved version when that version lies in the run. Any
    other change (an update, a write outside StrideWeave) ends the run.
    """
    for carrier, version in zip(carriers, before):
        run = getattr(carrier, "_recorded_run", None)
        start = run[0] if run is not None and run[1] == version else version
        carrier._recorded_run = (start, carrier._version)


def _recorded_since(carrier: Any, version: int) -> bool:
    """Whether every change to ``carrier`` since ``version`` was a recorded write."""
    run = getattr(carrier, "_recorded_run", None)
    return run is not None and run[0] <= version and run[1] == carrier._version


node_methods(Operation, NODE_FIELDS)


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
        raise Float32RuleError(
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
