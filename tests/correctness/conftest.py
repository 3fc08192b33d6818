"""Every correctness check runs once per carrier."""

import sys

import pytest

_BACKENDS = {"numpy": "numpy", "torch": "torch", "jax": "jax", "array_api_strict": "array_api_strict"}


@pytest.fixture(params=list(_BACKENDS))
def carrier(request):
    """A carrier name accepted by ``carrier=``; skipped only when its backend is not importable."""
    pytest.importorskip(_BACKENDS[request.param])
    return request.param


@pytest.fixture
def fast_switching():
    """The interpreter switches threads as often as it can, for the concurrency tests."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(before)
