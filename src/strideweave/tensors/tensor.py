"""Tensor: constituent carriers viewed through a placement layout at an offset, with a logical dtype."""

from __future__ import annotations

import threading
import warnings
import weakref
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from .._generate import assignments, function, indent
from ..carriers import Carrier, named_device, transfer
from ..carriers.jax_carrier import holds_tracers
from ..dtypes import CompoundDType, DType, SimpleDType
from ..errors import Float32RuleError, ImplicitExportError
from ..layout import Layout

if TYPE_CHECKING:
    from typing_extensions import Self

__all__ = ["Tensor"]

_MATERIALIZING = threading.Lock()  # one carrier per lazily made result, even across threads

_FLOAT32 = DType.Float32


def to_numpy(array: Any) -> np.ndarray:
    """Host NumPy copy (or view, where the backend allows) of any native array."""
    if isinstance(array, np.ndarray):
        return array
    if type(array).__module__.startswith("torch"):
        return array.detach().cpu().resolve_conj().resolve_neg().numpy()  # lazy conjugates (ifft, ihfft)
    try:
        return np.asarray(array)
    except (TypeError, ValueError, RuntimeError):
        return np.from_dlpack(array)


#: Every field of a Tensor (its slots) and the expression a new Tensor starts with (None: each
#: constructor gives one). The constructors, and the recorders that make a result inline
#: (``ops._primitive``), are generated from this table: a new field is one line here.
TENSOR_FIELDS: dict[str, str | None] = {
    "_carrier_tuple": None,  # the carriers, or None while a lazily made result has none (``_raw``)
    "_raw": "None",  # a lazily made result's flat native buffer (``_from_raw``)
    "_kind": "None",  # that buffer's CarrierKind, set with ``_raw``
    "_layout": None,
    "_offset": "0",
    "_dtype": None,
    "_grad": "None",
    "_ctx": "None",
    "_retains_grad": "False",
    "_blocks": "None",
}


def tensor_fields(target: str, *, omit: tuple[str, ...] = (), **values: str) -> str:
    """Source setting every field of the Tensor ``target`` but ``omit``: ``values``' expressions, else start values."""
    return assignments(target, TENSOR_FIELDS, values, omit)


def _constructor(name: str, parameters: str, allocate: bool = True, doc: str | None = None,
                 **values: str) -> Callable[..., Any]:
    """A constructor that sets every field (``tensor_fields``); ``allocate``: it makes the Tensor itself."""
    body = "self = object.__new__(cls)\n" if allocate else ""
    body += assignments("self", TENSOR_FIELDS, values) + ("return self\n" if allocate else "")
    return function(name, f"def {name}({parameters}):\n{indent(body)}", globals(), f"Tensor.{name}", doc)


class Tensor:
    """A view, through a hierarchical ``layout`` at ``offset``, into flat carrier storage.

    Build Tensors with ``sw.tensor``, ``Tensor.from_storage``, the creation
    functions, or operations; the constructor itself takes already-built
    carriers and is meant for library authors.
    """

    __slots__ = ("__weakref__", *TENSOR_FIELDS)
    _carrier_tuple: tuple[Carrier, ...] | None
    _layout: Layout
    _offset: int
    # a SimpleDType, or a CompoundDType on a multi-carrier Tensor; the hot paths read a SimpleDType's
    # fields (``kind``) where only a one-carrier Tensor can arrive
    _dtype: Any
    _grad: Tensor | None
    _ctx: Any  # the Operation that made this Tensor (a floor above: not imported here), or None
    _retains_grad: bool
    _blocks: tuple[tuple[Tensor, ...], int] | None  # (blocks, the mode they concatenate) or None
    _raw: Any
    _kind: Any
    # Lets ``numpy_scalar * tensor`` reach Tensor.__rmul__ instead of NumPy.
    __array_priority__ = 1000

    def __init__(self, carriers: Carrier | Sequence[Carrier], layout: Layout, offset: int = 0,
                 dtype: SimpleDType | CompoundDType | None = None) -> None:
        if isinstance(carriers, Carrier):
            carriers = (carriers,)
        carriers = tuple(carriers)
        if not carriers or not all(isinstance(c, Carrier) for c in carriers):
            raise TypeError(f"Tensor needs one or more Carrier instances, got {carriers!r}")
        if not isinstance(layout, Layout):
            raise TypeError(f"layout must be a Layout, got {layout!r}")
        offset = _as_index(offset, "offset")
        if dtype is None:
            if len(carriers) != 1:
                raise ValueError("a Tensor with several carriers needs an explicit CompoundDType")
            dtype = carriers[0].dtype
        if isinstance(dtype, CompoundDType):
            if len(dtype.fields) != len(carriers):
                raise ValueError(f"{dtype!r} has {len(dtype.fields)} fields but {len(carriers)} carriers were given")
            for (name, field_dtype), carrier in zip(dtype.fields, carriers):
                if carrier.dtype != field_dtype:
                    raise ValueError(f"field {name!r} is {field_dtype!r} but its carrier holds {carrier.dtype!r}")
        elif not isinstance(dtype, SimpleDType):
            raise TypeError(f"dtype must be a SimpleDType or CompoundDType, got {dtype!r}")
        elif len(carriers) != 1 or carriers[0].dtype != dtype:
            raise ValueError(f"dtype {dtype!r} does not match the carrier dtype {carriers[0].dtype!r}")
        for carrier in carriers:
            if layout.size and offset + layout.cosize > carrier.size:
                raise ValueError(
                    f"storage of {carrier.size} elements is shorter than offset + layout.cosize = "
                    f"{offset} + {layout.cosize} for layout {layout}"
                )
        self._init(carriers, layout, offset, dtype)

    # The constructors, made from ``TENSOR_FIELDS`` (``_constructor``): ``_init`` fills a new
    # Tensor's fields; ``_make`` (one carrier) and ``_from_raw`` are the trusted hot-path ones.
    if TYPE_CHECKING:
        def _init(self, carriers: tuple[Carrier, ...], layout: Layout, offset: int, dtype: Any,
                  blocks: tuple[tuple[Tensor, ...], int] | None = None) -> None: ...
        @classmethod
        def _make(cls, carrier: Carrier, layout: Layout, offset: int = 0) -> Tensor: ...
        @classmethod
        def _from_raw(cls, array: Any, layout: Layout, kind: Any, dtype: SimpleDType) -> Tensor: ...
    else:
        _init = _constructor("_init", "self, carriers, layout, offset, dtype, blocks=None", allocate=False,
                             _carrier_tuple="carriers", _layout="layout", _offset="offset", _dtype="dtype",
                             _blocks="blocks")
        _make = classmethod(_constructor(
            "_make", "cls, carrier, layout, offset=0", _carrier_tuple="(carrier,)", _layout="layout",
            _offset="offset", _dtype="carrier._dtype",
            doc="Trusted hot-path constructor for a one-carrier Tensor (no validation)."))
        _from_raw = classmethod(_constructor(
            "_from_raw", "cls, array, layout, kind, dtype", _carrier_tuple="None", _raw="array", _kind="kind",
            _layout="layout", _dtype="dtype",
            doc="""A one-carrier result whose carrier object is made on first use (elementwise hot path).

            ``array`` is the whole flat buffer of a dense ``layout`` on ``kind``. Until
            something reads ``_carriers``, the buffer stays in ``_raw``: no carrier exists,
            so nothing can have written to it (version 0). Hot paths read ``_raw`` first
            (``tensors.values.flat_operand``).
            """))

    @property
    def _carriers(self) -> tuple:
        """The constituent carriers; a result made by ``_from_raw`` makes its carrier here, once."""
        carriers = self._carrier_tuple
        if carriers is None:
            return self._materialize()
        return carriers

    def _materialize(self) -> tuple:
        with _MATERIALIZING:
            carriers = self._carrier_tuple
            if carriers is None:  # not made by another thread meanwhile
                kind = self._kind
                carriers = (kind.cls._adopt(self._raw, kind.namespace, kind.device, kind),)
                self._carrier_tuple = carriers
                self._raw = None
                node = self._ctx
                if node is not None:
                    node._materialized(carriers)
        return carriers

    def _alias(self) -> Tensor:
        """A new Tensor over the same storage, with no autograd history."""
        alias = object.__new__(Tensor)
        alias._init(self._carriers, self._layout, self._offset, self._dtype, self._blocks)
        return alias

    # -- attributes ---------------------------------------------------------------------------
    @property
    def layout(self) -> Layout:
        return self._layout

    @property
    def shape(self) -> tuple[int, ...]:
        """Extents of the top-level modes, as in the Array API (``()`` for a 0-d Tensor).

        A nested mode counts as one axis of its total size; the hierarchical
        shape is ``layout.shape``.
        """
        return self._layout.mode_sizes

    @property
    def dtype(self) -> SimpleDType | CompoundDType:
        return self._dtype

    @property
    def offset(self) -> int:
        return self._offset

    @property
    def carriers(self) -> tuple[Carrier, ...]:
        """Every constituent carrier: one per compound field, or per subtensor."""
        return self._carriers

    @property
    def carrier(self) -> Carrier:
        """The single carrier; ValueError for a Tensor stored in several."""
        if len(self._carriers) != 1:
            raise ValueError(f"this Tensor has {len(self._carriers)} carriers; use .carriers")
        return self._carriers[0]

    @property
    def subtensors(self) -> tuple[Tensor, ...]:
        """The blocks of the authoritative representation (just ``(self,)`` in the common case)."""
        return (self,) if self._blocks is None else self._blocks[0]

    @property
    def device(self) -> Any:
        """The carrier's native device; a string one (NumPy's ``"cpu"``) also names the carrier (``NamedDevice``)."""
        return named_device(self._carriers[0])

    @property
    def size(self) -> int:
        return self._layout.size

    @property
    def rank(self) -> int:
        return self._layout.rank

    ndim = rank

    def __len__(self) -> int:
        sizes = self._layout.mode_sizes
        if not sizes:
            raise TypeError("len() of unsized object (a 0-d Tensor)")
        return sizes[0]

    # -- autograd surface (spec) ---------------------------------------------------------------
    def is_differentiable(self) -> bool:
        """True exactly when the logical dtype is DType.Float32."""
        return self._dtype is _FLOAT32

    def _require_differentiable(self, what: str) -> None:
        if self._dtype is not _FLOAT32:
            origin = lost_precision_origin(self)
            cause = "" if origin is None else (
                f"; it was computed from a Float32 Tensor that {origin}, and only Float32 is differentiable: "
                "keep that computation in float32 to differentiate through it")
            if origin is None and self._dtype in (DType.Float64, DType.Float16):
                cause = ("; only Float32 is differentiable: make the Tensors it depends on Float32 where "
                         "they are made, sw.tensor(a, dtype=sw.DType.Float32) or xp.asarray(a, dtype=xp.float32) "
                         "(a NumPy array is float64 unless told otherwise, and a wrapped array keeps its dtype), "
                         "or cast a leaf with xp.astype(x, xp.float32)")
            raise Float32RuleError(
                f"{what} needs a differentiable (Float32) Tensor, this one is {self._dtype!r}{cause}")

    @property
    def grad(self) -> Tensor | None:
        """Accumulated gradient (None until a traversal or a caller sets one).

        Reading it on a result that does not retain its gradient warns, as
        torch does: a traversal never fills it (``retain_grad()`` asks it to).
        """
        if self._dtype is not _FLOAT32:  # (the test inlined: read once per parameter and step)
            self._require_differentiable("reading .grad")
        if self._ctx is not None and self._grad is None and not self._retains_grad:
            _warn_non_leaf_grad(self)
        return self._grad

    @grad.setter
    def grad(self, value: Tensor | None) -> None:
        if value is None:
            self._grad = None
            return
        self._require_differentiable("assigning .grad")
        if not isinstance(value, Tensor):
            raise TypeError(f".grad must be a Tensor or None, got {type(value).__name__}")
        if value._layout.shape != self._layout.shape:
            raise ValueError(f".grad must have layout shape {self._layout.shape}, got {value._layout.shape}")
        self._grad = value

    @property
    def autograd_ctx(self):
        """The Operation that produced this Tensor (None for a leaf)."""
        return self._ctx

    @autograd_ctx.setter
    def autograd_ctx(self, operation) -> None:
        if operation is not None:
            self._require_differentiable("assigning autograd_ctx")
        self._ctx = operation

    @property
    def is_leaf(self) -> bool:
        return self._ctx is None

    @property
    def retains_grad(self) -> bool:
        return self._retains_grad

    def retain_grad(self, retain: bool = True) -> None:
        """Keep (or stop keeping) this Tensor's own gradient in ``.grad`` during traversals."""
        self._require_differentiable("retain_grad()")
        self._retains_grad = bool(retain)

    # torch's switches: StrideWeave has none (the dtype decides), so say what it has instead.
    @property
    def requires_grad(self):
        """Not a StrideWeave attribute: ``AttributeError`` explaining the model (``is_differentiable()``)."""
        raise AttributeError(_no_requires_grad("requires_grad", "t.requires_grad", self))

    @requires_grad.setter
    def requires_grad(self, value) -> None:
        raise AttributeError(_no_requires_grad("requires_grad", f"t.requires_grad = {value!r}", self))

    @property
    def requires_grad_(self):
        """Not a StrideWeave method: ``AttributeError`` explaining the model (``is_differentiable()``)."""
        raise AttributeError(_no_requires_grad("requires_grad_", "t.requires_grad_()", self))

    # -- values --------------------------------------------------------------------------------
    def rev_array(self) -> Any:
        """Native array with one axis per leaf mode, in reverse leaf order (see docs/internals.md)."""
        if self._blocks is not None:
            return blocks_rev_array(self)
        if len(self._carriers) != 1:
            raise TypeError(f"a {self._dtype!r} Tensor has one array per field; use to_array()")
        return self._carriers[0].gather_rev(self._layout, self._offset)

    def to_array(self) -> Any:
        """Native array with one axis per top-level mode (nested modes flattened colexicographically).

        A compound Tensor gives a dict of such arrays, one per field.
        """
        if self._blocks is None and not isinstance(self._dtype, CompoundDType):
            # The result may be a view of the buffer: writes through it must not go unseen.
            self._carriers[0].watch_external()
        return self._read_array()

    def _read_array(self) -> Any:
        """``to_array()`` for a read of StrideWeave's own that hands no view of the buffer out (the value is
        used and dropped, or copied): the buffer is not watched for writes from outside on its account."""
        if isinstance(self._dtype, CompoundDType):
            return {name: _modes_view(c.gather_rev(self._layout, self._offset), self._layout, c.namespace)
                    for (name, _), c in zip(self._dtype.fields, self._carriers)}
        return _modes_view(self.rev_array(), self._layout, self._carriers[0].namespace)

    def numpy(self) -> np.ndarray:
        """The values as a NumPy array with one axis per top-level mode."""
        return _host(self.to_array(), self._layout)

    def _read_numpy(self) -> np.ndarray:
        """``numpy()`` for a read that hands no view of the buffer out (see ``_read_array``)."""
        return _host(self._read_array(), self._layout)

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        refuse_implicit_export(self, "np.asarray(t) (t.__array__)")
        out = self.numpy()
        if dtype is not None:
            out = out.astype(dtype, copy=False)
        return np.array(out, copy=True) if copy else out

    def tolist(self) -> Any:
        return self._read_numpy().tolist()

    def item(self) -> Any:
        """The single value of a size-1 Tensor as a Python scalar."""
        if self._layout.size != 1:
            raise ValueError(f"item() needs a Tensor with exactly one element, this one has {self._layout.size}")
        return self._read_numpy().reshape(-1)[0].item()

    def __dlpack_device__(self):
        return self._dlpack_array().__dlpack_device__()

    def _dlpack_array(self) -> Any:
        array = self.to_array()
        # A lazy (Dask) array has no buffer to share until it is evaluated.
        return array if hasattr(array, "__dlpack__") else self.numpy()

    def __repr__(self) -> str:
        try:
            # Staged by JAX, the values exist only once the traced program runs.
            values = ("<traced by JAX>" if holds_tracers(self._carriers)
                      else np.array2string(self._read_numpy(), separator=", ", prefix="Tensor("))
        except Exception as exc:  # a repr must never raise
            values = f"<unreadable: {exc}>"
        carrier = "+".join(sorted({type(c).__name__ for c in self._carriers}))
        extra = ", grad_fn=" + type(self._ctx).__name__ if self._ctx is not None else ""
        return f"Tensor({values}, dtype={self._dtype!r}, layout={self._layout}, carrier={carrier}{extra})"

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    # Operators and the method forms of the op library are attached by
    # strideweave._methods (one place, after the namespace exists), so this
    # module never imports the op library.
    __hash__ = object.__hash__

    if TYPE_CHECKING:
        # Attached at import by ``strideweave._methods`` and ``_numpy_methods`` (they need the floors
        # above this one); declared here for type checkers only.
        def backward(self, gradient: Tensor | None = None, retain_graph: bool = False) -> None: ...
        @staticmethod
        def backwards_traversal(gradient: Tensor, operation: Any, retain_graph: bool = False) -> None: ...
        @classmethod
        def from_storage(cls, storage: Any, layout: Layout, dtype: SimpleDType | None = None, *, offset: int = 0,
                         carrier: Any = None, device: Any = None) -> Tensor: ...
        @classmethod
        def from_subtensors(cls, blocks: Sequence[Tensor], mode: int = 0) -> Tensor: ...
        def compute(self) -> Tensor: ...
        def __copy__(self) -> Tensor: ...
        def __deepcopy__(self, memo: Any) -> Tensor: ...
        def fill_(self, value: Any) -> Tensor: ...
        def copy_(self, source: Any) -> Tensor: ...
        def add_(self, other: Any) -> Tensor: ...
        def exp(self) -> Tensor: ...
        def log(self) -> Tensor: ...
        def sqrt(self) -> Tensor: ...
        def sin(self) -> Tensor: ...
        def cos(self) -> Tensor: ...
        def tanh(self) -> Tensor: ...
        def abs(self) -> Tensor: ...
        def copy(self) -> Tensor: ...
        def detach(self) -> Tensor: ...
        def matmul(self, other: Any) -> Tensor: ...
        def clip(self, min: Any = None, max: Any = None) -> Tensor: ...
        def maximum(self, other: Any) -> Tensor: ...
        def minimum(self, other: Any) -> Tensor: ...
        def view(self, *shape: Any) -> Tensor: ...
        def broadcast_to(self, shape: Any) -> Tensor: ...
        @property
        def T(self) -> Tensor: ...
        @property
        def mT(self) -> Tensor: ...
        def to_device(self, device: Any, /, *, stream: Any = None) -> Tensor: ...
        def reshape(self, *shape: Any, order: str = "C", copy: bool | None = None) -> Tensor: ...
        def flatten(self, order: str = "C") -> Tensor: ...
        def ravel(self, order: str = "C") -> Tensor: ...
        def squeeze(self, axis: Any = None) -> Tensor: ...
        def transpose(self, *axes: Any) -> Tensor: ...
        def permute(self, *axes: Any) -> Tensor: ...
        def sum(self, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False) -> Tensor: ...
        def prod(self, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False) -> Tensor: ...
        def mean(self, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False) -> Tensor: ...
        def cumsum(self, axis: Any = None, dtype: Any = None, out: Any = None) -> Tensor: ...
        def clone(self) -> Tensor: ...
        def astype(self, dtype: Any, /, *, copy: bool = True, device: Any = None) -> Tensor: ...
        def round(self, decimals: int = 0, out: Any = None) -> Tensor: ...
        def max(self, axis: Any = None, out: Any = None, keepdims: bool = False) -> Tensor: ...
        def min(self, axis: Any = None, out: Any = None, keepdims: bool = False) -> Tensor: ...
        def std(self, axis: Any = None, dtype: Any = None, out: Any = None, ddof: Any = 0, keepdims: bool = False,
                *, correction: Any = None) -> Tensor: ...
        def var(self, axis: Any = None, dtype: Any = None, out: Any = None, ddof: Any = 0, keepdims: bool = False,
                *, correction: Any = None) -> Tensor: ...
        def argmax(self, axis: Any = None, out: Any = None, *, keepdims: bool = False) -> Tensor: ...
        def argmin(self, axis: Any = None, out: Any = None, *, keepdims: bool = False) -> Tensor: ...
        def any(self, axis: Any = None, out: Any = None, keepdims: bool = False) -> Tensor: ...
        def all(self, axis: Any = None, out: Any = None, keepdims: bool = False) -> Tensor: ...
        def __add__(self, other: Any) -> Tensor: ...
        def __radd__(self, other: Any) -> Tensor: ...
        def __iadd__(self, other: Any) -> Self: ...
        def __sub__(self, other: Any) -> Tensor: ...
        def __rsub__(self, other: Any) -> Tensor: ...
        def __isub__(self, other: Any) -> Self: ...
        def __mul__(self, other: Any) -> Tensor: ...
        def __rmul__(self, other: Any) -> Tensor: ...
        def __imul__(self, other: Any) -> Self: ...
        def __truediv__(self, other: Any) -> Tensor: ...
        def __rtruediv__(self, other: Any) -> Tensor: ...
        def __itruediv__(self, other: Any) -> Self: ...
        def __floordiv__(self, other: Any) -> Tensor: ...
        def __rfloordiv__(self, other: Any) -> Tensor: ...
        def __ifloordiv__(self, other: Any) -> Self: ...
        def __mod__(self, other: Any) -> Tensor: ...
        def __rmod__(self, other: Any) -> Tensor: ...
        def __imod__(self, other: Any) -> Self: ...
        def __pow__(self, other: Any) -> Tensor: ...
        def __rpow__(self, other: Any) -> Tensor: ...
        def __ipow__(self, other: Any) -> Self: ...
        def __matmul__(self, other: Any) -> Tensor: ...
        def __rmatmul__(self, other: Any) -> Tensor: ...
        def __imatmul__(self, other: Any) -> Self: ...
        def __and__(self, other: Any) -> Tensor: ...
        def __rand__(self, other: Any) -> Tensor: ...
        def __iand__(self, other: Any) -> Self: ...
        def __or__(self, other: Any) -> Tensor: ...
        def __ror__(self, other: Any) -> Tensor: ...
        def __ior__(self, other: Any) -> Self: ...
        def __xor__(self, other: Any) -> Tensor: ...
        def __rxor__(self, other: Any) -> Tensor: ...
        def __ixor__(self, other: Any) -> Self: ...
        def __lshift__(self, other: Any) -> Tensor: ...
        def __rlshift__(self, other: Any) -> Tensor: ...
        def __ilshift__(self, other: Any) -> Self: ...
        def __rshift__(self, other: Any) -> Tensor: ...
        def __rrshift__(self, other: Any) -> Tensor: ...
        def __irshift__(self, other: Any) -> Self: ...
        def __lt__(self, other: Any) -> Tensor: ...
        def __le__(self, other: Any) -> Tensor: ...
        def __gt__(self, other: Any) -> Tensor: ...
        def __ge__(self, other: Any) -> Tensor: ...
        # Elementwise, as in NumPy and the Array API: a Tensor rather than object's bool.
        def __eq__(self, other: object) -> Tensor: ...  # type: ignore[override]
        def __ne__(self, other: object) -> Tensor: ...  # type: ignore[override]
        def __neg__(self) -> Tensor: ...
        def __pos__(self) -> Tensor: ...
        def __abs__(self) -> Tensor: ...
        def __invert__(self) -> Tensor: ...
        def __getitem__(self, key: Any) -> Tensor: ...
        def __setitem__(self, key: Any, value: Any) -> None: ...
        def __index__(self) -> int: ...
        def __complex__(self) -> complex: ...
        def __float__(self) -> float: ...
        def __int__(self) -> int: ...
        def __bool__(self) -> bool: ...
        def __array_namespace__(self, /, *, api_version: str | None = None) -> Any: ...
        def __dlpack__(self, *, stream: Any = None, max_version: Any = None, dl_device: Any = None,
                       copy: bool | None = None) -> Any: ...
        def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any: ...
        def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any: ...



def _no_requires_grad(name: str, what: str, tensor: Tensor) -> str:
    state = "is" if tensor._dtype is _FLOAT32 else f"is not (it is {tensor._dtype!r})"
    return (f"'Tensor' object has no attribute '{name}' ({what}): in StrideWeave every Float32 Tensor is "
            f"differentiable and no other is, so there is nothing to switch on; this one {state}, as "
            f"t.is_differentiable() says. To keep a computation out of the graph, run it under "
            f"`with sw.no_grad():`, or use t.detach() for a Tensor with the values and no history")


def _warn_non_leaf_grad(tensor: Tensor) -> None:
    warnings.warn(
        f"The .grad attribute of a Tensor that is not a leaf is being read (it is the result of "
        f"{type(tensor._ctx).__name__}); backward does not fill it, so it is None. Call t.retain_grad() before "
        f"backward to keep this Tensor's gradient. If it is meant to be a parameter, make it a leaf: an "
        f"initialisation such as `w = sw.random.normal(shape, seed=0) * s` makes w the result of a "
        f"multiplication; run it under `with sw.no_grad():` or detach it (`w = (...).detach()`)",
        UserWarning, stacklevel=3)


def blocks_rev_array(t: Tensor, kind: Any = None) -> Any:
    """The rev array of a multi-subtensor Tensor on ``kind`` (default: its first block's): its blocks joined."""
    blocks, mode = t._blocks  # type: ignore[misc]  # called for a multi-subtensor Tensor only
    kind = kind if kind is not None else blocks[0]._carriers[0].kind
    xp = kind.namespace
    parts = []
    for block in blocks:
        values = transfer(block._carriers[0].gather_rev(block._layout, block._offset), kind)
        parts.append(xp.reshape(values, block._layout.mode_sizes[::-1]))
    joined = xp.concat(parts, axis=t._layout.rank - 1 - mode)
    return xp.reshape(joined, t._layout.rev_leaf_shape)


# Where a differentiable computation left Float32 (an ``astype`` to float64, a
# promotion with a float64 operand): id -> (weak reference, description). The
# record follows the values through later non-Float32 operations, so a
# ``backward`` on the final result can point at the cast instead of only
# saying the dtype is wrong. Entries vanish with their Tensors.
_LOST_PRECISION: dict = {}


def refuse_implicit_export(tensor: Tensor, how: str) -> None:
    """TypeError when ``how`` (``__array__``, ``__dlpack__``) would hand another library a graph Tensor's values.

    The receiving library computes without StrideWeave, so the gradient
    through its result would be cut silently (torch refuses the same). A
    Tensor with an autograd node, or a non-Float32 one computed while
    recording from a Float32 Tensor that has one, must be detached first; leaves and
    detached Tensors export freely, and ``numpy()`` / ``to_array()`` /
    ``tolist()`` / ``item()`` are explicit and stay.
    """
    node = tensor._ctx
    if node is not None:
        what = f"has an autograd node ({type(node).__name__})"
    else:
        origin = lost_precision_origin(tensor) if _LOST_PRECISION else None
        if origin is None or not lost_precision_from_graph(tensor):
            return  # computed from leaves only: as free to leave as the leaves themselves
        what = f"is {tensor._dtype!r}, computed from a Float32 Tensor that {origin}"
    raise ImplicitExportError(
        f"{how}: this Tensor {what}, and another library computing on its values would cut the gradient "
        "silently; call t.detach() first to say the values leave the graph (np.asarray(t.detach()), "
        "t.detach().numpy()), or compute with strideweave.array_api to differentiate through it")


def flat_values(tensor: Tensor) -> Any:
    """The flat buffer of a Tensor known to be dense and alone on its one carrier (raw or made)."""
    raw = tensor._raw
    return (tensor._carrier_tuple or tensor._materialize())[0]._array if raw is None else raw


def lost_precision_origin(tensor: Tensor) -> str | None:
    """Where ``tensor``'s values left Float32 while gradients were being recorded, if they did."""
    entry = _LOST_PRECISION.get(id(tensor))
    return entry[1] if entry is not None and entry[0]() is tensor else None


def lost_precision_from_graph(tensor: Tensor) -> bool:
    """Whether the Float32 Tensor ``tensor``'s values left (``lost_precision_origin``) had an autograd node."""
    entry = _LOST_PRECISION.get(id(tensor))
    return entry is not None and entry[0]() is tensor and entry[2]


def record_lost_precision(result: Tensor, origin: str, from_graph: bool = True) -> None:
    key = id(result)

    def forget(_: object, key: int = key) -> None:
        _LOST_PRECISION.pop(key, None)

    _LOST_PRECISION[key] = (weakref.ref(result, forget), origin, from_graph)


def _as_index(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an int, got {value!r}")
    if value < 0:
        raise ValueError(f"{name} must be >= 0, got {value}")
    return int(value)


def _host(values: Any, layout: Layout) -> np.ndarray:
    """``values`` (``to_array``'s result) on the host: a structured array for a compound Tensor's dict."""
    if not isinstance(values, dict):
        return to_numpy(values)
    arrays = {k: to_numpy(v) for k, v in values.items()}
    out = np.empty(layout.mode_sizes, dtype=[(k, v.dtype) for k, v in arrays.items()])
    for k, v in arrays.items():
        out[k] = v
    return out


def _modes_view(rev: Any, layout: Layout, xp: Any) -> Any:
    """Turn a rev array into one axis per top-level mode, in natural mode order."""
    mode_sizes = layout.mode_sizes
    if len(mode_sizes) == 1:
        return rev if rev.ndim == 1 else xp.reshape(rev, mode_sizes)
    if rev.ndim != len(mode_sizes):
        rev = xp.reshape(rev, mode_sizes[::-1])
    return xp.permute_dims(rev, tuple(range(len(mode_sizes) - 1, -1, -1)))

