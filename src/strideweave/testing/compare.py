"""``compare_with_native``: one Array API function through StrideWeave and through torch and JAX autodiff.

The function under test is written the way Array API libraries are written:
it takes arrays and finds their namespace itself
(``array_api_compat.array_namespace(x)``, as SciPy and array-api-extra do),
so the very same code runs on StrideWeave Tensors (namespace
``strideweave.array_api``), on torch tensors (``array_api_compat.torch``)
and on JAX arrays (``jax.numpy``). StrideWeave runs it in Float32, its one
differentiable dtype, on every requested carrier; each reference runs it in
float64 on its own arrays and differentiates it with its own autodiff
(``torch.autograd.grad``, ``jax.vjp``). Outputs and vector-Jacobian
products are compared element by element.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .. import array_api as xp
from ..carriers import resolve
from ..tensors.tensor import Tensor
from ._carriers import _carrier_label, _carrier_list

__all__ = ["REFERENCES", "NativeComparison", "compare_with_native"]

#: the autodiff systems ``compare_with_native`` knows, and the package each one needs
REFERENCES = {"torch": "torch", "jax": "jax"}


@dataclass
class NativeComparison:
    """The worst error of every (carrier, reference) pairing over the outputs and every gradient.

    ``errors[(carrier, reference)]`` is the worst absolute difference,
    ``ratios`` the worst ``|got - want| / (atol + rtol * |want|)`` (above 1
    fails), ``worst`` says where it is, ``problems`` holds what could not be
    compared (a raised exception, a shape or dtype that differs).
    ``refused[reference]`` is the exception of a reference that refused the
    code under test (torch's in-place rule, JAX's immutable arrays): that
    column is left out of the comparison, not failed. ``str(report)`` is the
    table.
    """

    carriers: list = field(default_factory=list)
    references: list = field(default_factory=list)
    atol: float = 0.0
    rtol: float = 0.0
    errors: dict = field(default_factory=dict)
    ratios: dict = field(default_factory=dict)
    worst: dict = field(default_factory=dict)
    problems: dict = field(default_factory=dict)
    refused: dict = field(default_factory=dict)

    def failed(self) -> list:
        """The (carrier, reference) pairs outside tolerance or not comparable, in table order."""
        return [(c, r) for c in self.carriers for r in self.references
                if (c, r) in self.problems or self.ratios.get((c, r), 0.0) > 1.0]

    @property
    def compared(self) -> list:
        """The references that ran the code under test (those StrideWeave was compared with)."""
        return [r for r in self.references if r not in self.refused]

    @property
    def passed(self) -> bool:
        """Every reference that ran agrees on every carrier, and at least one ran."""
        return bool(self.compared) and not self.failed()

    def cell(self, carrier: str, reference: str) -> str:
        """One table cell: the worst absolute error, ``FAIL`` beyond tolerance, ``ERROR`` when not comparable,
        ``refused`` when the reference refused the code under test."""
        key = (carrier, reference)
        if reference in self.refused:
            return "refused"
        if key in self.problems:
            return "ERROR"
        text = f"{self.errors[key]:.1e}"
        return text + " FAIL" if self.ratios[key] > 1.0 else text

    def table(self) -> str:
        """The report as plain text: a carrier x reference table of worst errors, then each failure."""
        width = max([len("carrier")] + [len(c) for c in self.carriers]) + 2
        cells = {(c, r): self.cell(c, r) for c in self.carriers for r in self.references}
        col = max([13] + [len(r) + 2 for r in self.references] + [len(v) + 2 for v in cells.values()])
        lines = [(f"worst |StrideWeave (Float32) - reference (float64)| over the outputs and gradients "
                  f"(FAIL beyond {self.atol:g} + {self.rtol:g} * |reference|)"),
                 "carrier".ljust(width) + "".join(f"{r:>{col}s}" for r in self.references)]
        for c in self.carriers:
            lines.append(c.ljust(width) + "".join(f"{cells[c, r]:>{col}s}" for r in self.references))
        for c, r in self.failed():
            lines.append(f"  {c} vs {r}: {self.problems.get((c, r)) or self.worst[c, r]}")
        for r, why in self.refused.items():
            lines.append(f"  {r} refused the code under test, so StrideWeave was not compared with it: {why}")
        return "\n".join(lines)

    __str__ = table


# ----- inputs, outputs and cotangents ---------------------------------------------------------------


class _CotangentError(ValueError):
    """A ``cotangent=`` that does not fit the outputs: the caller's mistake, raised as is."""


def _host(x: Any) -> np.ndarray | None:
    """``x``'s values as a NumPy array when ``x`` is an array (NumPy, Tensor, torch, JAX), else None."""
    if isinstance(x, Tensor):
        return np.asarray(x.numpy())
    if isinstance(x, np.ndarray):
        return x
    if hasattr(x, "__array_namespace__") or hasattr(x, "__dlpack__"):  # torch has only the latter
        return np.asarray(x)
    return None


def _differentiable(host: np.ndarray | None) -> bool:
    return host is not None and np.issubdtype(host.dtype, np.floating)


def _outputs(result: Any, where: str) -> list:
    items = list(result) if isinstance(result, (tuple, list)) else [result]
    for i, item in enumerate(items):
        if _host_shape(item) is None:
            raise TypeError(f"compare_with_native: fn must return an array or a tuple of arrays; on {where} "
                            f"output {i} is {type(item).__name__}: {item!r}")
    return items


def _host_shape(x: Any) -> tuple | None:
    shape = getattr(x, "shape", None)
    return None if shape is None else tuple(int(n) for n in shape)


def _default_cotangent(shape: tuple, index: int) -> np.ndarray:
    # Random, not ones: a VJP against ones hides errors that sum to zero (softmax's does).
    values = np.random.default_rng(7919 + index).standard_normal(shape)
    return np.asarray(values, dtype=np.float32).astype(np.float64)


def _cotangents(given: Any, shapes: list) -> list:
    if given is None:
        return [_default_cotangent(s, i) for i, s in enumerate(shapes)]
    given = list(given) if isinstance(given, (tuple, list)) else [given]
    if len(given) != len(shapes):
        raise _CotangentError(f"compare_with_native: {len(given)} cotangents for {len(shapes)} outputs")
    out = []
    for i, (c, s) in enumerate(zip(given, shapes)):
        c = np.asarray(_host(c) if _host(c) is not None else c, dtype=np.float64)
        if c.shape != s:
            raise _CotangentError(f"compare_with_native: cotangent {i} has shape {c.shape}, output {i} has shape {s}")
        out.append(c)
    return out


# ----- the three runs ---------------------------------------------------------------------------------


def _run_strideweave(fn, hosts, args, cotangent, carrier):
    # The resolved kind, not the spec: ``device=`` names only the eager carriers, a kind every one (dask too).
    carrier = resolve(carrier)
    call, leaves = [], []
    for host, arg in zip(hosts, args):
        if host is None:
            call.append(arg)
        elif _differentiable(host):
            leaf = xp.asarray(host.astype(np.float32), device=carrier)
            leaves.append(leaf)
            call.append(leaf)
        else:
            call.append(xp.asarray(host, device=carrier))
    outs = _outputs(fn(*call), f"carrier {carrier!r}")
    for i, out in enumerate(outs):
        if not isinstance(out, Tensor):
            raise TypeError(f"output {i} is a {type(out).__name__}, not a StrideWeave Tensor (fn left the "
                            f"graph: did it convert its input with np.asarray?)")
        if leaves and not out.is_differentiable():
            raise TypeError(f"output {i} is {out.dtype!r}: only Float32 is differentiable, so StrideWeave "
                            f"gives no gradient (does fn compute in float64?)")
    values = [np.asarray(o.numpy(), dtype=np.float64) for o in outs]
    cots = _cotangents(cotangent, [v.shape for v in values])
    total = None
    for out, cot in zip(outs, cots):
        term = xp.sum(out * xp.asarray(cot.astype(np.float32), device=carrier))
        total = term if total is None else total + term
    if leaves:
        if total is None:
            raise TypeError("compare_with_native: fn returned no outputs; expected an array or a tuple of arrays")
        total.backward()
    grads = [np.zeros(leaf.shape) if leaf.grad is None else np.asarray(leaf.grad.numpy(), dtype=np.float64)
             for leaf in leaves]
    return values, grads


def _run_torch(fn, hosts, args, cotangent):
    import torch

    call, leaves = [], []
    for host, arg in zip(hosts, args):
        if host is None:
            call.append(arg)
        elif _differentiable(host):
            leaf = torch.tensor(host, dtype=torch.float64, requires_grad=True)
            leaves.append(leaf)
            call.append(leaf)
        else:
            call.append(torch.tensor(host))
    outs = _outputs(fn(*call), "torch")
    values = [o.detach().cpu().to(torch.float64).numpy() for o in outs]
    cots = _cotangents(cotangent, [v.shape for v in values])
    tracked = [(o, torch.from_numpy(c).to(o.dtype)) for o, c in zip(outs, cots) if o.requires_grad]
    grads: Sequence[Any] = [None] * len(leaves)
    if tracked and leaves:
        grads = torch.autograd.grad([o for o, _ in tracked], leaves, [c for _, c in tracked], allow_unused=True)
    return values, [np.zeros(leaf.shape) if g is None else g.detach().cpu().numpy() for leaf, g in zip(leaves, grads)]


def _run_jax(fn, hosts, args, cotangent):
    import jax
    import jax.numpy as jnp

    with jax.enable_x64(True):
        positions = [i for i, host in enumerate(hosts) if _differentiable(host)]
        fixed = [arg if host is None else jnp.asarray(host) for host, arg in zip(hosts, args)]

        def program(*values):
            call = list(fixed)
            for i, v in zip(positions, values):
                call[i] = v
            return tuple(_outputs(fn(*call), "jax"))

        primals = [jnp.asarray(hosts[i], dtype=jnp.float64) for i in positions]
        outs, pullback = jax.vjp(program, *primals)
        values = [np.asarray(o, dtype=np.float64) for o in outs]
        cots = _cotangents(cotangent, [v.shape for v in values])
        grads = pullback(tuple(jnp.asarray(c, dtype=o.dtype) for o, c in zip(outs, cots)))
        return values, [np.asarray(g, dtype=np.float64) for g in grads]


_RUNNERS = {"torch": _run_torch, "jax": _run_jax}


# ----- comparing --------------------------------------------------------------------------------------


def _difference(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """|got - want|, zero where both are the same NaN or the same infinity (torch and JAX give those too)."""
    with np.errstate(invalid="ignore"):
        diff = np.abs(got - want)
    same = (np.isnan(got) & np.isnan(want)) | (got == want)
    return np.where(same, 0.0, np.where(np.isnan(diff), np.inf, diff))


def _judge(report: NativeComparison, key: tuple, got: tuple, want: tuple) -> None:
    """Record the worst error of one pairing, or the problem that prevents comparing it."""
    pairs = [(f"output {i}", g, w) for i, (g, w) in enumerate(zip(got[0], want[0]))]
    pairs += [(f"gradient of input {i}", g, w) for i, (g, w) in enumerate(zip(got[1], want[1]))]
    if len(got[0]) != len(want[0]):
        report.problems[key] = f"{len(got[0])} outputs, the reference gives {len(want[0])}"
        return
    worst_abs, worst_ratio, where = 0.0, 0.0, "everything equal"
    for what, g, w in pairs:
        g, w = np.asarray(g, dtype=np.float64), np.asarray(w, dtype=np.float64)
        if g.shape != w.shape:
            report.problems[key] = f"{what} has shape {g.shape}, the reference's has shape {w.shape}"
            return
        if g.size == 0:
            continue
        diff = _difference(g, w)
        with np.errstate(invalid="ignore"):
            ratio = diff / (report.atol + report.rtol * np.abs(np.where(np.isfinite(w), w, 0.0)))
        at = np.unravel_index(int(np.argmax(ratio)), ratio.shape)
        worst_abs = max(worst_abs, float(diff.max()))
        if float(ratio[at]) > worst_ratio or where == "everything equal":
            worst_ratio = float(ratio[at])
            where = f"{what}, element {tuple(int(i) for i in at)}: {g[at]:.8g} vs {w[at]:.8g}"
    report.errors[key], report.ratios[key], report.worst[key] = worst_abs, worst_ratio, where


def _describe(error: Exception) -> str:
    return f"raised {type(error).__name__}: {error}"


def compare_with_native(fn: Callable, inputs: Sequence[Any], *, carriers: Any = None,
                        references: Sequence[str] = ("torch", "jax"), cotangent: Any = None,
                        atol: float = 1e-5, rtol: float = 1e-4) -> NativeComparison:
    """Run ``fn`` through StrideWeave on every carrier and through torch.autograd and ``jax.vjp`` in float64.

    ``fn`` takes arrays positionally and finds their namespace itself
    (``array_api_compat.array_namespace``), as library code does; it returns
    an array or a tuple of arrays. ``inputs`` are arrays (NumPy, Tensors,
    torch, JAX; floating ones are differentiated, integer and boolean ones
    are constants) or other values passed through unchanged. The
    vector-Jacobian product uses ``cotangent`` (one array per output) or a
    fixed random one. Returns a :class:`NativeComparison`, whose ``str`` is
    the carrier x reference table of worst errors; raises ``AssertionError``
    with that table when an element is beyond ``atol + rtol * |reference|``
    or a run cannot be compared (an exception, a shape that differs). A
    reference that raises (torch refuses an in-place write into a leaf that
    requires grad, JAX any write) is reported as refused and left out: the
    comparison is with the references that ran, and ``AssertionError`` says
    so when none did.
    """
    if isinstance(inputs, (Tensor, np.ndarray)) or not isinstance(inputs, (list, tuple)):
        raise TypeError(f"compare_with_native: inputs must be a list or tuple of positional arguments, got "
                        f"{type(inputs).__name__}")
    if isinstance(references, str):
        references = (references,)
    unknown = [r for r in references if r not in REFERENCES]
    if unknown or not references:
        raise ValueError(f"compare_with_native: references must name some of {tuple(REFERENCES)}, got "
                         f"{tuple(references)!r}")
    for name in references:
        try:
            __import__(REFERENCES[name])
        except ImportError as error:
            raise ImportError(f"compare_with_native: reference {name!r} needs the {REFERENCES[name]!r} package, "
                              f"which is not installed; install it or pass references="
                              f"{tuple(r for r in references if r != name)!r}") from error
    hosts = [_host(x) for x in inputs]
    specs = _carrier_list(carriers)
    report = NativeComparison(carriers=[_carrier_label(c) for c in specs], references=list(references),
                              atol=atol, rtol=rtol)
    wanted = {}
    for name in references:
        try:
            wanted[name] = _RUNNERS[name](fn, hosts, inputs, cotangent)
        except _CotangentError:
            raise
        except Exception as error:  # a reference that refuses fn is left out of the comparison, and said so
            report.refused[name] = _describe(error)
    if not wanted:
        raise AssertionError("compare_with_native: no reference ran the code under test, so nothing was "
                             "compared; " + "; ".join(f"{r} {why}" for r, why in report.refused.items()))
    for spec, label in zip(specs, report.carriers):
        try:
            got = _run_strideweave(fn, hosts, inputs, cotangent, spec)
        except _CotangentError:
            raise
        except Exception as error:
            got = error
        for name in wanted:
            key = (label, name)
            if isinstance(got, Exception):
                report.problems[key] = "StrideWeave " + _describe(got)
            else:
                _judge(report, key, got, wanted[name])
    if not report.passed:
        raise AssertionError("compare_with_native: StrideWeave differs from the native reference\n" + report.table())
    return report
