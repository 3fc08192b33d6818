"""Every namespace check runs once per available carrier."""

import pytest

from strideweave.testing import available_carriers


@pytest.fixture(params=available_carriers())
def carrier(request):
    """A carrier name accepted by ``device=`` / ``carrier=``."""
    return request.param
