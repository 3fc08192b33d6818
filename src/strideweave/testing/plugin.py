"""A pytest plugin that runs a library's tests on every StrideWeave carrier.

Load it with ``pytest -p strideweave.testing.plugin`` (or
``pytest_plugins = ["strideweave.testing.plugin"]`` in a top-level
conftest). It gives three fixtures, parametrised over the installed carriers
the way SciPy and array-api-extra parametrise their suites over array
libraries:

- ``sw_carrier``: the carrier name (``"numpy"``, ``"torch"``, ``"jax"``,
  ``"array_api_strict"``, and ``"dask"`` when asked for); the test id shows it;
- ``xp``: the ``strideweave.array_api`` namespace on that carrier: it is
  the default carrier for the test's duration (``xp.zeros``, ``xp.arange``
  ... create Tensors there), and ``xp.asarray`` without ``device=`` puts
  NumPy and other native arrays there too (the plain namespace does so for
  NumPy arrays), so ``xp.asarray(np_array)`` in a test
  runs on every carrier, as SciPy's tests expect;
- ``check_grad``: ``check_grad(fn, inputs, **options)`` runs
  :func:`strideweave.testing.compare_with_native` on that carrier against
  whichever of torch and JAX is installed (the test is skipped when
  neither is) and returns its report.

``--sw-carriers numpy,torch`` narrows the carriers. Dask (``"dask"``), a lazy
carrier whose every value read is a computation, runs only when named:
``--sw-carriers numpy,dask``.
"""

from __future__ import annotations

import importlib.util
import types

import pytest

from .. import array_api as namespace
from ..carriers import resolve, set_default_carrier
from ._carriers import available_carriers
from .compare import compare_with_native

__all__ = ["CarrierNamespace", "check_grad", "pytest_addoption", "pytest_generate_tests", "sw_carrier", "xp"]


_STASH = pytest.StashKey[list]()


def pytest_addoption(parser):
    group = parser.getgroup("strideweave")
    group.addoption("--sw-carriers", default=None, metavar="NAMES",
                    help="comma-separated StrideWeave carriers for the xp / check_grad fixtures "
                         "(default: every installed eager one; name dask to add it)")


def _carriers(config) -> list[str]:
    chosen = config.getoption("--sw-carriers", default=None)
    if not chosen:
        return available_carriers()
    names = [n.strip() for n in chosen.split(",") if n.strip()]
    installed = available_carriers(lazy=True)  # a lazy carrier (dask) joins when it is named
    missing = [n for n in names if n not in installed]
    if missing:
        raise pytest.UsageError(f"--sw-carriers: {', '.join(missing)} not among the installed carriers "
                                f"{', '.join(installed)}")
    return names


def pytest_generate_tests(metafunc):
    # Parametrised here rather than in the fixture so that the carriers (whose discovery imports
    # torch and JAX) are looked up once per session, and only by tests that use them.
    if "sw_carrier" in metafunc.fixturenames:
        config = metafunc.config
        carriers = config.stash.get(_STASH, None)
        if carriers is None:
            carriers = _carriers(config)
            config.stash[_STASH] = carriers
        metafunc.parametrize("sw_carrier", carriers, ids=carriers, indirect=True)


@pytest.fixture
def sw_carrier(request):
    """The StrideWeave carrier this test runs on (parametrised by the plugin)."""
    return request.param


class CarrierNamespace(types.ModuleType):
    """``strideweave.array_api`` whose ``asarray`` places arrays on one carrier unless told otherwise."""

    def __init__(self, carrier: str):
        super().__init__(namespace.__name__, namespace.__doc__)
        self._namespace = namespace
        self.carrier = carrier
        # The resolved kind, not the name: ``device=`` takes the eager carriers' names only,
        # and a kind reaches every carrier (dask included).
        self._kind = resolve(carrier)

    def __getattr__(self, name):
        return getattr(self._namespace, name)

    def asarray(self, obj, /, *, dtype=None, device=None, copy=None):
        """``strideweave.array_api.asarray`` with ``device`` defaulting to this namespace's carrier."""
        return self._namespace.asarray(obj, dtype=dtype, device=self._kind if device is None else device,
                                       copy=copy)

    def __repr__(self):
        return f"<strideweave.array_api on carrier {self.carrier!r}>"


@pytest.fixture
def xp(sw_carrier):
    """``strideweave.array_api`` on ``sw_carrier``: the default carrier while the test runs, and ``asarray``'s."""
    with set_default_carrier(sw_carrier):
        yield CarrierNamespace(sw_carrier)


@pytest.fixture
def check_grad(sw_carrier):
    """``check_grad(fn, inputs, **options)``: ``compare_with_native`` on this carrier against torch and JAX."""
    references = tuple(name for name in ("torch", "jax") if importlib.util.find_spec(name) is not None)

    def check(fn, inputs, **options):
        options.setdefault("references", references)
        if not options["references"]:
            pytest.skip("check_grad needs torch or jax installed as a reference")
        return compare_with_native(fn, inputs, carriers=[sw_carrier], **options)

    return check
