"""ArrayAPICarrier: any namespace that ``array_api_compat.array_namespace`` accepts.

Tested with ``array_api_strict``; meant for CuPy, Dask and friends too.  Each
instance carries its own namespace.  Every operation is the generic one from
:mod:`.base`, written against the standard only: reads by reshape + slice +
permute + broadcast or ``take``; writes by rebuilding the touched window with
``take`` / ``where`` / ``sum`` and storing it with a slice setitem (the
standard has no setitem with index arrays), or by swapping the buffer when
the namespace's arrays are immutable.
"""

from __future__ import annotations

from ..errors import MissingBackendError
from .base import Carrier

__all__ = ["ArrayAPICarrier"]


def _strict():
    try:
        import array_api_strict
    except ImportError as exc:
        raise MissingBackendError(
            "the 'array_api_strict' carrier needs array-api-strict: pip install strideweave[strict]"
        ) from exc
    return array_api_strict


def as_namespace(namespace):
    """The Array API namespace for a module (raw numpy/torch map to array_api_compat's)."""
    if getattr(namespace, "__array_api_version__", None) is not None and hasattr(namespace, "asarray"):
        return namespace
    import array_api_compat
    try:
        return array_api_compat.array_namespace(namespace.zeros(0))
    except Exception:
        raise TypeError(
            f"ArrayAPICarrier: {namespace!r} is not an Array API namespace "
            f"(expected a module that array_api_compat.array_namespace accepts)"
        ) from None


class ArrayAPICarrier(Carrier):
    """Storage in a 1-D array of any Array API namespace (default ``array_api_strict``)."""

    __slots__ = ()
    backend = "array_api"

    @classmethod
    def _default_namespace(cls):
        return _strict()

    @classmethod
    def _check_namespace(cls, namespace):
        if namespace is None:
            return _strict()
        return as_namespace(namespace)

    @classmethod
    def _namespace_of(cls, x):
        import array_api_compat
        try:
            return array_api_compat.array_namespace(x)
        except TypeError:
            raise TypeError(
                f"ArrayAPICarrier expects an Array API array, got {type(x).__module__}.{type(x).__name__}"
            ) from None

    @classmethod
    def _normalize_device(cls, xp, device):
        if device is not None:
            return device
        info = getattr(xp, "__array_namespace_info__", None)
        if info is not None:
            return info().default_device()
        import array_api_compat
        return array_api_compat.device(xp.zeros(0))
