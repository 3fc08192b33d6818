"""Where Dask's Array API namespace departs from the standard: ``linalg``, ``eye``, ``take``, ``reshape``.

Linear algebra is NumPy's functions, one matrix at a time.

``dask.array.linalg`` (which array-api-compat's Dask namespace re-exports)
departs from the standard: ``cholesky`` returns the upper factor, ``inv``
returns float64 for float32, ``det``, ``slogdet``, ``eigh`` and ``cross`` are
missing, ``svd`` refuses ``full_matrices=True``, ``qr`` refuses
``mode="complete"``, and none takes a stack of matrices. Here every such
function is ``dask.array.apply_gufunc`` of NumPy's, over the matrix axes
(the batch axes keep their chunks; each matrix is rechunked into one
block), so values, dtypes and batching are NumPy's. The products and
reductions Dask computes chunk by chunk (``matmul``, ``vecdot``, ``trace``,
``diagonal``, the norms, ...) stay Dask's.

``eye`` and ``take`` are replaced too: ``dask.array.eye`` with fewer rows
than columns gives a broken graph, indexing one chunk with a Dask index of
one element reports the chunk's length as the result's, and ``reshape``
refuses shapes that do not merge or split axes evenly.

The cost: a matrix must fit in one worker's memory. Dask's blocked
algorithms (``tsqr`` for tall-and-skinny ``qr`` / ``svd``) remain available
on the Dask arrays themselves.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

__all__ = ["standard_namespace", "standard_rule"]


def _gufunc(fn, signature: str, *arrays, sizes: dict | None = None, axis: int | None = None, **kwargs):
    """``apply_gufunc`` of the NumPy function ``fn``, with the output dtypes NumPy gives."""
    import dask.array as da

    # NumPy's dtypes for these operands: ``fn`` on small identity matrices (vectors of ones) of their dtypes.
    probe = fn(*[np.eye(3, dtype=a.dtype) if a.ndim > 1 and axis is None else np.ones(3, dtype=a.dtype)
                 for a in arrays], **kwargs)
    dtypes = [np.asarray(o).dtype for o in probe] if isinstance(probe, tuple) else np.asarray(probe).dtype
    # Each matrix (vector) in one block, rechunked here: apply_gufunc's own rechunk builds a broken graph
    # when one core dimension name covers axes of different chunk counts ("(m,m)" over 2 x 3 blocks).
    cores = [len([d for d in part.split(",") if d]) for part in re.findall(r"\(([^)]*)\)", signature.split("->")[0])]
    arrays = tuple(a.rechunk({(a.ndim - 1 - i if axis is None else axis % a.ndim): -1 for i in range(n)})
                   for a, n in zip(arrays, cores))
    return da.apply_gufunc(fn, signature, *arrays, output_dtypes=dtypes, output_sizes=sizes or {}, axis=axis,
                           allow_rechunk=True, **kwargs)


def _k(x) -> dict:
    return {"k": min(int(x.shape[-2]), int(x.shape[-1]))}


class _Linalg:
    """``linalg`` functions over Dask arrays (see the module docstring); the rest are the namespace's."""

    def __init__(self, base: Any):
        self._base = base

    def __getattr__(self, name: str) -> Any:
        return getattr(self._base, name)

    @staticmethod
    def cholesky(x, /, *, upper=False):
        return _gufunc(np.linalg.cholesky, "(m,m)->(m,m)", x, upper=bool(upper))

    @staticmethod
    def det(x, /):
        return _gufunc(np.linalg.det, "(m,m)->()", x)

    @staticmethod
    def slogdet(x, /):
        return tuple(_gufunc(np.linalg.slogdet, "(m,m)->(),()", x))

    @staticmethod
    def eigh(x, /):
        return tuple(_gufunc(np.linalg.eigh, "(m,m)->(m),(m,m)", x))

    @staticmethod
    def eigvalsh(x, /):
        return _gufunc(np.linalg.eigvalsh, "(m,m)->(m)", x)

    @staticmethod
    def inv(x, /):
        return _gufunc(np.linalg.inv, "(m,m)->(m,m)", x)

    @staticmethod
    def solve(x1, x2, /):
        # The standard (and NumPy 2): x2 is a vector only when it is 1-D.
        signature = "(m,m),(m)->(m)" if x2.ndim == 1 else "(m,m),(m,n)->(m,n)"
        return _gufunc(np.linalg.solve, signature, x1, x2)

    @staticmethod
    def svd(x, /, *, full_matrices=True):
        signature = "(m,n)->(m,m),(k),(n,n)" if full_matrices else "(m,n)->(m,k),(k),(k,n)"
        return tuple(_gufunc(np.linalg.svd, signature, x, sizes=_k(x), full_matrices=bool(full_matrices)))

    @staticmethod
    def svdvals(x, /):
        return _gufunc(np.linalg.svdvals, "(m,n)->(k)", x, sizes=_k(x))

    @staticmethod
    def qr(x, /, *, mode="reduced"):
        signature = "(m,n)->(m,k),(k,n)" if mode == "reduced" else "(m,n)->(m,m),(m,n)"
        return tuple(_gufunc(np.linalg.qr, signature, x, sizes=_k(x), mode=mode))

    @staticmethod
    def cross(x1, x2, /, *, axis=-1):
        import dask.array as da

        x1, x2 = da.broadcast_arrays(x1, x2)
        return _gufunc(np.linalg.cross, "(i),(i)->(i)", x1, x2, axis=axis)


class _Namespace:
    """A Dask Array API namespace whose ``linalg`` is :class:`_Linalg`, and whose ``eye``, ``take`` and
    ``reshape`` work for every shape; everything else is the namespace's."""

    def __init__(self, base: Any):
        self._base = base
        self.linalg = _Linalg(base.linalg)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._base, name)

    def reshape(self, x, /, shape, *, copy=None):
        try:
            return self._base.reshape(x, shape, copy=copy)
        except NotImplementedError:
            # Dask reshapes only by merging or splitting whole axes evenly ((3, 2, 3) to (2, 9) it refuses):
            # all axes merged into one, then split.
            return self._base.reshape(self._base.reshape(x, (-1,), copy=copy), shape)

    def take(self, x, indices, /, *, axis=None):
        if axis is None or indices.ndim != 1 or indices.shape[0] != 1 or not hasattr(indices, "dask"):
            return self._base.take(x, indices, axis=axis)
        # The one index twice, then the first of the two results: a one-element Dask index over a single
        # chunk gives a wrong shape.
        axis = axis % x.ndim
        both = self._base.take(x, self._base.concat([indices, indices]), axis=axis)
        return both[(slice(None),) * axis + (slice(0, 1),)]

    def eye(self, n_rows, n_cols=None, /, *, k=0, dtype=None, device=None):
        # dask.array.eye with fewer rows than columns builds a graph with blocks missing (it chunks the
        # columns by the row count): a square one, sliced.
        n_cols = n_rows if n_cols is None else n_cols
        n = max(n_rows, n_cols)
        return self._base.eye(n, n, k=k, dtype=dtype, device=device)[:n_rows, :n_cols]


_NAMESPACES: dict = {}


def standard_namespace(xp: Any) -> Any:
    """``xp`` itself, or for array-api-compat's Dask namespace one whose ``linalg``, ``eye``, ``take`` and
    ``reshape`` follow the standard."""
    if getattr(xp, "__name__", None) != "array_api_compat.dask.array":
        return xp
    try:
        return _NAMESPACES[id(xp)]
    except KeyError:
        return _NAMESPACES.setdefault(id(xp), _Namespace(xp))


def standard_rule(rule):
    """An operation's rule ``rule(xp, ...)``, called with :func:`standard_namespace` of ``xp``."""
    def call(xp, *args, **params):
        return rule(standard_namespace(xp), *args, **params)
    return call
