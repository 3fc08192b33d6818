"""The reference namespace with a guard at every singular or ambiguous point.

Float32 and float64 can take different branches at a tie (``max``, ``sort``,
``maximum``, a comparison), and piecewise functions have a subgradient to
choose at a singular point (``abs`` or ``sqrt`` at 0, ``std`` of a constant
slice, a zero norm, ``clip`` at a bound, ``cumulative_prod`` through 0).
Those points are another test's subject (the singular-points table); here
the reference raises ``NearSingular`` when it meets one, and the program is
counted as skipped. With ``singular=True`` the values come from a small grid
and only the comparisons stay guarded.
"""

from __future__ import annotations

import types

from _diff_runner import NearSingular

TOL = 1e-4


def _t(x, like=None):
    import torch
    if isinstance(x, torch.Tensor):
        return x.detach()
    return torch.as_tensor(x, dtype=torch.float64)


def _near(a, b) -> bool:
    import torch
    a, b = _t(a), _t(b)
    return bool(torch.any((a - b).abs() <= TOL * (1 + a.abs() + b.abs())))


def _near_zero(x) -> bool:
    return bool((_t(x).abs() <= TOL).any())


def _slices(x, axis):
    """``x`` with the reduced axes moved last and flattened into one."""
    x = _t(x)
    nd = x.ndim
    if nd == 0:
        return x.reshape(1, 1)
    axes = tuple(range(nd)) if axis is None else ((axis,) if isinstance(axis, int) else tuple(axis))
    axes = tuple(a % nd for a in axes)
    kept = [a for a in range(nd) if a not in axes]
    x = x.permute(*kept, *axes)
    return x.reshape(*x.shape[:len(kept)], -1)


def _top_tie(x, axis, largest=True, absolute=False) -> bool:
    s = _slices(x, axis)
    if absolute:
        s = s.abs()
    if s.shape[-1] < 2:
        return False
    top = s.sort(dim=-1, descending=largest).values
    return _near(top[..., 0], top[..., 1])


def _any_tie(x, axis) -> bool:
    s = _slices(x, axis).sort(dim=-1).values
    return s.shape[-1] >= 2 and _near(s[..., 1:], s[..., :-1])


def _flat_spread(x, axis, correction=0.0) -> bool:
    s = _slices(x, axis)
    if s.shape[-1] - correction <= 0:
        return True
    spread = s.max(dim=-1).values - s.min(dim=-1).values
    return bool((spread <= TOL * (1 + s.abs().max(dim=-1).values)).any())


def _all_zero(x, axis) -> bool:
    s = _slices(x, axis)
    return bool((s.abs().max(dim=-1).values <= TOL).any())


def _check_reduce(name, x, axis=None, **kw):
    if name in ("max", "min"):
        return _top_tie(x, axis, largest=name == "max")
    if name in ("std", "var"):
        return _flat_spread(x, axis, kw.get("correction", 0.0))
    if name == "prod":
        return _near_zero(x)
    return False


def _vector_norm(x, axis=None, keepdims=False, ord=2):
    if ord == 2:
        return _all_zero(x, axis)
    if ord == 1:
        return _near_zero(x)
    return _top_tie(x, axis, absolute=True) or _all_zero(x, axis)


def _matrix_norm(x, keepdims=False, ord="fro"):
    return _all_zero(x, (-2, -1))


def _clip(x, min=None, max=None):
    return (min is not None and _near(x, min)) or (max is not None and _near(x, max))


_ALWAYS = {  # float32 and float64 may branch differently here, whatever the mode
    "greater": lambda a, b: _near(a, b), "less": lambda a, b: _near(a, b),
    "greater_equal": lambda a, b: _near(a, b), "less_equal": lambda a, b: _near(a, b),
    "sort": lambda x, axis=-1, **kw: _any_tie(x, axis),
}
_SINGULAR = {
    "maximum": lambda a, b: _near(a, b), "minimum": lambda a, b: _near(a, b),
    "max": lambda x, axis=None, **kw: _check_reduce("max", x, axis),
    "min": lambda x, axis=None, **kw: _check_reduce("min", x, axis),
    "std": lambda x, axis=None, **kw: _check_reduce("std", x, axis, **kw),
    "var": lambda x, axis=None, **kw: _check_reduce("var", x, axis, **kw),
    "prod": lambda x, axis=None, **kw: _near_zero(x),
    "cumulative_prod": lambda x, **kw: _near_zero(x),
    "abs": _near_zero, "sqrt": _near_zero, "log": _near_zero, "reciprocal": _near_zero,
    "pow": lambda a, b: _near_zero(a),
    "hypot": lambda a, b: _near_zero(a) and _near_zero(b),
    "atan2": lambda a, b: _near_zero(a) and _near_zero(b),
    "clip": _clip,
}
_LINALG = {"vector_norm": _vector_norm, "matrix_norm": _matrix_norm}


def _wrap(name, fn, check):
    def guarded_fn(*args, **kwargs):
        if check(*args, **kwargs):
            raise NearSingular(f"{name} at a tie, a zero or a bound")
        return fn(*args, **kwargs)
    return guarded_fn


def guarded(tx, singular: bool = False):
    """``tx`` (array_api_compat.torch) with the guards of this module in front of its functions."""
    checks = dict(_ALWAYS) if singular else {**_ALWAYS, **_SINGULAR}
    ns = types.SimpleNamespace(**{k: getattr(tx, k) for k in dir(tx) if not k.startswith("__")})
    for name, check in checks.items():
        setattr(ns, name, _wrap(name, getattr(tx, name), check))
    linalg = types.SimpleNamespace(**{k: getattr(tx.linalg, k) for k in dir(tx.linalg) if not k.startswith("__")})
    if not singular:
        for name, check in _LINALG.items():
            setattr(linalg, name, _wrap(name, getattr(tx.linalg, name), check))
    ns.linalg = linalg
    return ns
