"""Requests for 64-bit dtypes on JAX without x64 mode behave as in ``jax.numpy``.

``jax.numpy`` stores and reports a ``float64`` / ``int64`` / ``complex128``
request in 32 bits, with a UserWarning; the jax carrier does the same
instead of raising, so library code that asks for ``xp.int64`` runs. Every
other carrier stores the 64-bit type. The suite runs JAX without x64 mode;
a subprocess checks both modes explicitly, against jax.numpy and jax.grad.
"""

import os
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

import strideweave.array_api as xp
from strideweave.testing import available_carriers

REQUESTS = {
    "zeros": lambda d: xp.zeros(3, dtype=xp.float64, device=d),
    "asarray int64": lambda d: xp.asarray([1, 2], dtype=xp.int64, device=d),
    "asarray float64 array": lambda d: xp.asarray(np.arange(3.0), dtype=xp.float64, device=d),
    "astype": lambda d: xp.astype(xp.asarray([1.0, 2.0], device=d), xp.float64),
    "sum dtype": lambda d: xp.sum(xp.asarray([1.0, 2.0], device=d), dtype=xp.float64),
    "arange int64": lambda d: xp.arange(4, dtype=xp.int64, device=d),
    "full int64": lambda d: xp.full((2,), 3, dtype=xp.int64, device=d),
    "complex128": lambda d: xp.asarray([1 + 1j], dtype=xp.complex128, device=d),
}
NARROW = {"float64": xp.float32, "int64": xp.int32, "complex128": xp.complex64}
WIDE = {"zeros": "float64", "asarray int64": "int64", "asarray float64 array": "float64", "astype": "float64",
        "sum dtype": "float64", "arange int64": "int64", "full int64": "int64", "complex128": "complex128"}


def _x64():
    import jax

    return bool(jax.config.jax_enable_x64)


@pytest.mark.parametrize("carrier", available_carriers())
@pytest.mark.parametrize("request_name", sorted(REQUESTS))
def test_a_64_bit_request_is_stored_as_the_library_stores_it(carrier, request_name):
    wide = WIDE[request_name]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = REQUESTS[request_name](carrier)
    narrows = carrier == "jax" and not _x64()
    expected = NARROW[wide] if narrows else getattr(xp, wide)
    assert out.dtype is expected and out.carrier.dtype is expected
    assert out.carrier.sw_dtype_of(out.carrier.array.dtype) is expected  # reported as stored
    ours = [w for w in caught if "jax_enable_x64" in str(w.message)]
    if narrows:
        assert ours and all(w.category is UserWarning for w in ours)
        assert os.path.basename(ours[0].filename) == "test_jax_without_x64.py"  # points at the caller
    else:
        assert not ours


@pytest.mark.parametrize("carrier", available_carriers())
def test_moving_float64_values_narrows_without_a_warning_as_jnp_asarray(carrier):
    # jnp.asarray(a float64 array) stores float32 silently: only a dtype asked for warns
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        moved = [xp.asarray(np.arange(3.0), device=carrier), xp.asarray(np.arange(3.0)).to_device(carrier)]
    narrows = carrier == "jax" and not _x64()
    for out in moved:
        assert out.dtype is (xp.float32 if narrows else xp.float64)
        assert out.numpy().tolist() == [0.0, 1.0, 2.0]
    assert not [w for w in caught if "jax_enable_x64" in str(w.message)]
    if narrows:
        import jax.numpy as jnp

        assert str(jnp.asarray(np.arange(3.0)).dtype) == "float32"


SCRIPT = textwrap.dedent("""
    import warnings
    import numpy as np
    import jax, jax.numpy as jnp
    import strideweave.array_api as xp

    x64 = bool(jax.config.jax_enable_x64)
    warnings.simplefilter("ignore")
    for request, native in [
            (lambda: xp.zeros(3, dtype=xp.float64, device="jax"), lambda: jnp.zeros(3, dtype=jnp.float64)),
            (lambda: xp.asarray([1, 2], dtype=xp.int64, device="jax"), lambda: jnp.asarray([1, 2], dtype=jnp.int64)),
            (lambda: xp.arange(3, dtype=xp.int64, device="jax"), lambda: jnp.arange(3, dtype=jnp.int64)),
            (lambda: xp.astype(xp.asarray([1.0], device="jax"), xp.float64),
             lambda: jnp.asarray([1.0], dtype=jnp.float32).astype(jnp.float64)),
            (lambda: xp.asarray([1j], dtype=xp.complex128, device="jax"),
             lambda: jnp.asarray([1j], dtype=jnp.complex128))]:
        ours, theirs = request(), native()
        assert ours.dtype.name == str(theirs.dtype), (ours.dtype, theirs.dtype)
        assert str(ours.to_array().dtype) == str(theirs.dtype)
    assert xp.__array_namespace_info__().default_dtypes(device="jax")["integral"].name == \\
        str(jnp.__array_namespace_info__().default_dtypes()["integral"])

    # a float64 round trip in library code: JAX without x64 differentiates it (it never left float32)
    values = np.array([0.5, -1.0, 2.0], dtype=np.float32)
    x = xp.asarray(values, device="jax")
    loss = xp.sum(xp.astype(xp.astype(x, xp.float64) * x, xp.float32))
    if x64:
        try:
            loss.backward()
        except RuntimeError as error:
            assert "became DType.Float64 in Astype" in str(error)
        else:
            raise AssertionError("a float64 round trip differentiated in x64 mode")
    else:
        loss.backward()
        reference = jax.grad(lambda v: jnp.sum((v.astype(jnp.float64) * v).astype(jnp.float32)))(jnp.asarray(values))
        np.testing.assert_allclose(np.asarray(x.grad.numpy()), np.asarray(reference), rtol=1e-6)
    print("ok", x64)
""")


@pytest.mark.parametrize("mode", ["0", "1"])
def test_jax_mode_from_the_environment(mode):
    pytest.importorskip("jax")
    env = {**os.environ, "JAX_ENABLE_X64": mode, "JAX_PLATFORMS": "cpu"}
    done = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split() == ["ok", str(mode == "1")]
