"""Requirement: Operations record a reverse-mode node for differentiable results."""

import numpy as np
from _spec_support import F32, arr, vec

import strideweave as sw


class Affine(sw.Operation):
    """y = a * k + b (k a Python scalar); records what options it saw."""

    def forward(self, a, k, b, options=None):
        self.options_seen = options
        return a * k + b

    def backward(self, gradient):
        return (gradient * self.k_used, gradient)

    k_used = 2.0


class ToFloat(sw.Operation):
    def forward(self, x, options=None):
        return sw.astype(x, F32)

    def backward(self, gradient):
        return (None,)


class ToInt(sw.Operation):
    def forward(self, x, options=None):
        return sw.astype(x, sw.DType.Int32)

    def backward(self, gradient):
        return (None,)


def _versions_of(op):
    return [(c, v) for c, v in op.input_versions()]


def test_record_a_node_for_a_differentiable_result(carrier):
    a, b = vec([1.0, 2.0], carrier), vec([3.0, 4.0], carrier)
    options = sw.ExecutionOptions()
    op = Affine()
    y = op(a, 2.0, b, options=options)
    assert op.options_seen is options
    assert y.dtype is F32
    assert y.autograd_ctx is op
    saved = op.inputs()
    assert len(saved) == 2 and saved[0] is a and saved[1] is b
    versions = _versions_of(op)
    assert len(versions) == 2 and versions[0][0] is a.carrier and versions[1][0] is b.carrier
    assert versions[0][1] == a.carrier.version and versions[1][1] == b.carrier.version
    np.testing.assert_array_equal(arr(y), [5.0, 8.0])


def test_saved_inputs_repeat_a_tensor_supplied_several_times(carrier):
    a = vec([1.0, 2.0], carrier)
    op = Affine()
    y = op(a, 3.0, a)
    saved = op.inputs()
    assert len(saved) == 2 and saved[0] is a and saved[1] is a
    # one saved version per unique constituent carrier
    versions = op.input_versions()
    assert len(versions) == 1 and versions[0][0] is a.carrier and versions[0][1] == a.carrier.version
    assert y.autograd_ctx is op


def test_builtin_operations_save_only_positional_tensors(carrier):
    x = vec([1.0, 2.0], carrier)
    y = sw.add(x, 2.0)
    assert y.autograd_ctx is not None
    assert len(y.autograd_ctx.inputs()) == 1 and y.autograd_ctx.inputs()[0] is x
    z = sw.multiply(3.0, x)
    assert len(z.autograd_ctx.inputs()) == 1 and z.autograd_ctx.inputs()[0] is x
    w = sw.add(x, x)
    assert len(w.autograd_ctx.inputs()) == 2 and all(t is x for t in w.autograd_ctx.inputs())


def test_record_no_node_for_a_non_differentiable_result(carrier):
    i = sw.tensor([1, 2], carrier=carrier)
    b = sw.tensor([True, False], carrier=carrier)
    for result in (i + i, sw.multiply(i, 3), sw.equal(b, b), sw.less(i, i)):
        assert result.autograd_ctx is None
    op = ToInt()
    r = op(i)
    assert r.autograd_ctx is None
    assert op.inputs() == () and op.input_versions() == ()


def test_record_no_node_when_the_result_is_not_differentiable(carrier):
    x = vec([1.0, 2.0], carrier)
    op = ToInt()
    r = op(x)
    assert r.dtype is sw.DType.Int32 and r.autograd_ctx is None
    assert op.inputs() == () and op.input_versions() == ()
    assert sw.less(x, x).autograd_ctx is None


def test_record_no_node_when_no_positional_tensor_is_differentiable(carrier):
    i = sw.tensor([1, 2], carrier=carrier)
    op = ToFloat()
    r = op(i)
    assert r.dtype is F32 and r.is_differentiable()
    assert r.autograd_ctx is None
    assert op.inputs() == () and op.input_versions() == ()
