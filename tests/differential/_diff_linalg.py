"""Statements of the standard's ``xp.linalg`` for the differential tester's programs.

Each statement is drawn against the float64 NumPy shadow (``_diff_programs``)
and only where float32 and float64 compute the same function: matrices
that are inverted or factorised are well conditioned (condition number
below ``COND``), eigen- and singular values are apart (relative gap
``GAP``), so the spectral gradients are defined. Symmetric positive
definite inputs are built in the statement (``a @ a.mT + s * I``), and
outputs whose sign a factorisation leaves free (eigen- and singular
vectors) enter squared.
"""

from __future__ import annotations

import array_api_compat.numpy as _npx
import numpy as np
from _diff_programs import TABLE, NoChoice, _coin, _floats, _pick

COND = 30.0
GAP = 0.05


def _value(env, expr: str) -> np.ndarray:
    with np.errstate(all="ignore"):
        return np.asarray(eval(expr, {"xp": _npx, "np": np}, dict(env)))  # a statement of the program


def _eye(a: str, n: int) -> str:
    return f"xp.eye({n}, dtype={a}.dtype, device={a}.device)"


def _apart(values: np.ndarray) -> bool:
    """Sorted along the last axis, neighbours differ by more than GAP of the largest magnitude."""
    s = np.sort(values, axis=-1)
    scale = 1.0 + np.max(np.abs(s), initial=0.0)
    return bool(s.shape[-1] < 2 or np.min(np.diff(s, axis=-1)) > GAP * scale)


def _conditioned(m: np.ndarray) -> bool:
    s = np.linalg.svd(m, compute_uv=False)
    return bool(np.all(s[..., -1] > GAP * np.maximum(s[..., 0], 1.0)) and np.all(s[..., 0] < COND * s[..., -1]))


def _matrix(c, env, square: bool = False):
    """(expression, value) of a stack of matrices made from a variable of the program."""
    a = _pick(c, [k for k in _floats(env) if env[k].ndim >= 1 and env[k].size])
    x = env[a]
    if x.ndim == 1:
        expr = f"xp.linalg.outer({a}, {a}[::-1])"
    elif square and (x.shape[-1] != x.shape[-2] or _coin(c, 30)):
        expr = f"{a} @ {a}.mT" if _coin(c, 50) else f"{a}.mT @ {a}"
    else:
        expr = a
    value = _value(env, expr)
    if square and _coin(c, 70):
        n = value.shape[-1]
        expr = f"({expr} + {_pick(c, ['0.5', '1.0', '2.0'])} * {_eye(a, n)})"
        value = _value(env, expr)
    return expr, value


def _spd(c, env):
    """(expression, value) of a stack of symmetric positive definite matrices made from a variable."""
    a = _pick(c, [k for k in _floats(env) if env[k].ndim >= 1 and env[k].size])
    base = f"xp.linalg.outer({a}, {a})" if env[a].ndim == 1 else f"{a} @ {a}.mT"
    n = _value(env, base).shape[-1]
    expr = f"({base} + {_pick(c, ['0.5', '1.0', '2.0'])} * {_eye(a, n)})"
    return expr, _value(env, expr)


def _square_stmt(c, env, v):
    s, m = _matrix(c, env, square=True)
    if not _conditioned(m):
        return None
    fn = _pick(c, ["det", "slogdet", "inv", "solve", "matrix_power"])
    if fn == "slogdet":
        return f"{v} = xp.linalg.slogdet({s})[{_pick(c, [1, 1, 0])}]"
    if fn == "matrix_power":
        return f"{v} = xp.linalg.matrix_power({s}, {_pick(c, [-2, -1, 0, 1, 2, 3])})"
    if fn == "solve":
        n = m.shape[-1]
        fits = [k for k in _floats(env) if env[k].ndim >= 1 and env[k].shape[-2 if env[k].ndim > 1 else -1] == n
                and (env[k].ndim > 1 or m.ndim == 2)]
        return f"{v} = xp.linalg.solve({s}, {_pick(c, fits) if fits else s})"
    return f"{v} = xp.linalg.{fn}({s})"


def _symmetric_stmt(c, env, v):
    p, m = _spd(c, env)
    fn = _pick(c, ["cholesky", "eigh", "eigvalsh"])
    if fn == "cholesky":
        return f"{v} = xp.linalg.cholesky({p}, upper={_pick(c, [False, True])})"
    if not _apart(np.linalg.eigvalsh(m)):
        return None
    if fn == "eigvalsh":
        return f"{v} = xp.linalg.eigvalsh({p})"
    return f"{v} = xp.linalg.eigh({p})[0]" if _coin(c, 50) else f"{v} = xp.linalg.eigh({p})[1] ** 2"


def _spectral_stmt(c, env, v):
    a, m = _matrix(c, env)
    s = np.linalg.svd(m, compute_uv=False)
    if not (_apart(s) and np.all(s[..., -1] > GAP * np.maximum(s[..., 0], 1.0))):
        return None
    fn = _pick(c, ["svd", "svdvals", "qr", "pinv", "matrix_rank", "matrix_norm"])
    if fn == "svd":
        part = _pick(c, ["[1]", "[0] ** 2", "[2] ** 2"])
        return f"{v} = xp.linalg.svd({a}, full_matrices=False){part}"
    if fn == "qr":
        if m.shape[-2] < m.shape[-1]:
            return None
        return f"{v} = xp.linalg.qr({a})[{_pick(c, [0, 1])}]"
    if fn == "matrix_norm":
        ord_ = _pick(c, ["'fro'", "'nuc'", "2", "-2", "1", "-1", "xp.inf", "-xp.inf"])
        if ord_ in ("1", "-1", "xp.inf", "-xp.inf"):
            sums = np.sum(np.abs(m), axis=-2 if ord_ in ("1", "-1") else -1)
            if np.min(np.abs(m)) < 1e-2 or not _apart(sums):
                return None  # |a| at zero, or a tie for the largest sum
        return f"{v} = xp.linalg.matrix_norm({a}, ord={ord_}, keepdims={_pick(c, [False, True])})"
    return f"{v} = xp.linalg.{fn}({a})"


def _structure_stmt(c, env, v):
    floats = _floats(env)
    fn = _pick(c, ["trace", "diagonal", "cross", "outer", "tensordot", "vecdot", "matrix_transpose"])
    if fn in ("trace", "diagonal", "matrix_transpose"):
        a = _pick(c, [k for k in floats if env[k].ndim >= 2])
        if fn == "matrix_transpose":
            return f"{v} = xp.linalg.matrix_transpose({a})"
        rows, cols = env[a].shape[-2:]
        return f"{v} = xp.linalg.{fn}({a}, offset={c.int(1 - rows, cols - 1)})"
    if fn == "outer":
        vectors = [k for k in floats if env[k].ndim == 1]
        return f"{v} = xp.linalg.outer({_pick(c, vectors)}, {_pick(c, vectors)})"
    if fn == "cross":
        threes = [k for k in floats if env[k].ndim >= 1 and env[k].shape[-1] == 3]
        return f"{v} = xp.linalg.cross({_pick(c, threes)}, {_pick(c, threes)})"
    a = _pick(c, [k for k in floats if env[k].ndim >= 1])
    if fn == "vecdot":
        b = _pick(c, [k for k in floats if env[k].ndim >= 1 and env[k].shape[-1] == env[a].shape[-1]])
        return f"{v} = xp.linalg.vecdot({a}, {b})"
    fits = [k for k in floats if env[k].ndim >= 1 and env[k].shape[0] == env[a].shape[-1]]
    if fits and _coin(c, 70):
        return f"{v} = xp.linalg.tensordot({a}, {_pick(c, fits)}, axes=1)"
    return f"{v} = xp.linalg.tensordot({a}, {_pick(c, floats)}, axes=0)"


def linalg_statement(c, env, v):
    """One ``xp.linalg`` statement assigning ``v`` (None, or NoChoice, when nothing fits: drawn again)."""
    kind = _pick(c, [_square_stmt, _symmetric_stmt, _spectral_stmt, _structure_stmt])
    try:
        return kind(c, env, v)
    except (np.linalg.LinAlgError, ValueError, IndexError):
        raise NoChoice from None



#: the statement kinds of ``draw_program`` with linear algebra in about a quarter of the statements
WITH_LINALG = TABLE + [linalg_statement] * 30
