"""The ``backend`` fixture: every carrier test runs once per backend in BACKENDS."""

import pytest
from carrier_refs import BACKENDS, Backend


@pytest.fixture(params=BACKENDS)
def backend(request):
    return Backend(request.param)
