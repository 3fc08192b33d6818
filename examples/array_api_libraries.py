"""Differentiate library code written against the Array API, on every carrier.

array-api-extra and SciPy (with SCIPY_ARRAY_API=1) accept any array whose
namespace array-api-compat recognises. A StrideWeave Tensor's namespace is
``strideweave.array_api``, so handing them Tensors records a graph that
``backward()`` differentiates. The same library code run on torch tensors and
differentiated by torch.autograd gives the reference gradient.

Code that computes internally in float64 (``xpx.cov`` casts to float64) runs,
but its result is not differentiable: only Float32 is (the spec's rule).
"""

import os

os.environ.setdefault("SCIPY_ARRAY_API", "1")  # must be set before SciPy is imported

import array_api_extra as xpx
import numpy as np
import scipy.special
import scipy.stats

import strideweave as sw
import strideweave.array_api as xp
from strideweave.testing import available_carriers

VALUES = np.array([[0.3, -1.2, 0.7, 2.0], [1.5, 0.4, -0.6, 0.9], [-0.8, 0.1, 1.1, -0.2]], dtype=np.float32)

PROGRAMS = {
    "xpx.sinc": lambda x: xpx.sinc(x),
    "xpx.kron": lambda x: xpx.kron(x, x[:1, :2]),
    "xpx.nanmean": lambda x: xpx.nanmean(x, axis=0),
    "xpx.pad": lambda x: xpx.pad(x, 1),  # fills a fresh array, then writes x into it
    # writes into a computed array: the positions it overwrote pass nothing back to x * 2
    "xpx.at(x * 2).set": lambda x: xpx.at(x * 2.0)[0, 1:3].set(x[1, :2] * 3.0),
    "scipy.special.softmax": lambda x: scipy.special.softmax(x, axis=1),
    "scipy.special.logsumexp": lambda x: scipy.special.logsumexp(x, axis=1),
    "scipy.stats.zscore": lambda x: scipy.stats.zscore(x, axis=1),
}


def strideweave_gradient(program, carrier):
    """d/dx sum(program(x)**2) with x a StrideWeave Tensor on ``carrier``."""
    x = sw.tensor(VALUES, carrier=carrier)
    y = program(x)
    xp.sum(y * y).backward()
    return x.grad.numpy()


def torch_gradient(program):
    import torch

    x = torch.tensor(VALUES, requires_grad=True)
    (program(x) ** 2).sum().backward()
    return x.grad.numpy()


def main():
    try:
        import torch  # noqa: F401
        reference = torch_gradient
    except ImportError:  # no torch: compare carriers with the numpy carrier instead
        def reference(program):
            return strideweave_gradient(program, "numpy")
    carriers = available_carriers()
    print(f"{'program':26s}" + "".join(f"{c:>18s}" for c in carriers))
    for name, program in PROGRAMS.items():
        want = reference(program)
        errors = [float(np.max(np.abs(strideweave_gradient(program, c) - want))) for c in carriers]
        print(f"{name:26s}" + "".join(f"{e:18.2e}" for e in errors))
        assert max(errors) < 1e-5, (name, errors)

    # Float32 only: xpx.cov computes in float64, so its result has no graph.
    x = sw.tensor(VALUES)
    c = xpx.cov(x)
    print(f"xpx.cov returns {c.dtype} (no graph: {c.autograd_ctx is None}); backward says:")
    try:
        xp.sum(c).backward()
    except RuntimeError as error:
        print(f"  RuntimeError: {error}")


if __name__ == "__main__":
    main()
