"""Functional vector-Jacobian products: ``grad(output, inputs, cotangents=None, *, batched, retain_graph)``."""

from __future__ import annotations

from typing import Any

from ..layout.order import batched_layout
from ..tensors.tensor import Tensor
from ..tensors.values import kind_of, operand
from .buffers import not_a_tensor, unit_cotangent, validate_cotangent
from .cotangents import BatchUnsupported, gradient_layout
from .engine import (
    Traversal,
    _quiet_run,
    as_float32,
    discover,
    first_order_error,
    is_traversal_gradient,
    require_one_subtensor,
    traverse,
)

__all__ = ["grad"]


def _check_inputs(inputs: Any) -> tuple[Tensor, ...]:
    if isinstance(inputs, Tensor):
        raise TypeError("grad: inputs must be a sequence of Tensors, got a single Tensor; wrap it as [tensor]")
    try:
        inputs = tuple(inputs)
    except TypeError:
        raise TypeError(f"grad: inputs must be a sequence of Tensors, got {type(inputs).__name__}: "
                        f"{inputs!r}") from None
    for i, item in enumerate(inputs):
        if not isinstance(item, Tensor):
            raise TypeError(f"grad: inputs[{i}] must be a Tensor, got {type(item).__name__}: {item!r}")
    return inputs


def _run(output: Tensor, cotangent: Tensor, inputs: tuple[Tensor, ...], retain_graph: bool) -> list:
    """One traversal; the detached gradient (or None) for each requested input."""
    traversal = Traversal(accumulate=False, requested={id(t): t for t in inputs})
    if output._ctx is None:
        traversal.settle(output, cotangent)
    else:
        traverse(output._ctx, cotangent, output, retain_graph, traversal)
    return [traversal.detached(t) for t in inputs]


def _refuse_higher_order(output: Tensor, inputs: tuple[Tensor, ...]) -> None:
    """RuntimeError when ``output`` depends on an earlier traversal's gradient and some input is not reached.

    Gradients are detached constants, so such a request would quietly answer
    None (or leave out the second-order terms); the engine is first order.
    """
    reached = {id(output)}
    from_gradient = is_traversal_gradient(output)
    stack = [] if output._ctx is None else [output._ctx]
    seen = set()
    while stack:
        node = stack.pop()
        for tensor in node._inputs:
            reached.add(id(tensor))
            child = tensor._ctx
            if child is None:
                from_gradient = from_gradient or is_traversal_gradient(tensor)
            elif id(child) not in seen:
                seen.add(id(child))
                stack.append(child)
    if from_gradient and any(id(t) not in reached for t in inputs):
        raise first_order_error("grad(output, ...): output")


def _check_batched(output: Tensor, cotangents: Tensor) -> int:
    """Validate a batched cotangent Tensor (ValueError naming the required layout); return K."""
    out_layout = output._layout
    layout = cotangents._layout
    shape, stride = layout.shape.modes, layout.stride.modes
    expected = f"(K,{str(out_layout.shape)[1:]}:(B,{str(out_layout.stride)[1:]}"
    if len(shape) != len(out_layout.shape.modes) + 1 or not isinstance(shape[0], int) \
            or shape[1:] != out_layout.shape.modes or stride[1:] != out_layout.stride.modes:
        raise ValueError(f"grad(batched=True): cotangents need one prepended leaf batch mode followed by the output "
                         f"layout {out_layout}, i.e. a layout {expected}; got {layout}")
    count = shape[0]
    if count == 0:
        raise ValueError("grad(batched=True): the batch mode of cotangents has extent 0; pass at least one cotangent")
    validate_cotangent(output, Tensor._make(cotangents._carriers[0], out_layout, cotangents._offset), "cotangents[0]")
    return count


def _batch_slices(output: Tensor, cotangents: Tensor) -> list[Tensor]:
    """The K cotangents of a (validated) batched cotangent Tensor, each a view with ``output.layout``."""
    out_layout = output._layout
    # validated: the batch mode is flat, so both are ints
    batch_stride: int = cotangents._layout._stride_modes[0]  # type: ignore[assignment]
    count: int = cotangents._layout._shape_modes[0]  # type: ignore[assignment]
    carrier = cotangents._carriers[0]
    return [as_float32(Tensor._make(carrier, out_layout, cotangents._offset + k * batch_stride))
            for k in range(count)]


def _stack(target: Tensor, gradients: list[Tensor]) -> Tensor:
    """Prepend a batch mode of stride ``cosize`` so each batch index owns disjoint storage."""
    single = gradient_layout(target)
    carrier = target._carriers[0]
    kind = kind_of(carrier)
    cosize = single.cosize
    buffer = carrier.fresh(cosize * len(gradients))
    for k, g in enumerate(gradients):
        buffer.scatter_rev(single, k * cosize, operand(g, kind))
    return Tensor._make(buffer, batched_layout(single, len(gradients)), 0)


def grad(output: Tensor, inputs: Any, cotangents: Tensor | None = None, *, batched: bool = False,
         retain_graph: bool = False) -> tuple[Tensor | None, ...]:
    """Vector-Jacobian products of ``output`` for each of ``inputs``, without touching ``.grad``.

    Returns one entry per input: a detached gradient in fresh storage of the
    input's carrier class, or None when the traversal does not reach it.
    ``cotangents=None`` is the unit cotangent, for a scalar ``output`` only
    (0-d, or one top-level mode of extent 1), as ``backward()`` without a
    gradient; for any other output it is a TypeError. With ``batched=True`` the first mode of ``cotangents`` indexes
    K cotangents and each gradient gains a leading batch mode of extent K.
    """
    inputs = _check_inputs(inputs)
    if not isinstance(output, Tensor):
        raise TypeError(f"grad: output must be a Tensor, got {type(output).__name__}: {output!r}")
    if cotangents is None:
        _check_implicit(output, batched)
    elif not isinstance(cotangents, Tensor):
        raise not_a_tensor("grad: cotangents", cotangents)
    output._require_differentiable("grad(output, ...)")
    for i, item in enumerate(inputs):
        if not item.is_differentiable():
            raise ValueError(f"grad: inputs[{i}] is a {item.dtype!r} Tensor; gradients exist only for "
                             "differentiable (Float32) Tensors")
    require_one_subtensor(output, "grad()")
    _refuse_higher_order(output, inputs)
    retain_graph = bool(retain_graph)
    if cotangents is None:
        return tuple(_run(output, unit_cotangent(output), inputs, retain_graph))
    if not batched:
        validate_cotangent(output, cotangents, "cotangents")
        return tuple(_run(output, as_float32(cotangents), inputs, retain_graph))
    count = _check_batched(output, cotangents)
    together = _run_batched(output, as_float32(cotangents), inputs, retain_graph, count)
    if together is not None:
        return together
    pieces = _batch_slices(output, cotangents)
    per_cotangent = [_run(output, piece, inputs, retain_graph if k == len(pieces) - 1 else True)
                     for k, piece in enumerate(pieces)]
    return tuple(None if per_cotangent[0][i] is None else _stack(t, [run[i] for run in per_cotangent])
                 for i, t in enumerate(inputs))


def _check_implicit(output: Tensor, batched: bool) -> None:
    """TypeError unless ``output`` may take the implicit unit cotangent (the rule of ``backward()``): for any
    other output, None is a cotangent that is not a Tensor."""
    if batched:
        raise TypeError("grad(batched=True) needs cotangents, a Tensor: a batch of K cotangents has no default")
    if output._layout._shape_modes not in ((1,), ()):
        raise TypeError(f"grad() without cotangents needs a scalar output (0-d, or exactly one top-level leaf "
                        f"mode of extent 1), got layout {output.layout}; pass the cotangents, a Tensor")


def _run_batched(output: Tensor, cotangents: Tensor, inputs: tuple[Tensor, ...], retain_graph: bool,
                 count: int) -> tuple | None:
    """All K cotangents in one traversal, when every reached node takes batched cotangents.

    Returns None (having changed nothing) when some node cannot, so the
    caller traverses once per cotangent instead.
    """
    traversal = Traversal(accumulate=False, requested={id(t): t for t in inputs}, batch=count)
    if output._ctx is None:
        traversal.settle(output, cotangents)
    else:
        dependencies, nodes = discover(output._ctx)
        if not all(getattr(node, "supports_batched", False) for node in nodes):
            return None
        try:
            # Under the error state of every other traversal: a rule's inf or NaN is a result, not a warning.
            _quiet_run(traversal, output._ctx, cotangents, output, dependencies)
        except BatchUnsupported:
            return None
        if not retain_graph:
            for node in nodes:
                node.release()
    return tuple(traversal.detached(t) for t in inputs)
