"""TorchCarrier: a 1-D ``torch.Tensor`` on any device (CPU or CUDA).

PyTorch is imported on first use (``allocate`` / ``from_array`` /
``resolve("torch")``), never by importing this module, so
``import strideweave`` stays free of torch.

Fast paths (why): ``Tensor.as_strided`` accepts any sizes, strides and storage
offset on every device, so every read is one zero-copy view and every
injective write is one ``copy_`` / ``add_`` into a view.  Non-injective writes
use ``index_put_`` / ``index_add_`` (which accumulates duplicates, also on
CUDA) with a cached int64 index tensor on the carrier's device.  The device is
always taken from the buffer: nothing assumes the CPU.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import _indexing
from .base import LibraryCarrier, _checked_offset
from .generic import _SCALARS

__all__ = ["TorchCarrier"]

torch: Any = None  # the torch module, set on first use (``TorchCarrier.library_globals``) before any instance exists


class TorchCarrier(LibraryCarrier):
    """Storage in a 1-D torch tensor; ``device`` is a ``torch.device``."""

    # ``_own``: the carrier's version less torch's counter (the base class's ``_version`` slot is shadowed
    # below and left unset): read as a plain slot, where the base slot's accessor would be one more call.
    __slots__ = ("_own",)
    native_methods = True
    backend = "torch"
    namespace_name = "torch"
    array_name = "a torch.Tensor"
    watches_content = False  # torch counts versions itself (read below)

    # The version includes torch's own counter of the buffer, which every view
    # of the same storage shares, so an in-place torch write through a wrapped
    # tensor (``t.add_(1)``) invalidates graphs exactly like a public mutation.
    # Versions are read at every recording and check (about 14 times per step of a small layer).
    @property
    def _version(self):
        try:
            return self._own + self._array._version
        except RuntimeError:  # inference-mode tensors count no versions (and cannot be written)
            return self._own

    @_version.setter
    def _version(self, value):
        try:
            self._own = value - self._array._version
        except RuntimeError:
            self._own = value

    @staticmethod
    def _accumulate(into, other):
        return into.add_(other)

    @staticmethod
    def _copied(source, result):
        return result.untyped_storage().data_ptr() != source.untyped_storage().data_ptr()

    @classmethod
    def segment_sum(cls, xp, values, segments, n):
        # ``index_add_`` accumulates duplicates in one kernel, on every device.
        cls._library()  # the module global ``torch``, when no carrier of it was made yet
        if segments.dtype not in (torch.int32, torch.int64):
            segments = segments.to(torch.int64)
        return torch.zeros(n, dtype=values.dtype, device=values.device).index_add_(0, segments, values)

    # ----- class hooks ---------------------------------------------------------

    library_modules = ("torch", "array_api_compat.torch")
    library_title = "PyTorch"
    extra = "torch"
    array_type = "Tensor"
    library_globals = ("torch",)

    @classmethod
    def _device_of(cls, x):
        return x.device

    @classmethod
    def _normalize_device(cls, xp, device):
        cls._library()
        if device is None:
            return torch.device("cpu")
        dev = torch.device(device)
        if dev.type == "cuda" and dev.index is None:
            # tensors report "cuda:N"; make "cuda" compare equal to them
            dev = torch.device("cuda", torch.cuda.current_device())
        return dev

    @classmethod
    def _prepare_buffer(cls, array1d):
        # Share storage but never autograd history: carriers are plain data.
        return array1d.detach() if array1d.requires_grad else array1d

    # torch's own constructors: array_api_compat's wrappers add a Python call and argument checks
    @classmethod
    def _zeros(cls, xp, n, native, device):
        return torch.zeros(n, dtype=native, device=device)

    @classmethod
    def _full(cls, xp, n, value, native, device):
        return torch.full((n,), value, dtype=native, device=device)

    @classmethod
    def to_numpy(cls, array):
        return array.detach().cpu().resolve_conj().resolve_neg().numpy()  # lazy conjugates have no NumPy view

    def _from_numpy(self, host):
        return torch.from_numpy(np.ascontiguousarray(host)).to(self._device)

    def _import_foreign(self, values):
        try:
            out = torch.from_dlpack(values)
        except Exception:
            if hasattr(values, "__array__") or not hasattr(values, "__dlpack__"):
                host = np.asarray(values)
            else:
                host = np.from_dlpack(values)
            out = torch.from_numpy(np.array(host, copy=True))
        return out if out.device == self._device else out.to(self._device)

    def _move(self, array, device):
        return array.to(device)

    # ----- reads ---------------------------------------------------------------

    def _strided(self, shape, strides, offset):
        buf = self._array
        step = buf.stride(0)  # the wrapped 1-D tensor may itself be strided
        if step != 1:
            strides = tuple(s * step for s in strides)
        return buf.as_strided(shape, strides, buf.storage_offset() + offset * step)

    def gather_rev(self, layout, offset=0):
        if not (offset.__class__ is int and offset >= 0 and offset + layout.cosize <= self._size):
            offset = _checked_offset(self, layout, offset)
        return self._strided(layout.leaf_shape[::-1], layout.leaf_stride[::-1], offset)

    def gather(self, layout, offset=0):
        return self._strided(layout.leaf_shape, layout.leaf_stride, self._checked(layout, offset)[0])

    def _gather_rev(self, rs, rt, offset):
        return self._strided(rs, rt, offset)

    # ----- writes --------------------------------------------------------------

    def _unaliased(self, vals):
        # copy_/add_ refuse sources that overlap the destination's memory
        if isinstance(vals, torch.Tensor) and \
                vals.untyped_storage().data_ptr() == self._array.untyped_storage().data_ptr():
            return vals.clone()
        return vals

    def _idx(self, rs, rt, offset):
        return self._cached(("idx", rs, rt, offset), lambda: torch.from_numpy(
            _indexing.flat_index(rs, rt, offset)).to(self._device))

    def _flat(self, vals, rs):
        if isinstance(vals, _SCALARS):
            vals = torch.tensor(vals, dtype=self._native, device=self._device)
        return vals.broadcast_to(rs).reshape(-1)

    def _set_rev(self, rs, rt, offset, vals, injective, canonical):
        if injective:
            view = self._strided(rs, rt, offset)
            if isinstance(vals, _SCALARS):
                view.fill_(vals)
            else:
                view.copy_(self._unaliased(vals))
        else:
            self._array.index_put_((self._idx(rs, rt, offset),), self._unaliased(self._flat(vals, rs)))

    def _add_rev(self, rs, rt, offset, vals, injective, canonical):
        if injective:
            self._strided(rs, rt, offset).add_(self._unaliased(vals))
        else:
            self._array.index_add_(0, self._idx(rs, rt, offset), self._unaliased(self._flat(vals, rs)))

    def _sum_axes(self, vals, rs, axes):
        if isinstance(vals, _SCALARS):
            vals = torch.tensor(vals, dtype=self._native, device=self._device)
        return vals.broadcast_to(rs).sum(dim=axes, dtype=self._native)
