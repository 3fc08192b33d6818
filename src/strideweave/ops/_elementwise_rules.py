"""Elementwise rule records, and the builders that make a rule row's node class and public function.

A row of ``ops/elementwise.py`` is a ``UnaryRule`` or a ``BinaryRule``:
the forward, the VJPs and what they read. ``unary_op`` and ``binary_op``
turn one into a subclass of the unary or binary base (``ops/_elementwise.py``,
which runs forward and backward) and the public function that tries the
flat recorders before the general call.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass
from typing import ClassVar, cast

import numpy as np

from ..autograd.cotangents import EVERY
from ..dtypes import DType
from ..tensors.tensor import Tensor
from ..tensors.values import MixedBlocks
from ._blockwise import run_blockwise
from ._complex import COMPLEX_ELEMENTWISE, complex_forward
from ._complex import is_complex_operand as _complex
from ._elementwise import _Binary, _Unary

__all__ = ["BinaryRule", "UnaryRule", "binary_op", "unary_op"]

_FLOAT32 = DType.Float32

#: the Array API dtype categories a rule's ``dtypes`` may name, as dtype kinds
_KINDS = {
    "floating": ("float",),
    "numeric": ("int", "uint", "float"),
    "integer": ("int", "uint"),
    "integer or boolean": ("int", "uint", "bool"),
    "boolean": ("bool",),
    "any": ("int", "uint", "float", "bool"),
}


# ----- rule records ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Rule:
    """The fields every elementwise rule has; ``UnaryRule`` and ``BinaryRule`` add their VJPs."""

    forward: Callable
    _: KW_ONLY
    doc: str
    reads: str = ""
    dtypes: str | None = None
    linear_in_g: bool = False
    quiet: bool = False
    #: the family's name in errors, and the words ``reads`` may hold
    family: ClassVar[str]
    read_tokens: ClassVar[tuple[str, ...]]

    def vjps(self) -> tuple[Callable | None, ...]:
        raise NotImplementedError

    def __post_init__(self) -> None:
        kind = self.family
        if not callable(self.forward):
            raise TypeError(f"a {kind} rule's forward must be callable, got {self.forward!r}")
        unknown = set(self.reads.split()) - set(self.read_tokens)
        if unknown:
            raise ValueError(f"a {kind} rule's reads names {sorted(unknown)}; expected words among {self.read_tokens}")
        if self.dtypes is not None and self.dtypes not in _KINDS:
            raise ValueError(f"a {kind} rule's dtypes is {self.dtypes!r}; expected None or one of {sorted(_KINDS)}")
        if self.linear_in_g and all(vjp is None for vjp in self.vjps()):
            raise ValueError(f"a {kind} rule flagged linear_in_g needs a VJP")


@dataclass(frozen=True)
class UnaryRule(_Rule):
    """``forward(xp, x)`` and ``vjp(xp, g, y, x)``, the gradient in the result's space (``y``: the result).

    ``vjp=None``: not differentiable. ``reads``: which of ``"x"`` and
    ``"out"`` the VJP reads (anything else it gets as None, and nothing
    else is kept). ``dtypes``: the Array API category of the operand, None
    for any. ``linear_in_g``: the VJP is ``g * factor`` (see the module
    docstring). ``quiet``: the VJP runs with NumPy's floating-point warnings
    off. ``doc`` ends "Elementwise ..." in the function's docstring.
    """

    _: KW_ONLY
    vjp: Callable | None
    family: ClassVar[str] = "unary"
    read_tokens: ClassVar[tuple[str, ...]] = ("x", "out")

    def vjps(self) -> tuple[Callable | None, ...]:
        return (self.vjp,)


@dataclass(frozen=True)
class BinaryRule(_Rule):
    """``forward(xp, a, b)`` and one VJP per operand, ``vjp_a(xp, g, y, a, b)`` and ``vjp_b(...)``.

    Each gives its operand's gradient in the result's space (the base sums
    it back over broadcast modes); ``None`` means no gradient to that
    operand. ``reads``: ``"out"`` when the VJPs read the result ``y``;
    ``"own"`` when an operand's VJP reads that operand's own values, not
    only its partner's (``divide``'s ``vjp_b`` reads ``b``, ``multiply``'s
    does not): beside a Python scalar partner the Tensor's values are then
    read, else the VJP gets None for them; ``"g"`` when the VJPs read the
    cotangent alone (``add``): they get None for both operands. The other
    fields are as in ``UnaryRule``.
    """

    _: KW_ONLY
    vjp_a: Callable | None
    vjp_b: Callable | None
    #: the operator's symbol where ``forward`` is ``a <infix> b`` (a Tensor operator writes it inline)
    infix: str | None = None
    family: ClassVar[str] = "binary"
    read_tokens: ClassVar[tuple[str, ...]] = ("own", "out", "g")

    def vjps(self) -> tuple[Callable | None, ...]:
        return (self.vjp_a, self.vjp_b)


# ----- the public functions ---------------------------------------------------------------------------

def _no_gradient(self, gradient, request=EVERY):
    """``pullback`` and ``backward_flat`` of a rule without a VJP: no cotangent for any input."""
    return (None,) * len(self._inputs), (False,) * len(self._inputs)


def _nothing(*args):
    return None


def quiet(vjp: Callable) -> Callable:
    """``vjp`` with NumPy's floating-point warnings off: its inf and NaN gradients stay, silently."""
    def call(*args):
        with np.errstate(all="ignore"):
            return vjp(*args)
    return call


#: op names the standard spells differently
_NAMESPACE_NAMES = {"power": "pow"}


def _class_name(name: str) -> str:
    return "".join(part.title() for part in name.split("_"))


def _check_dtype(name: str, category: str | None, *operands) -> None:
    if category is None:
        return
    for value in operands:
        if isinstance(value, Tensor) and value._dtype.kind not in _KINDS[category]:
            raise TypeError(f"{name} expects {category} operands, got a Tensor of dtype {value._dtype!r}")


def unary_op(name: str, rule: UnaryRule) -> tuple[type, Callable]:
    """The node class of a unary rule and the public function ``name(x, *, options=None)`` that runs it."""
    vjp = rule.vjp
    if vjp is not None and rule.quiet:
        vjp = quiet(vjp)
    reads = rule.reads.split()
    attrs = {"__slots__": (), "compute": staticmethod(rule.forward), "keeps_result": "out" in reads,
             "reads_result": "out" in reads, "needs_input": "x" in reads}
    if vjp is None:
        attrs["pullback"] = attrs["backward_flat"] = _no_gradient
    else:
        attrs["vjp"] = staticmethod(vjp)
        attrs["takes_ones"] = rule.linear_in_g
    op_class = cast("type[_Unary]", type(_class_name(name), (_Unary,), attrs))

    dtypes = rule.dtypes
    float_operand = dtypes is None or "float" in _KINDS[dtypes]
    complex_defined = name in COMPLEX_ELEMENTWISE

    def unary(x, *, options=None) -> Tensor:
        if options is None and float_operand and isinstance(x, Tensor) and x._dtype is _FLOAT32:
            result = op_class.on_flat(x)
            if result is not None:
                return result
        if complex_defined and _complex(x):
            return complex_forward(name, x)
        _check_dtype(name, dtypes, x)
        try:
            return op_class()(x, options=options)
        except MixedBlocks:
            return run_blockwise(op_class(), (x,), {})

    doc = rule.doc
    unary.__name__ = unary.__qualname__ = name
    unary.__doc__ = f"Elementwise {doc}" + ("." if vjp is not None or "differentiable" in doc
                                            else " (not differentiable).")
    return op_class, unary


def binary_op(name: str, rule: BinaryRule) -> tuple[type, Callable]:
    """The node class of a binary rule and the public function ``name(a, b, *, options=None)`` that runs it."""
    vjp_a, vjp_b = rule.vjp_a, rule.vjp_b
    if rule.quiet:
        vjp_a, vjp_b = (None if vjp is None else quiet(vjp) for vjp in (vjp_a, vjp_b))
    reads = rule.reads.split()
    attrs = {"__slots__": (), "compute": staticmethod(rule.forward), "infix": rule.infix,
             "keeps_result": "out" in reads,
             "reads_result": "out" in reads, "scalar_vjp_reads_tensor": "own" in reads,
             "vjp_reads_operands": "g" not in reads,
             "vjp_first": staticmethod(vjp_a or _nothing), "vjp_second": staticmethod(vjp_b or _nothing)}
    if vjp_a is None and vjp_b is None:
        attrs["pullback"] = attrs["backward_flat"] = _no_gradient
    else:
        attrs["takes_ones"] = rule.linear_in_g
    op_class = cast("type[_Binary]", type(_class_name(name), (_Binary,), attrs))

    dtypes = rule.dtypes
    float_operands = dtypes is None or "float" in _KINDS[dtypes]
    namespace_name = _NAMESPACE_NAMES.get(name, name)
    complex_defined = namespace_name in COMPLEX_ELEMENTWISE

    def binary(a, b, *, options=None) -> Tensor:
        float32 = False  # two Float32 Tensors: neither complex, and of the rule's category (``float_operands``)
        if options is None and float_operands:
            if b.__class__ is float and isinstance(a, Tensor) and a._dtype is _FLOAT32:
                result = op_class.with_scalar(a, b, 1)
                if result is not None:
                    return result
            elif a.__class__ is float and isinstance(b, Tensor) and b._dtype is _FLOAT32:
                result = op_class.with_scalar(b, a, 0)
                if result is not None:
                    return result
            elif isinstance(a, Tensor) and isinstance(b, Tensor) and a._dtype is _FLOAT32 and b._dtype is _FLOAT32:
                result = op_class.with_tensor(a, b)
                if result is not None:
                    return result
                float32 = True
        if not float32:
            if complex_defined and (_complex(a) or _complex(b)):
                return complex_forward(namespace_name, a, b)
            if dtypes is not None:
                _check_dtype(name, dtypes, a, b)
        try:
            return op_class()(a, b, options=options)
        except MixedBlocks:  # blocks of a multi-subtensor operand on several carriers
            return run_blockwise(op_class(), (a, b), {})

    binary.__name__ = binary.__qualname__ = name
    # The node class of a rule that takes floats, for the Tensor operators, which write its hot paths
    # into themselves (``scalar_operator``); None for any other rule. (A function attribute.)
    binary.op_class = op_class if float_operands else None  # type: ignore[attr-defined]
    binary.__doc__ = f"Elementwise {rule.doc}, broadcasting over top-level modes" + \
        ("." if vjp_a is not None or vjp_b is not None else " (not differentiable).")
    return op_class, binary
