"""Session fixtures shared by tests/ and conformance/.

``dask_client``: one in-process ``dask.distributed`` LocalCluster per test
process (2 workers, one thread each), started the first time a test on the
``"dask"`` carrier needs it, so every Dask computation in the suite runs on
a real scheduler and its workers. Tests that need separate worker processes
(a worker dying mid-compute) start their own cluster.
"""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def dask_client():
    """A Client on a 2-worker in-process LocalCluster, the default client while the session lasts."""
    distributed = pytest.importorskip("distributed")
    # A free port for the scheduler's HTTP server: with None it still tries 8787, which another
    # test process may hold (then distributed warns and moves).
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                       dashboard_address=":0")
    client = distributed.Client(cluster, set_as_default=True)
    yield client
    client.close()
    cluster.close()
