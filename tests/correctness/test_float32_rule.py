"""Code that leaves Float32 runs but does not differentiate, and the error points at where it left."""

import pytest

import strideweave as sw


def _wider_or_narrower(carrier):
    """Float64, or Float16 where the library stores no float64 (JAX outside x64 mode)."""
    from strideweave.carriers import missing_wide_types, resolve

    return sw.DType.Float16 if "float64" in missing_wide_types(resolve(carrier)) else sw.DType.Float64


def test_backward_names_the_cast_out_of_float32(carrier):
    target = _wider_or_narrower(carrier)
    x = sw.tensor([1.0, 2.0], carrier=carrier)
    y = sw.astype(x, target)                    # the cast: this line is named in the error
    loss = sw.sum(y * 2.0)
    with pytest.raises(RuntimeError, match=rf"became {target!r} in Astype at .*test_float32_rule.py:\d+"):
        loss.backward()
    assert x.grad is None


@pytest.mark.parametrize("carrier", ["numpy", "torch", "array_api_strict"])  # JAX: no float64 outside x64 mode
def test_grad_names_a_promotion_by_a_float64_operand(carrier):
    pytest.importorskip({"numpy": "numpy"}.get(carrier, carrier))
    x = sw.tensor([1.0, 2.0], carrier=carrier)
    wide = sw.astype(sw.tensor([3.0, 4.0], carrier=carrier), sw.DType.Float64)
    out = x * wide
    with pytest.raises(RuntimeError, match=r"became DType\.Float64 in Multiply"):
        sw.grad(sw.sum(out), [x], sw.ones(1, sw.DType.Float64, carrier=carrier))


def test_no_origin_when_nothing_left_float32():
    y = sw.astype(sw.tensor([1, 2]), sw.DType.Float64)
    with pytest.raises(RuntimeError) as info:
        sw.sum(y).backward()
    assert "computed from" not in str(info.value)


def test_library_code_that_computes_in_float64_points_at_its_cast():
    xpx = pytest.importorskip("array_api_extra")
    import strideweave.array_api as xp

    x = xp.asarray([[1.0, 2.0, 3.0], [2.0, 5.0, 1.0]])
    c = xpx.cov(x, xp=xp)
    with pytest.raises(RuntimeError, match=r"array_api_extra.*:\d+ in cov"):
        xp.sum(c).backward()
