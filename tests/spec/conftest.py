"""Fixtures for the autograd spec suite: every scenario runs once per carrier."""

import pytest

# carrier name -> the module whose absence means the carrier cannot run
_BACKENDS = {"numpy": "numpy", "torch": "torch", "jax": "jax", "array_api_strict": "array_api_strict",
             "dask": "dask.array"}


@pytest.fixture(params=list(_BACKENDS))
def carrier(request):
    """A carrier name accepted by ``carrier=``; skipped only when its backend is not importable."""
    pytest.importorskip(_BACKENDS[request.param])
    if request.param == "dask":
        request.getfixturevalue("dask_client")  # Dask runs on a 2-worker LocalCluster
    return request.param
