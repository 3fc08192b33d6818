"""Hot paths that build objects inline must stay what the general constructors build.

``_Binary.with_scalar`` (the operators' scalar hot path) builds its result
Tensor as ``Tensor._from_raw`` does and records what ``record_flat`` records, and
``Primitive.__new__`` sets the fields ``Operation.__new__`` sets.
"""

import numpy as np
import pytest

import strideweave as sw
from strideweave.tensors.tensor import Tensor

_SLOTS = [s for s in Tensor.__slots__ if s != "__weakref__"]


def _state(t):
    return {s: getattr(t, s, "<unset>") for s in _SLOTS}


@pytest.mark.parametrize("grad_mode", [True, False])
@pytest.mark.parametrize(("op", "recordable"), [(lambda x: x * 2.0, True), (lambda x: x < 2.0, False)],
                         ids=["float32 result", "bool result"])
def test_the_scalar_hot_path_result_matches_from_raw(grad_mode, op, recordable):
    values = np.arange(6, dtype=np.float32)
    x = sw.tensor(values)
    previous = sw.is_grad_enabled()
    sw.set_grad_enabled(grad_mode)
    try:
        y = op(x)  # the scalar hot path: ``with_scalar``, inline for a Float32 result
    finally:
        sw.set_grad_enabled(previous)
    assert y._raw is not None, "the elementwise hot path no longer makes a lazy result"
    expected = Tensor._from_raw(y._raw, y._layout, y._kind, y._dtype)
    got, want = _state(y), _state(expected)
    recorded = grad_mode and recordable
    assert (got.pop("_ctx") is not None) == recorded
    want.pop("_ctx")
    assert got == want
    np.testing.assert_array_equal(np.asarray(y.detach()), op(values))


def test_primitive_new_sets_what_operation_new_sets():
    from strideweave.operation import Operation
    from strideweave.ops._primitive import Primitive

    class Plain(Operation):
        pass

    class Built(Primitive):
        __slots__ = ()

    plain, built = Plain(), Built()
    fields = [f for f in Operation.__slots__ if f != "__dict__"]
    assert {f: getattr(built, f) for f in fields} == {f: getattr(plain, f) for f in fields}
    assert (built.place, built.saved, built.flat) == (None, None, False)


@pytest.mark.parametrize("position", [1, 0], ids=["x * 2.0", "2.0 - x"])
def test_with_scalar_records_what_record_flat_records(position):
    from strideweave.ops._primitive import Primitive

    x = sw.tensor(np.arange(6, dtype=np.float32)) * 1.0  # a lazy chain result, as in a chain of operators
    y = x * 2.0 if position else 2.0 - x
    node = y._ctx
    reference = type(node).record_flat((x,), y._raw, x._layout, x._kind, node.saved, x._raw)
    assert _state(y).keys() == _state(reference).keys()
    assert {k: v for k, v in _state(y).items() if k not in ("_ctx", "_raw")} == \
        {k: v for k, v in _state(reference).items() if k not in ("_ctx", "_raw")}
    fields = ["_inputs", "_versions", "_released", "_result_layout", "_result_state", *Primitive.__slots__]
    assert {f: getattr(node, f) for f in fields} == {f: getattr(reference._ctx, f) for f in fields}
