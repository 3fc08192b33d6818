"""DType descriptors: simple element types, categories and compound records.

A :class:`SimpleDType` names one element type (``DType.Float32``); it is what
a carrier stores.  A :class:`DTypeCategory` (``DType.Floating``) is a set of
simple dtypes used in operation signatures; it is never the dtype of stored
elements.  A :class:`CompoundDType` is a record of named simple fields, stored
as one carrier per field (structure of arrays).

Promotion (:func:`result_type`) is one rule for every carrier: the Array API
table within a kind (the wider type wins, ``uint8`` with a signed integer goes
to the next signed type that holds both) and, across kinds, the rule JAX and
PyTorch share (bool with a number gives the number's dtype, an integer with a
floating dtype gives that floating dtype). Python and NumPy scalars are weak:
they never widen a Tensor's dtype.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as _np

__all__ = [
    "CompoundDType",
    "DType",
    "DTypeCategory",
    "SimpleDType",
    "accumulation_dtype",
    "as_dtype",
    "as_python_scalar",
    "dtype_from_name",
    "python_scalar_dtype",
    "result_type",
    "scalar_result_type",
]

_KINDS = ("bool", "int", "uint", "float", "complex")
#: StrideWeave's kind name -> NumPy's one-letter kind code
_NUMPY_KIND = {"bool": "b", "int": "i", "uint": "u", "float": "f", "complex": "c"}


def _kind_class(long: str) -> type:
    """The str subclass of one kind: its value is NumPy's code (``"f"``), and it also equals ``"float"``.

    NumPy dtype code asks ``dtype.kind in "cfO"`` (a substring test on the
    code); StrideWeave's own code asks ``dtype.kind in ("float", "complex")``
    and keys tables by the name, so the hash is the name's. Comparing with
    anything that is not a string (a list, an array) is ``False``, never an
    error.
    """
    names = frozenset({long, _NUMPY_KIND[long]})

    def __eq__(self, other, _names=names):
        return isinstance(other, str) and other in _names

    return type(f"Kind_{long}", (str,), {
        "__slots__": (), "__module__": __name__, "long": long,
        "__eq__": __eq__,
        "__ne__": object.__ne__,  # the inverse of __eq__
        "__hash__": long.__hash__,
        "__reduce__": lambda self: (_kind, (self.long,)),
    })


_KIND_OF = {long: _kind_class(long)(code) for long, code in _NUMPY_KIND.items()}


def _kind(long: str) -> str:
    return _KIND_OF[long]


@dataclass(frozen=True, slots=True, eq=False)
class SimpleDType:
    """One element type: ``name`` (``"float32"``), ``kind`` and width in bits.

    Instances are interned in :class:`DType`; compare them with ``==`` (or
    ``is``: the module only ever builds one of each). A SimpleDType also
    answers what NumPy dtype code asks: ``kind`` is NumPy's one-letter code
    (``"f"``, which also equals ``"float"``), ``itemsize``, ``name``, ``type``,
    ``char``; it equals the NumPy dtype of its name (``DType.Float32 ==
    np.float32 == np.dtype("float32") == "float32"``, the torch dtype
    ``torch.float32`` too) and hashes as that NumPy dtype, and
    ``np.dtype(DType.Float32)`` is ``np.dtype("float32")``.
    """

    name: str
    # Any: given as the long name, stored as its kind class (``_kind_class``, with ``.long``)
    kind: Any
    bits: int
    _hash: int = field(init=False, repr=False, compare=False, default=0)

    def __post_init__(self):
        if self.kind not in _KINDS:
            raise ValueError(f"SimpleDType kind {self.kind!r} is not one of {_KINDS}")
        object.__setattr__(self, "kind", _KIND_OF[self.kind])
        object.__setattr__(self, "_hash", hash(_np.dtype(self.name)))

    def __eq__(self, other):
        if other.__class__ is SimpleDType:
            return self.name == other.name
        found = _known_dtype(other)
        return found is not None and found.name == self.name

    def __ne__(self, other):
        return not self.__eq__(other)

    def __hash__(self):
        return self._hash

    def __reduce__(self):
        return dtype_from_name, (self.name,)

    @property
    def dtype(self):
        """The NumPy dtype of this name (so ``np.dtype(DType.Float32)`` and ``np.issubdtype`` work)."""
        return _np.dtype(self.name)

    @property
    def type(self):
        """NumPy's scalar type of this dtype (``np.float32``)."""
        return _np.dtype(self.name).type

    @property
    def char(self) -> str:
        """NumPy's one-character type code (``"f"`` for float32)."""
        return _np.dtype(self.name).char

    @property
    def itemsize(self) -> int:
        """Size of one element in bytes (``Bool`` takes one byte)."""
        return max(1, self.bits // 8)

    @property
    def is_floating(self) -> bool:
        return self.kind.long == "float"

    @property
    def is_integral(self) -> bool:
        return self.kind.long in ("int", "uint")

    def __repr__(self) -> str:
        return f"DType.{_PUBLIC_NAMES.get(self.name, self.name)}"

    __str__ = __repr__


@dataclass(frozen=True, slots=True)
class DTypeCategory:
    """A named set of simple dtypes (by kind), used in operation signatures.

    ``DType.Floating.contains(DType.Float32)`` and ``DType.Float32 in
    DType.Floating`` are both ``True``.  Compound dtypes belong only to
    ``DType.Any``.
    """

    name: str
    kinds: frozenset

    def contains(self, dtype) -> bool:
        """Whether ``dtype`` (a SimpleDType or CompoundDType) is in this category."""
        if isinstance(dtype, SimpleDType):
            return dtype.kind.long in self.kinds
        if isinstance(dtype, CompoundDType):
            return self.name == "Any"
        return False

    def __contains__(self, dtype) -> bool:
        return self.contains(dtype)

    def __repr__(self) -> str:
        return f"DType.{self.name}"

    __str__ = __repr__


class CompoundDType:
    """A record of named :class:`SimpleDType` fields, e.g. a complex number.

    ``CompoundDType([("re", DType.Float32), ("im", DType.Float32)])``.  Fields
    keep their order; names must be unique non-empty strings.  A compound
    Tensor stores one carrier per field.  Never differentiable.
    """

    __slots__ = ("_hash", "_index", "fields")
    # slots, written once through object.__setattr__ (the class is immutable)
    fields: tuple[tuple[str, SimpleDType], ...]
    _index: dict[str, int]
    _hash: int

    def __init__(self, fields):
        try:
            items = list(fields)
        except TypeError:
            raise TypeError(
                f"CompoundDType fields must be a sequence of (name, SimpleDType) pairs, "
                f"got {fields!r}"
            ) from None
        if not items:
            raise ValueError("CompoundDType needs at least one field, got an empty list")
        checked = []
        for item in items:
            if not isinstance(item, tuple) or len(item) != 2:
                raise TypeError(f"CompoundDType field must be a (name, SimpleDType) pair, got {item!r}")
            name, dtype = item
            if not isinstance(name, str) or not name:
                raise TypeError(f"CompoundDType field name must be a non-empty str, got {name!r}")
            if not isinstance(dtype, SimpleDType):
                raise TypeError(
                    f"CompoundDType field {name!r} must have a SimpleDType, got {dtype!r}"
                )
            checked.append((name, dtype))
        index = {}
        for i, (name, _) in enumerate(checked):
            if name in index:
                raise ValueError(f"CompoundDType field name {name!r} appears more than once")
            index[name] = i
        object.__setattr__(self, "fields", tuple(checked))
        object.__setattr__(self, "_index", index)
        object.__setattr__(self, "_hash", hash(("CompoundDType", self.fields)))

    def __setattr__(self, name, value):
        raise AttributeError(f"CompoundDType is immutable (tried to set {name!r})")

    @property
    def names(self) -> tuple:
        """Field names in order."""
        return tuple(name for name, _ in self.fields)

    def field(self, name: str) -> SimpleDType:
        """The dtype of field ``name`` (``KeyError`` naming it if absent)."""
        try:
            return self.fields[self._index[name]][1]
        except KeyError:
            raise KeyError(f"CompoundDType has no field {name!r}; fields are {self.names}") from None

    def __len__(self) -> int:
        return len(self.fields)

    def __iter__(self):
        return iter(self.fields)

    def __eq__(self, other):
        return isinstance(other, CompoundDType) and self.fields == other.fields

    def __hash__(self):
        return self._hash

    def __repr__(self) -> str:
        inner = ", ".join(f"({n!r}, {d!r})" for n, d in self.fields)
        return f"CompoundDType([{inner}])"


class DType:
    """Namespace of the dtype descriptors and categories (not instantiable)."""

    Bool = SimpleDType("bool", "bool", 8)
    Int8 = SimpleDType("int8", "int", 8)
    Int16 = SimpleDType("int16", "int", 16)
    Int32 = SimpleDType("int32", "int", 32)
    Int64 = SimpleDType("int64", "int", 64)
    UInt8 = SimpleDType("uint8", "uint", 8)
    UInt16 = SimpleDType("uint16", "uint", 16)
    UInt32 = SimpleDType("uint32", "uint", 32)
    UInt64 = SimpleDType("uint64", "uint", 64)
    Float16 = SimpleDType("float16", "float", 16)
    Float32 = SimpleDType("float32", "float", 32)
    Float64 = SimpleDType("float64", "float", 64)
    # Stored and computed forward (the Array API names them); never differentiable.
    Complex64 = SimpleDType("complex64", "complex", 64)
    Complex128 = SimpleDType("complex128", "complex", 128)

    Floating = DTypeCategory("Floating", frozenset({"float"}))
    Integral = DTypeCategory("Integral", frozenset({"int", "uint"}))
    Numeric = DTypeCategory("Numeric", frozenset({"int", "uint", "float"}))
    Any = DTypeCategory("Any", frozenset(_KINDS))

    def __new__(cls, *args, **kwargs):
        raise TypeError("DType is a namespace of descriptors; use e.g. DType.Float32")


#: Every simple dtype, in a stable order.
SIMPLE_DTYPES = (
    DType.Bool, DType.Int8, DType.Int16, DType.Int32, DType.Int64,
    DType.UInt8, DType.Float16, DType.Float32, DType.Float64,
)
#: Every dtype a carrier can store: the simple ones, the wider unsigned integers
#: (the standard's full set; torch stores them with few operations) and complex
#: (forward only, for the Array API namespace; the op library's rules and grids
#: cover SIMPLE_DTYPES).
STORED_DTYPES = (*SIMPLE_DTYPES, DType.UInt16, DType.UInt32, DType.UInt64, DType.Complex64, DType.Complex128)
_BY_NAME = {d.name: d for d in STORED_DTYPES}
_PUBLIC_NAMES = {
    "bool": "Bool", "int8": "Int8", "int16": "Int16", "int32": "Int32",
    "int64": "Int64", "uint8": "UInt8", "uint16": "UInt16", "uint32": "UInt32", "uint64": "UInt64",
    "float16": "Float16", "float32": "Float32", "float64": "Float64", "complex64": "Complex64",
    "complex128": "Complex128",
}
_PY_TYPES = (bool, int, float, complex)


def _known_dtype(value) -> SimpleDType | None:
    """The SimpleDType that a NumPy dtype, NumPy scalar type, dtype name or torch dtype names; else None."""
    if value.__class__ is SimpleDType:
        return value
    if value.__class__.__module__ == "torch":  # torch.float32: its str is "torch.float32"; torch is not imported
        name = str(value)
        return _BY_NAME.get(name[6:]) if name.startswith("torch.") else None
    if isinstance(value, (str, _np.dtype)) or (isinstance(value, type) and (
            issubclass(value, _np.generic) or value in _PY_TYPES)):
        try:
            return _BY_NAME.get(_np.dtype(value).name)
        except (TypeError, ValueError, SyntaxError):  # NumPy parses any string as a dtype spec ("a: b, c", ",")
            return None
    return None


def accumulation_dtype(dtype: SimpleDType, default_int: SimpleDType) -> SimpleDType | None:
    """The standard's result dtype of ``sum``, ``prod`` and the cumulative ones given no ``dtype=``.

    Bool and signed integers narrower than ``default_int`` widen to it;
    unsigned ones to the unsigned type of its width (``uint64`` beside
    ``int64``); None for every other dtype, which keeps its own.
    """
    if dtype.kind == "bool" or (dtype.kind == "int" and dtype.bits < default_int.bits):
        return default_int
    if dtype.kind == "uint" and dtype.bits < default_int.bits:
        return _BY_NAME[f"uint{default_int.bits}"]
    return None


def as_dtype(value, what: str = "dtype") -> SimpleDType:
    """The SimpleDType that ``value`` names: a SimpleDType, a NumPy dtype or scalar type, a name or a torch dtype.

    ``np.float32``, ``np.dtype("float32")``, ``"float32"`` and
    ``torch.float32`` all give ``DType.Float32``; Python's ``float`` is
    NumPy's ``float64``. Anything else raises ``TypeError`` naming it
    (``what`` says which argument it was).
    """
    found = _known_dtype(value)
    if found is None:
        raise TypeError(f"{what} must be a dtype: a StrideWeave dtype (xp.float32, sw.DType.Float32), a NumPy "
                        f"dtype (np.float32), a name ('float32') or a torch dtype; got "
                        f"{type(value).__name__}: {value!r}; the dtypes are {sorted(_BY_NAME)}")
    return found


def dtype_from_name(name: str) -> SimpleDType:
    """The SimpleDType called ``name`` (``"float32"``); ``TypeError`` if unknown."""
    try:
        return _BY_NAME[name]
    except (KeyError, TypeError):
        raise TypeError(
            f"unknown dtype name {name!r}; expected one of {sorted(_BY_NAME)}"
        ) from None


def _signed_for_bits(bits: int) -> SimpleDType | None:
    return {8: DType.Int8, 16: DType.Int16, 32: DType.Int32, 64: DType.Int64}.get(bits)


# Kinds in promotion order: mixing kinds gives the later kind (bool < integers < floating < complex).
_KIND_RANK = {"bool": 0, "int": 1, "uint": 1, "float": 2, "complex": 3}


def _promote(a: SimpleDType, b: SimpleDType) -> SimpleDType:
    if a is b or a == b:
        return a
    if a.kind.long == b.kind.long:
        return a if a.bits >= b.bits else b
    kinds = {a.kind.long, b.kind.long}
    if kinds == {"int", "uint"}:
        # Array API: uintN with intM -> the smallest signed type holding both.
        u, s = (a, b) if a.kind.long == "uint" else (b, a)
        wider = _signed_for_bits(max(s.bits, 2 * u.bits))
        if wider is not None:
            return wider
        raise TypeError(f"no integer dtype holds every value of both {a!r} and {b!r}; cast one operand "
                        "explicitly with astype")
    # Mixed kinds (the rule JAX and PyTorch share): bool with a number gives the
    # number's dtype, an integer with a floating dtype gives that floating dtype.
    low, high = (a, b) if _KIND_RANK[a.kind.long] < _KIND_RANK[b.kind.long] else (b, a)
    if high.kind.long == "complex" and low.kind.long == "float":
        return _complex_holding(max(low.bits * 2, high.bits))
    return high


def _complex_holding(bits: int) -> SimpleDType:
    for dtype in STORED_DTYPES:
        if dtype.kind.long == "complex" and dtype.bits == bits:
            return dtype
    raise TypeError(f"no complex dtype of {bits} bits")


def as_python_scalar(value):
    """``value`` as a Python scalar when it is one (NumPy scalars included), else None."""
    if isinstance(value, _np.generic):
        # NumPy scalars are weak like Python's (np.float64 even subclasses float).
        value = value.item()
    return value if isinstance(value, (bool, int, float, complex)) else None


def _check_range(value: int, dtype: SimpleDType) -> None:
    if dtype.kind.long == "int":
        low, high = -(1 << (dtype.bits - 1)), (1 << (dtype.bits - 1))
    elif dtype.kind.long == "uint":
        low, high = 0, 1 << dtype.bits
    else:
        return
    if not low <= value < high:
        raise OverflowError(f"the Python int {value} is out of range for {dtype!r} ([{low}, {high - 1}])")


def scalar_result_type(value, dtype: SimpleDType) -> SimpleDType:
    """The dtype of combining a Tensor of ``dtype`` with the Python (or NumPy) scalar ``value``.

    Scalars are weak, as in JAX and PyTorch: they never widen a Tensor's
    dtype. A scalar of a higher kind lifts the result to that kind's default
    dtype (an int Tensor times 0.5 is Float32; a Bool Tensor plus 1 is Int32).
    """
    if isinstance(value, bool):
        return dtype
    if isinstance(value, int):
        if dtype.kind.long == "bool":
            return DType.Int32
        _check_range(value, dtype)
        return dtype
    if isinstance(value, float):
        return dtype if _KIND_RANK[dtype.kind.long] >= _KIND_RANK["float"] else DType.Float32
    if isinstance(value, complex):
        if dtype.kind.long == "complex":
            return dtype
        return _complex_holding(max(64, 2 * dtype.bits) if dtype.kind.long == "float" else 64)
    raise TypeError(f"expected a Python or NumPy scalar, got {type(value).__name__}: {value!r}")


def _scalar_fits(value, dtype: SimpleDType) -> bool:
    """Whether writing the Python scalar ``value`` into storage of ``dtype`` keeps its kind and range."""
    if isinstance(value, bool):
        return dtype.kind.long == "bool"
    if isinstance(value, int):
        if dtype.kind.long in ("int", "uint"):
            try:
                _check_range(value, dtype)
            except OverflowError:
                return False
            return True
        return dtype.kind.long in ("float", "complex")
    if isinstance(value, float):
        return dtype.kind.long in ("float", "complex")
    if isinstance(value, complex):
        return dtype.kind.long == "complex"
    return False


def result_type(*operands):
    """The result dtype of combining ``operands`` (dtypes, see :func:`as_dtype`, and Python or NumPy scalars).

    One rule on every carrier, implemented here rather than inherited from a
    backend: the Array API table within a kind; across kinds, bool < integer
    < floating < complex, and the higher kind's dtype wins (an Int32 Tensor
    with a Float32 Tensor gives Float32); scalars are weak (see
    :func:`scalar_result_type`). At least one operand must be a dtype.
    """
    resolved = [x if isinstance(x, SimpleDType) or as_python_scalar(x) is not None else _known_dtype(x) or x
                for x in operands]
    dtypes = [x for x in resolved if isinstance(x, SimpleDType)]
    if not dtypes:
        raise TypeError(f"result_type needs at least one SimpleDType, got {resolved!r}")
    result = dtypes[0]
    for dtype in dtypes[1:]:
        result = _promote(result, dtype)
    for x in resolved:
        if isinstance(x, SimpleDType):
            continue
        scalar = as_python_scalar(x)
        if scalar is None:
            raise TypeError(f"result_type expects SimpleDTypes or Python scalars, got {type(x).__name__}: {x!r}")
        result = scalar_result_type(scalar, result)
    return result


def python_scalar_dtype(value) -> SimpleDType:
    """The default dtype of a Python scalar: float -> Float32, int -> Int32, bool -> Bool."""
    if isinstance(value, bool):
        return DType.Bool
    if isinstance(value, int):
        return DType.Int32
    if isinstance(value, float):
        return DType.Float32
    raise TypeError(f"expected a Python bool, int or float, got {value!r} ({type(value).__name__})")


def scalar_operand(value: Any, dtype, name: str) -> Any:
    """A Python or NumPy scalar operand, as a Python scalar of the result's kind.

    Scalars are weak (one rule on every carrier, ``dtypes.result_type``): they
    never widen the Tensor's dtype, and one of a higher kind lifts it to that
    kind's default dtype (an Int32 Tensor times 0.5 is Float32). NumPy
    scalars count as scalars, so ``x + np.float64(0.5)`` stays Float32.
    """
    scalar = as_python_scalar(value)
    if scalar is None or isinstance(scalar, complex):
        raise TypeError(f"{name} expects Tensors or Python scalars, got {type(value).__name__}: {value!r}")
    kind = result_type(dtype, scalar).kind.long  # OverflowError for an int out of the dtype's range
    return float(scalar) if kind == "float" else int(scalar) if kind in ("int", "uint") else scalar
