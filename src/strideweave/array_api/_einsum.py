"""``einsum``: NumPy's subscripts form, composed of recorded operations, so it differentiates.

Beyond the standard, for the libraries that consume it (xarray's ``xr.dot``
and ``weighted``, opt_einsum). A label repeated inside one operand
(``"ii->i"``, ``"iij->ij"``) takes the diagonal as a strided view (one mode
whose stride is the sum of the two). A label that one operand alone carries,
and not the output, is summed out at once. The operands are then contracted
two at a time, each pair as one batched ``matmul`` (shared labels still
needed later are the batch, shared labels needed nowhere else are
contracted), in the order opt_einsum's ``contract_path`` chooses when it is
installed, else greedily: the pair with the smallest result first. The full
product of all operands is never formed. Every step is a recorded operation,
so the gradient is the composition of their VJPs.
"""

from __future__ import annotations

import math
import string
from typing import cast

from .. import ops as _ops
from ..carriers import one_call
from ..layout import Layout
from ..ops._args import tensor as _check
from ..tensors.tensor import Tensor
from ._namespace import namespace

__all__ = ["einsum"]

_LETTERS = frozenset(string.ascii_letters)


def _parse(subscripts: str, operands: tuple) -> tuple[list[str], str]:
    """Per-operand label strings and the output labels, with ``...`` spelled out as fresh labels."""
    spec = subscripts.replace(" ", "")
    explicit = "->" in spec
    inputs, _, output = spec.partition("->")
    terms = inputs.split(",")
    if len(terms) != len(operands):
        raise ValueError(f"einsum: subscripts {subscripts!r} name {len(terms)} operands, got {len(operands)}")
    used = set(spec) & _LETTERS
    fresh = [c for c in string.ascii_letters if c not in used]
    ellipsis_rank = 0
    for term, x in zip(terms, operands):
        bad = set(term.replace("...", "")) - _LETTERS
        if bad or term.count("...") > 1:
            raise ValueError(f"einsum: subscripts {subscripts!r}: each operand's term is letters and at most one "
                             f"'...', got {term!r}")
        named = len(term.replace("...", ""))
        if "..." in term:
            ellipsis_rank = max(ellipsis_rank, x.ndim - named)
        elif named != x.ndim:
            raise ValueError(f"einsum: term {term!r} names {named} axes but operand of shape {x.shape} has {x.ndim}")
    if len(fresh) < ellipsis_rank:
        raise ValueError(f"einsum: too many axes under '...' in {subscripts!r}")
    broadcast = "".join(fresh[:ellipsis_rank])
    labels = []
    for term, x in zip(terms, operands):
        if "..." in term:
            rank = x.ndim - len(term.replace("...", ""))
            if rank < 0:
                raise ValueError(f"einsum: term {term!r} names more axes than operand of shape {x.shape} has")
            term = term.replace("...", broadcast[ellipsis_rank - rank:])
        labels.append(term)
    if explicit:
        if output.count("...") > 1 or set(output.replace("...", "")) - _LETTERS:
            raise ValueError(f"einsum: output {output!r} must be letters and at most one '...'")
        output = output.replace("...", broadcast)
        for c in output:
            if output.count(c) > 1:
                raise ValueError(f"einsum: output label {c!r} appears more than once in {subscripts!r}")
            if not any(c in t for t in labels):
                raise ValueError(f"einsum: output label {c!r} names no input axis in {subscripts!r}")
    else:
        # NumPy's implicit output: the broadcast axes, then every label seen once, in alphabetical order.
        counts = "".join(labels)
        output = broadcast + "".join(sorted(c for c in set(counts) - set(broadcast) if counts.count(c) == 1))
    return labels, output


def _diagonal(x: Tensor, term: str) -> tuple[Tensor, str]:
    """``x`` with every label repeated in ``term`` reduced to its diagonal (one axis per label)."""
    while True:
        repeated = next((c for c in term if term.count(c) > 1), None)
        if repeated is None:
            return x, term
        p = term.index(repeated)
        q = term.index(repeated, p + 1)
        n = x.shape[p]
        if x.shape[q] != n:
            raise ValueError(f"einsum: label {repeated!r} has extents {n} and {x.shape[q]} in one operand")
        shape, stride = list(x._layout._shape_modes), list(x._layout._stride_modes)
        if isinstance(shape[p], int) and isinstance(shape[q], int) and len(x._carriers) == 1:
            # Position k of the diagonal is (k, k): one mode that steps both strides at once.
            stride[p] = cast(int, stride[p]) + cast(int, stride[q])
            del shape[q], stride[q]
            x = _ops.view(x, Layout(tuple(shape), tuple(stride)))
        else:  # a nested mode has no single stride (nor blocks one layout): the product with an identity mask
            mask_shape = [1] * x.ndim
            mask_shape[p] = mask_shape[q] = n
            mask = namespace().reshape(namespace().eye(n, dtype=x.dtype, device=x.device), tuple(mask_shape))
            x = namespace().sum(x * mask, axis=q)
        term = term[:q] + term[q + 1:]


def _sum_out(x: Tensor, term: str, keep) -> tuple[Tensor, str]:
    """``x`` summed over the labels of ``term`` that ``keep`` lacks."""
    gone = tuple(i for i, c in enumerate(term) if c not in keep)
    if not gone:
        return x, term
    return namespace().sum(x, axis=gone), "".join(c for c in term if c in keep)


def _permuted(x: Tensor, term: str, order: str) -> Tensor:
    return x if term == order else namespace().permute_dims(x, tuple(term.index(c) for c in order))


def _pair(a: Tensor, ta: str, b: Tensor, tb: str, keep: set) -> tuple[Tensor, str]:
    """The contraction of two operands as one batched matmul: (batch, a's, shared) @ (batch, shared, b's)."""
    xp = namespace()
    batch = "".join(c for c in ta if c in tb and c in keep)
    summed = "".join(c for c in ta if c in tb and c not in keep)
    left = "".join(c for c in ta if c not in tb)
    right = "".join(c for c in tb if c not in ta)
    extent = {**dict(zip(tb, b.shape)), **dict(zip(ta, a.shape))}

    def size(labels):
        return math.prod(extent[c] for c in labels)

    a = xp.reshape(_permuted(a, ta, batch + left + summed), (size(batch), size(left), size(summed)))
    b = xp.reshape(_permuted(b, tb, batch + summed + right), (size(batch), size(summed), size(right)))
    out = xp.matmul(a, b)
    term = batch + left + right
    return xp.reshape(out, tuple(extent[c] for c in term)), term


def _path(terms: list, output: str, extent: dict) -> list:
    """The pairs to contract, in opt_einsum's order when it is installed, else greedily (smallest result first).

    Each step names two positions in the current list; their result goes to the end, as in opt_einsum.
    """
    try:
        import opt_einsum  # type: ignore[import-untyped]
    except ImportError:
        opt_einsum = None
    if opt_einsum is not None:
        shapes = [tuple(extent[c] for c in t) for t in terms]
        path, _ = opt_einsum.contract_path(",".join(terms) + "->" + output, *shapes, shapes=True)
        return [tuple(step) for step in path if len(step) == 2]
    terms, path = list(terms), []
    while len(terms) > 1:
        best = None
        for i in range(len(terms)):
            for j in range(i + 1, len(terms)):
                keep = set(output).union(*(t for k, t in enumerate(terms) if k not in (i, j)))
                labels = set(terms[i]) ^ set(terms[j]) | (set(terms[i]) & set(terms[j]) & keep)
                cost = math.prod(extent[c] for c in labels)
                if best is None or cost < best[0]:
                    best = (cost, i, j, "".join(sorted(labels)))
        assert best is not None  # two terms or more give a pair
        _, i, j, result = best
        path.append((i, j))
        terms = [t for k, t in enumerate(terms) if k not in (i, j)] + [result]
    return path


@one_call
def einsum(subscripts, /, *operands):
    """Einstein summation in NumPy's subscripts form (``"ij,jk->ik"``, implicit output, ``...``), differentiable.

    Operands are Tensors of one carrier (Python scalars and native arrays as in
    the operators). The result dtype is the operands' promoted dtype. Pairs of
    operands are contracted by ``matmul`` in opt_einsum's order (a greedy one
    without it); repeated labels are diagonal views.
    """
    if not isinstance(subscripts, str):
        raise TypeError(f"einsum: subscripts must be a str such as 'ij,jk->ik' (the interleaved operand, sublist "
                        f"form is not supported), got {type(subscripts).__name__}: {subscripts!r}")
    anchor = next((o for o in operands if isinstance(o, Tensor)), None)
    if anchor is None:
        raise TypeError("einsum needs at least one StrideWeave Tensor operand")
    operands = tuple(_check(o if isinstance(o, Tensor) else namespace().asarray(o, device=anchor.device), "einsum")
                     for o in operands)
    labels, output = _parse(subscripts, operands)
    xs, terms = [], []
    for x, term in zip(operands, labels):
        x, term = _diagonal(x, term)
        xs.append(x)
        terms.append(term)
    extent: dict = {}
    for x, term in zip(xs, terms):
        for c, n in zip(term, x.shape):
            extent[c] = max(extent.get(c, 1), n)
    for i, (x, term) in enumerate(zip(xs, terms)):
        # An extent-1 axis that broadcasts against a longer one is dropped: the value is the same along it.
        # Then a label no other operand and not the output carries is summed out before any product.
        ones = "".join(c for c, n in zip(term, x.shape) if n == 1 and extent[c] != 1)
        if ones:
            x = namespace().reshape(x, tuple(n for c, n in zip(term, x.shape) if c not in ones))
            term = "".join(c for c in term if c not in ones)
        others = set(output).union(*(t for k, t in enumerate(terms) if k != i))
        xs[i], terms[i] = _sum_out(x, term, others)
    for i, j in _path(terms, output, extent):
        keep = set(output).union(*(t for k, t in enumerate(terms) if k not in (i, j)))
        x, term = _pair(xs[i], terms[i], xs[j], terms[j], keep)
        xs = [x_ for k, x_ in enumerate(xs) if k not in (i, j)] + [x]
        terms = [t for k, t in enumerate(terms) if k not in (i, j)] + [term]
    (x,), (term,) = xs, terms
    x, term = _sum_out(x, term, set(output))
    return _permuted(x, term, output)
