"""Tools for library authors: gradient checks, cross-carrier agreement, comparison with torch and JAX.

``gradcheck`` compares the analytic vector-Jacobian product StrideWeave's
autograd computes against float64 central differences, on every requested
carrier.  ``assert_carriers_agree`` runs one program with identical inputs on
every carrier and compares outputs and gradients against the numpy carrier.
``compare_with_native`` (``strideweave.testing.compare``) runs one Array API
function through StrideWeave on every carrier and through torch.autograd and
``jax.vjp`` in float64, and tabulates the worst error of each pairing.
``strideweave.testing.plugin`` is a pytest plugin (``-p
strideweave.testing.plugin``) with ``xp`` and ``check_grad`` fixtures
parametrised over the installed carriers (``docs/library-authors.md``).

Native arrays among the inputs (NumPy, torch, JAX) are wrapped as Tensors
first (:func:`as_input`), so ``fn`` always receives Tensors.

Finite differences perturb each *storage slot* an input's layout addresses
(its real degrees of freedom) and report the derivative at every logical
position as the value of its slot, which is exactly what the spec puts in
``.grad`` (for a broadcast-aliased input, the per-slot sum replicated at each
position).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..autograd.cotangents import gradient_layout
from ..autograd.functional import grad as _grad
from ..dtypes import DType, SimpleDType
from ..layout import Layout, Shape
from ..operation import no_grad
from ..ops import astype as _astype
from ..tensors.creation import from_storage
from ..tensors.creation import tensor as _tensor
from ..tensors.tensor import Tensor
from ._carriers import _carrier_label, _carrier_list, available_carriers
from .compare import NativeComparison, compare_with_native

__all__ = [
    "AgreementReport",
    "Discrepancy",
    "GradcheckReport",
    "NativeComparison",
    "analytic_gradients",
    "as_input",
    "assert_carriers_agree",
    "available_carriers",
    "compare_with_native",
    "gradcheck",
    "numerical_gradients",
    "on_carrier",
]

def _require_tensor(t: Any, what: str) -> Tensor:
    if not isinstance(t, Tensor):
        raise TypeError(f"{what} must be a strideweave Tensor, got {type(t).__name__}: {t!r}")
    if len(t.carriers) != 1:
        raise ValueError(f"{what} must be stored in one carrier, this one has {len(t.carriers)}")
    return t


def _host_buffer(t: Tensor) -> np.ndarray:
    """A fresh NumPy copy of ``t``'s whole carrier buffer."""
    carrier = t.carrier
    return np.array(type(carrier).to_numpy(carrier.array), copy=True).reshape(-1)


def on_carrier(t: Tensor, carrier: Any) -> Tensor:
    """``t``'s storage values (the whole buffer, copied), layout and offset on another carrier.

    ``carrier`` is anything ``carrier=`` accepts (name, Carrier class, module).
    The result is a fresh leaf with no gradient and no autograd history.
    """
    _require_tensor(t, "on_carrier: t")
    buffer = _host_buffer(t)  # ValueError for a Tensor stored in several carriers
    dtype = t.dtype
    if not isinstance(dtype, SimpleDType):  # one carrier, so never compound; kept for the type checker
        raise TypeError(f"on_carrier: t has dtype {dtype!r}; expected a simple dtype")
    return from_storage(buffer, t.layout, dtype, offset=t.offset, carrier=carrier)


# ----- layout helpers ---------------------------------------------------------------------------


def _slot_map(layout: Layout, offset: int) -> np.ndarray:
    """Storage slot of every logical position, shaped like ``Tensor.numpy()`` (one axis per top-level mode)."""
    per_mode = []
    for k in range(layout.rank):
        sub = layout[k]
        per_mode.append(np.array([sub(j) for j in range(sub.size)], dtype=np.int64))
    slots = np.zeros((), dtype=np.int64) + int(offset)
    for k, offsets in enumerate(per_mode):
        slots = np.add.outer(slots, offsets) if k else slots + offsets
    return np.asarray(slots, dtype=np.int64).reshape(tuple(len(o) for o in per_mode))


def _values_tensor(values: np.ndarray, like: Tensor) -> Tensor:
    """A Float32 Tensor holding ``values`` in ``like``'s layout (canonical when ``like`` aliases), on its carrier."""
    layout = gradient_layout(like)
    slots = _slot_map(layout, 0)
    buffer = np.zeros(max(layout.cosize, 1), dtype=np.float32)
    buffer[slots.reshape(-1)] = np.asarray(values, dtype=np.float64).reshape(-1)
    return from_storage(buffer, layout, DType.Float32, carrier=like.carrier)


def _cotangent_values(cotangent: Any, out: Tensor) -> np.ndarray:
    """The cotangent as float64 values shaped like ``out.numpy()`` (ones for a scalar output)."""
    shape = tuple(out.layout.mode_sizes)
    if cotangent is None:
        if out.layout.shape not in (Shape(1), Shape(())):
            raise ValueError(f"cotangent=None needs a scalar output (layout shape (1,) or ()), got shape "
                             f"{out.layout.shape}; "
                             f"pass a cotangent")
        return np.ones(shape, dtype=np.float64)
    values = cotangent.numpy() if isinstance(cotangent, Tensor) else np.asarray(cotangent)
    values = np.asarray(values, dtype=np.float64)
    if values.size != int(np.prod(shape)):
        raise ValueError(f"cotangent of shape {values.shape} does not match the output shape {shape} "
                         f"(layout {out.layout})")
    return values.reshape(shape)


def _is_float_tensor(x: Any) -> bool:
    return isinstance(x, Tensor) and x.dtype == DType.Float32


def _is_native_array(x: Any) -> bool:
    """A NumPy array, or an array of a library whose namespace array-api-compat knows (torch, JAX, ...)."""
    # torch tensors have no __array_namespace__, but like every such array they export DLPack.
    return isinstance(x, np.ndarray) or (not isinstance(x, Tensor) and (
        hasattr(x, "__array_namespace__") or hasattr(x, "__dlpack__")))


def as_input(x: Any) -> Any:
    """``x`` as ``fn`` receives it in the checks here: a native array becomes a Tensor, anything else is kept.

    The Tensor stays on the array's own carrier class (``sw.tensor``); a
    floating array of another precision (a float64 NumPy array, say) is
    cast to Float32, the one differentiable dtype, so that it is checked
    rather than silently treated as a constant. Integer and boolean arrays
    keep their dtype and are passed as constants.
    """
    if not _is_native_array(x):
        return x
    with no_grad():
        t = _tensor(x)
        if isinstance(t.dtype, SimpleDType) and t.dtype.kind == "float" and t.dtype != DType.Float32:
            t = _astype(t, DType.Float32)
    return t


def _check_inputs(inputs: Any, where: str) -> list:
    if isinstance(inputs, Tensor) or not isinstance(inputs, (list, tuple)):
        raise TypeError(f"{where}: inputs must be a list or tuple of positional arguments, got "
                        f"{type(inputs).__name__}: {inputs!r}")
    return [as_input(x) for x in inputs]


def _check_output(out: Any, where: str) -> Tensor:
    if not isinstance(out, Tensor):
        raise TypeError(f"{where}: fn must return a Tensor, got {type(out).__name__}: {out!r}")
    return out


# ----- numeric and analytic gradients ---------------------------------------------------------------


def numerical_gradients(fn: Callable, inputs: Sequence[Any], cotangent: Any = None, *,
                        eps: float = 1e-4) -> list[np.ndarray | None]:
    """Float64 central differences of ``sum(cotangent * fn(*inputs))`` w.r.t. each input.

    ``fn`` runs on Float64 copies of the Float32 inputs on the numpy carrier
    (same layout and offset).  Each storage slot an input addresses is
    perturbed by ``eps``; the result, per input, is a NumPy array shaped like
    ``input.numpy()`` holding at each logical position the derivative w.r.t.
    its slot.  Non-differentiable (not Float32) or non-Tensor inputs give
    ``None`` and are passed through unchanged (Tensors copied to numpy).
    """
    inputs = _check_inputs(inputs, "numerical_gradients")
    if not (isinstance(eps, (int, float)) and not isinstance(eps, bool) and eps > 0):
        raise ValueError(f"numerical_gradients: eps must be a positive number, got {eps!r}")
    buffers: list[np.ndarray | None] = []
    args: list[Any] = []
    for x in inputs:
        if _is_float_tensor(x):
            _require_tensor(x, "numerical_gradients input")
            buffers.append(_host_buffer(x).astype(np.float64))
            args.append(None)
        else:
            buffers.append(None)
            args.append(on_carrier(x, "numpy") if isinstance(x, Tensor) else x)

    def evaluate() -> tuple[Tensor, np.ndarray]:
        call = [from_storage(buf, x.layout, DType.Float64, offset=x.offset, carrier="numpy")
                if buf is not None else a for x, buf, a in zip(inputs, buffers, args)]
        with no_grad():
            out = _check_output(fn(*call), "numerical_gradients")
        return out, np.asarray(out.numpy(), dtype=np.float64)

    out, _ = evaluate()
    weights = _cotangent_values(cotangent, out)

    results: list[np.ndarray | None] = []
    for x, buf in zip(inputs, buffers):
        if buf is None:
            results.append(None)
            continue
        slots = _slot_map(x.layout, x.offset)
        per_slot = {}
        for slot in np.unique(slots):
            saved = buf[slot]
            buf[slot] = saved + eps
            plus = float(np.sum(weights * evaluate()[1]))
            buf[slot] = saved - eps
            minus = float(np.sum(weights * evaluate()[1]))
            buf[slot] = saved
            per_slot[int(slot)] = (plus - minus) / (2 * eps)
        results.append(np.vectorize(lambda s, per_slot=per_slot: per_slot[int(s)], otypes=[np.float64])(slots)
                       if slots.size else np.zeros(slots.shape))
    return results


def _run(fn: Callable, inputs: Sequence[Any], cotangent: Any, carrier: Any):
    """Run ``fn`` (inputs moved to ``carrier`` when given) and ``sw.grad``; returns (moved, out, grads)."""
    moved = [on_carrier(x, carrier) if carrier is not None and isinstance(x, Tensor) else x for x in inputs]
    out = _check_output(fn(*moved), "analytic_gradients")
    wanted = [i for i, x in enumerate(moved) if isinstance(x, Tensor) and x.is_differentiable()]
    grads: list[Tensor | None] = [None] * len(moved)
    if wanted and out.is_differentiable():
        cot = _values_tensor(_cotangent_values(cotangent, out), out)
        got = _grad(out, [moved[i] for i in wanted], cot)
        for i, g in zip(wanted, got):
            grads[i] = g
    return moved, out, grads


def analytic_gradients(fn: Callable, inputs: Sequence[Any], cotangent: Any = None, *,
                       carrier: Any = None) -> list[np.ndarray | None]:
    """StrideWeave's VJP of ``fn`` at ``inputs`` via ``sw.grad``, as NumPy arrays.

    With ``carrier``, Tensor inputs (and the cotangent) are first copied there
    with :func:`on_carrier`.  ``None`` marks an input the output does not
    reach, or one that is not differentiable.
    """
    inputs = _check_inputs(inputs, "analytic_gradients")
    _, _, grads = _run(fn, inputs, cotangent, carrier)
    return [None if g is None else np.asarray(g.numpy(), dtype=np.float64) for g in grads]


# ----- reports ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Discrepancy:
    """One compared element: where it is and the two values."""

    carrier: str
    input_index: int  # -1 for the output (assert_carriers_agree)
    coordinate: tuple
    actual: float
    expected: float

    @property
    def abs_error(self) -> float:
        return abs(self.actual - self.expected)

    @property
    def rel_error(self) -> float:
        diff = self.abs_error
        return 0.0 if diff == 0 else diff / abs(self.expected) if self.expected else float("inf")

    def describe(self, actual: str = "analytic", expected: str = "numeric") -> str:
        what = "the output" if self.input_index < 0 else f"input {self.input_index}"
        return (f"carrier {self.carrier!r}, {what}, element {self.coordinate}: {actual} {self.actual:.8g} vs "
                f"{expected} {self.expected:.8g} (abs error {self.abs_error:.3g}, rel error {self.rel_error:.3g})")


@dataclass
class GradcheckReport:
    """Per carrier: the worst absolute and relative error, and the worst element."""

    max_abs_error: dict = field(default_factory=dict)
    max_rel_error: dict = field(default_factory=dict)
    worst: dict = field(default_factory=dict)
    numeric: list = field(default_factory=list)


@dataclass
class AgreementReport:
    """Per carrier, against the numpy carrier: the worst absolute and relative error, and the worst element."""

    reference: str = "numpy"
    max_abs_error: dict = field(default_factory=dict)
    max_rel_error: dict = field(default_factory=dict)
    worst: dict = field(default_factory=dict)


def _compare(label: str, index: int, actual: np.ndarray, expected: np.ndarray, atol: float, rtol: float):
    """(worst Discrepancy, max abs, max rel, worst failing Discrepancy or None) for one array pair."""
    actual = np.asarray(actual, dtype=np.float64)
    expected = np.asarray(expected, dtype=np.float64)
    if actual.shape != expected.shape:
        raise AssertionError(f"carrier {label!r}, input {index}: gradient shape {actual.shape} differs from "
                             f"the expected shape {expected.shape}")
    if actual.size == 0:
        return None, 0.0, 0.0, None
    diff = np.abs(actual - expected)
    diff = np.where(np.isnan(diff), np.inf, diff)
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = np.where(diff == 0, 0.0, diff / np.abs(expected))
    excess = diff - (atol + rtol * np.abs(expected))
    worst_at = np.unravel_index(int(np.argmax(excess)), actual.shape)
    worst = Discrepancy(label, index, tuple(int(i) for i in worst_at), float(actual[worst_at]),
                        float(expected[worst_at]))
    failing = worst if excess[worst_at] > 0 else None
    return worst, float(diff.max()), float(rel.max()), failing


def _record_worst(report: Any, label: str, pairs: list, atol: float, rtol: float):
    """Compare ``(index, actual, expected)`` pairs, record the worst errors in ``report``; return the first failure."""
    worst, max_abs, max_rel, failing = None, 0.0, 0.0, None
    for index, actual, expected in pairs:
        w, a, r, f = _compare(label, index, actual, expected, atol, rtol)
        max_abs, max_rel = max(max_abs, a), max(max_rel, r)
        if w is not None and (worst is None or w.abs_error > worst.abs_error):
            worst = w
        if f is not None and failing is None:
            failing = f
    report.max_abs_error[label] = max_abs
    report.max_rel_error[label] = max_rel
    report.worst[label] = worst
    return failing


def _check_grad_carrier(label: str, moved: list, grads: list) -> None:
    for i, (x, g) in enumerate(zip(moved, grads)):
        if g is not None and type(g.carrier) is not type(x.carrier):
            raise AssertionError(f"carrier {label!r}, input {i}: gradient is on {type(g.carrier).__name__}, "
                                 f"expected the input's carrier class {type(x.carrier).__name__}")


# ----- gradcheck and agreement ----------------------------------------------------------------------


def gradcheck(fn: Callable, inputs: Sequence[Any], cotangent: Any = None, *, carriers: Any = None,
              atol: float = 1e-5, rtol: float = 1e-4, eps: float = 1e-4) -> GradcheckReport:
    """Check ``fn``'s analytic VJP against float64 central differences on every requested carrier.

    ``carriers=None`` means every available carrier.  Raises AssertionError
    naming the carrier, input index, element coordinate and both values of the
    worst element outside ``atol + rtol * |numeric|``.  The defaults hold every
    correct Float32 gradient of the conformance catalogue with a margin of
    about 6 (worst error 0.15 of the tolerance) and fail a gradient that is
    0.1% off wherever its magnitude exceeds 0.011; ``eps=1e-4`` keeps the
    differences' own truncation error (``eps**2`` times the third derivative)
    well below ``rtol``.
    """
    inputs = _check_inputs(inputs, "gradcheck")
    numeric = numerical_gradients(fn, inputs, cotangent, eps=eps)
    report = GradcheckReport(numeric=numeric)
    for spec in _carrier_list(carriers):
        label = _carrier_label(spec)
        moved, _, grads = _run(fn, inputs, cotangent, spec)
        _check_grad_carrier(label, moved, grads)
        pairs = [(i, np.zeros(num.shape) if g is None else g.numpy(), num)
                 for i, (num, g) in enumerate(zip(numeric, grads)) if num is not None]
        failing = _record_worst(report, label, pairs, atol, rtol)
        if failing is not None:
            raise AssertionError(f"gradcheck failed: {failing.describe()} (atol={atol}, rtol={rtol})")
    return report


def assert_carriers_agree(fn: Callable, inputs: Sequence[Any], cotangent: Any = None, *, carriers: Any = None,
                          atol: float = 1e-5, rtol: float = 1e-4) -> AgreementReport:
    """Run ``fn`` with identical inputs on every requested carrier; outputs and gradients must match numpy's.

    Raises AssertionError naming the carrier, the output or input index, the
    element and both values of the worst disagreement.
    """
    inputs = _check_inputs(inputs, "assert_carriers_agree")
    _ref_moved, ref_out, ref_grads = _run(fn, inputs, cotangent, "numpy")
    ref_out_values = np.asarray(ref_out.numpy())
    report = AgreementReport()
    for spec in _carrier_list(carriers):
        label = _carrier_label(spec)
        moved, out, grads = _run(fn, inputs, cotangent, spec)
        _check_grad_carrier(label, moved, grads)
        if out.dtype != ref_out.dtype or out.layout.shape != ref_out.layout.shape:
            raise AssertionError(f"carrier {label!r}: output is {out.dtype!r} of shape {out.layout.shape}, numpy gives "
                                 f"{ref_out.dtype!r} of shape {ref_out.layout.shape}")
        pairs = [(-1, np.asarray(out.numpy()), ref_out_values)]
        for i, (g, rg) in enumerate(zip(grads, ref_grads)):
            if (g is None) != (rg is None):
                raise AssertionError(f"carrier {label!r}, input {i}: gradient is "
                                     f"{'None' if g is None else 'present'} but numpy's is "
                                     f"{'None' if rg is None else 'present'}")
            if g is not None:
                pairs.append((i, g.numpy(), rg.numpy()))
        failing = _record_worst(report, label, pairs, atol, rtol)
        if failing is not None:
            raise AssertionError(f"carriers disagree: {failing.describe(label, 'numpy')} (atol={atol}, rtol={rtol})")
    return report
