"""compare_with_native: agreement on every carrier, and each way it reports a disagreement."""

import numpy as np
import pytest

import strideweave as sw
from strideweave import testing
from strideweave.testing import compare

pytest.importorskip("torch")
pytest.importorskip("jax")

CARRIERS = testing.available_carriers()
X = np.array([[0.3, -1.2, 0.7], [1.5, 0.4, -0.6]])


def namespace(x):
    from array_api_compat import array_namespace

    return array_namespace(x)


def softplus_norm(x, w):
    """A small Array API program with two differentiated inputs and an integer constant."""
    xp = namespace(x)
    y = xp.log(1.0 + xp.exp(x * w))
    return y / xp.sum(y, axis=1, keepdims=True)


def test_agreement_on_every_carrier_and_reference():
    w = np.array([0.5, -2.0, 1.5])
    report = testing.compare_with_native(softplus_norm, [X, w])
    assert report.passed and report.carriers == CARRIERS and report.references == ["torch", "jax"]
    for carrier in CARRIERS:
        for reference in ("torch", "jax"):
            assert 0.0 <= report.errors[carrier, reference] < 1e-5
            assert report.ratios[carrier, reference] <= 1.0
    table = str(report)
    assert all(c in table for c in CARRIERS) and "torch" in table and "jax" in table


@pytest.mark.parametrize("carrier", CARRIERS)
def test_tuple_outputs_integer_constants_and_explicit_cotangent(carrier):
    idx = np.array([2, 0], dtype=np.int32)

    def fn(x, i):
        xp = namespace(x)
        return xp.take(x, i, axis=1) ** 2, xp.sum(xp.sin(x))

    cot = [np.ones((2, 2)), np.array(3.0)]
    report = testing.compare_with_native(fn, [X, idx], carriers=[carrier], cotangent=cot)
    assert report.passed and list(report.errors) == [(carrier, "torch"), (carrier, "jax")]


class WrongDouble(sw.Operation):
    """y = 2 x whose backward claims 3 g."""

    def forward(self, x, *, options=None):
        return x * 2.0

    def backward(self, gradient):
        return (gradient * 3.0,)


def wrong_on_strideweave(x):
    return WrongDouble()(x) if isinstance(x, sw.Tensor) else x * 2.0


@pytest.mark.parametrize("carrier", CARRIERS)
def test_a_wrong_gradient_fails_with_the_table(carrier):
    with pytest.raises(AssertionError) as err:
        testing.compare_with_native(wrong_on_strideweave, [X], carriers=[carrier], references="torch")
    message = str(err.value)
    assert f"{carrier} vs torch: gradient of input 0" in message and "FAIL" in message


@pytest.mark.parametrize("carrier", CARRIERS)
def test_a_shape_difference_is_not_comparable(carrier):
    # sw.sum is layout-native: (1,), where the namespaces' full sums are 0-d.
    def fn(x):
        return sw.sum(x) if isinstance(x, sw.Tensor) else namespace(x).sum(x)

    with pytest.raises(AssertionError, match=r"ERROR[\s\S]*output 0 has shape \(1,\), the reference's has "
                                             r"shape \(\)"):
        testing.compare_with_native(fn, [X], carriers=[carrier])


def test_a_reference_that_refuses_is_named_and_the_others_compared():
    def fn(x):
        if "jax" in type(x).__module__:
            raise RuntimeError("no JAX path")
        return x * 1.0

    report = testing.compare_with_native(fn, [X], carriers=["numpy"])
    assert report.passed and report.compared == ["torch"] and list(report.errors) == [("numpy", "torch")]
    assert report.refused == {"jax": "raised RuntimeError: no JAX path"}
    table = str(report)
    assert "refused" in table and "jax refused the code under test" in table and "no JAX path" in table

    # A disagreement with the reference that ran still fails, and the refusal is still said.
    def wrong(x):
        return fn(wrong_on_strideweave(x))

    with pytest.raises(AssertionError) as err:
        testing.compare_with_native(wrong, [X], carriers=["numpy"])
    message = str(err.value)
    assert "numpy vs torch: gradient of input 0" in message and "jax refused the code under test" in message


def test_torch_refusing_an_in_place_write_is_not_called_a_difference():
    # torch refuses an in-place write into a leaf that requires grad; StrideWeave writes the constant.
    def fn(x):
        x[0, 0] = 0.0
        return x * 2.0

    with pytest.raises(AssertionError) as err:
        testing.compare_with_native(fn, [X], carriers=["numpy"], references="torch")
    message = str(err.value)
    assert "no reference ran the code under test" in message and "torch raised RuntimeError" in message
    assert "in-place" in message and "differs" not in message


def test_a_strideweave_exception_is_reported_per_pairing():
    def fn(x):
        if isinstance(x, sw.Tensor):
            raise RuntimeError("no StrideWeave path")
        return x * 1.0

    with pytest.raises(AssertionError) as err:
        testing.compare_with_native(fn, [X], carriers=["numpy"])
    message = str(err.value)
    assert "numpy vs torch: StrideWeave raised RuntimeError: no StrideWeave path" in message
    assert "numpy vs jax: StrideWeave raised" in message


def test_dask_is_a_carrier_it_runs_on():
    pytest.importorskip("dask.array")
    import dask

    w = np.array([0.5, -2.0, 1.5])
    seen = []

    def fn(x, w):
        if isinstance(x, sw.Tensor):
            seen.append((type(x.carrier), type(w.carrier)))
        return softplus_norm(x, w)

    with dask.config.set(scheduler="synchronous"):
        report = testing.compare_with_native(fn, [X, w], carriers=["dask"])
    assert seen == [(sw.DaskCarrier, sw.DaskCarrier)]
    assert report.passed and report.carriers == ["dask"] and report.errors["dask", "torch"] < 1e-5
    with (
        pytest.raises(AssertionError, match="dask vs torch: gradient of input 0"),
        dask.config.set(scheduler="synchronous"),
    ):
        testing.compare_with_native(wrong_on_strideweave, [X], carriers=["dask"], references="torch")


def test_a_float64_result_is_named():
    def fn(x):
        return namespace(x).astype(x, namespace(x).float64) * 2.0

    with pytest.raises(AssertionError, match="only Float32 is differentiable"):
        testing.compare_with_native(fn, [X], carriers=["numpy"], references="torch")


def test_no_outputs_is_named():
    with pytest.raises(AssertionError, match="fn returned no outputs"):
        testing.compare_with_native(lambda x: (), [X], carriers=["numpy"], references="torch")


def test_bad_arguments():
    with pytest.raises(TypeError, match="list or tuple"):
        testing.compare_with_native(softplus_norm, X)
    with pytest.raises(ValueError, match="references must name"):
        testing.compare_with_native(softplus_norm, [X], references=("tensorflow",))
    with pytest.raises(ValueError, match="cotangent 0 has shape"):
        testing.compare_with_native(lambda x: x * 1.0, [X], carriers=["numpy"], cotangent=np.ones(3))


def test_a_missing_reference_names_the_package(monkeypatch):
    monkeypatch.setitem(compare.REFERENCES, "jax", "no_such_package_for_strideweave")
    with pytest.raises(ImportError, match=r"no_such_package_for_strideweave.*references=\('torch',\)"):
        testing.compare_with_native(lambda x: x * 1.0, [X])


def test_nan_and_inf_where_the_references_have_them_agree():
    def fn(x):
        xp = namespace(x)
        return xp.sqrt(x)  # sqrt at 0: an infinite gradient everywhere, NaN below

    report = testing.compare_with_native(fn, [np.array([0.0, 4.0])], carriers=["numpy"])
    assert report.passed and report.errors["numpy", "torch"] < 1e-6
    with np.errstate(invalid="ignore"):  # sqrt(-1) in the forward pass warns, as NumPy does
        report = testing.compare_with_native(fn, [np.array([-1.0, 4.0])], carriers=["numpy"])
    assert report.passed
