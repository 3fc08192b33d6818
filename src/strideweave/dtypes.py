"""DType descriptors: simple element types, categories and compound records.

A :class:`SimpleDType` names one element type (``DType.Float32``); it is what
a carrier stores.  A :class:`DTypeCategory` (``DType.Floating``) is a set of
simple dtypes used in operation signatures; it is never the dtype of stored
elements.  A :class:`CompoundDType` is a record of named simple fields, stored
as one carrier per field (structure of arrays).

Promotion (:func:`result_type`) follows the Array API standard: within a kind
the wider type wins, ``uint8`` with a signed integer goes to the next signed
type that holds both, and mixing kinds (bool with numbers, integers with
floats) is an error rather than a silent guess.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "SimpleDType",
    "DTypeCategory",
    "CompoundDType",
    "DType",
    "result_type",
    "python_scalar_dtype",
    "dtype_from_name",
]

_KINDS = ("bool", "int", "uint", "float")


@dataclass(frozen=True, slots=True)
class SimpleDType:
    """One element type: ``name`` (``"float32"``), ``kind`` and width in bits.

    Instances are interned in :class:`DType`; compare them with ``==`` (or
    ``is``: the module only ever builds one of each).
    """

    name: str
    kind: str
    bits: int

    def __post_init__(self):
        if self.kind not in _KINDS:
            raise ValueError(f"SimpleDType kind {self.kind!r} is not one of {_KINDS}")

    @property
    def itemsize(self) -> int:
        """Size of one element in bytes (``Bool`` takes one byte)."""
        return max(1, self.bits // 8)

    @property
    def is_floating(self) -> bool:
        return self.kind == "float"

    @property
    def is_integral(self) -> bool:
        return self.kind in ("int", "uint")

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
            return dtype.kind in self.kinds
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

    __slots__ = ("fields", "_index", "_hash")

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
    Float16 = SimpleDType("float16", "float", 16)
    Float32 = SimpleDType("float32", "float", 32)
    Float64 = SimpleDType("float64", "float", 64)

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
_BY_NAME = {d.name: d for d in SIMPLE_DTYPES}
_PUBLIC_NAMES = {
    "bool": "Bool", "int8": "Int8", "int16": "Int16", "int32": "Int32",
    "int64": "Int64", "uint8": "UInt8", "float16": "Float16",
    "float32": "Float32", "float64": "Float64",
}


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


def _promote(a: SimpleDType, b: SimpleDType) -> SimpleDType:
    if a == b:
        return a
    if a.kind == b.kind:
        return a if a.bits >= b.bits else b
    kinds = {a.kind, b.kind}
    if kinds == {"int", "uint"}:
        # Array API: uint8 with intN -> the smallest signed type holding both.
        u, s = (a, b) if a.kind == "uint" else (b, a)
        wider = _signed_for_bits(max(s.bits, 2 * u.bits))
        if wider is not None:
            return wider
    raise TypeError(
        f"no Array API promotion between {a!r} and {b!r} (mixed kinds "
        f"{a.kind!r} and {b.kind!r}); cast one operand explicitly with astype"
    )


def _scalar_fits(value, dtype: SimpleDType) -> bool:
    if isinstance(value, bool):
        return dtype.kind == "bool"
    if isinstance(value, int):
        if dtype.kind == "float":
            return True
        if dtype.kind == "int":
            return -(1 << (dtype.bits - 1)) <= value < (1 << (dtype.bits - 1))
        if dtype.kind == "uint":
            return 0 <= value < (1 << dtype.bits)
        return False
    if isinstance(value, float):
        return dtype.kind == "float"
    return False


def result_type(a, b):
    """The Array API result dtype of combining ``a`` and ``b``.

    Each argument is a :class:`SimpleDType` or a Python scalar (``bool``,
    ``int``, ``float``).  A scalar never changes the other operand's dtype;
    it must be compatible with it (bool with Bool, int with integer or
    floating dtypes and within range, float with floating dtypes), else
    ``TypeError``.  At least one argument must be a dtype.
    """
    a_scalar = isinstance(a, (bool, int, float))
    b_scalar = isinstance(b, (bool, int, float))
    if a_scalar and b_scalar:
        raise TypeError(f"result_type needs at least one dtype, got two Python scalars {a!r} and {b!r}")
    for x, is_scalar in ((a, a_scalar), (b, b_scalar)):
        if not is_scalar and not isinstance(x, SimpleDType):
            raise TypeError(f"result_type expects SimpleDType or Python scalar arguments, got {x!r}")
    if a_scalar or b_scalar:
        value, dtype = (a, b) if a_scalar else (b, a)
        if not _scalar_fits(value, dtype):
            raise TypeError(
                f"Python scalar {value!r} ({type(value).__name__}) cannot combine with {dtype!r} "
                f"under Array API rules (it must fit the dtype's kind and range)"
            )
        return dtype
    return _promote(a, b)


def python_scalar_dtype(value) -> SimpleDType:
    """The default dtype of a Python scalar: float -> Float32, int -> Int32, bool -> Bool."""
    if isinstance(value, bool):
        return DType.Bool
    if isinstance(value, int):
        return DType.Int32
    if isinstance(value, float):
        return DType.Float32
    raise TypeError(f"expected a Python bool, int or float, got {value!r} ({type(value).__name__})")
