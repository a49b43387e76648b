"""Sphinx configuration: Markdown pages (MyST), the API reference from numpydoc docstrings.

Build: ``python -m sphinx -W --keep-going -b html docs docs/_build/html`` (what CI runs).
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# The checkout documents itself, whatever copy of the package is installed.
sys.path.insert(0, str(ROOT))
# The site's own glue (docs/_ext/cec_docs.py).
sys.path.insert(0, str(Path(__file__).resolve().parent / "_ext"))

from compile_engine_compat.version import __version__  # noqa: E402

project = "compile-engine-compat"
author = "compile-engine-compat contributors"
release = __version__
version = __version__

extensions = [
    "myst_parser",
    "numpydoc",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "cec_docs",
]

source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
root_doc = "index"
exclude_patterns = ["_build", "_ext"]

# MyST: anchors for the headings, so that pages link into one another's sections.
myst_enable_extensions = ["colon_fence", "deflist"]
myst_heading_anchors = 3
# MIGRATION.md's row headings get the rows' own anchors (the guide's links use them).
myst_heading_slug_func = "cec_docs.slug"

# API reference: the docstrings are numpydoc; types stay in the signature only, not repeated.
autodoc_typehints = "none"
autodoc_member_order = "bysource"
autodoc_default_options = {"show-inheritance": False}
autosummary_generate = False
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
numpydoc_validation_checks: set[str] = set()
nitpicky = False

html_theme = "alabaster"
html_title = f"compile-engine-compat {release}"
