"""The prepared GPU check: one command, one report, under ten minutes on one GPU.

    python tools/gpu_check.py [--out DIR] [--budget SECONDS]

Run it from the repository root on a machine with a CUDA device (the CI
machine has none; nothing here runs in CI). It

1. runs the ``cuda``-marked tests (``pytest -m cuda``);
2. runs ``python -m conformance`` with the torch carrier on CUDA and the JAX
   carrier on the GPU (``--devices torch=cuda,jax=gpu``);
3. runs a cross-carrier agreement check on CuPy through ``ArrayAPICarrier``
   (when CuPy imports);
4. runs StrideWeave staged by ``jax.jit`` on the GPU: the ``jax_function``
   layer and the 3-layer MLP step (benchmarks/bridges.py) must compile to
   one program without host callbacks, place their results on the GPU, match
   pure JAX's gradients, and are timed against pure ``jax.jit``;
5. times W3 and W4 (``python -m benchmarks --device cuda --only W3,W4``) and
   a large matmul layer (forward and backward of ``tanh(x @ W) @ V``) on
   StrideWeave's torch carrier against native torch and JAX on the GPU;

and writes everything to ``DIR/gpu-check.md`` (default: ``$OUT`` when set,
else ``gpu-check``). Each step has its own time limit, so one hung step
still leaves a report; the exit status is 1 when any step failed.
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CUPY_SNIPPET = """
import cupy, numpy as np
import strideweave as sw, strideweave.array_api as xp
from strideweave.testing import assert_carriers_agree
rng = np.random.default_rng(0)
a, b = rng.standard_normal((64, 32), dtype=np.float32), rng.standard_normal((32, 16), dtype=np.float32)
programs = {
    "matmul-tanh": lambda x, y: xp.sum(xp.tanh(x @ y)),
    "softmax": lambda x, y: xp.sum(xp.exp(x - xp.max(x, axis=1, keepdims=True)) * 0.5),
    "std-slices": lambda x, y: xp.sum(xp.std(x[:, ::2], axis=0)) + xp.sum(y[..., 1]),
}
for name, fn in programs.items():
    assert_carriers_agree(fn, [a, b], carriers=["numpy", cupy])
    print(f"cupy {name}: agrees with numpy")
"""

MATMUL_SNIPPET = """
import time, numpy as np, torch, jax, jax.numpy as jnp
import strideweave as sw
n, d, h = 8192, 4096, 4096
rng = np.random.default_rng(0)
x0, W0, V0 = (rng.standard_normal(s, dtype=np.float32) * 0.02 for s in [(n, d), (d, h), (h, 1)])

def timed(step, repeats=20):
    step(); torch.cuda.synchronize()
    times = []
    for _ in range(repeats):
        t = time.perf_counter(); step(); torch.cuda.synchronize(); times.append(time.perf_counter() - t)
    return sorted(times)[len(times) // 2]

x, W, V = (sw.tensor(torch.from_numpy(a).cuda()) for a in (x0, W0, V0))
def sw_step():
    W.grad = None; V.grad = None
    sw.sum(sw.tanh(x @ W) @ V).backward()
tx, tW, tV = (torch.from_numpy(a).cuda().requires_grad_(i > 0) for i, a in enumerate((x0, W0, V0)))
def torch_step():
    tW.grad = None; tV.grad = None
    (torch.tanh(tx @ tW) @ tV).sum().backward()
jx, jW, jV = (jnp.asarray(a) for a in (x0, W0, V0))
jgrad = jax.jit(jax.grad(lambda W, V: jnp.sum(jnp.tanh(jx @ W) @ V), argnums=(0, 1)))
def jax_step():
    jax.block_until_ready(jgrad(jW, jV))
t_sw, t_torch, t_jax = timed(sw_step), timed(torch_step), timed(jax_step)
print(f"matmul layer {n}x{d}x{h}: strideweave {t_sw*1e3:.2f} ms, torch {t_torch*1e3:.2f} ms, "
      f"jax.jit {t_jax*1e3:.2f} ms")
print(f"ratios: strideweave/torch {t_sw/t_torch:.2f}x, strideweave/jax {t_sw/t_jax:.2f}x")
"""

STAGED_JAX_SNIPPET = """
import time, numpy as np, jax, jax.numpy as jnp
from benchmarks import bridges
gpu = [d for d in jax.devices() if d.platform == "gpu"]
assert gpu, f"JAX sees no GPU: {jax.devices()}"
import strideweave as sw
f = sw.interop.jax_function(lambda h, w, b: sw.tanh(h @ w + b))
h, w, b = (jnp.asarray(a) for a in bridges.layer_data())
step = jax.jit(jax.value_and_grad(lambda h, w, b: jnp.sum(f(h, w, b) ** 2), argnums=(1, 2)))
assert "callback" not in str(jax.make_jaxpr(step)(h, w, b)), "a host callback in the staged step"
value, grads = step(h, w, b)
assert all(d.platform == "gpu" for g in grads for d in g.devices()), "gradients left the GPU"
ref = jax.jit(jax.value_and_grad(lambda h, w, b: jnp.sum(jnp.tanh(h @ w + b) ** 2), argnums=(1, 2)))
for g, r in zip(grads, ref(h, w, b)[1]):
    np.testing.assert_allclose(np.asarray(g), np.asarray(r), rtol=1e-3, atol=1e-4)
print("staged jax_function layer on", gpu[0], ": no callback, gradients on the GPU, equal to pure JAX")

def pair(a, c, rounds=50, n=10):
    a(); c(); ratios = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(n): a()
        t1 = time.perf_counter()
        for _ in range(n): c()
        ratios.append((t1 - t0) / (time.perf_counter() - t1))
    return sorted(ratios)[len(ratios) // 2]

data, mlp = bridges.layer_data(), bridges.mlp_data()
print(f"layer: jax_function / jax.jit {pair(bridges.jax_function_step(*data), bridges.jax_step(*data)):.2f}x")
print(f"MLP: jax_function / jax.jit {pair(bridges.jax_mlp_function_step(*mlp), bridges.jax_mlp_step(*mlp)):.2f}x")
print(f"MLP: staged / jax.jit {pair(bridges.jax_mlp_staged_step(*mlp), bridges.jax_mlp_step(*mlp)):.2f}x")
"""


def _steps(out: Path) -> list[tuple[str, list[str], int]]:
    py = sys.executable
    return [
        ("device", ["nvidia-smi"], 30),
        ("cuda-marked tests", [py, "-m", "pytest", "-m", "cuda", "-q", "-p", "no:cacheprovider",
                               "-o", "addopts=-ra --strict-markers"], 180),
        ("conformance on torch CUDA and JAX GPU",
         [py, "-m", "conformance", "--carriers", "numpy,torch,jax", "--devices", "torch=cuda,jax=gpu",
          "--quiet", "--out", str(out / "conformance")], 180),
        ("CuPy through ArrayAPICarrier", [py, "-c", CUPY_SNIPPET], 60),
        ("StrideWeave staged by jax.jit on the GPU", [py, "-c", STAGED_JAX_SNIPPET], 120),
        ("W3 and W4 on CUDA", [py, "-m", "benchmarks", "--device", "cuda", "--only", "W3,W4", "--quick",
                               "--no-profile", "--out", str(out / "benchmarks")], 150),
        ("large matmul layer", [py, "-c", MATMUL_SNIPPET], 90),
    ]


def main(argv: list[str] | None = None) -> int:
    """Run every step, write the report, return 1 when any step failed."""
    parser = argparse.ArgumentParser(prog="python tools/gpu_check.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=os.environ.get("OUT", "gpu-check"), help="report directory")
    args = parser.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "PYTHONPATH": str(ROOT / "src")}
    lines = [f"# GPU check ({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())})", "",
             f"python {platform.python_version()} on {platform.node()}", ""]
    failed = 0
    for title, command, limit in _steps(out):
        start = time.perf_counter()
        try:
            done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=limit)
            status, text = ("passed" if done.returncode == 0 else f"failed (exit {done.returncode})",
                            done.stdout + done.stderr)
        except subprocess.TimeoutExpired as exc:
            status, text = f"timed out after {limit} s", f"{exc.stdout or ''}{exc.stderr or ''}"
        except FileNotFoundError as exc:
            status, text = "could not start", str(exc)
        failed += status != "passed"
        seconds = time.perf_counter() - start
        tail = "\n".join(str(text).splitlines()[-40:])
        lines += [f"## {title}: {status}, {seconds:.0f} s", "", "```", tail, "```", ""]
        print(f"{title}: {status} ({seconds:.0f} s)", flush=True)
    (out / "gpu-check.md").write_text("\n".join(lines))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
