"""StrideWeave functions inside ``torch.autograd``, and torch functions inside StrideWeave graphs."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

from ..carriers import resolve, transfer
from ..dtypes import DType
from ..errors import MissingBackendError
from ..operation import is_grad_enabled, set_grad_enabled
from ..tensors.tensor import Tensor
from ._common import (
    argument_name,
    array_arguments,
    as_outputs,
    cotangent_from_native,
    fn_name,
    held_wrap,
    lost_precision,
    placed,
    refuse_lost_precision,
    refused_writes,
    vjp,
    wrap_torch,
)
from ._native import native_function, native_values

__all__ = ["from_torch", "torch_function"]

_FLOAT32 = DType.Float32
_FunctionClass: Any = None
_TORCH: Any = None  # the torch module, once a bridge has imported it


def _torch() -> Any:
    global _TORCH
    if _TORCH is None:
        try:
            import torch
        except ImportError as exc:  # pragma: no cover - exercised only without torch
            raise MissingBackendError(
                "strideweave.interop torch bridges need torch: pip install strideweave[torch]") from exc
        _TORCH = torch
    return _TORCH


class _Call:
    """One call of a wrapped function: what to run, and the StrideWeave graph it built."""

    __slots__ = ("args", "direct", "fn", "inputs", "keys", "kwargs", "lent", "name", "outputs", "single")

    def __init__(self, fn, name, args, kwargs, keys, lent):
        self.fn, self.name, self.args, self.kwargs, self.keys, self.lent = fn, name, args, kwargs, keys, lent
        # Every argument a tensor, passed positionally (the usual layer call): fn takes the wraps as they are.
        self.direct = not kwargs and len(keys) == len(args)
        self.inputs: Sequence[Any] = ()
        self.outputs: Sequence[Any] = ()
        self.single = True

    def run(self, natives, record: bool) -> tuple:
        """Run ``fn`` on StrideWeave views of ``natives``; return its outputs as torch tensors.

        Recording, the views of tensors that require grad (``lent``, their
        indices) refuse writes, as torch refuses an in-place write into a leaf
        that requires grad.
        """
        tensor_type = _TORCH.Tensor
        inputs = []
        for native in natives:
            inputs.append(held_wrap(native, tensor_type))  # a view of the same storage: no copy
        if len(set(map(id, inputs))) != len(inputs):
            # the same tensor passed twice: two leaves, each with its own gradient
            seen = set()
            for i, wrapped in enumerate(inputs):
                if id(wrapped) in seen:
                    inputs[i] = wrap_torch(natives[i], tensor_type)
                seen.add(id(wrapped))
        args, kwargs = (inputs, self.kwargs) if self.direct else placed(self.args, self.kwargs, self.keys, inputs)
        lent = self.lent
        refusal = refused_writes(inputs, self._write_refused, lent) if record and lent else None
        # Grad mode set and restored by hand rather than by a ``grad_mode`` block: three calls fewer per step.
        previous = is_grad_enabled()
        set_grad_enabled(record)
        try:
            if refusal is None:
                result = self.fn(*args, **kwargs)
            else:
                with refusal:
                    result = self.fn(*args, **kwargs)
        finally:
            set_grad_enabled(previous)
        if result.__class__ is Tensor:  # ``as_outputs``' first case, without formatting its message
            outputs: tuple = (result,)
        else:
            outputs, self.single = as_outputs(result, f"torch_function({self.name}): fn")
        self.inputs, self.outputs = inputs, outputs
        results = []
        for output in outputs:
            array = native_view(output)
            if not isinstance(array, tensor_type):  # fn moved its result to another carrier
                array = transfer(array, resolve("torch"))
            results.append(array)
        return tuple(results)

    def _write_refused(self, index: int) -> str:
        return (f"torch_function({self.name}): fn wrote into {argument_name(self.keys[index])}, a torch tensor "
                "that requires grad; torch refuses an in-place write into a leaf that requires grad, and the "
                "bridge records no write into its inputs: write into a copy (x = xp.asarray(x, copy=True)), or "
                "pass a tensor that does not require grad")


def native_view(t: Tensor, whole: bool = False):
    """``t.to_array()``: for a torch carrier and one leaf per mode, one view of the buffer.

    ``whole``: the caller hands the result on and keeps no other reference (a gradient), so a 1-D ``t``
    over its whole buffer is that buffer itself. (A forward output never is: torch gives the tensor a
    function returns a history, which the buffer StrideWeave computes with must not get.)
    """
    layout = t._layout
    shape = layout._shape_modes
    # (a nested mode's size is an int, its shape a tuple: the natural shape differs from the modes)
    if not shape or t._blocks is not None or layout.mode_sizes != shape:
        return t.to_array()
    carriers = t._carrier_tuple or t._materialize()  # made here: a write through the view is then seen
    carrier = carriers[0]
    if len(carriers) != 1 or carrier.backend != "torch":
        return t.to_array()
    # (to_array's ``watch_external`` is left out: a torch carrier reads torch's version counter, watching nothing)
    buf = carrier._array
    step = buf.stride(0)
    strides = layout._stride_modes
    if step == 1 and t._offset == 0 and buf.shape[0] == layout.size:
        # The whole buffer in row-major order (a fresh result or gradient, mostly): one ``view``, cheaper in
        # torch than ``as_strided``, or no call at all. (Every mode is flat, so ``shape`` holds the extents;
        # a size-one axis is tested too: the view keeps to_array's strides exactly.)
        rank = len(shape)
        if rank == 1:
            if strides[0] == 1:
                return buf if whole else buf.view(shape)
        elif rank == 2:  # a matrix, written out: the loop below costs as much as the view
            if strides[1] == 1 and strides[0] == shape[1]:
                return buf.view(shape)
        else:
            extent = 1
            for e, s in zip(reversed(layout.mode_sizes), reversed(strides)):
                if s != extent:
                    break
                extent *= e
            else:
                return buf.view(shape)
    if step != 1:
        strides = tuple(s * step for s in strides)
    return buf.as_strided(shape, strides, buf.storage_offset() + t._offset * step)


def _function_class():
    """The ``torch.autograd.Function`` subclasses, built once torch is imported."""
    global _FunctionClass
    if _FunctionClass is not None:
        return _FunctionClass
    torch = _torch()
    # Any: torch is imported on first use, so the base class is known only at run time
    Function: Any = torch.autograd.Function

    class FirstOrderOnly(Function):
        """Passes gradients through; differentiating them again is refused with a clear error."""

        @staticmethod
        def forward(ctx, name, count, *tensors):
            # ``tensors`` are the gradients, then the inputs they belong to: those
            # inputs require grad, so the outputs join the graph and a second
            # backward reaches the error below instead of stopping silently.
            ctx.name = name
            return tensors[:count]

        @staticmethod
        def backward(ctx, *unused):
            raise RuntimeError(f"torch_function({ctx.name}): StrideWeave gradients are first order; a double "
                               "backward (differentiating a gradient computed with create_graph=True) is not "
                               "supported")

    class StrideWeaveFunction(Function):
        """Forward runs a StrideWeave function; backward runs the StrideWeave engine on the incoming cotangents."""

        @staticmethod
        def forward(ctx, call, *natives):
            ctx.set_materialize_grads(False)
            results = call.run(natives, record=True)
            ctx.call = call
            # Saved so torch itself reports a second backward without retain_graph=True,
            # and an in-place change of an input between forward and backward.
            ctx.save_for_backward(*natives)
            for result, output in zip(results, call.outputs):
                # An output that left Float32 stays in torch's graph: a cotangent reaching it raises in backward.
                if output._dtype is not _FLOAT32 and lost_precision(output) is None:
                    ctx.mark_non_differentiable(result)
            return results

        @staticmethod
        def backward(ctx, *grad_outputs):
            natives = ctx.saved_tensors
            call = ctx.call
            outputs = call.outputs
            # The Float32 rule first, before any work: a cotangent reaching an output that left Float32.
            for k, g in enumerate(grad_outputs):
                if g is not None and outputs[k]._dtype is not _FLOAT32:
                    refuse_lost_precision(outputs, (k,), f"torch_function({call.name})")
            cotangents = []
            for k, g in enumerate(grad_outputs):
                if g is not None:
                    output = outputs[k]
                    if output._dtype is not _FLOAT32:
                        g = None  # a value computed from no Float32 Tensor: a true zero
                    else:
                        if g.requires_grad:  # create_graph=True: StrideWeave takes the values only
                            g = g.detach()
                        g = cotangent_from_native(output, g, f"torch_function({call.name}): output {k}")
                cotangents.append(g)
            needs = ctx.needs_input_grad
            inputs = call.inputs
            wanted = []
            for i in range(len(natives)):
                if needs[i + 1]:
                    wanted.append(i)
            grads = vjp(outputs, [inputs[i] for i in wanted], cotangents)
            result: list = [None] * len(natives)
            present = []
            for i, g in zip(wanted, grads):
                if g is not None:
                    view = native_view(g, whole=True)
                    shape = natives[i].shape
                    result[i] = view if view.shape == shape else view.reshape(shape)
                    present.append(i)
            if present and torch.is_grad_enabled():
                passed = FirstOrderOnly.apply(call.name, len(present), *[result[i] for i in present],
                                              *[natives[i] for i in present])
                for i, r in zip(present, passed):
                    result[i] = r
            return (None, *result)

    _FunctionClass = StrideWeaveFunction
    return _FunctionClass


def torch_function(fn: Callable) -> Callable:
    """Wrap a StrideWeave function as a callable on torch tensors that ``torch.autograd`` differentiates.

    Torch tensors, positional or keyword, reach ``fn`` as StrideWeave Tensors
    over the same storage (no copy) and get gradients; every other argument
    passes through unchanged. ``fn`` returns a Tensor or a tuple of Tensors,
    handed back as torch tensors over the same storage. Backward runs the
    StrideWeave engine; gradients are first order (double backward raises
    ``RuntimeError``), and a cotangent reaching an output that left Float32
    raises ``Float32RuleError``. A write into a tensor that requires grad
    raises ``LeafWriteError`` before anything is written.
    """
    if not callable(fn):
        raise TypeError(f"torch_function: fn must be callable, got {type(fn).__name__}: {fn!r}")

    name = fn_name(fn)

    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any):
        torch = _TORCH or _torch()
        tensor_type = torch.Tensor
        keys, natives = array_arguments(args, kwargs, tensor_type)
        lent = []  # the indices of the tensors that require grad: differentiated, and refused writes
        for i, a in enumerate(natives):
            if a.requires_grad:
                if a.dtype != torch.float32:
                    raise ValueError(f"torch_function({name}): {argument_name(keys[i])} requires grad but has "
                                     f"dtype {a.dtype}; StrideWeave differentiates torch.float32 only (cast it, or "
                                     "detach it)")
                lent.append(i)
        request = _Call(fn, name, args, kwargs, keys, lent)
        if lent and torch.is_grad_enabled():
            results = (_FunctionClass or _function_class()).apply(request, *natives)
        else:
            results = request.run(natives, record=False)
        return results[0] if request.single else tuple(results)

    return call


def from_torch(fn: Callable) -> Callable:
    """Wrap a differentiable torch function as a StrideWeave operation: ``fn`` sees torch tensors (views of a torch
    carrier's storage), and its backward is ``torch.autograd.grad`` (results and carriers as ``native_function``
    says)."""
    return native_function(fn, _TorchLibrary, "from_torch")


# A deliberate pair with _JaxLibrary (jax_bridge.py): two implementations of native_function's library protocol
# (to_native, run, outputs, detach, from_tensor, vjp), alike in shape and different in every call.
class _TorchLibrary:
    """What ``native_function`` needs from torch."""

    @staticmethod
    def to_native(t: Tensor):
        return native_values(t, _torch().Tensor, "torch")

    @staticmethod
    def run(fn, args, positions, differentiable, kwargs, where):
        """Run ``fn`` with torch autograd on; the state is the leaves gradients are asked for."""
        torch = _torch()
        args = list(args)
        leaves = []
        for position, wanted in zip(positions, differentiable):
            leaf = args[position].detach().requires_grad_(wanted)
            args[position] = leaf
            leaves.append(leaf)
        with torch.enable_grad():
            return fn(*args, **kwargs), leaves

    @staticmethod
    def outputs(result, where):
        torch = _torch()
        if isinstance(result, torch.Tensor):
            return (result,), True
        if isinstance(result, (tuple, list)) and result and all(isinstance(r, torch.Tensor) for r in result):
            return tuple(result), False
        raise TypeError(f"{where} must return a torch.Tensor or a tuple of them, got {type(result).__name__}: "
                        f"{result!r:.200}")

    @staticmethod
    def detach(x):
        return x.detach()

    @staticmethod
    def from_tensor(gradient: Tensor, output):
        """A StrideWeave cotangent as a torch tensor on ``output``'s device, shaped like ``output``."""
        values = _TorchLibrary.to_native(gradient)
        if values.device != output.device:
            values = values.to(output.device)
        return values.reshape(output.shape)

    @staticmethod
    def vjp(leaves, outputs, index, cotangent):
        """``torch.autograd.grad`` of output ``index``; None for leaves it does not reach."""
        torch = _torch()
        wanted = [leaf for leaf in leaves if leaf.requires_grad]
        if not wanted or not outputs[index].requires_grad:
            return [None] * len(leaves)
        # The graph may be traversed again (retain_graph=True on the StrideWeave side);
        # it is freed when the operation is released.
        grads = iter(torch.autograd.grad(outputs[index], wanted, cotangent, retain_graph=True, allow_unused=True))
        return [next(grads) if leaf.requires_grad else None for leaf in leaves]
