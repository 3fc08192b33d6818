"""Write, then read: every namespace function sees the values its input holds when it is called.

For every function of ``strideweave.array_api`` (main namespace, ``linalg``,
``fft``, ``special``; enumerated from their ``__all__``, so a new function
fails ``test_every_function_is_covered`` until it is listed here), on every
carrier and for inputs laid out four ways (row-major as NumPy hands them
over, colexicographic, a strided slice of a larger buffer, a permuted strided
slice): call it, write new values into every input (under ``no_grad``, then
one element as a Python scalar outside it), call it again, and
compare both results with NumPy (``array_api_compat.numpy``; SciPy for
``special``) on the values the inputs held at each call. A cache keyed on a
Tensor, or any other read of values from before the write, fails here.
"""

from __future__ import annotations

import types
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
import pytest

import strideweave as sw
import strideweave.array_api as xp

compat_np = pytest.importorskip("array_api_compat.numpy")
scipy_special = pytest.importorskip("scipy.special")

_CARRIERS = {"numpy": "numpy", "torch": "torch", "jax": "jax", "array_api_strict": "array_api_strict"}
LAYOUTS = ("row-major", "colexicographic", "sliced", "permuted-sliced")
#: JAX compiles a kernel per operation and layout (about 70 ms each): there the plain and the most
#: permuted layout only, to keep this file's CI time modest; the other carriers run all four.
LAYOUTS_ON = {"jax": ("row-major", "permuted-sliced")}

# ----- input makers: one valid sample per seed, float32 unless said ----------------------------------


def _rng(seed):
    return np.random.default_rng(seed)


def real(shape=(4, 4)):
    return lambda seed: _rng(seed).standard_normal(shape).astype(np.float32)


def between(lo, hi, shape=(4, 4)):
    return lambda seed: _rng(seed).uniform(lo, hi, shape).astype(np.float32)


def ints(lo, hi, shape=(4, 4)):
    return lambda seed: _rng(seed).integers(lo, hi, shape).astype(np.int32)


def bools(shape=(4, 4)):
    return lambda seed: _rng(seed).random(shape) < 0.5


def repeated(shape=(4, 4)):
    # float values with repeats, for the unique functions
    return lambda seed: _rng(seed).integers(0, 4, shape).astype(np.float32)


def spd(n=4):
    """Symmetric positive definite with well separated eigenvalues (unique eigenvectors up to sign)."""
    def make(seed):
        q, _ = np.linalg.qr(_rng(seed).standard_normal((n, n)))
        return ((q * (np.arange(1, n + 1) * 1.5 + _rng(seed).uniform(0, 0.5, n))) @ q.T).astype(np.float32)
    return make


def sorted_1d(n=6):
    return lambda seed: np.sort(_rng(seed).standard_normal(n)).astype(np.float32)


def complexes(shape=(4, 4)):
    return lambda seed: (_rng(seed).standard_normal(shape) + 1j * _rng(seed + 99).standard_normal(shape)
                         ).astype(np.complex64)


class Case(NamedTuple):
    """How to call one function: ``call(ns, *inputs)`` runs on StrideWeave and on the reference alike."""

    makers: tuple
    call: Callable
    compare: str = "values"  # "values", "abs" (decompositions defined up to sign), "shape" (empty_like)


def unary(maker=None):
    return lambda name: Case((maker or real(),), lambda ns, a: _fn(ns, name)(a))


def binary(m1=None, m2=None):
    return lambda name: Case((m1 or real(), m2 or real()), lambda ns, a, b: _fn(ns, name)(a, b))


def _fn(ns, name):
    for part in name.split("."):
        ns = getattr(ns, part)
    return ns


UNARY_REAL = ["abs", "asinh", "atan", "ceil", "cos", "cosh", "exp", "exp2", "expm1", "floor", "isfinite", "isinf",
              "isnan", "negative", "positive", "round", "sign", "signbit", "sin", "sinh", "square", "tanh",
              "trunc", "real", "conj", "imag", "max", "min", "mean", "prod", "std", "sum", "var", "sort",
              "argsort", "argmax", "argmin", "flip", "matrix_transpose", "tril", "triu", "nonzero",
              "count_nonzero", "zeros_like", "ones_like", "unstack", "diff", "asarray", "from_dlpack",
              "special.erf", "special.erfc", "special.expit", "special.ndtr", "special.log_ndtr",
              "linalg.matrix_norm", "linalg.vector_norm", "linalg.diagonal", "linalg.trace", "linalg.svdvals",
              "linalg.matrix_transpose", "fft.rfft", "fft.rfftn",
              "fft.ihfft", "fft.fftshift", "fft.ifftshift"]
UNARY_DOMAIN = {
    "acos": between(-0.9, 0.9), "asin": between(-0.9, 0.9), "atanh": between(-0.9, 0.9),
    "acosh": between(1.1, 3.0), "log": between(0.2, 3.0), "log10": between(0.2, 3.0),
    "log2": between(0.2, 3.0), "log1p": between(-0.5, 3.0), "sqrt": between(0.1, 3.0),
    "reciprocal": between(0.5, 2.0), "tan": between(-1.0, 1.0), "bitwise_invert": ints(-8, 8),
    "logical_not": bools(), "all": bools(), "any": bools(),
    "unique_values": repeated(), "unique_counts": repeated(), "unique_inverse": repeated(),
    "unique_all": repeated(),
    "special.logit": between(0.1, 0.9), "special.ndtri": between(0.1, 0.9), "special.entr": between(0.1, 2.0),
    "special.gammaln": between(0.2, 4.0), "special.digamma": between(0.2, 4.0), "special.psi": between(0.2, 4.0),
    "linalg.cholesky": spd(), "linalg.det": spd(), "linalg.eigvalsh": spd(), "linalg.inv": spd(),
    "linalg.matrix_rank": spd(), "linalg.pinv": spd(),
    "fft.fft": complexes(), "fft.fftn": complexes(), "fft.ifft": complexes(), "fft.ifftn": complexes(),
    "fft.irfft": complexes(), "fft.irfftn": complexes(), "fft.hfft": complexes(),
}
BINARY_REAL = ["add", "atan2", "copysign", "hypot", "logaddexp", "maximum", "minimum", "multiply", "subtract",
               "equal", "not_equal", "greater", "greater_equal", "less", "less_equal", "nextafter", "matmul",
               "linalg.matmul", "vecdot", "linalg.vecdot", "special.xlogy"]
BINARY_DOMAIN = {
    "divide": (real(), between(0.5, 2.0)), "floor_divide": (real(), between(0.5, 2.0)),
    "remainder": (real(), between(0.5, 2.0)), "pow": (between(0.5, 2.0), real()),
    "bitwise_and": (ints(-8, 8), ints(-8, 8)), "bitwise_or": (ints(-8, 8), ints(-8, 8)),
    "bitwise_xor": (ints(-8, 8), ints(-8, 8)), "bitwise_left_shift": (ints(-8, 8), ints(0, 4)),
    "bitwise_right_shift": (ints(-8, 8), ints(0, 4)),
    "logical_and": (bools(), bools()), "logical_or": (bools(), bools()), "logical_xor": (bools(), bools()),
    "special.xlog1py": (real(), between(-0.5, 2.0)), "special.binom": (between(2.0, 6.0), between(0.0, 2.0)),
    "linalg.solve": (spd(), real()),
}

CASES: dict[str, Case] = {}
for _name in UNARY_REAL:
    CASES[_name] = unary()(_name)
for _name, _maker in UNARY_DOMAIN.items():
    CASES[_name] = unary(_maker)(_name)
for _name in BINARY_REAL:
    CASES[_name] = binary()(_name)
for _name, (_m1, _m2) in BINARY_DOMAIN.items():
    CASES[_name] = binary(_m1, _m2)(_name)

# Functions that need other arguments than one or two same-shape arrays.
CASES.update({
    "clip": Case((real(), between(-1.0, -0.2), between(0.2, 1.0)), lambda ns, a, lo, hi: ns.clip(a, lo, hi)),
    "where": Case((bools(), real(), real()), lambda ns, c, a, b: ns.where(c, a, b)),
    "cumulative_sum": Case((real(),), lambda ns, a: ns.cumulative_sum(a, axis=0)),
    "cumulative_prod": Case((real(),), lambda ns, a: ns.cumulative_prod(a, axis=1)),
    "cumsum": Case((real(),), lambda ns, a: ns.cumsum(a, axis=0)),
    "cumprod": Case((real(),), lambda ns, a: ns.cumprod(a, axis=1)),
    "astype": Case((real(),), lambda ns, a: ns.astype(a, ns.int32)),
    "to_device": Case((real(),), lambda ns, a: ns.to_device(a, a.device)),
    "empty_like": Case((real(),), lambda ns, a: ns.empty_like(a), compare="shape"),
    "full_like": Case((real(),), lambda ns, a: ns.full_like(a, 2.5)),
    "broadcast_arrays": Case((real(), real((1, 4))), lambda ns, a, b: ns.broadcast_arrays(a, b)),
    "broadcast_to": Case((real((4, 1)),), lambda ns, a: ns.broadcast_to(a, (2, 4, 3))),
    "concat": Case((real(), real((2, 4))), lambda ns, a, b: ns.concat([a, b], axis=0)),
    "stack": Case((real(), real()), lambda ns, a, b: ns.stack([a, b], axis=1)),
    "expand_dims": Case((real(),), lambda ns, a: ns.expand_dims(a, axis=1)),
    "squeeze": Case((real((4, 1)),), lambda ns, a: ns.squeeze(a, axis=1)),
    "moveaxis": Case((real((2, 3, 4)),), lambda ns, a: ns.moveaxis(a, 0, 2)),
    "permute_dims": Case((real((2, 3, 4)),), lambda ns, a: ns.permute_dims(a, (2, 0, 1))),
    "reshape": Case((real(),), lambda ns, a: ns.reshape(a, (2, 8))),
    "repeat": Case((real(),), lambda ns, a: ns.repeat(a, 2, axis=0)),
    "roll": Case((real(),), lambda ns, a: ns.roll(a, 1, axis=1)),
    "tile": Case((real(),), lambda ns, a: ns.tile(a, (2, 1))),
    "take": Case((real(), ints(0, 4, (3,))), lambda ns, a, i: ns.take(a, i, axis=0)),
    "take_along_axis": Case((real(), ints(0, 4, (2, 4))), lambda ns, a, i: ns.take_along_axis(a, i, axis=0)),
    "searchsorted": Case((sorted_1d(), real((5,))), lambda ns, s, v: ns.searchsorted(s, v)),
    "tensordot": Case((real(), real()), lambda ns, a, b: ns.tensordot(a, b, axes=1)),
    "linalg.tensordot": Case((real(), real()), lambda ns, a, b: ns.linalg.tensordot(a, b, axes=1)),
    "meshgrid": Case((real((3,)), real((4,))), lambda ns, a, b: ns.meshgrid(a, b)),
    "linalg.cross": Case((real((4, 3)), real((4, 3))), lambda ns, a, b: ns.linalg.cross(a, b)),
    "linalg.outer": Case((real((4,)), real((3,))), lambda ns, a, b: ns.linalg.outer(a, b)),
    "linalg.matrix_power": Case((real(),), lambda ns, a: ns.linalg.matrix_power(a, 3)),
    "linalg.slogdet": Case((spd(),), lambda ns, a: ns.linalg.slogdet(a)),
    "linalg.eigh": Case((spd(),), lambda ns, a: ns.linalg.eigh(a), compare="abs"),
    "linalg.svd": Case((spd(),), lambda ns, a: ns.linalg.svd(a), compare="abs"),
    "linalg.qr": Case((real(),), lambda ns, a: ns.linalg.qr(a), compare="abs"),
    # beyond the standard, for the consumer libraries (NumPy's meaning)
    "einsum": Case((real(), real()), lambda ns, a, b: ns.einsum("ij,kj->ik", a, b)),
    "gradient": Case((real(),), lambda ns, a: ns.gradient(a, axis=0)),
    "isin": Case((ints(0, 6), ints(0, 6, (3,))), lambda ns, a, b: ns.isin(a, b)),
    "pad": Case((real(),), lambda ns, a: ns.pad(a, ((1, 0), (0, 2)), constant_values=0.5)),
    "quantile": Case((real(),), lambda ns, a: ns.quantile(a, 0.3, axis=0)),
    "transpose": Case((real((2, 3, 4)),), lambda ns, a: ns.transpose(a, (1, 2, 0))),
    "special.betainc": Case((between(0.5, 3.0), between(0.5, 3.0), between(0.1, 0.9)),
                            lambda ns, a, b, x: ns.special.betainc(a, b, x)),
    "special.betaincc": Case((between(0.5, 3.0), between(0.5, 3.0), between(0.1, 0.9)),
                             lambda ns, a, b, x: ns.special.betaincc(a, b, x)),
})

#: Functions that read no Tensor's values, so no write can change what they return.
SKIPPED = {
    "arange": "reads no Tensor (creation from scalars)",
    "empty": "reads no Tensor (creation from a shape)",
    "eye": "reads no Tensor (creation from a shape)",
    "full": "reads no Tensor (creation from a shape)",
    "linspace": "reads no Tensor (creation from scalars)",
    "ones": "reads no Tensor (creation from a shape)",
    "zeros": "reads no Tensor (creation from a shape)",
    "fft.fftfreq": "reads no Tensor (creation from scalars)",
    "fft.rfftfreq": "reads no Tensor (creation from scalars)",
    "can_cast": "reads dtypes only",
    "result_type": "reads dtypes only",
    "isdtype": "reads dtypes only",
    "default_int": "reads no Tensor (the default integer dtype)",
    "inferred_shape": "reads a shape and a size only (reshape's -1), no values",
}

# ----- the reference namespace ------------------------------------------------------------------------

REF = types.SimpleNamespace(**{n: getattr(compat_np, n) for n in dir(compat_np) if not n.startswith("__")})
REF.special = scipy_special
REF.fft = compat_np.fft
REF.linalg = compat_np.linalg
REF.to_device = lambda x, device: x  # one device: the identity, as array_api_compat.to_device is


def _namespace_functions() -> list[str]:
    names = []
    for prefix, module in (("", xp), ("linalg.", xp.linalg), ("fft.", xp.fft), ("special.", xp.special)):
        for name in module.__all__:
            obj = getattr(module, name)
            if callable(obj) and not isinstance(obj, (type, types.ModuleType)) and not isinstance(obj, sw.DType):
                names.append(prefix + name)
    return names


def test_every_function_is_covered():
    names = _namespace_functions()
    assert len(names) > 150
    missing = [n for n in names if n not in CASES and n not in SKIPPED]
    assert not missing, f"namespace functions with no write-then-read case and no documented skip: {missing}"
    stale = [n for n in list(CASES) + list(SKIPPED) if n not in names]
    assert not stale, f"cases for functions the namespace does not have: {stale}"
    # (``finfo`` and ``iinfo`` are classes over a dtype: they read no Tensor.)


# ----- inputs in four layouts -------------------------------------------------------------------------

def _make(values: np.ndarray, layout: str, device: str) -> Any:
    """A Tensor holding ``values`` on ``device``'s carrier, stored in ``layout``."""
    nd = values.ndim
    with sw.no_grad():
        if nd == 0 or layout == "row-major":
            return xp.asarray(values.copy(), device=device)
        if layout == "colexicographic":
            dtype = xp.asarray(values.flat[:1]).dtype
            t = sw.zeros(sw.Shape(list(values.shape)), dtype=dtype, carrier=device)
            t[...] = xp.asarray(values.copy(), device=device)
            return t
        inner = (slice(1, None, 2),) * nd
        if layout == "sliced":
            big = np.zeros(tuple(2 * n + 1 for n in values.shape), dtype=values.dtype)
            big[inner] = values
            return xp.asarray(big, device=device)[inner]
        assert layout == "permuted-sliced"
        flipped = np.transpose(values)
        big = np.zeros(tuple(2 * n + 1 for n in flipped.shape), dtype=values.dtype)
        big[inner] = flipped
        return xp.permute_dims(xp.asarray(big, device=device)[inner], tuple(range(nd - 1, -1, -1)))


def _write(t: Any, values: np.ndarray) -> None:
    """Write ``values`` into ``t`` in two writes, both of which change values.

    Under ``no_grad`` all of ``values`` but the first element (an update), then
    that element as a Python scalar outside ``no_grad`` (a constant into a leaf).
    """
    first = (0,) * values.ndim
    staged = values.copy()
    staged[first] = ~values[first] if values.dtype == np.bool_ else values[first] + 1
    with sw.no_grad():
        t[...] = xp.asarray(staged, device=t.device)
    t[first] = values[first].item()


# ----- comparison -------------------------------------------------------------------------------------

def _host(value: Any) -> Any:
    if isinstance(value, sw.Tensor):
        return np.asarray(value.numpy())
    if isinstance(value, (tuple, list)):
        return [_host(v) for v in value]
    return np.asarray(value)


def _leaves(value: Any) -> list:
    if isinstance(value, (tuple, list)):
        return [leaf for v in value for leaf in _leaves(v)]
    return [value]


def _check(got: Any, want: Any, compare: str, what: str) -> None:
    got, want = _leaves(_host(got)), _leaves(want)
    assert len(got) == len(want), f"{what}: {len(got)} outputs, NumPy gives {len(want)}"
    for g, w in zip(got, want):
        w = np.asarray(w)
        assert tuple(g.shape) == tuple(w.shape), f"{what}: shape {g.shape}, NumPy gives {w.shape}"
        if compare == "shape":
            continue
        if compare == "abs":
            g, w = np.abs(g), np.abs(w)
        if w.dtype == np.bool_ or np.issubdtype(w.dtype, np.integer):
            np.testing.assert_array_equal(g, w, err_msg=what)
        else:
            np.testing.assert_allclose(g.astype(w.dtype) if np.iscomplexobj(w) else g.astype(np.float64),
                                       w if np.iscomplexobj(w) else w.astype(np.float64),
                                       rtol=2e-4, atol=2e-5, err_msg=what)


@pytest.fixture(params=list(_CARRIERS))
def carrier(request):
    pytest.importorskip(_CARRIERS[request.param])
    return request.param


@pytest.mark.parametrize("name", sorted(CASES))
def test_write_then_read(carrier, name):
    case = CASES[name]
    first = [make(1) for make in case.makers]
    second = [make(2) for make in case.makers]
    for layout in LAYOUTS_ON.get(carrier, LAYOUTS):
        inputs = [_make(a, layout, carrier) for a in first]
        what = f"{name} on {carrier}, {layout} inputs"
        _check(case.call(xp, *inputs), case.call(REF, *first), case.compare, what + ", before the write")
        for t, b in zip(inputs, second):
            _write(t, b)
        _check(case.call(xp, *inputs), case.call(REF, *second), case.compare, what + ", after the write")
