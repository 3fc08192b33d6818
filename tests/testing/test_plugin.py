"""``pytest -p strideweave.testing.plugin`` in a fresh interpreter, as a library author runs it."""

import subprocess
import sys
import textwrap

import numpy as np
import pytest

from strideweave.testing import available_carriers

SUITE = textwrap.dedent('''
    import numpy as np
    import strideweave as sw

    def test_xp(xp, sw_carrier):
        x = xp.asarray(np.array([1.0, 2.0], dtype=np.float32))
        assert type(x.carrier) is type(sw.zeros([1], carrier=sw_carrier).carrier)
        assert type(xp.zeros(2).carrier) is type(x.carrier)
        assert float(xp.sum(x * x)) == 5.0

    def test_default_restored():
        assert type(sw.zeros([1]).carrier).__name__ == "NumpyCarrier"

    def test_check_grad(check_grad):
        def fn(x):
            from array_api_compat import array_namespace
            xp = array_namespace(x)
            return xp.tanh(x) * x
        report = check_grad(fn, [np.array([0.5, -1.0])])
        assert report.passed
''')


def _run(tmp_path, *args):
    (tmp_path / "test_suite.py").write_text(SUITE)
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "strideweave.testing.plugin", "-p", "no:randomly",
                           "-p", "no:cacheprovider", "-rs", "-v", *args, str(tmp_path / "test_suite.py")],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path)


@pytest.mark.slow  # a pytest run in a subprocess
def test_plugin_parametrises_over_installed_carriers(tmp_path):
    done = _run(tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    carriers = available_carriers()
    for carrier in carriers:
        assert f"test_xp[{carrier}] PASSED" in done.stdout
    check_grad_ran = [c for c in carriers if f"test_check_grad[{c}] PASSED" in done.stdout]
    have_reference = any(__import__("importlib").util.find_spec(m) for m in ("torch", "jax"))
    assert check_grad_ran == (carriers if have_reference else [])
    assert f"{2 * len(carriers) + 1} passed" in done.stdout or not have_reference


@pytest.mark.slow  # a pytest run in a subprocess
def test_sw_carriers_option_narrows_and_checks(tmp_path):
    done = _run(tmp_path, "--sw-carriers", "numpy", "-k", "test_xp")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "test_xp[numpy] PASSED" in done.stdout and "1 passed" in done.stdout
    bad = _run(tmp_path, "--sw-carriers", "numpy,cupy")
    assert bad.returncode != 0 and "cupy not among the installed carriers" in bad.stdout + bad.stderr


@pytest.mark.parametrize("carrier", available_carriers())
def test_xp_fixture_restores_the_default(carrier):
    import strideweave as sw
    from strideweave.testing import plugin

    fixture = plugin.xp.__wrapped__(carrier)
    namespace = next(fixture)
    on = type(sw.zeros([1], carrier=carrier).carrier)
    assert type(namespace.zeros(2).carrier) is on
    assert type(namespace.asarray(np.ones(2, np.float32)).carrier) is on
    assert type(namespace.asarray(np.ones(2, np.float32), device="numpy").carrier) is sw.NumpyCarrier
    assert namespace.float32 is sw.DType.Float32 and namespace.sum is sw.array_api.sum
    with pytest.raises(StopIteration):
        next(fixture)
    assert type(sw.zeros([1]).carrier).__name__ == "NumpyCarrier"


@pytest.mark.slow  # a pytest run in a subprocess
def test_sw_carriers_runs_dask_when_named(tmp_path):
    # Dask is lazy (every value read is a computation), so it runs only when named, and then as any other.
    pytest.importorskip("dask.array")
    done = _run(tmp_path, "--sw-carriers", "numpy,dask", "-k", "test_xp or test_check_grad")
    assert done.returncode == 0, done.stdout + done.stderr
    for test in ("test_xp", "test_check_grad"):
        assert f"{test}[numpy] PASSED" in done.stdout and f"{test}[dask] PASSED" in done.stdout, done.stdout
    default = _run(tmp_path, "-k", "test_xp")
    assert "test_xp[dask]" not in default.stdout, default.stdout
