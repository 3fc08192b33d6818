"""Random programs called through the bridges, against the same program in torch float64.

A case is a program of ``_diff_programs`` whose statements become the body
of a function called through ``sw.interop.torch_function`` or
``sw.interop.jax_function`` (eagerly, or under ``jax.jit``). Each leaf gets a
role, and is passed positionally or by keyword:

- ``grad``: float32, differentiated (``requires_grad``; a ``jax.grad`` argnum);
- ``const``: float32, not differentiated;
- ``f64``: float64, used as it is, so float64 meets float32 inside the
  function (StrideWeave's Float32 rule: a gradient asked through such a value
  is refused with ``Float32RuleError``);
- ``f64cast``: float64, cast to float32 by the function's first lines;
- ``int``: integers (the leaf's values times four, rounded; the values are
  quarters), cast to float32 and scaled back by the function's first lines.

The function returns every variable; the loss, ``sum(o * o)`` over the
variables the statements made, is taken outside the bridge (in torch / JAX),
so the cotangents cross it. The reference runs the same statements through
``array_api_compat.torch`` in float64 with only the ``grad`` leaves requiring
grad (torch and JAX agree on these programs: the reference is one for both
bridges), and ``_diff_runner.judge`` compares values and the ``grad`` leaves'
gradients. JAX runs in x64 mode, so float64 arguments stay float64.
"""

from __future__ import annotations

import dataclasses
import re
import warnings

import numpy as np
from _diff_programs import Program, _coin, _pick, draw_program, leaf_literal, shadow
from _diff_runner import NearSingular, Outcome, Run, _exec_lines, _run, judge

MODES = ("torch_function", "jax_function", "jax_function+jit")
_ROLES = ["grad"] * 9 + ["const"] * 3 + ["f64"] * 3 + ["f64cast"] * 2 + ["int"] * 3
#: the first lines of the bridged function, per role (the reference's: ``_REF_PROLOGUE``)
_PROLOGUE = {"f64cast": "{n} = xp.astype({n}, xp.float32)", "int": "{n} = xp.astype({n}, xp.float32) * 0.25"}
_REF_PROLOGUE = {"int": "{n} = xp.astype({n}, xp.float64) * 0.25"}


@dataclasses.dataclass(frozen=True)
class Case:
    """A program and, per leaf (keyed by its data's identity, which survives ``minimize``'s cuts and
    renaming), its role and whether it is passed by keyword."""

    program: Program
    roles: dict

    def leaves(self):
        """``(name, data, role, keyword)`` per leaf of the program."""
        return [(n, d, *self.roles[id(d)]) for n, d in self.program.leaves]

    def with_program(self, program: Program) -> Case:
        return Case(program, self.roles)


def draw_case(c, *, singular: bool = False) -> Case:
    """A drawn program with a role and a way of passing for each leaf; at least one leaf is differentiated."""
    program = draw_program(c, singular=singular)
    leaves, roles = [], {}
    for name, data in program.leaves:
        role = _pick(c, _ROLES)
        if role == "int":
            quarters = np.asarray(np.round(data * 4) / 4, dtype=np.float32)
            candidate = Program((*leaves, (name, quarters), *program.leaves[len(leaves) + 1:]), program.lines)
            if shadow(candidate) is None:  # the program needs the exact values: a float32 constant instead
                role = "const"
            else:
                data = quarters
        leaves.append((name, data))
        roles[id(data)] = (role, _coin(c, 35))
    if not any(r == "grad" for r, _ in roles.values()):
        roles[id(leaves[0][1])] = ("grad", roles[id(leaves[0][1])][1])
    return Case(Program(tuple(leaves), program.lines), roles)


def output_names(program: Program) -> list:
    """Every variable the function returns: the leaves, then the variables the statements assign."""
    names = [n for n, _ in program.leaves]
    for line in program.lines:
        head = re.match(r"(v\d+) = ", line)
        if head and head.group(1) not in names:
            names.append(head.group(1))
    return names


def _prologue(case: Case, table: dict) -> list:
    return [table[role].format(n=n) for n, _, role, _ in case.leaves() if role in table]


# ----- the reference -----

def run_reference(case: Case, singular: bool = False) -> Run:
    """The statements in torch float64 (guarded namespace), only the ``grad`` leaves requiring grad."""
    import array_api_compat.torch as tx
    import torch
    from _diff_guard import guarded
    env = {"xp": guarded(tx, singular), "np": np}
    for name, data, role, _ in case.leaves():
        if role == "int":
            env[name] = torch.tensor(np.round(data * 4).astype(np.int64))
        else:
            env[name] = torch.tensor(np.array(data), dtype=torch.float64, requires_grad=role == "grad")
    leaves = dict(env)
    program = Program(case.program.leaves, (*_prologue(case, _REF_PROLOGUE), *case.program.lines))

    def grad_of(t):
        return None if t.grad is None else t.grad.numpy()

    def backward(loss):
        if loss.requires_grad:
            loss.backward()

    run = _run(program, env, lambda t: t.detach().numpy().copy(), lambda t: None, backward)
    if run.grads is not None:  # the leaves' own tensors (the prologue rebinds the int ones' names)
        run.grads = {n: grad_of(leaves[n]) if role == "grad" else None for n, _, role, _ in case.leaves()}
    return run


# ----- the bridged side -----

def bridged_function(case: Case):
    """The program as a StrideWeave function of the leaves (keyword leaves by name), returning every variable."""
    import strideweave.array_api as xp
    positional = [n for n, _, _, keyword in case.leaves() if not keyword]
    lines = (*_prologue(case, _PROLOGUE), *case.program.lines)
    names = output_names(case.program)

    def fn(*args, **kwargs):
        env = {"xp": xp, "np": np, **dict(zip(positional, args)), **kwargs}
        _exec_lines(lines, env)
        return tuple(env[n] for n in names)
    return fn


def _native(library: str, data: np.ndarray, role: str):
    if library == "torch":
        import torch
        if role == "int":
            return torch.tensor(np.round(data * 4).astype(np.int64))
        dtype = torch.float64 if role in ("f64", "f64cast") else torch.float32
        return torch.tensor(np.array(data), dtype=dtype, requires_grad=role == "grad")
    import jax.numpy as jnp
    if role == "int":
        return jnp.asarray(np.round(data * 4).astype(np.int32))
    return jnp.asarray(np.array(data, dtype=np.float64 if role in ("f64", "f64cast") else np.float32))


def _call(bridged, case: Case, natives: dict):
    args = [natives[n] for n, _, _, keyword in case.leaves() if not keyword]
    kwargs = {n: natives[n] for n, _, _, keyword in case.leaves() if keyword}
    return bridged(*args, **kwargs)


def _loss_terms(case: Case, outputs) -> list:
    """The outputs the loss sums: the floating variables the statements made (as the reference's loss)."""
    return [o for n, o in zip(output_names(case.program), outputs)
            if n.startswith("v") and np.dtype(str(o.dtype).replace("torch.", "")).kind == "f"]


def run_torch_bridge(case: Case) -> Run:
    import strideweave as sw
    run = Run()
    natives = {n: _native("torch", d, role) for n, d, role, _ in case.leaves()}
    bridged = sw.interop.torch_function(bridged_function(case))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            outputs = _call(bridged, case, natives)
    except Exception as exc:
        run.error, run.stage, run.where = exc, "forward", getattr(exc, "__diff_line__", "the bridged call")
        return run
    names = output_names(case.program)
    run.values = {n: o.detach().numpy().copy() for n, o in zip(names, outputs)}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            terms = _loss_terms(case, outputs)
            loss = sum((o * o).sum() for o in terms) if terms else None
            if loss is not None and loss.requires_grad:
                loss.backward()
    except Exception as exc:
        run.error, run.stage, run.where = exc, "backward", "loss.backward()"
        return run
    run.grads = {n: None if natives[n].grad is None else natives[n].grad.numpy()
                 for n, _, role, _ in case.leaves() if role == "grad"}
    return run


def run_jax_bridge(case: Case, jit: bool) -> Run:
    import jax
    import jax.numpy as jnp

    import strideweave as sw
    run = Run()
    with jax.enable_x64(True), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        natives = {n: _native("jax", d, role) for n, d, role, _ in case.leaves()}
        bridged = sw.interop.jax_function(bridged_function(case))
        differentiated = [n for n, _, role, _ in case.leaves() if role == "grad"]

        def loss(*values):
            outputs = _call(bridged, case, {**natives, **dict(zip(differentiated, values))})
            terms = _loss_terms(case, outputs)
            total = sum(jnp.sum(o * o) for o in terms) if terms else 0.0 * jnp.sum(values[0])
            return total, outputs

        step = jax.value_and_grad(loss, argnums=tuple(range(len(differentiated))), has_aux=True)
        try:
            (_, outputs), grads = (jax.jit(step) if jit else step)(*[natives[n] for n in differentiated])
        except Exception as exc:
            run.error = exc
            try:  # where it failed: a forward alone that fails is a refusal of the forward pass
                outputs = _call(bridged, case, natives)
            except Exception as forward:
                run.error, run.stage, run.where = forward, "forward", getattr(forward, "__diff_line__", "the call")
                return run
            run.stage, run.where = "backward", "jax.value_and_grad"
    names = output_names(case.program)
    run.values = {n: np.asarray(o) for n, o in zip(names, outputs)}
    if run.error is not None:
        return run
    run.grads = {n: np.asarray(g) for n, g in zip(differentiated, grads)}
    return run


def run_bridge(case: Case, mode: str) -> Run:
    if mode == "torch_function":
        run = run_torch_bridge(case)
    else:
        run = run_jax_bridge(case, jit=mode.endswith("+jit"))
    if run.values is not None:
        _float64_where_expected(case, run)
    return run


def _float64_where_expected(case: Case, run: Run) -> None:
    """Float64 values where NumPy's promotion of the same arguments gives float64, compared as float32
    (``judge`` expects float32 values; a float64 value anywhere else stays a difference)."""
    import array_api_compat.numpy as npx
    env = {"xp": npx, "np": np}
    for name, data, role, _ in case.leaves():
        env[name] = (np.round(data * 4).astype(np.int64) if role == "int"
                     else np.array(data, np.float64 if role in ("f64", "f64cast") else np.float32))
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _exec_lines((*_prologue(case, _PROLOGUE), *case.program.lines), env)
    except Exception:
        return
    for name, value in run.values.items():
        if value.dtype == np.float64 and np.asarray(env.get(name, 0.0)).dtype == np.float64:
            run.values[name] = value.astype(np.float32)


def classify_bridge(case: Case, mode: str, *, singular: bool = False) -> Outcome:
    """Run ``case`` through the bridge of ``mode`` and in torch float64; say how they compare."""
    ref = run_reference(case, singular)
    if isinstance(ref.error, NearSingular):
        return Outcome("near singular", str(ref.error))
    return judge(case.program, run_bridge(case, mode), ref)


# ----- reproducers -----

def bridge_source(case: Case, mode: str) -> str:
    """The case as a runnable script: the bridged function, its arguments, the loss and the gradients."""
    library = "torch" if mode == "torch_function" else "jax"
    positional = [n for n, _, _, keyword in case.leaves() if not keyword]
    keywords = [n for n, _, _, keyword in case.leaves() if keyword]
    signature = ", ".join(positional + (["*", *keywords] if keywords else []))
    body = [*_prologue(case, _PROLOGUE), *case.program.lines, f"return ({', '.join(output_names(case.program))},)"]
    lines = ["import numpy as np", f"import {'torch' if library == 'torch' else 'jax, jax.numpy as jnp'}",
             "import strideweave as sw", "import strideweave.array_api as xp", ""]
    lines += [f"@sw.interop.{library}_function", f"def fn({signature}):", *["    " + b for b in body], ""]
    head = len(lines)
    for name, data, role, _ in case.leaves():
        values = leaf_literal(data)
        if role == "int":
            values = f"np.round({values} * 4).astype(np.{'int64' if library == 'torch' else 'int32'})"
        dtype = "float64" if role in ("f64", "f64cast") else ("float32" if role != "int" else None)
        if library == "torch":
            grad = ", requires_grad=True" if role == "grad" else ""
            lines.append(f"{name} = torch.tensor({values}{f', dtype=torch.{dtype}' if dtype else ''}{grad})")
        else:
            lines.append(f"{name} = jnp.asarray({values}{f', dtype=jnp.{dtype}' if dtype else ''})")
    call = "fn(" + ", ".join(positional + [f"{k}={k}" for k in keywords]) + ")"
    terms = [n for n in output_names(case.program) if n.startswith("v")]
    differentiated = [n for n, _, role, _ in case.leaves() if role == "grad"]
    if library == "torch":
        lines += [f"outputs = dict(zip({output_names(case.program)!r}, {call}))",
                  "loss = " + " + ".join(f"torch.sum(outputs[{t!r}] ** 2)" for t in terms) if terms else "",
                  "loss.backward()" if terms else "", *[f"print({n!r}, {n}.grad)" for n in differentiated]]
    else:
        args = ", ".join(differentiated)
        inner = call
        lines += [f"def loss({args}):",
                  f"    outputs = dict(zip({output_names(case.program)!r}, {inner}))",
                  "    return " + (" + ".join(f"jnp.sum(outputs[{t!r}] ** 2)" for t in terms) or "0.0"),
                  f"grad = jax.grad(loss, argnums={tuple(range(len(differentiated)))!r})",
                  f"print({'jax.jit(grad)' if mode.endswith('+jit') else 'grad'}({args}))"]
        # float64 arguments need JAX's x64 mode, switched on for this run only
        lines[head:] = ["def main():", *["    " + line for line in lines[head:]], "",
                        "with jax.enable_x64(True):", "    main()"]
    return "\n".join(lines)


def bridge_reproducer(case: Case, mode: str, outcome: Outcome) -> str:
    return (f"# {outcome.kind} through {mode}: {outcome.detail}\n"
            f"# reference: the same statements with `import array_api_compat.torch as xp`, float64 leaves\n"
            f"# (only the differentiated ones requiring grad)\n{bridge_source(case, mode)}\n")
