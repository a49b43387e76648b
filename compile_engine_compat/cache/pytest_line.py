"""pytest: the compile cache's line at the end of a run, xdist workers included.

A separate plugin (its hooks are its own): ``-p compile_engine_compat.cache.pytest_line``, or
loaded by the package's plugin (``pytest_plugins`` in ``compile_engine_compat/pytest_plugin.py``)::

    ============================ compile-engine-compat =============================
    compile cache: local: 50 hits, 50 misses; remote: 48 hits, 2 misses, 0 rejected, ...

``--compile-cache-line=auto`` (the default) prints it when the run used the cache
(``COMPILE_ENGINE_COMPAT_CACHE_DIR`` set and a lookup made); ``always`` also prints an idle one;
``never`` prints nothing. The counts are the run's own (this process and its xdist workers),
not the directory's totals (``compile-engine-compat cache info``). Importing this module does
not import TVM.
"""

from __future__ import annotations

import sys
from collections import Counter
from typing import Any

import pytest

from compile_engine_compat.cache import stats

__all__ = [
    "pytest_addoption",
    "pytest_configure",
    "pytest_sessionfinish",
    "pytest_terminal_summary",
    "pytest_testnodedown",
]

_WORKER_KEY = "compile_engine_compat_cache_counts"  # workeroutput: a worker's counts
_START = pytest.StashKey[dict[str, int]]()
_WORKERS = pytest.StashKey[Counter[str]]()
_REMOTE_MODULE = "compile_engine_compat.cache.remote"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.getgroup("compile-engine-compat").addoption(
        "--compile-cache-line",
        choices=("auto", "always", "never"),
        default="auto",
        help="print the compile cache's hits, misses, rejections and bytes at the end of the run "
        "(auto: when the run used the cache)",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.stash[_START] = stats.snapshot()
    config.stash[_WORKERS] = Counter()


def _run_counts(config: pytest.Config) -> Counter[str]:
    """This process's counts since the run started, after its queued entries are published."""
    remote = sys.modules.get(_REMOTE_MODULE)  # imported only if the run used the remote tier
    if remote is not None:
        remote.flush()
    start = config.stash.get(_START, {})
    now = stats.snapshot()
    return Counter({name: value - start.get(name, 0) for name, value in now.items()})


def pytest_sessionfinish(session: pytest.Session) -> None:
    config = session.config
    if hasattr(config, "workeroutput"):  # an xdist worker: hand the counts to the controller
        config.workeroutput[_WORKER_KEY] = dict(_run_counts(config))


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    counts = getattr(node, "workeroutput", {}).get(_WORKER_KEY)
    if counts:
        node.config.stash[_WORKERS].update(counts)


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    mode = config.getoption("--compile-cache-line")
    if mode == "never" or hasattr(config, "workeroutput"):
        return
    counts = _run_counts(config) + config.stash.get(_WORKERS, Counter())
    used = any(name.startswith(("local.", "remote.")) for name in +counts)
    if mode == "auto" and not used:
        return
    local, remote = stats.describe(+counts)
    terminalreporter.write_line(f"compile cache: {local}; {remote}")
