"""The scaling benchmark's table: one row per namespace function and Tensor operator, with its inputs.

A row is ``Case(name, program, inputs, torch=None, growth=1.0)``. ``program(xp, *args)``
is written once against the Array API namespace and runs on ``strideweave.array_api``
and on ``array_api_compat.torch``; ``torch(torch_module, *args)`` replaces it on torch
where torch spells the function otherwise (``None`` in that slot: no torch reference).
``inputs`` names each argument by a token of ``INPUTS``: float tokens are the
differentiated inputs (Float32 / float32 leaves), the others are constants.
``growth`` is the exponent of the work in ``n`` (1 for elementwise, 1.5 for matrix
products and factorisations of ``sqrt(n) / 2``-square matrices), the yardstick for
rows without a torch reference. ``UNBENCHMARKED`` lists the names of
``strideweave.array_api`` that are no operation on arrays, with the reason.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Case:
    name: str
    program: object                 # program(xp, *args)
    inputs: tuple                   # tokens of INPUTS
    torch: object = "same"          # "same": program on array_api_compat.torch; None: no reference
    growth: float = 1.0
    note: str = ""                  # why a row has no torch reference


def _side(n: int) -> int:
    return max(2, math.isqrt(n))


def _lin(n: int) -> int:
    return max(2, math.isqrt(n) // 2)


def _spd(rng, q):
    a = rng.standard_normal((q, q))
    return a @ a.T / q + np.eye(q)


# token -> (maker(n, rng) -> numpy array, differentiated)
INPUTS = {
    "x": (lambda n, r: r.standard_normal(n), True),
    "y": (lambda n, r: r.standard_normal(n), True),
    "pos": (lambda n, r: r.uniform(0.5, 2.0, n), True),
    "pos2": (lambda n, r: r.uniform(0.5, 2.0, n), True),
    "unit": (lambda n, r: r.uniform(-0.9, 0.9, n), True),
    "prob": (lambda n, r: r.uniform(0.05, 0.95, n), True),
    "gt1": (lambda n, r: r.uniform(1.1, 3.0, n), True),
    "near1": (lambda n, r: 1.0 + r.uniform(-1.0, 1.0, n) / n, True),
    "zero1": (lambda n, r: np.where(np.arange(n) == n // 2, 0.0, 1.0 + r.uniform(-1.0, 1.0, n) / n), True),
    "M": (lambda n, r: r.standard_normal((_side(n), _side(n))), True),
    "N": (lambda n, r: r.standard_normal((_side(n), _side(n))), True),
    "row": (lambda n, r: r.standard_normal(_side(n)), True),
    "row2": (lambda n, r: r.standard_normal(_side(n)), True),
    "v3": (lambda n, r: r.standard_normal((max(1, n // 3), 3)), True),
    "w3": (lambda n, r: r.standard_normal((max(1, n // 3), 3)), True),
    "L": (lambda n, r: r.standard_normal((_lin(n), _lin(n))) + _lin(n) ** 0.5 * np.eye(_lin(n)), True),
    "L2": (lambda n, r: r.standard_normal((_lin(n), _lin(n))), True),
    "S": (lambda n, r: _spd(r, _lin(n)), True),
    "sorted": (lambda n, r: np.sort(r.standard_normal(n)), True),
    "idx": (lambda n, r: r.integers(0, n, n), False),
    "idxM": (lambda n, r: r.integers(0, _side(n), (_side(n), _side(n))), False),
    "mask": (lambda n, r: r.random(n) < 0.5, False),
    "ints": (lambda n, r: r.integers(1, 100, n), False),
    "ints2": (lambda n, r: r.integers(1, 100, n), False),
    "shifts": (lambda n, r: r.integers(0, 5, n), False),
    "bools": (lambda n, r: r.random(n) < 0.5, False),
    "bools2": (lambda n, r: r.random(n) < 0.5, False),
    "cx": (lambda n, r: r.standard_normal(n) + 1j * r.standard_normal(n), False),
    "cxM": (lambda n, r: r.standard_normal((_side(n), _side(n))) + 1j * r.standard_normal((_side(n), _side(n))),
            False),
}


def _unary(names, token="x"):
    return [Case(n, (lambda name: lambda xp, a: getattr(xp, name)(a))(n), (token,)) for n in names]


def _binary(names, tokens=("x", "y")):
    return [Case(n, (lambda name: lambda xp, a, b: getattr(xp, name)(a, b))(n), tokens) for n in names]


def _special(name, tokens, torch_name):
    def program(xp, *args):
        return getattr(xp.special, name)(*args)

    def reference(t, *args):
        return getattr(t.special, torch_name)(*args)

    return Case(f"special.{name}", program, tokens, None if torch_name is None else reference)


def _linalg(name, program, tokens, torch="same", growth=1.5):
    return Case(f"linalg.{name}", program, tokens, torch, growth)


def _fft(name, program, tokens, torch="same", growth=1.0):
    return Case(f"fft.{name}", program, tokens, torch, growth)


def _write_slice(xp, a, b):
    y = a * 1.0
    y[1::2] = b[1::2]
    return y


def _write_indices(xp, a, b, i):
    y = a * 1.0
    y[i] = b
    return y


def _write_mask(xp, a, b, m):
    y = a * 1.0
    y[m] = b[m]
    return y


def _iop(op):
    def program(xp, a, b):
        y = a * 1.0
        y = op(y, b)
        return y
    return program


def _iadd(y, b):
    y += b
    return y


def _isub(y, b):
    y -= b
    return y


def _imul(y, b):
    y *= b
    return y


def _idiv(y, b):
    y /= b
    return y


def _ipow(y, b):
    y **= b
    return y


def _imatmul(y, b):
    y @= b
    return y


CASES = [
    # ----- elementwise, one argument
    *_unary(["abs", "asinh", "atan", "ceil", "cos", "cosh", "exp", "exp2", "expm1", "floor", "negative", "positive",
             "round", "sign", "sin", "sinh", "square", "tanh", "trunc", "isfinite", "isinf", "isnan", "signbit",
             "conj", "real"]),
    *_unary(["acos", "asin", "atanh", "tan"], "unit"),
    *_unary(["acosh"], "gt1"),
    *_unary(["log", "log10", "log1p", "log2", "reciprocal", "sqrt"], "pos"),
    *_unary(["imag"], "cx"),
    *_unary(["logical_not"], "bools"),
    *_unary(["bitwise_invert"], "ints"),
    # ----- elementwise, two arguments
    *_binary(["add", "atan2", "copysign", "divide", "equal", "greater", "greater_equal", "hypot", "less",
              "less_equal", "logaddexp", "maximum", "minimum", "multiply", "nextafter", "not_equal", "subtract"]),
    *_binary(["remainder", "pow"], ("pos", "pos2")),
    Case("floor_divide", lambda xp, a, b: xp.floor_divide(a, b), ("pos", "pos2"), None,
         note="torch has no derivative for floor_divide"),
    *_binary(["logical_and", "logical_or", "logical_xor"], ("bools", "bools2")),
    *_binary(["bitwise_and", "bitwise_or", "bitwise_xor"], ("ints", "ints2")),
    *_binary(["bitwise_left_shift", "bitwise_right_shift"], ("ints", "shifts")),
    Case("clip", lambda xp, a: xp.clip(a, -0.5, 0.5), ("x",)),
    Case("where", lambda xp, m, a, b: xp.where(m, a, b), ("mask", "x", "y")),
    Case("astype", lambda xp, a: xp.astype(a, xp.float64), ("x",)),
    # ----- reductions and scans
    *[Case(n, (lambda name: lambda xp, a: getattr(xp, name)(a))(n), ("x",))
      for n in ("argmax", "argmin", "max", "mean", "min", "std", "sum", "var")],
    *_unary(["all", "any"], "bools"),
    Case("count_nonzero", lambda xp, a: xp.count_nonzero(a), ("bools",)),
    Case("prod", lambda xp, a: xp.prod(a), ("near1",)),
    Case("cumulative_sum", lambda xp, a: xp.cumulative_sum(a), ("x",)),
    Case("cumulative_prod", lambda xp, a: xp.cumulative_prod(a), ("near1",)),
    Case("cumulative_prod [one zero]", lambda xp, a: xp.cumulative_prod(a), ("zero1",)),
    # NumPy's names; torch's cumsum and cumprod need the axis (dim) named
    Case("cumsum", lambda xp, a: xp.cumsum(a), ("x",), torch=lambda torch, a: torch.cumsum(a, 0)),
    Case("cumprod", lambda xp, a: xp.cumprod(a), ("near1",), torch=lambda torch, a: torch.cumprod(a, 0)),
    Case("diff", lambda xp, a: xp.diff(a), ("x",)),
    # ----- shape and copies
    Case("broadcast_arrays", lambda xp, r, m: xp.broadcast_arrays(r, m), ("row", "M")),
    Case("broadcast_to", lambda xp, r: xp.broadcast_to(r, (r.shape[0], r.shape[0])), ("row",)),
    Case("concat", lambda xp, a, b: xp.concat([a, b], axis=0), ("M", "N")),
    Case("concat [axis=1]", lambda xp, a, b: xp.concat([a, b], axis=1), ("M", "N")),
    Case("expand_dims", lambda xp, a: xp.expand_dims(a, axis=0), ("x",)),
    Case("flip", lambda xp, a: xp.flip(a), ("x",)),
    Case("moveaxis", lambda xp, a: xp.moveaxis(a, 0, 1), ("M",)),
    Case("permute_dims", lambda xp, a: xp.permute_dims(a, (1, 0)), ("M",)),
    Case("matrix_transpose", lambda xp, a: xp.matrix_transpose(a), ("M",)),
    Case("transpose", lambda xp, a: xp.transpose(a), ("M",), lambda t, a: a.T),
    Case("repeat", lambda xp, a: xp.repeat(a, 2), ("x",)),
    Case("reshape", lambda xp, a: xp.reshape(a, (-1, 4)) if a.shape[0] % 4 == 0 else a, ("x",)),
    Case("roll", lambda xp, a: xp.roll(a, 3), ("x",)),
    Case("squeeze", lambda xp, a: xp.squeeze(xp.expand_dims(a, axis=1), axis=1), ("x",)),
    Case("stack", lambda xp, a, b: xp.stack([a, b]), ("x", "y")),
    Case("tile", lambda xp, a: xp.tile(a, (2,)), ("x",)),
    Case("unstack", lambda xp, a: xp.unstack(a), ("M",)),
    Case("tril", lambda xp, a: xp.tril(a), ("M",)),
    Case("triu", lambda xp, a: xp.triu(a), ("M",)),
    Case("pad", lambda xp, a: xp.pad(a, (2, 3)), ("x",), lambda t, a: t.nn.functional.pad(a, (2, 3))),
    Case("lib.stride_tricks.sliding_window_view", lambda xp, a: xp.lib.stride_tricks.sliding_window_view(a, 8),
         ("x",), lambda t, a: a.unfold(0, 8, 1)),
    # ----- searching, sorting, sets, gathers
    Case("argsort", lambda xp, a: xp.argsort(a), ("x",), growth=1.1),
    Case("sort", lambda xp, a: xp.sort(a), ("x",), growth=1.1),
    Case("searchsorted", lambda xp, s, a: xp.searchsorted(s, a), ("sorted", "x"), growth=1.1),
    Case("nonzero", lambda xp, m: xp.nonzero(m), ("mask",)),
    Case("take", lambda xp, a, i: xp.take(a, i), ("x", "idx")),
    Case("take_along_axis", lambda xp, a, i: xp.take_along_axis(a, i, axis=1), ("M", "idxM")),
    # torch has no unique_all (array_api_compat): torch.unique with the inverse and the counts stands in
    Case("unique_all", lambda xp, a: xp.unique_all(a), ("x",),
         lambda t, a: t.unique(a, return_inverse=True, return_counts=True), growth=1.1),
    Case("unique_counts", lambda xp, a: xp.unique_counts(a), ("x",), lambda t, a: t.unique(a, return_counts=True),
         growth=1.1),
    Case("unique_inverse", lambda xp, a: xp.unique_inverse(a), ("x",), lambda t, a: t.unique(a, return_inverse=True),
         growth=1.1),
    Case("unique_values", lambda xp, a: xp.unique_values(a), ("x",), lambda t, a: t.unique(a), growth=1.1),
    Case("isin", lambda xp, a, b: xp.isin(a, b), ("x", "y"), lambda t, a, b: t.isin(a, b), growth=1.1),
    Case("quantile", lambda xp, a: xp.quantile(a, 0.3), ("x",), lambda t, a: t.quantile(a, 0.3), growth=1.1),
    Case("gradient", lambda xp, a: xp.gradient(a), ("x",), lambda t, a: t.gradient(a)[0]),
    # ----- products
    Case("matmul", lambda xp, a, b: xp.matmul(a, b), ("M", "N"), growth=1.5),
    Case("tensordot", lambda xp, a, b: xp.tensordot(a, b, axes=1), ("M", "N"), growth=1.5),
    Case("vecdot", lambda xp, a, b: xp.vecdot(a, b), ("M", "N")),
    Case("einsum [ij,jk->ik]", lambda xp, a, b: xp.einsum("ij,jk->ik", a, b), ("M", "N"),
         lambda t, a, b: t.einsum("ij,jk->ik", a, b), growth=1.5),
    Case("einsum [ii->i]", lambda xp, a: xp.einsum("ii->i", a), ("M",), lambda t, a: t.einsum("ii->i", a),
         growth=0.5),
    Case("einsum [ij,ij->i]", lambda xp, a, b: xp.einsum("ij,ij->i", a, b), ("M", "N"),
         lambda t, a, b: t.einsum("ij,ij->i", a, b)),
    # ----- creation (forward only)
    Case("arange", lambda xp, a: xp.arange(a.shape[0]), ("ints",)),
    Case("empty", lambda xp, a: xp.empty(a.shape), ("ints",)),
    Case("empty_like", lambda xp, a: xp.empty_like(a), ("x",)),
    Case("eye", lambda xp, a: xp.eye(a.shape[0]), ("row",)),
    Case("full", lambda xp, a: xp.full(a.shape, 1.5), ("ints",)),
    Case("full_like", lambda xp, a: xp.full_like(a, 1.5), ("x",)),
    Case("linspace", lambda xp, a: xp.linspace(0.0, 1.0, a.shape[0]), ("ints",)),
    Case("meshgrid", lambda xp, a, b: xp.meshgrid(a, b), ("row", "row2")),
    Case("ones", lambda xp, a: xp.ones(a.shape), ("ints",)),
    Case("ones_like", lambda xp, a: xp.ones_like(a), ("x",)),
    Case("zeros", lambda xp, a: xp.zeros(a.shape), ("ints",)),
    Case("zeros_like", lambda xp, a: xp.zeros_like(a), ("x",)),
    Case("asarray", lambda xp, a: xp.asarray(a, copy=True), ("ints",)),
    Case("from_dlpack", lambda xp, a: xp.from_dlpack(a), ("ints",)),
    Case("to_device", lambda xp, a: xp.to_device(a, a.device), ("x",), lambda t, a: a.to("cpu")),
    # ----- special functions
    _special("erf", ("x",), "erf"), _special("erfc", ("x",), "erfc"), _special("expit", ("x",), "expit"),
    _special("logit", ("prob",), "logit"), _special("gammaln", ("pos",), "gammaln"),
    _special("digamma", ("pos",), "digamma"), _special("psi", ("pos",), "psi"), _special("ndtr", ("x",), "ndtr"),
    _special("ndtri", ("prob",), "ndtri"), _special("log_ndtr", ("x",), "log_ndtr"),
    _special("entr", ("pos",), "entr"), _special("xlogy", ("pos", "pos2"), "xlogy"),
    _special("xlog1py", ("pos", "pos2"), "xlog1py"), _special("binom", ("gt1", "prob"), None),
    Case("special.betainc", lambda xp, x: xp.special.betainc(1.5, 2.0, x), ("prob",), None),
    Case("special.betaincc", lambda xp, x: xp.special.betaincc(1.5, 2.0, x), ("prob",), None),
    # ----- linalg
    _linalg("cholesky", lambda xp, a: xp.linalg.cholesky(a), ("S",)),
    _linalg("cross", lambda xp, a, b: xp.linalg.cross(a, b), ("v3", "w3"), growth=1.0),
    _linalg("det", lambda xp, a: xp.linalg.det(a), ("L",)),
    _linalg("diagonal", lambda xp, a: xp.linalg.diagonal(a), ("L",), growth=0.5),
    _linalg("eigh", lambda xp, a: xp.linalg.eigh(a), ("S",)),
    _linalg("eigvalsh", lambda xp, a: xp.linalg.eigvalsh(a), ("S",)),
    _linalg("inv", lambda xp, a: xp.linalg.inv(a), ("L",)),
    _linalg("matmul", lambda xp, a, b: xp.linalg.matmul(a, b), ("L", "L2")),
    _linalg("matrix_norm", lambda xp, a: xp.linalg.matrix_norm(a), ("L",), growth=1.0),
    _linalg("matrix_norm [nuc]", lambda xp, a: xp.linalg.matrix_norm(a, ord="nuc"), ("L",)),
    _linalg("matrix_power", lambda xp, a: xp.linalg.matrix_power(a, 3), ("L",)),
    _linalg("matrix_rank", lambda xp, a: xp.linalg.matrix_rank(a), ("L",)),
    _linalg("matrix_transpose", lambda xp, a: xp.linalg.matrix_transpose(a), ("L",), growth=1.0),
    _linalg("outer", lambda xp, a, b: xp.linalg.outer(a, b), ("row", "row2"), growth=1.0),
    _linalg("pinv", lambda xp, a: xp.linalg.pinv(a), ("L",)),
    _linalg("qr", lambda xp, a: xp.linalg.qr(a), ("L",)),
    _linalg("slogdet", lambda xp, a: xp.linalg.slogdet(a), ("L",)),
    _linalg("solve", lambda xp, a, b: xp.linalg.solve(a, b), ("L", "L2")),
    _linalg("svd", lambda xp, a: xp.linalg.svd(a), ("L",)),
    _linalg("svdvals", lambda xp, a: xp.linalg.svdvals(a), ("L",)),
    _linalg("tensordot", lambda xp, a, b: xp.linalg.tensordot(a, b, axes=1), ("L", "L2")),
    _linalg("trace", lambda xp, a: xp.linalg.trace(a), ("L",), growth=0.5),
    _linalg("vecdot", lambda xp, a, b: xp.linalg.vecdot(a, b), ("L", "L2"), growth=1.0),
    _linalg("vector_norm", lambda xp, a: xp.linalg.vector_norm(a), ("x",), growth=1.0),
    # ----- fft (complex results are not differentiated: forward only)
    _fft("fft", lambda xp, a: xp.fft.fft(a), ("cx",), growth=1.1),
    _fft("ifft", lambda xp, a: xp.fft.ifft(a), ("cx",), growth=1.1),
    _fft("fftn", lambda xp, a: xp.fft.fftn(a), ("cxM",), growth=1.1),
    _fft("ifftn", lambda xp, a: xp.fft.ifftn(a), ("cxM",), growth=1.1),
    _fft("rfft", lambda xp, a: xp.fft.rfft(a), ("x",), growth=1.1),
    _fft("irfft", lambda xp, a: xp.fft.irfft(a), ("cx",), growth=1.1),
    _fft("rfftn", lambda xp, a: xp.fft.rfftn(a), ("M",), growth=1.1),
    _fft("irfftn", lambda xp, a: xp.fft.irfftn(a), ("cxM",), growth=1.1),
    _fft("hfft", lambda xp, a: xp.fft.hfft(a), ("cx",), growth=1.1),
    _fft("ihfft", lambda xp, a: xp.fft.ihfft(a), ("x",), growth=1.1),
    _fft("fftfreq", lambda xp, a: xp.fft.fftfreq(a.shape[0]), ("ints",)),
    _fft("rfftfreq", lambda xp, a: xp.fft.rfftfreq(a.shape[0]), ("ints",)),
    _fft("fftshift", lambda xp, a: xp.fft.fftshift(a), ("x",)),
    _fft("ifftshift", lambda xp, a: xp.fft.ifftshift(a), ("x",)),
    # ----- Tensor operators
    Case("a + b", lambda xp, a, b: a + b, ("x", "y")),
    Case("a - b", lambda xp, a, b: a - b, ("x", "y")),
    Case("a * b", lambda xp, a, b: a * b, ("x", "y")),
    Case("a / b", lambda xp, a, b: a / b, ("x", "pos")),
    Case("a // b", lambda xp, a, b: a // b, ("pos", "pos2"), None, note="torch has no derivative for floor_divide"),
    Case("a % b", lambda xp, a, b: a % b, ("pos", "pos2")),
    Case("a ** b", lambda xp, a, b: a ** b, ("pos", "pos2")),
    Case("2.0 - a (reflected)", lambda xp, a: 2.0 - a, ("x",)),
    Case("2.0 / a (reflected)", lambda xp, a: 2.0 / a, ("pos",)),
    Case("a @ b", lambda xp, a, b: a @ b, ("M", "N"), growth=1.5),
    Case("-a", lambda xp, a: -a, ("x",)),
    Case("+a", lambda xp, a: +a, ("x",)),
    Case("abs(a)", lambda xp, a: abs(a), ("x",)),
    Case("~a", lambda xp, a: ~a, ("ints",)),
    Case("a & b", lambda xp, a, b: a & b, ("ints", "ints2")),
    Case("a | b", lambda xp, a, b: a | b, ("ints", "ints2")),
    Case("a ^ b", lambda xp, a, b: a ^ b, ("ints", "ints2")),
    Case("a << b", lambda xp, a, b: a << b, ("ints", "shifts")),
    Case("a >> b", lambda xp, a, b: a >> b, ("ints", "shifts")),
    Case("a < b", lambda xp, a, b: a < b, ("x", "y")),
    Case("a <= b", lambda xp, a, b: a <= b, ("x", "y")),
    Case("a > b", lambda xp, a, b: a > b, ("x", "y")),
    Case("a >= b", lambda xp, a, b: a >= b, ("x", "y")),
    Case("a == b", lambda xp, a, b: a == b, ("x", "y")),
    Case("a != b", lambda xp, a, b: a != b, ("x", "y")),
    Case("a[1:-1]", lambda xp, a: a[1:-1], ("x",)),
    Case("a[::2]", lambda xp, a: a[::2], ("x",)),
    Case("a[::-1]", lambda xp, a: a[::-1], ("x",), lambda t, a: a.flip(0)),
    Case("a[i] (integer array)", lambda xp, a, i: a[i], ("x", "idx")),
    Case("a[mask]", lambda xp, a, m: a[m], ("x", "mask")),
    Case("a[i, j] (integer arrays)", lambda xp, a, i: a[i[0], i[1]], ("M", "idxM")),
    Case("a[1::2] = v (slice)", _write_slice, ("x", "y")),
    Case("a[i] = v (integer array)", _write_indices, ("x", "y", "idx")),
    Case("a[mask] = v", _write_mask, ("x", "y", "mask")),
    Case("a += b", _iop(_iadd), ("x", "y")),
    Case("a -= b", _iop(_isub), ("x", "y")),
    Case("a *= b", _iop(_imul), ("x", "y")),
    Case("a /= b", _iop(_idiv), ("x", "pos")),
    Case("a **= b", _iop(_ipow), ("pos", "pos2")),
    Case("a @= b", _iop(_imatmul), ("M", "N"), growth=1.5),
]


#: names of ``strideweave.array_api`` with no array work to time, and why
UNBENCHMARKED = {
    **dict.fromkeys(("bool", "complex64", "complex128", "float32", "float64", "int8", "int16", "int32", "int64",
                     "uint8", "uint16", "uint32", "uint64"), "a dtype object"),
    **dict.fromkeys(("e", "inf", "nan", "pi", "newaxis"), "a constant"),
    **dict.fromkeys(("can_cast", "finfo", "iinfo", "isdtype", "result_type", "default_int"),
                    "dtype introspection: no array is read or made"),
    "inferred_shape": "shape arithmetic on Python ints",
    "fft": "a namespace: its functions are rows `fft.*`",
    "linalg": "a namespace: its functions are rows `linalg.*`",
    "special": "a namespace: its functions are rows `special.*`",
    "lib": "a namespace: `lib.stride_tricks.sliding_window_view` is a row",
}
