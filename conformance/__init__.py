"""StrideWeave's conformance suite: cross-carrier gradient agreement.

Every differentiable operation and a set of composite programs (MLP,
attention, layer norm, Gaussian-mixture likelihood, ...) is differentiated
on every installed carrier (numpy, torch, jax, array_api_strict), with its
inputs in several storage layouts (canonical, transposed, sliced with holes,
broadcast-aliased, nested), and compared against float64 central
differences, the numpy carrier, and the backend's own autodiff
(torch.autograd, jax.vjp).

    python -m conformance --help

Modules: :mod:`~conformance.catalogue` (Case, Tol, CATALOGUE),
:mod:`~conformance.cases` (the cases), :mod:`~conformance.inputs` (values and
layout variants), :mod:`~conformance.native` (torch / JAX references),
:mod:`~conformance.runner` (checks), :mod:`~conformance.report` (outputs).
"""

from .catalogue import CATALOGUE, Case, Tol, select
from .runner import Check, RunResult, run, run_case

__all__ = ["CATALOGUE", "Case", "Check", "RunResult", "Tol", "run", "run_case", "select"]
