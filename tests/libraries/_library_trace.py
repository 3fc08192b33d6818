"""Which idioms a case's library code applies to Tensors with history: the likely cause of a failure.

``trace(case, carrier)`` runs the case once with ``sw.Tensor``'s in-place
operators, ``__setitem__`` and ``__array__`` and the namespace's ``astype`` /
``asarray`` wrapped, and returns each idiom it met, where the library met it
(file:line outside StrideWeave) and how often:

- ``in-place <op>``: an augmented operator on a Tensor with an autograd node;
- ``setitem``: an item assignment into one, or of a differentiable value;
- ``export``: ``__array__`` (NumPy conversion) of a Tensor with history;
- ``float64``: a Float32 Tensor with history cast to Float64 or complex.

The wrappers are removed afterwards; nothing in StrideWeave changes.
"""

from __future__ import annotations

import collections
import contextlib
import os
import traceback

from _library_harness import Case, dispatch, run

import strideweave as sw
import strideweave.array_api as xp

_HERE = os.path.dirname(os.path.abspath(__file__))
_INPLACE = ["__iadd__", "__isub__", "__imul__", "__itruediv__", "__ipow__", "__ifloordiv__", "__imod__", "__imatmul__"]


def _caller() -> str:
    for frame in reversed(traceback.extract_stack()[:-2]):
        if "strideweave" not in frame.filename and not frame.filename.startswith(_HERE):
            return f"{frame.filename.split('site-packages/')[-1]}:{frame.lineno}"
    return "?"


def _history(value) -> bool:
    return isinstance(value, sw.Tensor) and value.autograd_ctx is not None


@contextlib.contextmanager
def _wrapped(log: list):
    saved = {}

    def wrap_method(name, kind):
        original = saved[name] = getattr(sw.Tensor, name)

        def method(self, *args, **kwargs):
            if _history(self) or any(_history(a) for a in args):
                log.append((kind, _caller()))
            return original(self, *args, **kwargs)
        setattr(sw.Tensor, name, method)

    for name in _INPLACE:
        wrap_method(name, f"in-place {name.strip('_')}")
    wrap_method("__setitem__", "setitem")
    wrap_method("__array__", "export")
    wide = {xp.float64, getattr(xp, "complex64", None), getattr(xp, "complex128", None)} - {None}
    casts = {"astype": xp.astype, "asarray": xp.asarray}

    def cast(name):
        original = casts[name]

        def function(x, *args, **kwargs):
            dtype = kwargs.get("dtype", args[0] if name == "astype" and args else None)
            if _history(x) and x.dtype == xp.float32 and dtype in wide:
                log.append((f"float64 ({name} to {dtype})", _caller()))
            return original(x, *args, **kwargs)
        return function

    try:
        for name in casts:
            setattr(xp, name, cast(name))
        yield
    finally:
        for name, original in casts.items():
            setattr(xp, name, original)
        for name, original in saved.items():
            setattr(sw.Tensor, name, original)


def trace(case: Case, carrier: str = "numpy") -> list[tuple[str, str, int]]:
    """(idiom, file:line, count) for every idiom the case met on ``carrier``, in first-met order."""
    log: list = []
    with _wrapped(log), dispatch():
        run(case, carrier)
    return [(kind, where, n) for (kind, where), n in collections.Counter(log).items()]
