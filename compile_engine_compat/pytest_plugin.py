"""pytest plugin, registered through the ``pytest11`` entry point.

It gathers the plugin parts, each kept in its own module:

* the legacy-call report (``--compile-engine-report`` and friends),
* the ``compile_engine_equivalence`` fixture,
* the compile cache line at the end of a run (:mod:`compile_engine_compat.cache.pytest_line`).

Importing this module does not import TVM.
"""

from __future__ import annotations

from compile_engine_compat.migrate.pytest_report import (  # noqa: F401
    pytest_addoption,
    pytest_configure,
    pytest_configure_node,
    pytest_runtest_makereport,
    pytest_sessionfinish,
    pytest_terminal_summary,
    pytest_testnodedown,
)
from compile_engine_compat.testing.pytest_equivalence import compile_engine_equivalence  # noqa: F401

# The compile cache line (--compile-cache-line): a plugin module of its own, loaded by pytest.
pytest_plugins = ["compile_engine_compat.cache.pytest_line"]
