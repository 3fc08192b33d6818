"""The StrideWeave pytest plugin's fixtures and carrier parametrisation, for the tests in this folder.

Library authors load the plugin with ``-p strideweave.testing.plugin``;
test_plugin.py checks that path in a subprocess. Here the hook and the
fixtures are taken into this folder's conftest, so no other folder sees them.
"""

import os
import sys

if "scipy" not in sys.modules:  # SciPy reads it once, on first import
    os.environ.setdefault("SCIPY_ARRAY_API", "1")

from strideweave.testing.plugin import check_grad, pytest_addoption, pytest_generate_tests, sw_carrier, xp  # noqa: F401
