"""``einsum``: NumPy's subscripts form, composed of recorded operations, so it differentiates.

Beyond the standard, for the libraries that consume it (xarray's ``xr.dot``
and ``weighted``, opt_einsum). Each operand is permuted into one global label
order and given extent-1 axes for the labels it lacks; the operands are then
multiplied pairwise by broadcasting, and a label is summed out as soon as no
later operand and not the output carries it. A label repeated inside one
operand (``"ii->i"``) takes the diagonal: the product with an identity mask,
summed over the second axis. Every step is a recorded operation, so the
gradient is the composition of their VJPs.
"""

from __future__ import annotations

import string
from typing import Any

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
        shape = [1] * x.ndim
        shape[p] = shape[q] = n
        mask = namespace().reshape(namespace().eye(n, dtype=x.dtype, device=x.device), tuple(shape))
        x = namespace().sum(x * mask, axis=q)
        term = term[:q] + term[q + 1:]


def einsum(subscripts, /, *operands):
    """Einstein summation in NumPy's subscripts form (``"ij,jk->ik"``, implicit output, ``...``), differentiable.

    Operands are Tensors of one carrier (Python scalars and native arrays as in
    the operators). The result dtype is the operands' promoted dtype.
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
    terms = []
    xs = []
    for x, term in zip(operands, labels):
        x, term = _diagonal(x, term)
        xs.append(x)
        terms.append(term)
    order = []  # one global label order: the output's first, then the rest as they appear
    for c in output + "".join(terms):
        if c not in order:
            order.append(c)

    def expanded(x, term):
        # permute into the global order, then an extent-1 axis for every label the operand lacks
        present = [c for c in order if c in term]
        x = namespace().permute_dims(x, tuple(term.index(c) for c in present)) if present != list(term) else x
        shape = tuple(x.shape[present.index(c)] if c in present else 1 for c in order)
        return namespace().reshape(x, shape) if shape != x.shape else x

    acc: Any = None
    live: list = []
    for i, (x, term) in enumerate(zip(xs, terms)):
        x = expanded(x, term)
        acc = x if acc is None else acc * x
        live = sorted(set(live) | set(term), key=order.index)
        later = set(output).union(*terms[i + 1:])
        done = [c for c in live if c not in later]
        if done:
            acc = namespace().sum(acc, axis=tuple(order.index(c) for c in done), keepdims=True)
            live = [c for c in live if c not in done]
    # the output's labels lead ``order``; what follows are summed-out labels, now of extent 1
    shape = tuple(acc.shape[:len(output)])
    return acc if acc.shape == shape else namespace().reshape(acc, shape)
