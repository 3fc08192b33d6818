"""Thread-local graph-construction state: ``is_grad_enabled``, ``set_grad_enabled``, ``no_grad``."""

from __future__ import annotations

import functools
import threading

__all__ = ["is_grad_enabled", "set_grad_enabled", "no_grad"]


class _GradState(threading.local):
    # A threading.local subclass gives every thread its own ``enabled``,
    # initialised to True the first time that thread touches it.
    enabled = True


_state = _GradState()


def is_grad_enabled() -> bool:
    """Return whether the calling thread records autograd graphs (True unless changed)."""
    return _state.enabled


def set_grad_enabled(enabled: bool) -> None:
    """Turn graph construction on or off for the calling thread only."""
    if not isinstance(enabled, bool):
        raise TypeError(f"set_grad_enabled expects a bool, got {enabled!r} of type {type(enabled).__name__}")
    _state.enabled = enabled


class no_grad:
    """Context manager (and decorator) that disables graph construction in this thread.

    On exit, even through an exception, the state observed on entry is restored,
    so nested blocks each restore their own entry state.
    """

    __slots__ = ("_saved",)

    def __init__(self) -> None:
        self._saved: list[bool] = []

    def __enter__(self) -> "no_grad":
        self._saved.append(_state.enabled)
        _state.enabled = False
        return self

    def __exit__(self, *exc_info) -> None:
        _state.enabled = self._saved.pop()

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with no_grad():
                return fn(*args, **kwargs)

        return wrapper
