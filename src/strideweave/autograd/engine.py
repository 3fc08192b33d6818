"""The reverse-mode traversal engine behind ``backward``, ``backwards_traversal`` and ``grad``.

Discovery is an iterative depth-first walk that counts, for every node, the
edges through which consumers reach it. Execution is one loop: take a node
whose count has dropped to zero and its cotangent record, call its rule
with a ``Request``, hand each input's contribution on. A node runs only
after every consumer contributed, and at most once; the node whose last
contribution was just handed on runs next, without a round trip through
``pending``. Cotangents are keyed by node (by Tensor for leaves). Nothing
recurses, so graph depth is bounded by memory alone.

A record is a value and an ownership bit (``owned``): a value the traversal
owns is added into in place and handed to ``.grad`` without a copy. Between
built-in nodes that ran on flat buffers (most elementwise work), values are
raw native arrays; Tensors are made only where something observes a
cotangent: leaves, retained and requested Tensors, custom operations,
non-flat built-ins (``Traversal.received``).

A traversal is all or nothing: leaf and retained gradients are staged and
committed only after every node ran, and graph release happens only after
success.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._locks import locked
from .._marks import IdentityMarks
from ..carriers import ContentWatch
from ..dtypes import DType
from ..errors import GraphReleasedError
from ..tensors.creation import converted
from ..tensors.tensor import Tensor
from ..tensors.values import where
from .buffers import (
    accumulated_gradient,
    add_cotangents,
    add_into,
    add_patch,
    aggregate,
    detached_gradient,
    slot_sums,
    unit_cotangent,
    validate_cotangent,
)
from .cotangents import REQUESTS, Ones, Patch, Request, Unplaced, cotangent_for

__all__ = ["backward", "backwards_traversal", "is_traversal_gradient", "traverse"]

_FLOAT32 = DType.Float32


def released_error(operation: Any) -> GraphReleasedError:
    return GraphReleasedError(
        f"trying to traverse {type(operation).__name__} a second time, but its saved state was released by an "
        "earlier traversal; pass retain_graph=True to the first traversal to traverse the graph again"
    )


#: Every gradient a traversal handed out (``.grad`` values and ``grad`` results), by
#: identity (a WeakSet would compare Tensors with their elementwise ``==``). Held
#: weakly: membership marks a Tensor as a detached gradient, nothing more.
_GRADIENTS = IdentityMarks()


def is_traversal_gradient(tensor: Tensor) -> bool:
    """Whether ``tensor`` is a gradient some traversal produced (a detached constant)."""
    return tensor in _GRADIENTS


def first_order_error(what: str) -> RuntimeError:
    return RuntimeError(
        f"{what} depends on a gradient produced by an earlier traversal; gradients are detached constants "
        "because the engine is first order (the spec's reverse mode records no graph for gradients), so a "
        "higher-order derivative such as a Hessian needs a method outside it, e.g. finite differences of grad "
        "or sw.interop with torch or JAX"
    )


def discover(root: Any) -> tuple[dict, list]:
    """Nodes reachable from ``root`` and, per node, the number of edges that reach it."""
    if root._released:
        raise released_error(root)
    ContentWatch.begin_traversal()
    dependencies = {id(root): 0}
    nodes = [root]
    stack = [root]
    get, append = dependencies.get, nodes.append
    while stack:
        inputs = stack.pop()._inputs
        # A chain (one input whose node is new: elementwise work, mostly) is walked without the stack.
        while len(inputs) == 1:
            child = inputs[0]._ctx
            if child is None:
                break
            key = id(child)
            count = get(key)
            if count is not None:
                dependencies[key] = count + 1
                break
            if child._released:
                raise released_error(child)
            dependencies[key] = 1
            append(child)
            inputs = child._inputs
        else:
            for tensor in inputs:
                child = tensor._ctx
                if child is None:
                    continue
                key = id(child)
                count = get(key)
                if count is None:
                    if child._released:
                        raise released_error(child)
                    dependencies[key] = 1
                    append(child)
                    stack.append(child)
                else:
                    dependencies[key] = count + 1
    return dependencies, nodes


#: The record of a node no contribution reached.
_NO_RECORD = (None, False)
#: The cotangent forms that are not a raw buffer (see ``Traversal.run``).
_NOT_RAW = (Tensor, Unplaced, Patch, Ones)
_DEFERRED = (Unplaced, Patch, Ones)
#: The ownership of a staged total that is already the detached gradient (``settle_leaves``).
_FINAL: Any = object()


class Traversal:
    """One run over a discovered graph; collects totals for leaves, retained and requested Tensors.

    ``pending`` holds one record per receiver (a node, or a leaf Tensor):
    ``(value, owned)``, the sum of the contributions that arrived so far and
    whether this traversal owns it. ``value`` is a Tensor, a raw 1-D buffer
    in the storage order of the dense Tensor it is for, ``Unplaced`` values,
    a ``Patch`` or ``Ones`` (made a Tensor by ``tensor_record`` where
    something observes it). ``owned`` means a backward rule or the traversal
    itself allocated the value and nothing else refers to it, so further
    contributions may be added into it in place and it may become a
    ``.grad`` without a copy. ``Unplaced`` values are never owned (they are
    no buffer yet); placing them allocates an owned Tensor.
    """

    __slots__ = ("accumulate", "batch", "captured", "leaves", "pending", "requested", "result_of", "staged")

    def __init__(self, accumulate: bool, requested: dict | None = None, batch: int | None = None) -> None:
        self.accumulate = accumulate      # stage leaf / retained gradients for .grad
        self.requested = requested or {}  # id -> Tensor whose totals ``grad`` returns
        self.batch = batch                # K when all K cotangents travel together (functional grad)
        self.staged: list = []            # (Tensor, total, owned or _FINAL) for .grad
        self.captured: dict = {}          # id -> (total, owned) for requested Tensors
        self.pending: dict = {}           # key -> (value, owned), see above
        self.result_of: dict = {}         # node key -> its result Tensor, where a total must be settled
        self.leaves: dict = {}            # key -> leaf Tensor reached

    def settle(self, tensor: Tensor, total: Tensor, owned: bool = False) -> Tensor:
        """Finish a Tensor's total once all contributions arrived; it is staged or captured as it is."""
        if tensor._layout._aliasing == "broadcast":  # the slot, derived on first read: this runs per settled total
            total, owned = aggregate(tensor, total, self.batch), True
        if self.accumulate and (tensor._ctx is None or tensor._retains_grad):
            self.staged.append((tensor, total, owned))
            owned = False
        if id(tensor) in self.requested:
            self.captured[id(tensor)] = (total, owned)
        return total

    def tensor_record(self, tensor: Tensor, value: Any, owned: bool) -> tuple[Tensor, bool]:
        """A record ``(value, owned)`` for ``tensor`` with its value made a Tensor.

        A raw buffer is adopted as it is; ``Unplaced`` values are placed in
        fresh storage and ``Ones`` filled, which the traversal owns.
        """
        if isinstance(value, Tensor):
            return value, owned
        if value.__class__ is Patch:
            carrier = tensor._carriers[0]
            buffer = carrier.fresh(tensor._layout.cosize)
            buffer.scatter_rev(value.layout, value.offset, value.values)
            return Tensor._make(buffer, tensor._layout, 0), True
        if value.__class__ is Ones:  # a fill nobody else refers to
            return cotangent_for(tensor, value.one(len(tensor._layout.rev_leaf_shape))), True
        if value.__class__ is Unplaced:
            if tensor._layout.aliasing() == "broadcast":
                return cotangent_for(tensor, value.values), False  # (the canonical layout; it may broadcast)
            carrier = tensor._carriers[0]
            return Tensor._make(carrier.placed(tensor._layout, value.values), tensor._layout, 0), True
        if tensor._raw is not None:  # ``where`` inlined: once per raw total made a Tensor
            kind = tensor._kind
        else:
            carrier = tensor._carrier_tuple[0]  # type: ignore[index]  # no ``_raw``: the carriers exist
            kind = carrier._kind or carrier.kind
        return Tensor._make(kind.cls._adopt(value, kind.namespace, kind.device, kind), tensor._layout, 0), owned

    def contribute(self, key: int, tensor: Tensor, value: Any, owned: bool) -> None:
        """Add one contribution for ``tensor`` (any form a rule returns) to its pending total.

        A sum is written into whichever side this traversal owns, and the
        new total is owned; a value anybody else holds is never written.
        """
        pending = self.pending
        record = pending.get(key)
        if record is None:
            pending[key] = (value, owned)
            return
        total, total_owned = record
        if total.__class__ is Ones:
            if value.__class__ is Ones:  # two full reductions' ones: their sum, one value to place once
                rank = len(tensor._layout.rev_leaf_shape)
                pending[key] = (Unplaced(total.one(rank) + value.one(rank)), False)
                return
            total, total_owned = self.tensor_record(tensor, total, total_owned)
        elif value.__class__ is Ones:
            value, owned = self.tensor_record(tensor, value, owned)
        if total.__class__ is Patch:
            total, total_owned = self.tensor_record(tensor, total, total_owned)
        if value.__class__ is Patch:
            if total_owned and isinstance(total, Tensor) and add_patch(tensor, total, value):
                pending[key] = (total, True)
                return
            value, owned = self.tensor_record(tensor, value, owned)
        total_class, value_class = total.__class__, value.__class__
        if total_class is Unplaced and value_class is Unplaced:
            pending[key] = (Unplaced(total.values + value.values), False)
            return
        if total_class is not Unplaced and value_class is not Unplaced \
                and not isinstance(total, Tensor) and not isinstance(value, Tensor):
            # Two raw buffers (the flat path): add natively.
            cls = where(tensor).cls
            if total_owned:
                total = cls._accumulate(total, value)
            elif owned:
                total = cls._accumulate(value, total)
            else:
                total = total + value
            pending[key] = (total, True)
            return
        total, total_owned = self.tensor_record(tensor, total, total_owned)
        value, owned = self.tensor_record(tensor, value, owned)
        if self.batch is not None:
            total = add_cotangents(total, value, tensor, self.batch)
        elif total_owned:
            total = add_into(total, value)
        elif owned:
            total = add_into(value, total)
        else:
            total = add_cotangents(total, value)
        pending[key] = (total, True)

    def run(self, root: Any, cotangent: Tensor, root_tensor: Tensor | None, dependencies: dict) -> None:
        """Run every node under ``root`` once, after all its consumers, and settle the leaves' totals.

        One loop: take a node and its cotangent record, call its rule with a
        ``Request``, hand each input's contribution on (``contribute``). A node
        whose last contribution was just handed on runs next, that cotangent
        passed along without a round trip through ``pending`` (a chain of
        elementwise ops, mostly). ``direct``: the cotangent is a raw buffer
        (only ``backward_flat`` makes them), which a flat node takes as it is
        unless its total is observed; anything else goes through ``received``.
        """
        pending, result_of, leaves = self.pending, self.result_of, self.leaves
        received, rule, contribute = self.received, self.rule, self.contribute
        unbatched, prune, float32 = self.batch is None, not self.accumulate, _FLOAT32
        # An unpruned traversal's requests by [flat call][incoming cotangent owned], indexed, not hashed: once
        # per node. A rule, unlike ``backward_flat``, may return ``Unplaced`` cotangents unless batched.
        rule_requests = (REQUESTS[unbatched, False], REQUESTS[unbatched, True])
        requests = (rule_requests, (REQUESTS[False, False], REQUESTS[False, True]))
        observe_all = bool(self.requested) or not unbatched  # every reached Tensor's total is wanted
        direct = False
        if root_tensor is not None:
            if unbatched and root.flat and not isinstance(cotangent, _NOT_RAW) and not root_tensor._retains_grad \
                    and id(root_tensor) not in self.requested:
                direct = True  # a raw seed (``_unit_seed``) for a flat root whose total nothing observes
            else:
                result_of[id(root)] = root_tensor
        ready: list = []
        node, gradient, owned = root, cotangent, False
        while True:
            if node is None:
                if not ready:
                    break
                node = ready.pop()
                gradient, owned = pending.pop(id(node), _NO_RECORD)
                direct = not isinstance(gradient, _NOT_RAW)  # a raw buffer (or a raw sum), or None (unread)
            inputs = node._inputs
            if gradient is None:  # reached, but nothing arrived: its inputs get nothing either
                contributions = ownership = (None,) * len(inputs)
                flat = keep_result = False  # (unread: nothing is handed on)
            else:
                flat = direct and node.flat and (not result_of or id(node) not in result_of)
                if not flat:
                    gradient, owned, flat = received(node, gradient, owned)
                if len(inputs) != 1 or inputs[0]._raw is None or node._result_state is not None:
                    node._check_versions()  # (a lone input and a result without carriers: nothing written)
                request = self.request(node, flat, owned) if prune else requests[flat][owned]
                # A flat node's dense result is needed only to be observed, or to make a Tensor of a rule's output.
                if flat:
                    contributions, ownership = node.backward_flat(gradient, request)
                    keep_result = observe_all
                else:
                    contributions, ownership = rule(node, gradient, request)
                    keep_result = True
            node = None
            index = 0  # (a counter: ``zip`` costs more per node, and chains are long)
            for tensor in inputs:
                contribution, owns = contributions[index], ownership[index]
                index += 1
                child = tensor._ctx
                if child is None:
                    if contribution is None or tensor._dtype is not float32:
                        continue
                    key = id(tensor)
                    leaves[key] = tensor
                else:
                    key = id(child)
                    remaining = dependencies[key] - 1
                    dependencies[key] = remaining
                    if contribution is None or tensor._dtype is not float32:
                        if remaining == 0:
                            ready.append(child)
                        continue
                    if keep_result or not child.flat or tensor._retains_grad:
                        result_of.setdefault(key, tensor)
                    if remaining == 0:
                        if node is None and key not in pending:  # the chain hand-off
                            node, gradient, owned, direct = child, contribution, owns, flat
                            continue
                        ready.append(child)
                contribute(key, tensor, contribution, owns)
        self.settle_leaves()

    def received(self, node: Any, gradient: Any, owned: bool) -> tuple[Any, bool, bool]:
        """``node``'s cotangent record in the form its rule takes: ``(gradient, owned, flat)``.

        ``flat``: a raw buffer for ``backward_flat``; else a Tensor, or ``Ones``
        for a built-in that only scales them. Settled here first: a retained or
        requested result, or one whose layout is not injective (a flat node's
        result is dense); settling any other one would change nothing. A settled
        total is staged as it is: nothing may add into it or take it over.
        """
        result_of = self.result_of
        # None only where no total is settled here (a flat chain), whose gradients need no result.
        result: Tensor = result_of.pop(id(node), None) if result_of else None  # type: ignore[assignment]
        observed = result is not None and (result._retains_grad or id(result) in self.requested or (
            not node.flat and result._layout.aliasing() != "injective"))
        if gradient.__class__ is Patch:
            gradient, owned = self.tensor_record(result, gradient, owned)
        if gradient.__class__ is Unplaced:
            if observed and node.builtin and node.takes_slot_sums and self.batch is None \
                    and not result._retains_grad and id(result) not in self.requested \
                    and result._layout.aliasing() == "broadcast":
                # Observed only to sum over the broadcast: the sums, compact, without the full cotangent.
                xp = result._carriers[0]._xp
                return Unplaced(slot_sums(result._layout, gradient.values, xp)), False, False
            gradient, owned = self.tensor_record(result, gradient, owned)
        elif gradient.__class__ is Ones:
            # Ones nobody observes, for a node that only scales them, are never filled.
            ones = node.ones_for(gradient.dtype) if not observed and node.builtin else None
            gradient, owned = self.tensor_record(result, gradient, owned) if ones is None else (ones, False)
        raw = not isinstance(gradient, Tensor)
        if observed:
            if raw:
                gradient, owned = self.tensor_record(result, gradient, owned)
                raw = False
            gradient, owned = self.settle(result, gradient, owned), False
        if node.flat and self.batch is None:
            flat = gradient if raw else node.flat_cotangent(gradient)
            if flat is not None:
                return flat, owned, True
        if raw and gradient.__class__ is not Ones:
            gradient, owned = self.tensor_record(result, gradient, owned)
        return gradient, owned, False

    def request(self, node: Any, flat: bool, owned: bool) -> Request:
        """What a pruned traversal (functional ``grad``) asks of ``node``: no cotangent for a leaf nobody asked for.

        ``defer``: ``Unplaced`` cotangents are welcome (from ``pullback``, not in a batch).
        """
        defer = not flat and self.batch is None
        if node.builtin:
            requested = self.requested
            wanted = tuple([t._ctx is not None or id(t) in requested for t in node._inputs])
            if False in wanted:
                return Request(wanted, defer, owned)
        return REQUESTS[defer, owned]

    def rule(self, node: Any, gradient: Any, request: Request) -> tuple[Any, Any]:
        """Call a node's rule on its cotangent Tensor (or ``Ones``): its checked contributions and their ownership."""
        inputs = node._inputs
        if node.builtin:
            contributions, ownership = node.pullback(gradient, request)
        else:
            # A custom backward may write into its gradient: hand it a private copy, never
            # a view of saved values, another cotangent or a .grad. It owns nothing it returns.
            contributions, ownership = node.backward(private_copy(gradient)), None
        if not isinstance(contributions, (tuple, list)) or len(contributions) != len(inputs):
            count = len(contributions) if isinstance(contributions, (tuple, list)) else type(contributions).__name__
            raise ValueError(f"{type(node).__name__}.backward returned {count} values for "
                             f"{len(inputs)} saved Tensor inputs; it must return one per input")
        batch = self.batch
        for tensor, contribution in zip(inputs, contributions):
            if contribution is None or tensor._dtype is not _FLOAT32 or contribution.__class__ in _DEFERRED:
                continue
            if batch is not None or contribution.__class__ is not Tensor or contribution._layout is not tensor._layout:
                validate_cotangent(tensor, contribution, "the cotangent " + type(node).__name__ + " produced", batch)
        return contributions, (False,) * len(inputs) if ownership is None else ownership

    def settle_leaves(self) -> None:
        """Settle every reached leaf's total, made a Tensor."""
        pending, staged = self.pending, self.staged
        # ``settle``, ``tensor_record`` and ``detached_gradient`` inlined for the common leaf (once per leaf
        # and backward): a raw total for a compact leaf, staged for ``.grad`` and not requested. It is the
        # buffer of the leaf's gradient in its own kind and layout: as it is where the traversal owns it,
        # else copied (on carriers whose flat arrays are their storage, as ``detached_gradient`` copies),
        # and staged as the final Tensor (``_FINAL``), with no carrier object made until something asks.
        common = self.accumulate and not self.requested
        for key, leaf in self.leaves.items():
            value, owned = pending[key]
            if common and not isinstance(value, _NOT_RAW) and leaf._layout._is_compact:
                if leaf._raw is not None:  # (``where`` inline: once per leaf)
                    kind = leaf._kind
                else:
                    carrier = leaf._carrier_tuple[0]
                    kind = carrier._kind if carrier._kind is not None else carrier.kind
                cls = kind.cls
                if owned:
                    staged.append((leaf, Tensor._from_raw(value, leaf._layout, kind, _FLOAT32), _FINAL))
                elif not cls.keeps_shape and not cls.natural_products:
                    staged.append((leaf, Tensor._from_raw(cls._fresh_copy(kind.namespace, value), leaf._layout,
                                                          kind, _FLOAT32), _FINAL))
                else:
                    staged.append((leaf, Tensor._make(cls._adopt(value, kind.namespace, kind.device, kind),
                                                      leaf._layout, 0), False))
            else:
                self.settle(leaf, *self.tensor_record(leaf, value, owned))

    def commit(self) -> None:
        """Write every staged gradient, all or nothing, exactly once per contribution.

        Concurrent traversals may reach the same leaf: each target's lock is
        held from reading its ``.grad`` to assigning the sum, and every value
        is computed before the first assignment.
        """
        staged = self.staged
        if not staged:
            return
        # Loops, not comprehensions: each of those is one more Python call per step.
        targets = []
        for tensor, _, _ in staged:
            targets.append(tensor)
        with locked(targets):
            values = []
            for tensor, total, owned in staged:
                if tensor._grad is not None:
                    values.append(accumulated_gradient(tensor, total, bool(owned)))
                elif owned is _FINAL:
                    values.append(total)
                else:
                    values.append(detached_gradient(tensor, total, owned))
            _GRADIENTS.add_all(values)  # (one call for every leaf)
            for tensor, value in zip(targets, values):
                tensor._grad = value

    def detached(self, tensor: Tensor) -> Tensor | None:
        """The detached gradient ``grad`` returns for a requested Tensor, or None where none arrived."""
        record = self.captured.get(id(tensor))
        if record is None:
            return None
        total, owned = record
        if owned:  # ownership passes to the first caller (a Tensor may be requested twice)
            self.captured[id(tensor)] = (total, False)
        value = detached_gradient(tensor, total, owned, self.batch)
        _GRADIENTS.add(value)
        return value


#: ``Traversal.run`` under NumPy's quiet error state: gradients at a domain boundary are inf or NaN,
#: as in torch, and say so without a NumPy warning from inside a rule (a product with an infinite
#: cotangent, a 0/0 in var's VJP). ``errstate`` as a decorator is one Python call per traversal;
#: entered with ``with`` it is three (making, entering and leaving the context).
_quiet_run = np.errstate(divide="ignore", invalid="ignore", over="ignore")(Traversal.run)


def traverse(root: Any, cotangent: Tensor, root_tensor: Tensor | None, retain_graph: bool,
             traversal: Traversal) -> None:
    """Discover, run, then release (unless ``retain_graph``) the graph under ``root``."""
    dependencies, nodes = discover(root)
    _quiet_run(traversal, root, cotangent, root_tensor, dependencies)
    if not retain_graph:
        for node in nodes:
            node.release()


def private_copy(tensor: Tensor) -> Tensor:
    """``tensor``'s values in fresh storage of the same carrier class and layout."""
    carrier = tensor._carriers[0]
    return Tensor._make(carrier.placed(tensor._layout, carrier.gather_rev(tensor._layout, tensor._offset)),
                        tensor._layout, 0)


def as_float32(cotangent: Tensor) -> Tensor:
    if cotangent._dtype is _FLOAT32:
        return cotangent
    if cotangent._dtype.kind not in ("float", "int", "uint"):
        raise TypeError(f"a cotangent must hold numbers, got a {cotangent.dtype!r} Tensor")
    return converted(cotangent, _FLOAT32)


def require_one_subtensor(tensor: Tensor, what: str) -> None:
    if tensor._blocks is not None:
        raise NotImplementedError(f"{what} needs a Tensor whose authoritative representation holds exactly one "
                                  f"subtensor; this one holds {len(tensor._blocks[0])}")


def backward(tensor: Tensor, gradient: Tensor | None = None, retain_graph: bool = False) -> None:
    """``tensor.backward``: accumulate gradients into ``.grad`` of reached leaves and retained Tensors."""
    if tensor._dtype is not _FLOAT32:  # (the two checks' tests, read here: once per backward)
        tensor._require_differentiable("backward()")
    if tensor._blocks is not None:
        require_one_subtensor(tensor, "backward()")
    if gradient is None:
        if tensor._layout._shape_modes not in ((1,), ()):
            raise ValueError(f"backward() without a gradient needs a scalar Tensor with exactly one top-level leaf "
                             f"mode of extent 1, got layout {tensor.layout}; pass the cotangent explicitly")
        gradient = _unit_seed(tensor)
    else:
        validate_cotangent(tensor, gradient, "gradient")
        gradient = as_float32(gradient)
    traversal = Traversal(accumulate=True)
    root = tensor._ctx
    if root is None:
        traversal.settle(tensor, gradient)
    else:
        traverse(root, gradient, tensor, bool(retain_graph), traversal)
    traversal.commit()


def _unit_seed(tensor: Tensor) -> Any:
    """The one of ``backward()`` without a gradient, for the one-element ``tensor``.

    A flat root takes it as its raw buffer (``Traversal.run``), where nothing but the traversal can
    see it (the root's total is not kept, and no carrier keeps N-D buffers): no Tensor is made for
    it. Anywhere else it is a Tensor in the root's layout (``unit_cotangent``).
    """
    root = tensor._ctx
    if root is None or not root.flat or tensor._retains_grad:
        return unit_cotangent(tensor)
    kind = where(tensor)
    cls = kind.cls
    if cls.keeps_shape:
        return unit_cotangent(tensor)
    native = tensor._raw.dtype if tensor._raw is not None else tensor._carrier_tuple[0]._native  # type: ignore[index]
    return cls._full(kind.namespace, 1, 1.0, native, kind.device)


def backwards_traversal(gradient: Tensor, operation: Any, retain_graph: bool = False) -> None:
    """``Tensor.backwards_traversal``: propagate ``gradient`` from the node ``operation``."""
    if operation is None:
        return None
    if operation.released:
        raise released_error(operation)
    result_layout = operation._result_layout
    if not isinstance(gradient, Tensor):
        raise TypeError(f"{type(operation).__name__}.backward expects a Tensor cotangent, "
                        f"got {type(gradient).__name__}: {gradient!r}")
    if result_layout is not None and gradient._layout.shape != result_layout.shape:
        raise ValueError(f"{type(operation).__name__}.backward: cotangent shape {gradient.shape} differs from the "
                         f"result shape {result_layout.shape}")
    traversal = Traversal(accumulate=True)
    traverse(operation, as_float32(gradient), None, bool(retain_graph), traversal)
    traversal.commit()
    return None
