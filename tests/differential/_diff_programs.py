"""Random Array API programs, drawn statement by statement against a NumPy shadow.

A program is a few Float32 leaves made from data and a list of Python
statements against ``xp`` (the standard's vocabulary: elementwise functions
and operators with broadcasting and Python scalars, reductions, shape
functions, indexing (steps, negative ones included, ``...``, ``None``, integer
arrays with repeated indices, boolean masks), axis functions (``take`` and
``take_along_axis`` with repeated indices, ``repeat``), ``where``, ``matmul``,
``clip``, copies, fresh buffers, in-place operators and item assignment,
through views and index arrays too). Every candidate statement is run on a
float64 NumPy shadow of the program so far (``array_api_compat.numpy``): a
statement NumPy rejects, or one that leaves a non-finite or huge value, is
drawn again, so the shadow also tells the generator shapes and values (a
``log`` only of positive values, a ``clip`` bound away from every value).

Choices come from a ``Chooser`` (``int(lo, hi)``), so hypothesis draws them in
CI and a seeded ``random.Random`` drives them in a plain loop.

torch has no negative steps; the reference runs them under
:func:`negative_steps`, which reads and writes the same elements through
integer index arrays that NumPy computes, so such programs are compared too.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import random
import re
import warnings

import array_api_compat.numpy as _npx
import numpy as np

#: leaves' values in the default mode: away from 0 and from each other
VALUE_RANGE = (0.15, 2.0)
#: leaves' values with ``singular=True``: a small grid, so zeros and ties are exact in float32 and float64
SINGULAR_GRID = (-1.0, -0.5, 0.0, 0.5, 1.0)
MAX_SIZE = 48
MAX_ABS = 1e3


@dataclasses.dataclass(frozen=True)
class Program:
    """Leaves (name -> float32 data) and the statements that use them."""

    leaves: tuple  # ((name, np.ndarray float32), ...)
    lines: tuple   # (str, ...)

    def without(self, index: int) -> Program:
        return Program(self.leaves, self.lines[:index] + self.lines[index + 1:])

    def body(self) -> str:
        return "\n".join(self.lines)


class RandomChooser:
    """Choices from a seeded ``random.Random``: the soak's plain loop."""

    def __init__(self, seed: int):
        self._rng = random.Random(seed)

    def int(self, lo: int, hi: int) -> int:
        return self._rng.randint(lo, hi)


class HypothesisChooser:
    """Choices drawn by hypothesis, so a failing program shrinks through its choices."""

    def __init__(self, data):
        from hypothesis import strategies as st
        self._data, self._st = data, st

    def int(self, lo: int, hi: int) -> int:
        return self._data.draw(self._st.integers(lo, hi))


class NoChoice(Exception):
    """Nothing fits the statement being drawn (an empty array, say): another one is drawn."""


def _pick(c, seq):
    if not seq:
        raise NoChoice
    return seq[c.int(0, len(seq) - 1)]


def _coin(c, percent: int) -> bool:
    return c.int(0, 99) < percent


# ----- leaves -----

def _leaf_data(c, shape, singular: bool) -> np.ndarray:
    rng = np.random.default_rng(c.int(0, 2**31 - 1))
    if singular:
        return rng.choice(np.asarray(SINGULAR_GRID), size=shape).astype(np.float32)
    lo, hi = VALUE_RANGE
    magnitude = np.round(rng.uniform(lo, hi, size=shape), 3)
    sign = np.where(rng.random(size=shape) < 0.5, -1.0, 1.0)
    return np.asarray(magnitude * sign, dtype=np.float32)


def leaf_literal(data: np.ndarray) -> str:
    """The leaf's values as a NumPy float32 literal (exact: float32 values print round-trip)."""
    def text(v):
        return "[" + ", ".join(text(w) for w in v) + "]" if isinstance(v, np.ndarray) else str(np.float32(v))
    if data.ndim == 0:
        return f"np.float32({text(data[()])})"
    return f"np.array({text(data)}, dtype=np.float32)"


# ----- the shadow -----

def shadow(program: Program, extra: str | None = None) -> dict | None:
    """Run the program (plus ``extra``) in float64 NumPy; None if it fails or leaves bad values."""
    env = {"xp": _npx, "np": np}
    for name, data in program.leaves:
        env[name] = np.array(data, dtype=np.float64)
    lines = program.lines + ((extra,) if extra else ())
    try:
        with np.errstate(all="raise"), warnings.catch_warnings():
            warnings.simplefilter("error")
            exec("\n".join(lines), env)  # the program is the test input
    except Exception:  # any failure: the statement is drawn again
        return None
    arrays = {k: v for k, v in env.items() if isinstance(v, (np.ndarray, np.generic))}
    for k, v in list(arrays.items()):
        v = np.asarray(v)
        arrays[k] = v
        if v.size > MAX_SIZE * 4:
            return None
        if v.dtype.kind == "f" and (not np.all(np.isfinite(v)) or (v.size and np.max(np.abs(v)) > MAX_ABS)):
            return None
    return arrays


def _floats(env, leaves=True):
    return [k for k, v in env.items() if v.dtype.kind == "f" and (leaves or not k.startswith("x"))]


def _axis(c, ndim, allow_none=True, allow_tuple=True):
    choices = []
    if allow_none:
        choices.append(None)
    if ndim:
        choices += list(range(-ndim, ndim))
        if allow_tuple and ndim >= 2:
            axes = sorted({c.int(0, ndim - 1) for _ in range(2)})
            choices.append(tuple(axes))
    return _pick(c, choices) if choices else None


def _away(c, values: np.ndarray) -> float:
    """A Python float between two of ``values`` (or beyond them), at least 1e-2 from every one."""
    v = np.unique(np.round(values.ravel(), 6))
    if v.size == 0:
        return 0.5
    edges = np.concatenate([[v[0] - 1.0], v, [v[-1] + 1.0]])
    gaps = [(a + b) / 2 for a, b in itertools.pairwise(edges) if b - a > 2e-2]
    return round(float(_pick(c, gaps)), 4)


def _scalar(c) -> str:
    return _pick(c, ["0.5", "1.5", "2.0", "-0.75", "3.0", "0.25"])


def _partner(c, env, name, same_shape=False):
    """Another float variable whose shape broadcasts with ``name``'s (itself if no other)."""
    shape = env[name].shape
    fits = []
    for k in _floats(env):
        try:
            out = np.broadcast_shapes(shape, env[k].shape)
        except ValueError:
            continue
        if same_shape and env[k].shape != shape:
            continue
        if math.prod(out) <= MAX_SIZE:
            fits.append(k)
    return _pick(c, fits) if fits else name


# ----- indexing keys -----

def _slice(c, n):
    step = _pick(c, [-1, -2, -3]) if _coin(c, 25) else _pick(c, [None, None, 1, 2, 3])
    start = _pick(c, [None, None, 0, 1, -1, n - 1, -n])
    stop = _pick(c, [None, None, n, 1, -1, 2])
    parts = ["" if start is None else str(start), "" if stop is None else str(stop)]
    text = ":".join(parts) + ("" if step is None else f":{step}")
    return text


def _key(c, shape):
    ndim = len(shape)
    used = c.int(0, ndim)
    items = []
    for axis in range(used):
        n = shape[axis]
        items.append(str(c.int(-n, n - 1)) if n and _coin(c, 30) else _slice(c, n))
    if _coin(c, 40):  # an ellipsis somewhere among the items
        items.insert(c.int(0, len(items)), "...")
    for _ in range(c.int(0, 1) if _coin(c, 40) else 0):
        items.insert(c.int(0, len(items)), "None")
    if not items:
        items = ["..."]
    return ", ".join(items)


def _array_key(c, env, name, unique=False):
    """An advanced key into ``name``: an integer array (repeated indices unless ``unique``: a write's
    targets must be distinct, as NumPy and torch differ on which of two writes wins), a boolean mask
    on the leading axis, a comparison mask, or one integer array per leading axis."""
    shape = env[name].shape
    if not shape or 0 in shape:
        return None
    device = f"device={name}.device"
    kind = _pick(c, ["ints", "ints", "row mask", "compare", "two arrays"])
    if kind == "compare":
        return f"{name} {_pick(c, ['>', '<'])} {_away(c, env[name])}"
    if kind == "row mask":
        mask = [bool(c.int(0, 1)) for _ in range(shape[0])]
        return f"xp.asarray({mask!r}, {device})"
    axes = 2 if kind == "two arrays" and len(shape) >= 2 else 1
    if unique:
        # distinct targets: distinct positions along the first axis, any along the second
        n = shape[0]
        first = list(dict.fromkeys(c.int(0, n - 1) for _ in range(c.int(1, n))))
        arrays = [[p - n if _coin(c, 30) else p for p in first]]
        if axes == 2:
            arrays.append([c.int(-shape[1], shape[1] - 1) for _ in first])
    else:
        count = c.int(1, 5)
        arrays = [[c.int(-n, n - 1) for _ in range(count)] for n in shape[:axes]]
        if count > 1 and _coin(c, 60):
            for a in arrays:
                a[-1] = a[0]  # a repeated index: its gradients add up
    text = ", ".join(f"xp.asarray({a!r}, {device})" for a in arrays)
    return text if axes == 2 or len(shape) == 1 or _coin(c, 60) else f"..., {text}"


def has_negative_step(key_text: str, env: dict) -> bool:
    """Whether a key (program text, run on the shadow ``env``) has a slice with a negative step."""
    try:
        parts = eval(f"np.index_exp[{key_text}]", {"np": np, "xp": _npx, **env})  # the program's own text
    except Exception:
        return False
    return _negative(parts)


def _negative(key) -> bool:
    parts = key if isinstance(key, tuple) else (key,)
    return any(isinstance(p, slice) and p.step is not None and p.step < 0 for p in parts)


def negative_steps():
    """A torch function mode for the reference: ``t[key]`` and ``t[key] = v`` with a negative-step
    slice in ``key`` read and write the same elements through integer index arrays that NumPy
    computes (torch refuses such slices). The class is made on first use: this module imports
    without torch."""
    import torch
    from torch.overrides import TorchFunctionMode

    class Mode(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            if func in (torch.Tensor.__getitem__, torch.Tensor.__setitem__) and _negative(args[1]):
                shape = tuple(args[0].shape)
                positions = np.arange(math.prod(shape)).reshape(shape)[args[1]]
                index = tuple(torch.as_tensor(i.copy()) for i in np.unravel_index(positions, shape))
                return func(args[0], index, *args[2:])
            return func(*args, **(kwargs or {}))

    return Mode()


# ----- statements -----

_UNARY = ["sin", "cos", "tanh", "atan", "asinh", "negative", "abs"]
_BINARY = ["add", "subtract", "multiply", "maximum", "minimum", "hypot", "atan2", "logaddexp"]
_OPERATORS = ["+", "-", "*"]


def _unary(c, env, v):
    a = _pick(c, _floats(env))
    x = env[a]
    fns = list(_UNARY)
    if x.size and np.max(x) < 3:
        fns += ["exp", "expm1"]
    if x.size and np.max(np.abs(x)) < 20:
        fns.append("square")
    if x.size and np.min(x) > 0.05:
        fns += ["sqrt", "log"]
    if x.size and np.min(x) > -0.5:
        fns.append("log1p")
    if x.size and np.min(np.abs(x)) > 0.2:
        fns.append("reciprocal")
    return f"{v} = xp.{_pick(c, fns)}({a})"


def _binary(c, env, v):
    a = _pick(c, _floats(env))
    if _coin(c, 25):  # a Python scalar, on either side
        op, s = _pick(c, [*_OPERATORS, "/"]), _scalar(c)
        return f"{v} = {a} {op} {s}" if _coin(c, 50) else f"{v} = {s} {op} {a}"
    b = _partner(c, env, a)
    if _coin(c, 40):
        op = _pick(c, _OPERATORS + (["/"] if np.min(np.abs(env[b]), initial=1.0) > 0.2 else []))
        return f"{v} = {a} {op} {b}"
    fns = list(_BINARY)
    if np.min(np.abs(env[b]), initial=1.0) > 0.2:
        fns.append("divide")
    if np.min(env[a], initial=1.0) > 0.1 and np.max(np.abs(env[b]), initial=0.0) < 3:
        fns.append("pow")
    return f"{v} = xp.{_pick(c, fns)}({a}, {b})"


def _reduction(c, env, v):
    a = _pick(c, _floats(env))
    ndim = env[a].ndim
    fn = _pick(c, ["sum", "mean", "prod", "max", "min", "std", "var"])
    args = [a]
    axis = _axis(c, ndim)
    if axis is not None or _coin(c, 50):
        args.append(f"axis={axis!r}")
    if _coin(c, 50):
        args.append(f"keepdims={_pick(c, [True, False])}")
    if fn in ("std", "var") and _coin(c, 60):
        args.append(f"correction={_pick(c, [0, 1])}")
    return f"{v} = xp.{fn}({', '.join(args)})"


def _shape_fn(c, env, v):
    a = _pick(c, _floats(env))
    shape = env[a].shape
    ndim = len(shape)
    kind = _pick(c, ["reshape", "permute_dims", "expand_dims", "squeeze", "mT", "T"])
    if kind == "reshape":
        n = math.prod(shape)
        divisors = [d for d in range(1, n + 1) if n % d == 0]
        d = _pick(c, divisors)
        new = _pick(c, [(n,), (d, n // d), (d, -1), (-1,), (1, n // d, d), ()])
        return f"{v} = xp.reshape({a}, {new!r})"
    if kind == "permute_dims":
        perm = list(range(ndim))
        for i in range(ndim - 1, 0, -1):
            j = c.int(0, i)
            perm[i], perm[j] = perm[j], perm[i]
        return f"{v} = xp.permute_dims({a}, {tuple(perm)!r})"
    if kind == "expand_dims":
        return f"{v} = xp.expand_dims({a}, axis={c.int(-ndim - 1, ndim)})"
    if kind == "squeeze":
        ones = [i for i, n in enumerate(shape) if n == 1]
        if not ones:
            return None
        return f"{v} = xp.squeeze({a}, axis={_pick(c, ones)})"
    return f"{v} = {a}.{kind}"


def _index(c, env, v):
    a = _pick(c, _floats(env))
    key = _array_key(c, env, a) if _coin(c, 35) else None
    return f"{v} = {a}[{key or _key(c, env[a].shape)}]"


def _axis_fn(c, env, v):
    a = _pick(c, _floats(env))
    x = env[a]
    ndim = x.ndim
    kind = _pick(c, ["sort", "take", "take_along_axis", "cumulative_sum", "cumulative_prod", "flip",
                     "roll", "std", "vector_norm", "matrix_norm", "concat", "stack", "repeat"])
    if kind in ("sort", "take", "take_along_axis", "cumulative_sum", "cumulative_prod", "repeat") and ndim == 0:
        return None
    axis = c.int(-ndim, ndim - 1) if ndim else None
    if kind in ("take", "take_along_axis") and x.shape[axis] == 0:
        return None
    if kind == "sort":
        return f"{v} = xp.sort({a}, axis={axis}, descending={_pick(c, [False, True])})"
    if kind == "take":
        n = x.shape[axis]
        idx = [c.int(0, n - 1) for _ in range(c.int(1, 4))]
        if len(idx) > 1 and _coin(c, 50):
            idx[-1] = idx[0]  # a repeated index: its gradients add up
        return f"{v} = xp.take({a}, xp.asarray({idx!r}, device={a}.device), axis={axis})"
    if kind == "repeat":
        if _coin(c, 50):
            return f"{v} = xp.repeat({a}, {c.int(0, 3)}, axis={axis})"
        counts = [c.int(0, 3) for _ in range(x.shape[axis])]
        return f"{v} = xp.repeat({a}, xp.asarray({counts!r}, device={a}.device), axis={axis})"
    if kind == "take_along_axis":
        n = x.shape[axis]
        shape = list(x.shape)
        shape[axis] = c.int(1, 3)
        rng = np.random.default_rng(c.int(0, 2**31 - 1))
        idx = rng.integers(0, n, size=shape).tolist()
        return f"{v} = xp.take_along_axis({a}, xp.asarray({idx!r}, device={a}.device), axis={axis})"
    if kind in ("cumulative_sum", "cumulative_prod"):
        extra = ", include_initial=True" if _coin(c, 25) else ""
        return f"{v} = xp.{kind}({a}, axis={axis}{extra})"
    if kind == "flip":
        return f"{v} = xp.flip({a}, axis={_axis(c, ndim)!r})"
    if kind == "roll":
        ax = _axis(c, ndim, allow_tuple=False)
        return f"{v} = xp.roll({a}, {c.int(-3, 3)}, axis={ax!r})"
    if kind == "std":
        return f"{v} = xp.std({a}, axis={_axis(c, ndim)!r}, correction={_pick(c, [0, 1])})"
    if kind == "vector_norm":
        ord_ = _pick(c, ["2", "1", "xp.inf"])
        keep = _pick(c, [True, False])
        return f"{v} = xp.linalg.vector_norm({a}, axis={_axis(c, ndim)!r}, keepdims={keep}, ord={ord_})"
    if kind == "matrix_norm":
        if ndim < 2:
            return None
        return f"{v} = xp.linalg.matrix_norm({a}, keepdims={_pick(c, [True, False])})"
    b = _partner(c, env, a, same_shape=True)
    if kind == "concat":
        if ndim == 0:
            return None
        return f"{v} = xp.concat([{a}, {b}], axis={axis})"
    return f"{v} = xp.stack([{a}, {b}], axis={c.int(-ndim - 1, ndim)})"


def _where(c, env, v):
    a = _pick(c, _floats(env))
    if _coin(c, 50):
        cond = f"{a} {_pick(c, ['>', '<', '>=', '<='])} {_away(c, env[a])}"
    else:
        cond = f"xp.{_pick(c, ['greater', 'less'])}({a}, {_partner(c, env, a)})"
    b, d = _partner(c, env, a), _partner(c, env, a)
    return f"{v} = xp.where({cond}, {b}, {d})"


def _matmul(c, env, v):
    a = _pick(c, [k for k in _floats(env) if env[k].ndim >= 1] or [None])
    if a is None:
        return None
    shape = env[a].shape
    fits = []
    for k in _floats(env):
        s = env[k].shape
        if s and s[0 if len(s) == 1 else -2] == shape[-1]:
            fits.append(k)
    if fits and _coin(c, 70):
        b = _pick(c, fits)
    elif len(shape) >= 2:
        b = f"{a}.mT"
    else:
        b = a
    return f"{v} = {a} @ {b}" if _coin(c, 70) else f"{v} = xp.matmul({a}, {b})"


def _clip(c, env, v):
    a = _pick(c, _floats(env))
    lo, hi = sorted([_away(c, env[a]), _away(c, env[a])])
    kind = c.int(0, 2)
    bounds = [f"min={lo}", f"max={hi}", f"min={lo}, max={hi}"][kind]
    return f"{v} = xp.clip({a}, {bounds})"


def _copy(c, env, v):
    a = _pick(c, _floats(env))
    return f"{v} = xp.asarray({a}, copy=True)"


def _fresh(c, env, v):
    a = _pick(c, _floats(env))
    kind = _pick(c, ["zeros", "ones", "full", "zeros_like", "ones_like"])
    if kind.endswith("_like"):
        return f"{v} = xp.{kind}({a})"
    where = f"dtype={a}.dtype, device={a}.device"
    fill = f", {_scalar(c)}" if kind == "full" else ""
    return f"{v} = xp.{kind}({env[a].shape!r}{fill}, {where})"


def _write(c, env, v, flipped=()):
    """An in-place operator or an item assignment into a variable the program holds."""
    floats = _floats(env)
    held = _floats(env, leaves=False)
    if not held and _coin(c, 80):
        return None  # a write into a leaf made from data: the contract's refusal, drawn now and then
    target = _pick(c, held) if held and _coin(c, 92) else _pick(c, floats)
    if any(np.shares_memory(env[target], env[f]) for f in flipped if f in env):
        # flip and a reversed slice are views in NumPy, copies here and in torch; reshape is a view where the
        # storage order allows, which differs between libraries; linalg.diagonal is a view in torch, a copy
        # here: the standard leaves such aliasing open
        return None
    key = None
    shape = env[target].shape
    if _coin(c, 60) and shape:
        key = (_array_key(c, env, target, unique=True) if _coin(c, 25) else None) or _key(c, shape)
        try:
            shape = env[target][eval(f"np.index_exp[{key}]", {"np": np, "xp": _npx, **env})].shape
        except Exception:
            return None
    fits = [k for k in floats if _broadcasts_to(env[k].shape, shape)]
    value = _pick(c, fits) if fits and _coin(c, 70) else _scalar(c)
    if key is not None and _coin(c, 40):
        return f"{target}[{key}] = {value}"
    op = _pick(c, ["+=", "-=", "*="])
    if op == "*=" and value in env and np.max(np.abs(env[value]), initial=0.0) > 2:
        op = "+="
    return f"{target}[{key}] {op} {value}" if key is not None else f"{target} {op} {value}"


def _broadcasts_to(src, dst) -> bool:
    try:
        return np.broadcast_shapes(src, dst) == tuple(dst)
    except ValueError:
        return False


_KINDS = [(_unary, 12), (_binary, 14), (_reduction, 9), (_shape_fn, 7), (_index, 11), (_axis_fn, 12),
          (_where, 4), (_matmul, 4), (_clip, 3), (_copy, 7), (_fresh, 4), (_write, 16)]
TABLE = [k for k, w in _KINDS for _ in range(w)]


def draw_program(c, *, singular: bool = False, max_leaves: int = 3, max_lines: int = 8, kinds=TABLE) -> Program:
    """A program whose every statement runs in float64 NumPy; statements of ``kinds`` (``kind(c, env, v)``,
    each entry once per unit of weight)."""
    leaves = []
    for i in range(c.int(1, max_leaves)):
        shape = tuple(c.int(1, 3) for _ in range(c.int(0, 3)))
        data = _leaf_data(c, shape, singular)
        # the values the reproducer's literal gives back, to the bit
        leaves.append((f"x{i}", np.asarray(eval(leaf_literal(data), {"np": np}), dtype=np.float32)))
    program = Program(tuple(leaves), ())
    env = shadow(program)
    target, attempts, n, flipped = c.int(2, max_lines), 0, 0, []
    while len(program.lines) < target and attempts < 4 * max_lines:
        attempts += 1
        kind = _pick(c, kinds)
        try:
            line = kind(c, env, f"v{n}", flipped) if kind is _write else kind(c, env, f"v{n}")
        except NoChoice:
            continue
        if line is None:
            continue
        new_env = shadow(program, line)
        if new_env is None:
            continue
        program, env = Program(program.leaves, (*program.lines, line)), new_env
        if line.startswith(f"v{n} ="):
            # a copy here and in torch, a view in NumPy: reversed slices too; linalg.diagonal a view in torch
            read = re.fullmatch(rf"v{n} = \w+\[(.*)\]", line)
            if line.startswith((f"v{n} = xp.flip(", f"v{n} = xp.reshape(", f"v{n} = xp.linalg.diagonal(")) or \
                    (read is not None and has_negative_step(read.group(1), env)):
                flipped.append(f"v{n}")
            n += 1
    return program
