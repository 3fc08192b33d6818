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


# The spec's scenarios read .grad of results to check that it is None; torch's warning for that read
# (Tensor.grad warns on a result that retains no gradient) is expected there, not a failure.
_NON_LEAF_GRAD = pytest.mark.filterwarnings("ignore:The .grad attribute of a Tensor that is not a leaf:UserWarning")


def pytest_collection_modifyitems(config, items):
    here = str(__import__("pathlib").Path(__file__).parent)
    for item in items:
        if str(item.path).startswith(here):
            item.add_marker(_NON_LEAF_GRAD)
