"""The workloads W1-W7: StrideWeave implementations and the contender lists.

A workload is a list of contenders.  A contender is ``(name, build)``; ``build()``
does the setup and returns ``step()``, one timed forward + backward.
StrideWeave contenders are named ``sw-<carrier>``; everything else is an anchor
(see ``anchors.py``).  Data is generated once per workload with a fixed seed
and every contender gets its own copy of the same values.

``targets`` are read off the rotation's medians (the goals of the first
benchmark round); ``goals`` are the current targets, each timed again in a
pairwise measurement of its two contenders alone (``run.run_pairs``).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from benchmarks import anchors as A
from benchmarks import backends as B
from benchmarks import bridges

SW_CARRIERS = ("numpy", "torch", "jax")


@dataclass
class Workload:
    id: str
    title: str
    contenders: list                        # [(name, build)]
    ops: int | None = None                  # W1: report per-op time = total / ops
    notes: list = field(default_factory=list)
    targets: list = field(default_factory=list)   # [(sw contender, anchor, max ratio, label)], rotation
    goals: list = field(default_factory=list)     # the same form, measured pairwise
    budget_s: float = 10.0                   # time budget for the timed rounds
    max_repeats: int = 30
    min_repeats: int = 5
    pair_budget_s: float = 3.0               # per pair of the pairwise measurement
    pair_max: int = 200
    pair_min: int = 10


def _rng():
    return np.random.default_rng(20240611)


# ------------------------------------------------------------------ StrideWeave steps


def sw_chain(x0, steps, scale, shift, carrier):
    def build():
        x = B.sw_leaf(x0, carrier)

        def step():
            x.grad = None
            y = x
            for _ in range(steps):
                y = y * scale + shift if shift is not None else y * scale
            y.sum().backward()
            B.sw_sync(x.grad)
            return x.grad
        return step
    return build


def sw_expx(x0, carrier, device="cpu", read_only=False):
    def build():
        sw = B.sw()
        x = B.sw_leaf(x0, carrier, device, read_only=read_only)

        def step():
            x.grad = None
            (sw.exp(x) * x).sum().backward()
            B.sw_sync(x.grad)
            return x.grad
        return step
    return build


def _sw_bcast_step(Aw, w):
    sw = B.sw()
    cot = None

    def step():
        nonlocal cot
        loss = (Aw * w).sum()
        if cot is None:
            cot = sw.ones(loss.shape, carrier=type(loss.carrier))
        (gw,) = sw.grad(loss, [w], cot)
        B.sw_sync(gw)
        return gw
    return step


def sw_bcast(A0, w0, carrier, device="cpu", row_major=False, read_only=False):
    def build():
        return _sw_bcast_step(B.sw_leaf(A0, carrier, device, row_major, read_only),
                              B.sw_leaf(w0, carrier, device, row_major, read_only))
    return build


READ_ONLY_NOTE = ("`[read-only]` rows wrap NumPy arrays the user made read-only (`a.flags.writeable = False`): "
                  "StrideWeave then needs no snapshot to see writes made behind its back, so the gap to the "
                  "`sw-numpy` row is the cost of that check (docs/user-guide.md).")


def sw_mlp(x0, W10, b10, W20, carrier, row_major=False):
    def build():
        sw = B.sw()
        x, W1, b1, W2 = (B.sw_leaf(v, carrier, row_major=row_major) for v in (x0, W10, b10, W20))

        def step():
            for t in (x, W1, b1, W2):
                t.grad = None
            (sw.tanh(x @ sw.transpose(W1) + b1) @ sw.transpose(W2)).sum().backward()
            B.sw_sync(W1.grad, b1.grad, W2.grad)
            return W1.grad, b1.grad, W2.grad
        return step
    return build


def sw_mlp_wrapped(x0, W10, b10, W20):
    """W5 with the four C-ordered NumPy arrays wrapped with ``sw.tensor`` inside every step."""
    def build():
        sw = B.sw()
        arrays = [np.ascontiguousarray(v, dtype=np.float32).copy() for v in (x0, W10, b10, W20)]

        def step():
            x, W1, b1, W2 = (sw.tensor(a) for a in arrays)
            (sw.tanh(x @ sw.transpose(W1) + b1) @ sw.transpose(W2)).sum().backward()
            B.sw_sync(W1.grad, b1.grad, W2.grad)
            return W1.grad, b1.grad, W2.grad
        return step
    return build


def sw_jac(W0, x0, carrier, row_major=False):
    def build():
        sw = B.sw()
        W, x = B.sw_leaf(W0, carrier, row_major=row_major), B.sw_leaf(x0, carrier)
        # Basis cotangents laid out as (K, *out.layout): out is (64):(1), so row-major.
        eye = B.sw_leaf(np.eye(W0.shape[0], dtype=np.float32), carrier, row_major=True)

        def step():
            out = sw.tanh(W @ x)
            (J,) = sw.grad(out, [x], eye, batched=True)
            B.sw_sync(J)
            return J
        return step
    return build


# ------------------------------------------------------------------ workloads


def w1(quick: bool) -> Workload:
    steps = 1000
    x0 = _rng().standard_normal(16).astype(np.float32)
    args = (x0, steps, 1.0001, 0.001)
    c = [(f"sw-{k}", sw_chain(*args, k)) for k in SW_CARRIERS]
    c += [("torch", lambda: A.chain_torch(*args)),
          ("jax.grad", lambda: A.chain_jax(*args)),
          ("jax.jit(grad)", lambda: A.chain_jax(*args, jit=True)),
          ("hips-autograd", lambda: A.chain_hips(*args)),
          ("numpy", lambda: A.chain_numpy(*args))]
    return Workload("W1", "chain: 1,000 x (y*1.0001 + 0.001) on 16 floats, sum, backward",
                    c, ops=2 * steps, budget_s=4 if quick else 30, max_repeats=10 if quick else 40,
                    min_repeats=3 if quick else 5,
                    notes=["1-D inputs: canonical and C order are the same storage, so no `[C-order]` rows."],
                    targets=[("sw-numpy", "torch", 0.8, "per-op <= 0.8x torch eager"),
                             ("sw-numpy", "hips-autograd", 0.5, "per-op <= 0.5x HIPS autograd")],
                    goals=[("sw-numpy", "torch", 0.45, "2,000 ops on 16 elements <= 0.45x torch eager"),
                           ("sw-numpy", "hips-autograd", 0.35, "2,000 ops on 16 elements <= 0.35x HIPS autograd")],
                    pair_budget_s=1 if quick else 4, pair_max=30 if quick else 80, pair_min=5)


def w3(quick: bool, device: str) -> Workload:
    n = 1_000_000 if quick else 4_000_000
    x0 = (0.5 * _rng().standard_normal(n)).astype(np.float32)
    c = [(f"sw-{k}", sw_expx(x0, k)) for k in SW_CARRIERS]
    c += [("sw-numpy [read-only]", sw_expx(x0, "numpy", read_only=True))]
    c += [("torch", lambda: A.expx_torch(x0)),
          ("jax.grad", lambda: A.expx_jax(x0)),
          ("jax.jit(grad)", lambda: A.expx_jax(x0, jit=True)),
          ("hips-autograd", lambda: A.expx_hips(x0)),
          ("numpy", lambda: A.expx_numpy(x0))]
    wl = Workload("W3", f"large: sum(exp(x) * x), {n:,} Float32, grad x", c,
                  budget_s=3 if quick else 25, max_repeats=10 if quick else 30,
                  notes=["1-D inputs: canonical and C order are the same storage, so no `[C-order]` rows.",
                         READ_ONLY_NOTE],
                  targets=[("sw-numpy", "numpy", 1.2, "<= 1.2x hand-written numpy"),
                           ("sw-torch", "torch", 1.1, "torch carrier <= 1.1x torch autograd")],
                  goals=[("sw-numpy", "numpy", 1.2, "writable input <= 1.2x hand-written numpy"),
                         ("sw-numpy", "hips-autograd", 0.8, "writable input <= 0.8x HIPS autograd")],
                  pair_budget_s=1 if quick else 4, pair_max=60 if quick else 150, pair_min=5)
    _cuda(wl, device, lambda: sw_expx(x0, "torch", device), lambda: A.expx_torch(x0, device))
    return wl


def w4(quick: bool, device: str) -> Workload:
    m = 1024 if quick else 2048
    rng = _rng()
    A0 = rng.standard_normal((m, m)).astype(np.float32)
    w0 = rng.standard_normal((1, m)).astype(np.float32)
    c = [(f"sw-{k}", sw_bcast(A0, w0, k)) for k in SW_CARRIERS]
    c += [(f"sw-{k} [C-order]", sw_bcast(A0, w0, k, row_major=True)) for k in SW_CARRIERS]
    c += [(f"sw-{k} [w:({m},)]", sw_bcast(A0, w0.reshape(-1), k)) for k in SW_CARRIERS]
    c += [("sw-numpy [C-order, read-only]", sw_bcast(A0, w0, "numpy", row_major=True, read_only=True))]
    c += [("torch", lambda: A.bcast_torch(A0, w0)),
          ("jax.grad", lambda: A.bcast_jax(A0, w0)),
          ("jax.jit(grad)", lambda: A.bcast_jax(A0, w0, jit=True)),
          ("hips-autograd", lambda: A.bcast_hips(A0, w0)),
          ("numpy", lambda: A.bcast_numpy(A0, w0))]
    wl = Workload("W4", f"broadcast: sum(A * w), A {m}x{m}, w 1x{m}, grad w", c,
                  budget_s=3 if quick else 25, max_repeats=10 if quick else 30,
                  notes=[("StrideWeave asks only for w's gradient with sw.grad(loss, [w], ones); "
                          "torch/jax/HIPS differentiate w only as well."),
                         ("`sw-<carrier>` rows use canonical (first-mode-fastest) storage; `[C-order]` rows "
                          "wrap C-ordered arrays with sw.tensor(array), as users do."),
                         (f"Rows `[w:({m},)]` use a rank-1 w (same broadcast, no leading extent-1 mode); "
                          "a target falls back to them only when the 1 x m row errors."), READ_ONLY_NOTE],
                  targets=[("sw-numpy", "numpy", 1.25, "<= 1.25x hand-written numpy"),
                           ("sw-numpy [C-order]", "numpy", 1.25, "C-order <= 1.25x hand-written numpy"),
                           ("sw-torch", "torch", 1.1, "torch carrier <= 1.1x torch autograd"),
                           ("sw-torch [C-order]", "torch", 1.1, "C-order torch carrier <= 1.1x torch autograd")],
                  goals=[("sw-numpy [C-order]", "numpy", 1.5, "C-order writable A <= 1.5x hand-written numpy"),
                         ("sw-numpy [C-order]", "hips-autograd", 0.8, "C-order writable A <= 0.8x HIPS autograd")],
                  pair_budget_s=1 if quick else 4, pair_max=60 if quick else 150, pair_min=5)
    _cuda(wl, device, lambda: sw_bcast(A0, w0, "torch", device), lambda: A.bcast_torch(A0, w0, device))
    return wl


def _cuda(wl: Workload, device: str, sw_build, torch_build) -> None:
    if device != "cuda":
        return
    if not B.cuda_available():
        wl.notes.append("--device cuda: skipped, CUDA is not available to torch on this machine.")
        return
    wl.contenders.insert(3, ("sw-torch-cuda", sw_build()))
    wl.contenders.append(("torch-cuda", torch_build))
    wl.targets.append(("sw-torch-cuda", "torch-cuda", 1.1, "torch carrier (CUDA) <= 1.1x torch autograd (CUDA)"))


def w5(quick: bool) -> Workload:
    rng = _rng()
    x0 = rng.standard_normal((32, 32)).astype(np.float32)
    W10 = (rng.standard_normal((64, 32)) / 8).astype(np.float32)
    b10 = (rng.standard_normal(64) / 8).astype(np.float32)
    W20 = (rng.standard_normal((1, 64)) / 8).astype(np.float32)
    args = (x0, W10, b10, W20)
    c = [(f"sw-{k}", sw_mlp(*args, k)) for k in SW_CARRIERS]
    c += [(f"sw-{k} [C-order]", sw_mlp(*args, k, row_major=True)) for k in SW_CARRIERS]
    c += [("sw-numpy [C-order, wrapped per step]", sw_mlp_wrapped(*args))]
    c += [("torch", lambda: A.mlp_torch(*args)),
          ("jax.grad", lambda: A.mlp_jax(*args)),
          ("jax.jit(grad)", lambda: A.mlp_jax(*args, jit=True)),
          ("hips-autograd", lambda: A.mlp_hips(*args)),
          ("numpy", lambda: A.mlp_numpy(*args))]
    return Workload("W5", "MLP: sum(tanh(x @ W1^T + b1) @ W2^T), batch 32, 32->64->1, grads of W1, b1, W2",
                    c, budget_s=2 if quick else 10, max_repeats=50 if quick else 200, min_repeats=10,
                    notes=["`[C-order]` rows wrap C-ordered arrays with sw.tensor(array), as users do.",
                           ("Parameters held: every row but `[wrapped per step]` wraps its four arrays once and "
                            "sets `.grad = None` on them before each step, as the torch anchor does for its "
                            "parameters. `[C-order, wrapped per step]` calls sw.tensor on the four C-ordered "
                            "NumPy arrays inside every step. The torch and HIPS anchors hold their arrays.")],
                    targets=[("sw-numpy", "torch", 2.0, "<= 2x torch eager"),
                             ("sw-numpy [C-order]", "torch", 2.0, "C-order <= 2x torch eager")],
                    goals=[("sw-numpy [C-order]", "torch", 1.5, "parameters held, C-order <= 1.5x torch eager"),
                           ("sw-numpy [C-order]", "hips-autograd", 0.6,
                            "parameters held, C-order <= 0.6x HIPS autograd"),
                           ("sw-numpy [C-order, wrapped per step]", "torch", 2.0,
                            "four arrays wrapped every step <= 2x torch eager")],
                    pair_budget_s=1 if quick else 3, pair_max=400 if quick else 2000, pair_min=20)


def w5_pair(quick: bool) -> Workload:
    """W5 with StrideWeave and torch alone: at this size every contender slows when interleaved with many."""
    rng = _rng()
    args = (rng.standard_normal((32, 32)).astype(np.float32),
            (rng.standard_normal((64, 32)) / 8).astype(np.float32),
            (rng.standard_normal(64) / 8).astype(np.float32),
            (rng.standard_normal((1, 64)) / 8).astype(np.float32))
    c = [("sw-numpy", sw_mlp(*args, "numpy")), ("sw-numpy [C-order]", sw_mlp(*args, "numpy", row_major=True)),
         ("torch", lambda: A.mlp_torch(*args)), ("torch [x.grad too]", lambda: A.mlp_torch(*args, x_grad=True))]
    return Workload("W5-pair", "MLP as W5, StrideWeave and torch only (interleaved pairwise)", c,
                    budget_s=2 if quick else 6, max_repeats=200 if quick else 1000, min_repeats=10,
                    notes=[("Same step as W5 with no other contender in the rotation. `torch [x.grad too]` "
                            "also differentiates x, as `backward()` does for every Float32 leaf in StrideWeave.")])


def w6(quick: bool) -> Workload:
    rng = _rng()
    W0 = (rng.standard_normal((64, 64)) / 8).astype(np.float32)
    x0 = rng.standard_normal(64).astype(np.float32)
    c = [(f"sw-{k}", sw_jac(W0, x0, k)) for k in SW_CARRIERS]
    c += [(f"sw-{k} [C-order]", sw_jac(W0, x0, k, row_major=True)) for k in SW_CARRIERS]
    c += [("torch", lambda: A.jac_torch(W0, x0)),
          ("jax.jacrev", lambda: A.jac_jax(W0, x0)),
          ("jax.jit(jacrev)", lambda: A.jac_jax(W0, x0, jit=True)),
          ("numpy", lambda: A.jac_numpy(W0, x0))]
    return Workload("W6", "Jacobian: 64x64 of tanh(W x) via sw.grad(batched=True), 64 basis cotangents",
                    c, budget_s=2 if quick else 10, max_repeats=30 if quick else 100, min_repeats=5,
                    notes=["torch anchor: torch.autograd.grad(out, x, eye, is_grads_batched=True).",
                           "`[C-order]` rows wrap a C-ordered W with sw.tensor(array)."],
                    targets=[("sw-numpy", "torch", 1.5, "<= 1.5x torch is_grads_batched"),
                             ("sw-numpy [C-order]", "torch", 1.5, "C-order <= 1.5x torch is_grads_batched")])


# ------------------------------------------------------------------ W7 layouts on the JAX carrier


def _views(m: int):
    """(name, storage size, raw-jax view) per variant, the sw layouts (layout, offset), and (q, h).

    ``row-major`` is what users hold: a C-ordered 2-D JAX array, wrapped by
    ``sw.tensor(array)`` (its storage is passed 2-D, so the raw view is the array).
    """
    pad = 256
    h = m // 64 if m >= 128 else 2
    q = m // h

    def row_major(s):
        return s

    def transposed(s):
        return s.reshape(m, m).T

    def sliced(s):
        return s.reshape(m, m + pad)[:, pad // 2: pad // 2 + m]

    def nested(s):   # element (i, (j, k)) at i*q + j + k*m*q
        return s.reshape(h, m, q).transpose(1, 0, 2).reshape(m, m)

    def layouts(sw):
        return {
            "transposed": (sw.Layout(sw.Shape([m, m]), sw.Stride([1, m])), 0),
            "sliced": (sw.Layout(sw.Shape([m, m]), sw.Stride([m + pad, 1])), pad // 2),
            "nested": (sw.Layout(sw.Shape([m, [q, h]]), sw.Stride([q, [1, m * q]])), 0),
        }
    return [("row-major", m * m, row_major), ("transposed", m * m, transposed), ("sliced", m * (m + pad), sliced),
            ("nested", m * m, nested)], layouts, (q, h)


def w7(quick: bool) -> list[Workload]:
    m = 1024 if quick else 2048
    views, layouts, (q, h) = _views(m)
    rng = _rng()
    out = []
    for kind in ("W3", "W4"):
        for vname, size, raw_view in views:
            data = (0.5 * rng.standard_normal(size)).astype(np.float32)
            w0 = rng.standard_normal((1, m)).astype(np.float32)

            def sw_build(data=data, vname=vname, w0=w0, kind=kind, rank1=False):
                sw, jnp = B.sw(), B.jnp()
                if vname == "row-major":
                    X = sw.tensor(jnp.asarray(data.reshape(m, m)))
                else:
                    layout, offset = layouts(sw)[vname]
                    X = sw.Tensor.from_storage(jnp.asarray(data), layout, offset=offset)
                if kind == "W3":
                    def step():
                        X.grad = None
                        (sw.exp(X) * X).sum().backward()
                        B.sw_sync(X.grad)
                        return X.grad
                    return step
                if vname == "nested":      # w must share A's nested second mode
                    shape = sw.Shape([[q, h]]) if rank1 else sw.Shape([1, [q, h]])
                    w = sw.Tensor.from_storage(jnp.asarray(w0.reshape(-1)), sw.Layout(shape))
                else:
                    w = B.sw_leaf(w0.reshape(-1) if rank1 else w0, "jax")
                return _sw_bcast_step(X, w)

            def raw_build(data=data, vname=vname, raw_view=raw_view, w0=w0, kind=kind, jit=None):
                storage = B.jnp().asarray(data.reshape(m, m) if vname == "row-major" else data)
                if kind == "W3":
                    if jit is None:
                        return A.view_expx_jax_raw(storage, raw_view)
                    return A.view_expx_jax_grad(storage, raw_view, jit=jit)
                if jit is None:
                    return A.view_bcast_jax_raw(storage, raw_view, w0)
                return A.view_bcast_jax_grad(storage, raw_view, w0, jit=jit)

            c = [("sw-jax", sw_build)]
            if kind == "W4":
                c.append((f"sw-jax [w:({m},)]", lambda b=sw_build: b(rank1=True)))
            c += [("jax-raw", raw_build),
                 ("jax.grad", lambda rb=raw_build: rb(jit=False)),
                 ("jax.jit(grad)", lambda rb=raw_build: rb(jit=True))]
            what = "sum(exp(X) * X), grad X" if kind == "W3" else f"sum(A * w), w 1x{m}, grad w"
            out.append(Workload(f"W7-{kind}-{vname}", f"layouts (jax): {what}, {vname} {m}x{m} view", c,
                                # Eager JAX on 16 MB buffers moves twofold between calls (page
                                # faults): the median needs many rounds.
                                budget_s=1.5 if quick else 8, max_repeats=8 if quick else 100,
                                min_repeats=3 if quick else 5,
                                notes=[("jax-raw = hand-written jnp forward + gradient, view built "
                                        "with jnp reshape/transpose/slice inside the timed step "
                                        "(row-major: the 2-D JAX array itself, wrapped with sw.tensor).")],
                                targets=[("sw-jax", "jax-raw", 1.2, "jax carrier <= 1.2x raw jax")]))
    return out


def interop_torch(quick: bool) -> Workload:
    data = bridges.layer_data()
    c = [("sw-torch_function", lambda: bridges.torch_function_step(*data)),
         ("torch", lambda: bridges.torch_step(*data))]
    return Workload("interop-torch", "torch_function: tanh(h @ w + b), h 32x32, w 32x64, b 64, "
                    "forward + backward in torch, grads of w and b", c,
                    budget_s=1 if quick else 3, max_repeats=200 if quick else 1000, min_repeats=20,
                    notes=[("`sw-torch_function`: the layer written with StrideWeave, wrapped by "
                            "sw.interop.torch_function and called on torch tensors; `torch`: the same layer "
                            "in torch.")],
                    goals=[("sw-torch_function", "torch", 2.0, "torch_function step <= 2x pure torch")],
                    pair_budget_s=1 if quick else 3, pair_max=400 if quick else 2000, pair_min=20)


def interop_jax(quick: bool) -> Workload:
    data = bridges.layer_data()
    c = [("sw-jax_function [jit]", lambda: bridges.jax_function_step(*data)),
         ("jax.jit(value_and_grad)", lambda: bridges.jax_step(*data))]
    return Workload("interop-jax", "jax_function: jax.jit(jax.value_and_grad(sum(layer(h, w, b) ** 2))), "
                    "layer = tanh(h @ w + b) as interop-torch, grads of w and b", c,
                    budget_s=1 if quick else 3, max_repeats=200 if quick else 1000, min_repeats=20,
                    notes=[("`sw-jax_function [jit]`: the layer written with StrideWeave, wrapped by "
                            "sw.interop.jax_function, inside a jitted loss (staged: one XLA program); "
                            "`jax.jit(value_and_grad)`: the same loss in jnp, jitted.")],
                    goals=[("sw-jax_function [jit]", "jax.jit(value_and_grad)", 1.2,
                            "jax.jit(value_and_grad) through jax_function <= 1.2x pure JAX")],
                    pair_budget_s=1 if quick else 3, pair_max=400 if quick else 2000, pair_min=20)


def interop_jax_mlp(quick: bool) -> Workload:
    data = bridges.mlp_data()
    c = [("sw-jax_function [jit]", lambda: bridges.jax_mlp_function_step(*data)),
         ("sw-staged [jit]", lambda: bridges.jax_mlp_staged_step(*data)),
         ("jax.jit(value_and_grad)", lambda: bridges.jax_mlp_step(*data))]
    anchor = "jax.jit(value_and_grad)"
    return Workload("interop-jax-mlp", "3-layer MLP SGD step under jax.jit: x 128x64, 64 -> 128 -> 128 -> 10 tanh, "
                    "mean squared error, value and gradients of all six parameters", c,
                    budget_s=1 if quick else 3, max_repeats=200 if quick else 1000, min_repeats=20,
                    notes=[("`sw-jax_function [jit]`: the MLP's forward written with StrideWeave, wrapped by "
                            "sw.interop.jax_function, loss and update in jnp; `sw-staged [jit]`: the whole step "
                            "in StrideWeave (sw.tensor of the traced arrays, backward, .grad); "
                            "`jax.jit(value_and_grad)`: the same step in jnp.")],
                    goals=[("sw-jax_function [jit]", anchor, 1.2, "MLP step through jax_function <= 1.2x pure JAX"),
                           ("sw-staged [jit]", anchor, 1.2, "MLP step staged in StrideWeave <= 1.2x pure JAX")],
                    pair_budget_s=1 if quick else 3, pair_max=200 if quick else 1000, pair_min=20)


def all_workloads(quick: bool, device: str) -> list:
    """In run order.  W2 and W3-mem run separately (subprocesses, see deep.py and memory.py)."""
    return [w1(quick), w3(quick, device), w4(quick, device), w5(quick), w5_pair(quick),
            interop_torch(quick), interop_jax(quick), interop_jax_mlp(quick), w6(quick), *w7(quick)]
