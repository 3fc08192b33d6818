"""Elementwise results whose carrier object is made on first use behave exactly like any other Tensor.

The hot path keeps a result's flat buffer and makes its carrier only when
something asks for it. Nothing about that may be observable: one carrier per
result (views and aliases share it), versions that still catch every write,
and the same gradients.
"""

import threading

import numpy as np
import pytest

import strideweave as sw

IN_PLACE = "in-place modification"


def _values(t):
    return np.asarray(t.numpy(), dtype=np.float64)


def test_a_result_has_exactly_one_carrier(carrier):
    x = sw.tensor(np.arange(6, dtype=np.float32), carrier=carrier)
    y = sw.exp(x * 0.5)
    first = y.carrier
    assert y.carrier is first
    assert y[1:4].carrier is first
    assert sw.reshape(y, (2, 3)).carrier is first
    np.testing.assert_allclose(_values(y), np.exp(np.arange(6) * 0.5), rtol=1e-6)


def test_threads_asking_for_a_result_carrier_get_the_same_one():
    x = sw.tensor(np.ones(1024, np.float32))
    results = [x * float(i) for i in range(64)]
    seen: list = [[] for _ in results]
    start = threading.Barrier(4)

    def read():
        start.wait()
        for slot, result in zip(seen, results):
            slot.append(result.carrier)

    threads = [threading.Thread(target=read) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for slot in seen:
        assert len(slot) == 4 and all(c is slot[0] for c in slot)


def test_writing_a_saved_result_before_its_carrier_existed_fails_backward(carrier):
    x = sw.tensor(np.array([1.0, 2.0, 3.0], np.float32), carrier=carrier)
    y = x * 2.0
    loss = sw.sum(y * y)               # saves y while it has no carrier object yet
    y += 1.0                           # makes the carrier, then bumps its version
    with pytest.raises(RuntimeError, match=IN_PLACE):
        loss.backward()
    assert x.grad is None


def test_writing_a_saved_result_whose_carrier_existed_fails_backward(carrier):
    x = sw.tensor(np.array([1.0, 2.0, 3.0], np.float32), carrier=carrier)
    y = x * 2.0
    _ = y.carrier                      # made before y is saved
    loss = sw.sum(sw.sin(y))
    y[0] = 5.0
    with pytest.raises(RuntimeError, match=IN_PLACE):
        loss.backward()
    assert x.grad is None


def test_native_write_to_a_result_buffer_fails_backward():
    x = sw.tensor(np.array([1.0, 2.0, 3.0], np.float32))
    y = x * 2.0
    loss = sw.sum(y * y)
    native = y.carrier.array           # a native alias of the buffer, handed out after recording
    native[1] = -4.0
    with pytest.raises(RuntimeError, match=IN_PLACE):
        loss.backward()
    assert x.grad is None


def test_unwritten_results_give_the_gradient_of_the_chain(carrier):
    x = sw.tensor(np.array([0.5, -1.0, 2.0], np.float32), carrier=carrier)
    y = x
    for _ in range(5):
        y = sw.tanh(y * 1.1 + 0.1)
    z = y * y                          # two raw operands of one node
    sw.sum(z).backward()

    reference = np.array([0.5, -1.0, 2.0])
    grad = np.ones(3)
    forward = [reference]
    for _ in range(5):
        forward.append(np.tanh(forward[-1] * 1.1 + 0.1))
    grad = 2 * forward[-1]
    for k in range(5, 0, -1):
        grad = grad * (1 - forward[k] ** 2) * 1.1
    np.testing.assert_allclose(_values(x.grad), grad, rtol=1e-5)


def test_results_made_without_recording_are_ordinary_tensors(carrier):
    x = sw.tensor(np.array([1.0, 4.0], np.float32), carrier=carrier)
    with sw.no_grad():
        y = sw.sqrt(x * 4.0)
    assert y.autograd_ctx is None and y.is_leaf
    np.testing.assert_allclose(_values(y), [2.0, 4.0])
    assert y.carrier.size == 2 and y.dtype is sw.DType.Float32


def test_results_are_plain_tensors_before_and_after_their_carrier_is_made(carrier):
    x = sw.tensor(np.array([1.0, 2.0], np.float32), carrier=carrier)
    y = x * 3.0
    assert type(y) is sw.Tensor and y._raw is not None   # no carrier object yet
    assert "Tensor(" in repr(y)
    assert type(y) is sw.Tensor and y._raw is None       # repr read the values


def test_fresh_results_serve_as_cotangents(carrier):
    x = sw.tensor(np.array([1.0, 2.0, 3.0], np.float32), carrier=carrier)
    y = sw.sin(x)
    seed = sw.ones((3,), carrier=carrier) * 2.0     # a result whose carrier was not made yet
    y.backward(seed)
    np.testing.assert_allclose(_values(x.grad), 2.0 * np.cos([1.0, 2.0, 3.0]), rtol=1e-6)


class _Twice(sw.Operation):
    def forward(self, x, *, options=None):
        return x * 2.0

    def backward(self, gradient):
        return (gradient * 2.0,)       # a fresh result, handed to the engine as a cotangent


def test_fresh_results_returned_by_a_custom_backward_are_summed(carrier):
    x = sw.tensor(np.array([1.0, -1.0], np.float32), carrier=carrier)
    y = _Twice()(x)
    z = _Twice()(x)
    sw.sum(y * 3.0 + z).backward()
    np.testing.assert_allclose(_values(x.grad), [8.0, 8.0])


def test_a_copy_of_a_lazily_made_result_has_its_own_carrier(carrier):
    import copy
    import pickle

    x = sw.tensor(np.array([1.0, 2.0], np.float32), carrier=carrier)
    y = (x * 2.0).detach()  # copy.copy copies (NumPy's meaning), and only Tensors without history
    for twin in (copy.copy(y), copy.deepcopy(y), pickle.loads(pickle.dumps(y))):
        assert type(twin) is sw.Tensor and twin.carrier is not y.carrier
        np.testing.assert_array_equal(_values(twin), [2.0, 4.0])
    twin = copy.copy(y)
    y[0] = 7.0
    np.testing.assert_array_equal(_values(twin), [2.0, 4.0])
