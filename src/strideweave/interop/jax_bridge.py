"""StrideWeave functions inside JAX programs (staged ``custom_vjp``), and JAX functions inside StrideWeave graphs."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from ..carriers import resolve, transfer
from ..carriers.jax_carrier import is_tracer
from ..dtypes import DType
from ..errors import MissingBackendError
from ..operation import no_grad
from ..tensors.tensor import Tensor
from . import _common
from ._common import as_outputs, cotangent_from_native, fn_name, grad_mode, vjp, wrap_native
from ._native import native_function, native_values

__all__ = ["from_jax", "jax_function"]


def _jax():
    try:
        import jax
    except ImportError as exc:  # pragma: no cover - exercised only without jax
        raise MissingBackendError("strideweave.interop JAX bridges need jax: pip install strideweave[jax]") from exc
    return jax


def _reads_values(exc: BaseException) -> bool:
    """Whether ``exc`` is JAX's refusal of a value read on a traced array (``float(t)``, ``t.numpy()``, ...)."""
    errors = _jax().errors
    return isinstance(exc, (errors.ConcretizationTypeError, errors.TracerArrayConversionError))


class _Pullback:
    """The residual of a staged call: StrideWeave's backward, traced to a jaxpr, and the arrays it closes over.

    A JAX pytree whose leaves are those arrays (``consts``), so JAX keeps
    them between the forward and backward passes like any residual; the
    jaxpr and the output / input numbering are static.
    """

    def __init__(self, jaxpr, consts, live, wanted):
        self.jaxpr, self.consts, self.live, self.wanted = jaxpr, list(consts), tuple(live), tuple(wanted)

    def tree_flatten(self):
        return self.consts, (self.jaxpr, self.live, self.wanted)

    @classmethod
    def tree_unflatten(cls, aux, consts):
        return cls(aux[0], consts, aux[1], aux[2])


_registered: list = []


def _register_pullback() -> None:
    if not _registered:
        _jax().tree_util.register_pytree_node_class(_Pullback)
        _registered.append(True)


class _Bridge:
    """One call of a wrapped function, staged: ``fn`` runs on the arrays JAX passes (traced or concrete).

    The forward pass builds StrideWeave's graph, and its backward is traced
    right away into a jaxpr (``_Pullback``), the residual JAX keeps until its
    backward pass: one XLA program under ``jax.jit``, batched by ``jax.vmap``.
    Eagerly (concrete arrays) the backward runs ``fn`` again instead.
    Where ``fn`` reads values (JAX refuses that on traced arrays), the call
    runs on the host through ``jax.pure_callback`` instead, and backward runs
    ``fn`` again there before the StrideWeave engine.
    """

    def __init__(self, fn, args, kwargs, positions, out_shape):
        self.fn, self.args, self.kwargs, self.positions = fn, args, kwargs, positions
        self.out_shape = out_shape
        self.name = f"jax_function({fn_name(fn)})"
        self.single = True
        self.specs: Any = None  # the declared output specs, set by the first trace
        self.wanted: list[int] = []
        self.lost: dict[int, Tensor] = {}  # staged outputs that left Float32, by output number

    # -- running fn ------------------------------------------------------------------------
    def evaluate(self, arrays) -> tuple[list, tuple]:
        """``fn`` on StrideWeave views of ``arrays`` (JAX arrays, or NumPy arrays on the host), which refuse
        writes: JAX arrays are values, and a write into a differentiated one would bend its gradient."""
        inputs = [wrap_native(array) for array in arrays]
        args, kwargs = _common.placed(self.args, self.kwargs, self.positions, inputs)
        with _common.refused_writes(inputs, self._write_refused):
            result = self.fn(*args, **kwargs)
        outputs, self.single = as_outputs(result, f"{self.name}: fn")
        return inputs, outputs

    def _write_refused(self, index: int) -> str:
        return (f"{self.name}: fn wrote into {_common.argument_name(self.positions[index])}; JAX arrays are "
                "immutable and the bridge records no write into its inputs: write into a copy (x = xp.asarray(x, "
                "copy=True)) or compute out of place")

    def declare(self, arrays) -> tuple:
        """``jax.ShapeDtypeStruct`` per output: from ``out_shape``, else from a trial run on ones."""
        jax = _jax()
        if self.specs is not None:
            return self.specs
        if self.out_shape is None:
            # Only the shapes are kept: values such as atanh(1) = inf need no NumPy warning.
            with no_grad(), np.errstate(all="ignore"):
                _, outputs = self.evaluate([np.ones(a.shape, a.dtype) for a in arrays])
            specs = tuple(jax.ShapeDtypeStruct(o.shape, np.dtype(o.dtype.name)) for o in outputs)
        else:
            declared = self.out_shape
            if callable(declared):
                declared = declared(*[jax.ShapeDtypeStruct(a.shape, a.dtype) for a in arrays])
            self.single = not isinstance(declared, (tuple, list))
            specs = (declared,) if self.single else tuple(declared)
            if not all(hasattr(s, "shape") and hasattr(s, "dtype") for s in specs):
                raise TypeError(f"{self.name}: out_shape must give a jax.ShapeDtypeStruct or a tuple of them, "
                                f"got {declared!r}")
        self.specs = specs
        return specs

    def host_forward(self, plan, *operands):
        """Forward on the host (inside ``jax.pure_callback``): NumPy in, NumPy out."""
        arrays = _unpack(operands, plan)
        with no_grad():
            _, outputs = self.evaluate(arrays)
        results = []
        for k, (output, spec) in enumerate(zip(outputs, self.specs)):
            values = np.asarray(output.to_array())
            if values.shape != tuple(spec.shape):
                raise ValueError(f"{self.name}: output {k} has shape {values.shape}, but shape "
                                 f"{tuple(spec.shape)} was declared")
            results.append(values.astype(spec.dtype, copy=False))
        return tuple(results)

    def staged(self, arrays, outputs) -> list:
        """The outputs' native arrays, checked against ``out_shape`` where one was declared."""
        results = [self._native(o.to_array()) for o in outputs]
        if self.out_shape is not None:
            declared = self.declare(arrays)
            for k, (result, spec) in enumerate(zip(results, declared)):
                if tuple(result.shape) != tuple(spec.shape):
                    raise ValueError(f"{self.name}: output {k} has shape {tuple(result.shape)}, but shape "
                                     f"{tuple(spec.shape)} was declared")
        return results

    def primal(self, *arrays):
        try:
            with no_grad():
                _, outputs = self.evaluate(arrays)
            results = self.staged(arrays, outputs)
        except Exception as exc:
            if not _reads_values(exc):
                raise
            results = self.on_host(arrays)
        return results[0] if self.single else tuple(results)

    def on_host(self, arrays) -> list:
        """The forward pass through ``jax.pure_callback`` (``fn`` reads values, so it cannot be staged)."""
        jax = _jax()
        if any(is_tracer(a) for a in arrays):
            specs = self.declare(arrays)
            operands, plan = _pack(arrays)
            results = jax.pure_callback(functools.partial(self.host_forward, plan), specs, *operands,
                                        vmap_method="sequential")
        else:
            with no_grad():
                _, outputs = self.evaluate(arrays)
            results = [self._native(o.to_array()) for o in outputs]
        return list(results)

    @staticmethod
    def _native(values):
        jax = _jax()
        return values if isinstance(values, jax.Array) else jax.numpy.asarray(transfer(values, resolve("jax")))

    # -- custom_vjp rules (symbolic zeros: fwd learns which inputs are differentiated) ---------
    def fwd(self, *primals):
        arrays = [p.value for p in primals]
        self.wanted = []
        for i, (p, a) in enumerate(zip(primals, arrays)):
            dtype = np.dtype(a.dtype)
            if p.perturbed and dtype == np.float32:
                self.wanted.append(i)
            elif p.perturbed and (np.issubdtype(dtype, np.inexact) or dtype.name == "bfloat16"):
                raise ValueError(f"{self.name}: {_common.argument_name(self.positions[i])} is being differentiated "
                                 f"but has dtype {dtype}; StrideWeave differentiates float32 only (cast it, or keep "
                                 "it out of the differentiated arguments)")
        # Only a higher-order derivative differentiates fwd itself: refuse it by name.
        arrays = _first_order(self.name)(*arrays)
        if not any(is_tracer(a) for a in arrays):
            # Eagerly, backward runs fn again on the arrays: cheaper than tracing a jaxpr at every call.
            return self.primal(*arrays), arrays
        try:
            results, pullback = self.traced_pullback(arrays)
        except Exception as exc:
            if not _reads_values(exc):
                raise
            results = self.on_host(arrays)
            return (results[0] if self.single else tuple(results)), arrays
        return (results[0] if self.single else tuple(results)), pullback

    def traced_pullback(self, arrays) -> tuple[list, _Pullback]:
        """``fn``'s outputs on ``arrays`` and its backward, traced into a ``_Pullback`` from their cotangents."""
        jax = _jax()
        with grad_mode(True):
            inputs, outputs = self.evaluate(arrays)
        results = self.staged(arrays, outputs)
        wanted = list(self.wanted)
        live = [k for k, o in enumerate(outputs) if o.dtype is DType.Float32 and o.is_differentiable()]
        # Outputs that left Float32 get no gradient: a cotangent reaching one is refused in bwd.
        self.lost = {k: o for k, o in enumerate(outputs) if _common.lost_precision(o) is not None}
        targets = [inputs[i] for i in wanted]

        def pullback(*cts):
            grads = self.input_gradients(outputs, targets, live, cts)
            return [jax.numpy.zeros(arrays[i].shape, np.float32) if g is None
                    else jax.numpy.reshape(g.to_array(), arrays[i].shape) for i, g in zip(wanted, grads)]

        _register_pullback()
        closed = jax.make_jaxpr(pullback)(*[jax.ShapeDtypeStruct(results[k].shape, np.float32) for k in live])
        return results, _Pullback(closed.jaxpr, closed.consts, live, wanted)

    def input_gradients(self, outputs, targets, live, cts) -> list:
        """One StrideWeave traversal from native cotangents ``cts`` of the outputs numbered in ``live``."""
        cotangents: list = [None] * len(outputs)
        for k, ct in zip(live, cts):
            cotangents[k] = cotangent_from_native(outputs[k], ct, f"{self.name}: cotangent for output {k}")
        return vjp(outputs, targets, cotangents)

    def host_vjp(self, wanted, live, *values):
        """Backward on the host (or eagerly): ``fn`` again, then one StrideWeave traversal.

        ``values`` are the input arrays, then the cotangents of the outputs
        numbered in ``live``; returns the gradients of the inputs in ``wanted``.
        """
        count = len(self.positions)
        arrays, cts = values[:count], values[count:]
        with grad_mode(True):
            inputs, outputs = self.evaluate(arrays)
        grads = self.input_gradients(outputs, [inputs[i] for i in wanted], live, cts)
        results = []
        for i, g in zip(wanted, grads):
            shape = tuple(arrays[i].shape)
            results.append(np.zeros(shape, np.float32) if g is None else g.to_array().reshape(shape))
        return tuple(results)

    def bwd(self, residual, cts):
        jax = _jax()
        cts = (cts,) if self.single else tuple(cts)
        zero = jax.custom_derivatives.SymbolicZero
        if isinstance(residual, _Pullback):
            result: list = [None] * len(self.positions)  # None: a zero cotangent
            if not residual.wanted:
                return tuple(result)
            _common.refuse_lost_precision(self.lost, [k for k in self.lost if not isinstance(cts[k], zero)],
                                          self.name)
            live = [jax.numpy.zeros(var.aval.shape, np.float32) if isinstance(cts[k], zero) else cts[k]
                    for k, var in zip(residual.live, residual.jaxpr.invars)]
            # Differentiating this backward pass (jax.hessian, grad of grad) stops here with a clear error.
            live = list(_first_order(self.name)(*live))
            grads = jax.core.eval_jaxpr(residual.jaxpr, residual.consts, *live)
            for i, g in zip(residual.wanted, grads):
                result[i] = g
            return tuple(result)
        arrays = residual
        live = [k for k, ct in enumerate(cts) if not isinstance(ct, zero) and np.dtype(ct.dtype) == np.float32]
        wanted = self.wanted
        result = [None] * len(arrays)  # None: a zero cotangent
        if not wanted:
            return tuple(result)
        self.refuse_lost_precision(arrays, [k for k, ct in enumerate(cts) if not isinstance(ct, zero)
                                            and k not in live and np.issubdtype(np.dtype(ct.dtype), np.inexact)])
        if not live:
            return tuple(result)
        # Differentiating this backward pass (jax.hessian, grad of grad) stops here with a clear error.
        values = _first_order(self.name)(*arrays, *[cts[k] for k in live])
        if any(is_tracer(v) for v in values):
            specs = tuple(jax.ShapeDtypeStruct(arrays[i].shape, np.float32) for i in wanted)
            operands, plan = _pack(values)
            grads = jax.pure_callback(functools.partial(self._host_vjp_numpy, wanted, live, plan), specs,
                                      *operands, vmap_method="sequential")
        else:
            grads = [self._native(g) for g in self.host_vjp(wanted, live, *values)]
        for i, g in zip(wanted, grads):
            result[i] = g
        return tuple(result)

    def refuse_lost_precision(self, arrays, indices) -> None:
        """``Float32RuleError`` if a cotangent reached an output of ``indices`` (not Float32) that left Float32.

        Learnt from a run of ``fn`` with recording on: on the arrays themselves,
        or under tracing on ones of their shapes and dtypes, so the error is
        raised where JAX traces the backward pass, not inside a callback.
        """
        if not indices:
            return
        values = [np.ones(a.shape, a.dtype) if is_tracer(a) else a for a in arrays]
        with grad_mode(True), np.errstate(all="ignore"):
            _, outputs = self.evaluate(values)
        _common.refuse_lost_precision(outputs, indices, self.name)

    def _host_vjp_numpy(self, wanted, live, plan, *operands):
        return tuple(np.asarray(g) for g in self.host_vjp(wanted, live, *_unpack(operands, plan)))


#: Arrays of one dtype whose total size is at most this many bytes reach a host callback as one
#: concatenated operand: each operand of ``jax.pure_callback`` costs ~35 us of JAX's own handling
#: (a ``device_put`` per argument) and more for larger ones, while the concatenation inside XLA
#: stays cheaper up to about a megabyte (measured on CPU; at 4 MB it costs more than it saves).
_PACK_BYTES = 1 << 20


def _pack(arrays) -> tuple[list, tuple]:
    """The callback operands for ``arrays`` (traced): small arrays of one dtype concatenated into one.

    Returns ``(operands, plan)``; ``plan`` holds, per array, its operand and,
    for a packed one, its offset, size and shape (static under tracing).
    """
    jnp = _jax().numpy
    groups: dict = {}
    for i, a in enumerate(arrays):
        groups.setdefault(np.dtype(a.dtype), []).append(i)
    operands: list = []
    plan: list = [None] * len(arrays)
    for dtype, members in groups.items():
        sizes = [int(np.prod(arrays[i].shape)) for i in members]
        if len(members) > 1 and sum(sizes) * dtype.itemsize <= _PACK_BYTES:
            offset = 0
            for i, size in zip(members, sizes):
                plan[i] = (len(operands), offset, size, tuple(arrays[i].shape))
                offset += size
            operands.append(jnp.concatenate([jnp.ravel(arrays[i]) for i in members]))
        else:
            for i in members:
                plan[i] = (len(operands), None, None, None)
                operands.append(arrays[i])
    return operands, tuple(plan)


def _unpack(operands, plan) -> list:
    """The arrays ``_pack`` sent, as NumPy views of the callback's operands (CPU: no copy)."""
    # The callback may receive CPU jax.Arrays; NumPy views of them run without JAX dispatch.
    host = [np.asarray(o) for o in operands]
    return [host[k] if offset is None else host[k][offset:offset + size].reshape(shape)
            for k, offset, size, shape in plan]


def _first_order(name: str):
    """The identity on arrays, with a JVP rule that refuses higher-order differentiation by name."""
    jax = _jax()

    @jax.custom_jvp
    def identity(*values):
        return values

    @identity.defjvp
    def refuse(primals, tangents):
        raise RuntimeError(f"{name}: StrideWeave gradients are first order; differentiating them again "
                           "(jax.hessian, jax.grad of jax.grad, forward mode over a gradient) is not supported")

    return identity


def jax_function(fn: Callable, *, out_shape: Any = None) -> Callable:
    """Wrap a StrideWeave function as a JAX function that ``jax.grad``, ``jax.jit`` and ``jax.vmap`` accept.

    JAX (and NumPy) arrays, positional or keyword, reach ``fn`` as StrideWeave
    Tensors on JAX carriers that refuse writes; every other argument passes
    through unchanged (a constant under ``jax.jit``). ``fn`` and its
    StrideWeave backward are traced into the JAX program: under ``jax.jit``
    one XLA computation, batched by ``jax.vmap``. A cotangent reaching an
    output that left Float32 raises ``Float32RuleError``. ``out_shape`` (a
    ``jax.ShapeDtypeStruct``, a tuple of them, or a callable taking the
    arrays' ``ShapeDtypeStruct``) is checked against the outputs. Only an
    ``fn`` that reads values (``float(t)``, ``t.numpy()``) runs on the host
    through ``jax.pure_callback`` instead (CPU; ``jax.vmap`` loops), with
    output shapes from ``out_shape`` or else from a trial run on ones.
    """
    if not callable(fn):
        raise TypeError(f"jax_function: fn must be callable, got {type(fn).__name__}: {fn!r}")

    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any):
        jax = _jax()
        # NumPy arrays are array arguments too, as everywhere in JAX.
        args = tuple(jax.numpy.asarray(a) if isinstance(a, np.ndarray) else a for a in args)
        kwargs = {k: jax.numpy.asarray(a) if isinstance(a, np.ndarray) else a for k, a in kwargs.items()}
        keys, arrays = _common.array_arguments(args, kwargs, jax.Array)
        if not keys:
            raise TypeError(f"jax_function({fn_name(fn)}): expected at least one JAX array argument, got "
                            f"{[type(a).__name__ for a in args]}")
        bridge = _Bridge(fn, args, kwargs, keys, out_shape)
        wrapped = jax.custom_vjp(bridge.primal)
        wrapped.defvjp(bridge.fwd, bridge.bwd, symbolic_zeros=True)
        return wrapped(*arrays)

    return call


def from_jax(fn: Callable) -> Callable:
    """Wrap a differentiable JAX function as a StrideWeave operation: ``fn`` sees JAX arrays, and its backward
    is ``jax.vjp`` (results and carriers as ``native_function`` says)."""
    return native_function(fn, _JaxLibrary, "from_jax")


# A deliberate pair with _TorchLibrary (torch_bridge.py): two implementations of native_function's library protocol
# (to_native, run, outputs, detach, from_tensor, vjp), alike in shape and different in every call.
class _JaxLibrary:
    """What ``native_function`` needs from JAX."""

    @staticmethod
    def to_native(t: Tensor):
        return native_values(t, _jax().Array, "jax")

    @staticmethod
    def run(fn, args, positions, differentiable, kwargs, where):
        """Run ``fn`` under ``jax.vjp`` over the differentiable arrays; the state is the VJP function."""
        jax = _jax()
        moving = [p for p, d in zip(positions, differentiable) if d]
        if not moving:
            return fn(*args, **kwargs), None

        def partial(*values):
            full = list(args)
            for position, value in zip(moving, values):
                full[position] = value
            result = fn(*full, **kwargs)
            _JaxLibrary.outputs(result, where)  # before jax.vjp meets a value it cannot trace
            return result

        result, vjp_fn = jax.vjp(partial, *[args[p] for p in moving])
        container = type(result) if isinstance(result, (tuple, list)) else None
        return result, (vjp_fn, list(differentiable), container)

    @staticmethod
    def outputs(result, where):
        jax = _jax()
        if isinstance(result, jax.Array):
            return (result,), True
        if isinstance(result, (tuple, list)) and result and all(isinstance(r, jax.Array) for r in result):
            return tuple(result), False
        raise TypeError(f"{where} must return a JAX array or a tuple of them, got {type(result).__name__}: "
                        f"{result!r:.200}")

    @staticmethod
    def detach(x):
        return x

    @staticmethod
    def from_tensor(gradient: Tensor, output):
        return _JaxLibrary.to_native(gradient).reshape(output.shape)

    @staticmethod
    def vjp(state, outputs, index, cotangent):
        """``jax.vjp`` pulled back from output ``index`` (zeros for the other outputs)."""
        vjp_fn, differentiable, container = state
        if container is not None:
            cts = container([cotangent if k == index else _zero_cotangent(o) for k, o in enumerate(outputs)])
        else:
            cts = cotangent
        grads = iter(vjp_fn(cts))
        return [next(grads) if d else None for d in differentiable]


def _zero_cotangent(output):
    jax = _jax()
    if jax.numpy.issubdtype(output.dtype, jax.numpy.inexact):
        return jax.numpy.zeros_like(output)
    return np.zeros(output.shape, jax.dtypes.float0)
