"""``strideweave.array_api.fft``: the standard's FFT extension, forward only.

Each function runs the carrier's own ``fft`` namespace on the native arrays
and wraps the result; results are not recorded (complex values are never
differentiable in StrideWeave, spec: only Float32 is). A Float32 result that
depends on a Float32 Tensor through them (``irfft(rfft(x))``) raises at
backward, naming the call (``operation.outside_operation``); ``fftshift`` and
``ifftshift`` of a Float32 Tensor are rolls, and differentiate.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..dtypes import DType
from ..operation import outside_operation
from ..ops import astype as _astype
from ..ops._args import tensor as _tensor
from ..ops._natural import wrap_natural
from ..ops.arrays import roll as _roll
from ..tensors.tensor import Tensor
from ._devices import kind_for_device

__all__ = [
    "fft",
    "fftfreq",
    "fftn",
    "fftshift",
    "hfft",
    "ifft",
    "ifftn",
    "ifftshift",
    "ihfft",
    "irfft",
    "irfftn",
    "rfft",
    "rfftfreq",
    "rfftn",
]


def _run(name: str, x: Any, **kwargs: Any) -> Tensor:
    x = _tensor(x, f"fft.{name}")
    kind = x._carriers[0].kind
    out = wrap_natural(getattr(kind.namespace.fft, name)(x._read_array(), **kwargs), kind)
    # Forward only: a Float32 result reached through it raises at backward instead of passing None.
    return outside_operation(f"fft.{name}", (x,), out)


def _transform(name: str, doc: str, *, n_axes: bool = False) -> Callable[..., Tensor]:
    """The standard's ``fft.<name>``: one axis (``n``, ``axis``) or several (``s``, ``axes``, ``n_axes``)."""
    def over_axes(x, /, *, s=None, axes=None, norm="backward"):
        return _run(name, x, s=s, axes=axes, norm=norm)

    def over_axis(x, /, *, n=None, axis=-1, norm="backward"):
        return _run(name, x, n=n, axis=axis, norm=norm)
    transform = over_axes if n_axes else over_axis
    transform.__name__ = transform.__qualname__ = name
    transform.__doc__ = doc
    return transform


fft = _transform("fft", "One-dimensional discrete Fourier transform.")
ifft = _transform("ifft", "Inverse of ``fft``.")
fftn = _transform("fftn", "N-dimensional discrete Fourier transform.", n_axes=True)
ifftn = _transform("ifftn", "Inverse of ``fftn``.", n_axes=True)
rfft = _transform("rfft", "FFT of a real signal (non-negative frequencies).")
irfft = _transform("irfft", "Inverse of ``rfft``.")
rfftn = _transform("rfftn", "N-dimensional FFT of a real signal.", n_axes=True)
irfftn = _transform("irfftn", "Inverse of ``rfftn``.", n_axes=True)
hfft = _transform("hfft", "FFT of a Hermitian-symmetric signal.")
ihfft = _transform("ihfft", "Inverse of ``hfft``.")


def _shift(name: str, x: Any, axes: Any, inverse: bool) -> Tensor:
    """``fftshift`` / ``ifftshift``: a roll, differentiable on Float32 Tensors."""
    if not isinstance(x, Tensor) or x.dtype is not DType.Float32:
        return _run(name, x, axes=axes)
    shape = x.shape
    axes = tuple(range(len(shape))) if axes is None else (axes,) if isinstance(axes, int) else tuple(axes)
    shifts = tuple(-(shape[a] // 2) if inverse else shape[a] // 2 for a in axes)
    return _roll(x, shifts, axis=axes) if axes else x


def fftshift(x, /, *, axes=None):
    """Move the zero frequency to the centre."""
    return _shift("fftshift", x, axes, inverse=False)


def ifftshift(x, /, *, axes=None):
    """Inverse of ``fftshift``."""
    return _shift("ifftshift", x, axes, inverse=True)


def _freq(name: str, n: int, d: float, dtype, device) -> Tensor:
    kind = kind_for_device(device)
    out = wrap_natural(getattr(kind.namespace.fft, name)(n, d=d), kind)
    dtype = DType.Float32 if dtype is None else dtype  # the namespace's default real dtype
    return out if out.dtype is dtype else _astype(out, dtype)


def fftfreq(n, /, *, d=1.0, dtype=None, device=None):
    """Sample frequencies of ``fft``."""
    return _freq("fftfreq", n, d, dtype, device)


def rfftfreq(n, /, *, d=1.0, dtype=None, device=None):
    """Sample frequencies of ``rfft``."""
    return _freq("rfftfreq", n, d, dtype, device)
