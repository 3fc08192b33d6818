"""Requirement: Graph construction state is thread-local and restorable."""

import threading

import pytest
from _spec_support import Probe, vec

import strideweave as sw


def _in_thread(fn):
    out = {}

    def run():
        try:
            out["value"] = fn()
        except BaseException as exc:  # pragma: no cover - reported below
            out["error"] = exc

    t = threading.Thread(target=run)
    t.start()
    t.join()
    if "error" in out:
        raise out["error"]
    return out["value"]


@pytest.fixture(autouse=True)
def _restore_grad_mode():
    yield
    sw.set_grad_enabled(True)


def test_suppress_graph_construction_inside_a_block(carrier):
    x = vec([1.0, 2.0], carrier)
    assert sw.is_grad_enabled() is True
    with sw.no_grad():
        assert sw.is_grad_enabled() is False
        y = x * x
        op = Probe()
        z = op(x)
    assert y.autograd_ctx is None and z.autograd_ctx is None
    assert op.inputs() == () and op.input_versions() == ()
    assert sw.is_grad_enabled() is True
    assert (x * x).autograd_ctx is not None


def test_keep_the_state_local_to_one_thread():
    with sw.no_grad():
        seen = _in_thread(sw.is_grad_enabled)
        assert seen is True
        assert sw.is_grad_enabled() is False
    assert sw.is_grad_enabled() is True


def test_is_grad_enabled_is_true_for_a_fresh_thread():
    assert _in_thread(sw.is_grad_enabled) is True


def test_set_grad_enabled_returns_none_and_sets_the_state(carrier):
    x = vec([1.0], carrier)
    assert sw.set_grad_enabled(False) is None
    assert sw.is_grad_enabled() is False
    assert (x * 2.0).autograd_ctx is None
    assert sw.set_grad_enabled(True) is None
    assert sw.is_grad_enabled() is True
    assert (x * 2.0).autograd_ctx is not None


def test_set_grad_enabled_in_another_thread_leaves_this_thread_unchanged():
    def disable():
        sw.set_grad_enabled(False)
        return sw.is_grad_enabled()

    assert _in_thread(disable) is False
    assert sw.is_grad_enabled() is True
    sw.set_grad_enabled(False)
    assert _in_thread(sw.is_grad_enabled) is True
    assert sw.is_grad_enabled() is False


def _raise_inside_no_grad(seen):
    with sw.no_grad():
        seen.append(sw.is_grad_enabled())
        raise KeyError("boom")


def test_no_grad_restores_the_state_when_the_block_raises():
    seen = []
    with pytest.raises(KeyError):
        _raise_inside_no_grad(seen)
    assert seen == [False]
    assert sw.is_grad_enabled() is True
    sw.set_grad_enabled(False)
    with pytest.raises(KeyError):
        _raise_inside_no_grad(seen)
    assert seen == [False, False]
    assert sw.is_grad_enabled() is False


def test_nested_no_grad_blocks_restore_their_entry_state(carrier):
    x = vec([1.0], carrier)
    with sw.no_grad():
        with sw.no_grad():
            assert sw.is_grad_enabled() is False
        assert sw.is_grad_enabled() is False
        assert (x * 2.0).autograd_ctx is None
        sw.set_grad_enabled(True)
        with sw.no_grad():
            assert sw.is_grad_enabled() is False
        assert sw.is_grad_enabled() is True  # state observed at the inner block's entry
    # the outer block restores what it observed on entry
    assert sw.is_grad_enabled() is True
    assert (x * 2.0).autograd_ctx is not None


def test_no_grad_inside_a_disabled_thread_restores_disabled():
    sw.set_grad_enabled(False)
    with sw.no_grad():
        assert sw.is_grad_enabled() is False
    assert sw.is_grad_enabled() is False


def test_no_grad_returns_a_context_manager():
    manager = sw.no_grad()
    assert hasattr(manager, "__enter__") and hasattr(manager, "__exit__")
    assert sw.is_grad_enabled() is True  # creating it changes nothing
    with manager:
        assert sw.is_grad_enabled() is False
    assert sw.is_grad_enabled() is True
