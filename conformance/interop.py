"""The interop section: each case's gradients through the native-autograd bridges.

For every selected case, on its canonical inputs, the StrideWeave function
is called from torch (``sw.interop.torch_function``, differentiated by
``torch.autograd.grad``) and from JAX under ``jax.jit``
(``sw.interop.jax_function``, through ``jax.vjp``; staged: StrideWeave is
traced into the jitted program on JAX carriers), and the gradients must
equal the case's native StrideWeave gradients (``sw.grad``) on torch for
the torch bridge and on NumPy for the JAX one, within the case's agreement
tolerances. The eager JAX path is the same code on concrete JAX arrays;
``tests/interop`` covers it.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

import strideweave as sw
from strideweave.carriers import transfer
from strideweave.interop._common import cotangent_from_native

from .catalogue import Case
from .inputs import prepare_inputs
from .runner import Check, _attempt, _cotangents, _emit

__all__ = ["BRIDGES", "markdown", "run_interop"]

#: carrier -> (the bridge check run for it, the carrier its native StrideWeave reference runs on)
BRIDGES = {"torch": ("torch_function", "torch"), "jax": ("jax_function+jit", "numpy")}
LAYOUT = "canonical"


def _stacked(rows: list, shapes: list) -> list[np.ndarray]:
    """Per input: the gradients for every cotangent stacked (zeros where an input was not reached)."""
    return [np.stack([np.zeros(s) if r[i] is None else np.asarray(r[i], np.float64) for r in rows])
            for i, s in enumerate(shapes)]


def _native(case: Case, tensors: list, cots: list[np.ndarray]) -> list[np.ndarray]:
    """The case's own StrideWeave gradients on the tensors' carrier."""
    rows = []
    for cot in cots:
        out = case.fn(*tensors)
        ct = cotangent_from_native(out, transfer(cot, out.carrier.kind), "cotangent")
        rows.append([None if g is None else g.numpy() for g in sw.grad(out, tensors, ct)])
    return _stacked(rows, [t.to_array().shape for t in tensors])


def _through_torch(case: Case, arrays: list, cots: list[np.ndarray]) -> list[np.ndarray]:
    import torch

    leaves = [a.detach().clone().requires_grad_() for a in arrays]
    out = sw.interop.torch_function(case.fn)(*leaves)
    rows = []
    for k, cot in enumerate(cots):
        grads = torch.autograd.grad(out, leaves, torch.from_numpy(cot), retain_graph=k + 1 < len(cots),
                                    allow_unused=True)
        rows.append([None if g is None else g.numpy() for g in grads])
    return _stacked(rows, [a.shape for a in arrays])


def _through_jax(case: Case, arrays: list, cots: list[np.ndarray]) -> list[np.ndarray]:
    import jax

    f = sw.interop.jax_function(case.fn)

    @jax.jit
    def pullback(cot, *args):
        return jax.vjp(f, *args)[1](cot)

    rows = [[np.asarray(g) for g in pullback(jax.numpy.asarray(cot), *arrays)] for cot in cots]
    return _stacked(rows, [a.shape for a in arrays])


def run_interop(cases: Sequence[Case], carriers: Sequence[str]) -> list[Check]:
    """The bridge checks for ``cases`` on whichever of torch and jax are among ``carriers``."""
    checks = []
    for case in cases:
        prepared = prepare_inputs(case.inputs, LAYOUT, case.seed)
        for carrier in (c for c in BRIDGES if c in carriers):
            name, home = BRIDGES[carrier]
            skip = _skip_reason(case, prepared, carrier)
            if skip:
                checks.append(Check(case.name, case.family, LAYOUT, carrier, name, "skip", message=skip))
                continue
            tensors = [p.tensor(home) for p in prepared]
            try:
                out_shape = tuple(case.fn(*tensors).to_array().shape)
                cots = _cotangents(case, out_shape)
                want = _native(case, tensors, cots)
            except Exception as exc:  # reported, never hidden
                checks.append(Check(case.name, case.family, LAYOUT, carrier, name, "error",
                                    message=f"native StrideWeave gradient raised {type(exc).__name__}: {exc}"))
                continue
            arrays = [p.tensor(carrier).to_array() for p in prepared]
            bridge = _through_torch if carrier == "torch" else _through_jax
            got = _attempt(bridge, case, arrays, cots)
            checks.append(_emit(case, LAYOUT, carrier, name, (got, want), rtol=case.tol.agree_rtol,
                                atol=case.tol.agree_atol, out_shape=out_shape))
    return checks


def _skip_reason(case: Case, prepared, carrier: str) -> str:
    """Why a case cannot cross a bridge as it is ('' when it can)."""
    if carrier == "jax" and tuple(case.variants or ()) == ("canonical",):
        return ("skipped: fn reinterprets storage, and JAX arrays carry no strides (jax_function hands fn "
                "row-major storage)")
    return ""


def markdown(checks: Sequence[Check]) -> list[str]:
    """The report's interop section: one row per case, one column per bridge check."""
    mine = [c for c in checks if c.check in {name for name, _ in BRIDGES.values()}]
    if not mine:
        return []
    columns = [(carrier, name) for carrier, (name, _) in BRIDGES.items()
               if any(c.carrier == carrier and c.check == name for c in mine)]
    cells = {(c.case, c.carrier, c.check): c for c in mine}
    failing = sum(c.status in ("fail", "error") for c in mine)
    lines = ["", "## Interop: gradients through the native-autograd bridges", "",
             ("Each case's StrideWeave function called from torch (`sw.interop.torch_function`, "
              "`torch.autograd.grad`) and from JAX (`sw.interop.jax_function` under `jax.jit`, `jax.vjp`) on its "
              "canonical inputs; the gradients are compared with the same function's native StrideWeave "
              "gradients (`sw.grad`) on torch for the torch bridge and on numpy for the JAX one (staged "
              "under `jax.jit`). Cell: worst relative error, as above. "
              f"{len(mine)} checks, {failing} failing."), "",
             "| case | " + " | ".join(f"{c} / {n}" for c, n in columns) + " |",
             "|---|" + "---|" * len(columns)]
    for case in dict.fromkeys(c.case for c in mine):
        row = []
        for carrier, name in columns:
            c = cells.get((case, carrier, name))
            row.append("" if c is None else c.status if c.error is None else f"{c.error:.1e} {c.status}")
        lines.append(f"| {case} | " + " | ".join(row) + " |")
    return lines
