"""Backend imports and small helpers shared by workloads and anchors.

Every import here happens after ``benchmarks/__init__`` pinned the thread
counts; torch additionally gets ``torch.set_num_threads(1)``.
"""
from __future__ import annotations

import contextlib

import numpy as np

_cache: dict = {}


def torch():
    if "torch" not in _cache:
        import torch as _t
        _t.set_num_threads(1)
        with contextlib.suppress(RuntimeError):  # already set / parallel work already started
            _t.set_num_interop_threads(1)
        _cache["torch"] = _t
    return _cache["torch"]


def jax():
    if "jax" not in _cache:
        import jax as _j
        _j.config.update("jax_platforms", "cpu")
        _cache["jax"] = _j
    return _cache["jax"]


def jnp():
    jax()
    import jax.numpy as _jnp
    return _jnp


def hips():
    """HIPS autograd: (autograd module, autograd.numpy)."""
    if "hips" not in _cache:
        import autograd as _ag
        import autograd.numpy as _anp
        _cache["hips"] = (_ag, _anp)
    return _cache["hips"]


def sw():
    import strideweave as _sw
    return _sw


def cuda_available() -> bool:
    try:
        return bool(torch().cuda.is_available())
    except Exception:
        return False


# ---------------------------------------------------------------- StrideWeave

def sw_leaf(values: np.ndarray, carrier: str, device: str = "cpu", row_major: bool = False,
            read_only: bool = False):
    """A StrideWeave leaf holding ``values`` natively on ``carrier``.

    The native array is built first so the Tensor wraps it as a leaf (asking
    ``sw.tensor(ndarray, carrier="torch")`` copies it onto the carrier). By
    default the storage is canonical (first mode fastest, i.e. Fortran order),
    the layout StrideWeave computes in; ``row_major=True`` wraps C-ordered
    memory instead, as ``sw.tensor`` does for a plain NumPy array, which costs
    a transpose wherever a canonical result is produced from it.
    ``read_only=True`` (NumPy) wraps an array the user made read-only, which
    StrideWeave need not snapshot to see writes behind its back.
    """
    s = sw()
    values = np.asarray(values, dtype=np.float32)
    if row_major or values.ndim < 2:
        values = np.ascontiguousarray(values)
    else:
        values = np.asfortranarray(values)
    if carrier == "numpy":
        values = values.copy(order="K")
        values.flags.writeable = not read_only
        return s.tensor(values)
    if carrier == "torch":
        return s.tensor(torch().from_numpy(values.copy(order="K")).to(device))
    if carrier == "jax":
        if row_major or values.ndim < 2:
            return s.tensor(jnp().asarray(values))
        flat = jnp().asarray(values.reshape(-1, order="F"))
        return s.Tensor.from_storage(flat, s.Layout.canonical(values.shape))
    raise ValueError(carrier)


def sw_storage(values: np.ndarray, carrier: str, device: str = "cpu"):
    """A flat native 1-D array for ``sw.Tensor.from_storage``."""
    flat = np.ascontiguousarray(values, dtype=np.float32).reshape(-1)
    if carrier == "numpy":
        return flat.copy()
    if carrier == "torch":
        return torch().from_numpy(flat.copy()).to(device)
    if carrier == "jax":
        return jnp().asarray(flat)
    raise ValueError(carrier)


def sw_sync(*tensors) -> None:
    """Make sure every gradient really exists (JAX dispatch is asynchronous, CUDA too).

    Waits on the gradient's own storage buffer as it was computed
    (``Carrier.dense_values``): ``to_array()`` would add a reporting copy (a
    transpose for non-canonical layouts), and ``carrier.array`` a flattening
    reshape on JAX, that no user pays inside a training step. NumPy computes
    synchronously, so its buffers are not touched (handing one out would
    also start watching it for writes).
    """
    for t in tensors:
        if t is None:
            raise RuntimeError("gradient missing (None)")
        for carrier in t.carriers:
            if isinstance(carrier, sw().NumpyCarrier):
                continue
            arr = carrier.dense_values()
            block = getattr(arr, "block_until_ready", None)
            if block is not None:
                block()
            elif getattr(arr, "is_cuda", False):
                torch().cuda.synchronize()


def torch_sync(device: str) -> None:
    if device != "cpu":
        torch().cuda.synchronize()


def jax_block(*arrays) -> None:
    for a in arrays:
        a.block_until_ready()
