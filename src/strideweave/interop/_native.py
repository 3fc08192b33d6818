"""A native differentiable function (torch or JAX) as StrideWeave operations, one per output."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from ..carriers import resolve, transfer
from ..errors import CarrierMismatchError
from ..operation import ExecutionOptions, Operation, is_grad_enabled
from ..tensors.tensor import Tensor
from ._common import cotangent_from_native, fn_name, wrap_native

__all__ = ["native_function", "native_values"]


class _NativeCall:
    """What one native call left for backward: the library, its autograd state and its outputs."""

    __slots__ = ("library", "name", "outputs", "state")

    def __init__(self, library, state, outputs, name):
        self.library, self.state, self.outputs, self.name = library, state, outputs, name


class NativeOutput(Operation):
    """Output ``index`` of a native call; backward asks the native library for the vector-Jacobian product."""

    def __init__(self, call: _NativeCall, index: int, result: Tensor) -> None:
        self.context["call"] = call
        self.context["index"] = index
        self._result: Tensor | None = result  # handed out once, by forward

    # No keyword arguments besides ``options``: narrower than Operation.forward on purpose.
    def forward(self, *args, options=None):
        result, self._result = self._result, None
        return result

    def backward(self, gradient):
        call, index = self.context["call"], self.context["index"]
        where = f"{call.name} output {index}"
        output = call.outputs[index]
        values = call.library.from_tensor(gradient, output)
        grads = call.library.vjp(call.state, call.outputs, index, values)
        return tuple(None if g is None else cotangent_from_native(t, g, f"{where}, gradient for input {i}")
                     for i, (t, g) in enumerate(zip(self.inputs(), grads)))


def native_values(t: Tensor, array_type: type, carrier: str) -> Any:
    """``t``'s values as an ``array_type`` of the ``carrier`` library: a view where ``t`` lives there, else moved
    by DLPack."""
    array = t.to_array()
    return array if isinstance(array, array_type) else transfer(array, resolve(carrier))


def _target_kind(tensors, options, where):
    """Where results land: ``options.carrier``, else the one carrier kind the Tensor inputs share."""
    if options is not None and (options.carrier is not None or options.device is not None):
        return resolve(options.carrier if options.carrier is not None else tensors[0].carrier.kind,
                       device=options.device)
    kinds = []
    for t in tensors:
        kind = t.carrier.kind
        if kind not in kinds:
            kinds.append(kind)
    if len(kinds) > 1:
        raise CarrierMismatchError(f"{where}: Tensor arguments live on different carriers ({kinds[0]} and "
                                   f"{kinds[1]}); pass options=sw.ExecutionOptions(carrier=...) to say where the "
                                   "results go")
    return kinds[0]


def native_function(fn: Callable, library, where: str) -> Callable:
    """Wrap ``fn`` (native arrays in, native arrays out) as a StrideWeave-differentiable callable.

    Tensor arguments reach ``fn`` as ``library``'s arrays (moved by DLPack
    when they live on another carrier); results come back on the inputs'
    carrier, or on ``options.carrier``, one operation per output, joining
    any StrideWeave graph.
    """
    if not callable(fn):
        raise TypeError(f"{where}: fn must be callable, got {type(fn).__name__}: {fn!r}")
    name = f"{where}({fn_name(fn)})"

    @functools.wraps(fn)
    def call(*args: Any, options: ExecutionOptions | None = None, **kwargs: Any):
        if options is not None and not isinstance(options, ExecutionOptions):
            raise TypeError(f"{name}: options must be an ExecutionOptions or None, got {options!r}")
        positions = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        tensors = [args[i] for i in positions]
        if not tensors:
            raise TypeError(f"{name}: expected at least one strideweave Tensor argument, got "
                            f"{[type(a).__name__ for a in args]}")
        kind = _target_kind(tensors, options, name)
        record = is_grad_enabled() and any(t.is_differentiable() for t in tensors)
        natives = [library.to_native(t) for t in tensors]
        full = list(args)
        for position, native in zip(positions, natives):
            full[position] = native
        result, state = library.run(fn, full, positions, [record and t.is_differentiable() for t in tensors], kwargs,
                                    f"{name}: fn")
        outputs, single = library.outputs(result, f"{name}: fn")
        results = [wrap_native(transfer(library.detach(o), kind)) for o in outputs]
        if record:
            native_call = _NativeCall(library, state, outputs, name)
            results = [NativeOutput(native_call, k, r)(*args, options=options) if r.is_differentiable() else r
                       for k, r in enumerate(results)]
        return results[0] if single else tuple(results)

    return call
