"""Sphinx configuration: the guides in docs/*.md (MyST) and the API reference from the docstrings (autodoc).

Build from the repository root with warnings as errors, as CI does:
``python -m sphinx -W --keep-going -b html docs build/docs``.
"""

from __future__ import annotations

import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
# the package is documented from the checkout, installed or not
sys.path.insert(0, str(ROOT / "src"))

import strideweave  # noqa: E402

project = "StrideWeave"
author = "The StrideWeave authors"
copyright = "The StrideWeave authors"  # noqa: A001 (the name Sphinx reads)
release = strideweave.__version__

extensions = ["myst_parser", "sphinx.ext.autodoc", "sphinx.ext.napoleon"]
source_suffix = {".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "build"]

# the guides link sections by their GitHub-style anchors (`architecture.md#the-engine-rule-contract`)
myst_heading_anchors = 4
myst_enable_extensions = ["colon_fence"]

autodoc_member_order = "bysource"
autodoc_typehints = "signature"
# the docstrings are prose with ``code`` spans; a bare `name` is code too, not a cross-reference
default_role = "code"
napoleon_google_docstring = True
napoleon_numpy_docstring = False

html_theme = "alabaster"
html_title = "StrideWeave"
