"""pytest plugin, registered through the ``pytest11`` entry point.

It gathers the plugin parts, each kept in its own module:

* the legacy-call report (``--compile-engine-report`` and friends),
* the ``compile_engine_equivalence`` fixture,
* the compile cache line at the end of a run (:mod:`compile_engine_compat.cache.pytest_line`),
* once ``compile_engine_compat.install()`` has run (a conftest calling it is enough), TVM 0.19's
  ``tvm.testing.plugin`` (:mod:`compile_engine_compat.tvm_legacy.testing_plugin`: the
  ``target``/``dev`` fixtures and their marks).

Importing this module does not import TVM.
"""

from __future__ import annotations

import sys
from typing import Any

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


#: The legacy ``tvm.testing.plugin``, registered by :func:`pytest_collectstart` under install().
_TVM_TESTING_PLUGIN = "compile_engine_compat.tvm_legacy.testing_plugin"


def pytest_collectstart(collector: Any) -> None:
    """Register ``tvm.testing.plugin`` once ``install()`` has run (before its tests collect).

    A conftest's ``install()`` runs before the tests beside it are collected, so the fixtures
    and hooks are in place for them. Without ``install()`` nothing is loaded (and no TVM import).
    """
    alias = sys.modules.get("compile_engine_compat.surfaces.import_alias")
    if alias is None or not alias.installed():
        return
    manager = collector.config.pluginmanager
    if manager.get_plugin(_TVM_TESTING_PLUGIN) is not None:
        return
    import importlib

    module = importlib.import_module(_TVM_TESTING_PLUGIN)
    if not manager.is_registered(module):
        manager.register(module, _TVM_TESTING_PLUGIN)
