"""Shared test configuration. One process runs the whole suite: ``import tvm`` costs ~3 s."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

from compile_engine_compat import CompileEngineDeprecationWarning

#: Never collected: upstream TVM's test runner is a script run by hand (docs/relay.md).
collect_ignore = ["upstream"]

#: Markers whose tests run only when ``-m`` names them (heavy runs kept out of the default suite).
OPT_IN_MARKERS = {
    # Processes, threads and tools running for tens of seconds each (CI runs them as a step).
    "long": "a scenario running for tens of seconds (processes, threads, tools): run with -m long",
    "fleet": "a multi-process fleet scenario (each process imports TVM): run with -m fleet",
    "models": "a full-size model against PyTorch and onnxruntime: run with -m models",
    # relay.testing workloads at the tutorials' sizes (tests/relay/testing).
    "workloads": "a full-size relay.testing workload: run with -m workloads",
    # QNN property tests: one relay.build per hypothesis example (tests/relay/qnn).
    "quantized": "a QNN property test building a graph per example: run with -m quantized",
    # Each example builds its kernel three ways (tests/pipeline/test_schedule_cpu_int8.py).
    "int8": "the int8 rules' hypothesis runs (three builds an example): run with -m int8",
    "tune": "a tuning run (MetaSchedule measures kernels): run with -m tune",
}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Skip the opt-in markers' tests unless ``-m`` names their marker."""
    selected = config.getoption("-m") or ""
    for marker, reason in OPT_IN_MARKERS.items():
        if marker in selected:
            continue
        skip = pytest.mark.skip(reason=reason)
        for item in items:
            if item.get_closest_marker(marker):
                item.add_marker(skip)


if TYPE_CHECKING:  # conftest imports no TVM; the fixture does, when a test asks for it
    from compile_engine_compat import CompileEngine


@pytest.fixture
def engine() -> CompileEngine:
    """The global engine, cleared before the test; legacy warnings are expected here."""
    from compile_engine_compat import compile_engine

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CompileEngineDeprecationWarning)
        eng = compile_engine.get()
        eng.clear()
    # Legacy clear() keeps the shape functions (as C++ did); each test starts from an empty engine.
    eng._shape_cache.clear()
    return eng


@pytest.fixture
def installed_alias() -> Iterator[None]:
    """``compile_engine_compat.install()`` for the test (left installed if it already was)."""
    from compile_engine_compat.surfaces.import_alias import install, installed, uninstall

    was = installed()
    install()
    yield
    if not was:
        uninstall()


@pytest.fixture(autouse=True)
def _legacy_warnings_are_expected(request: pytest.FixtureRequest) -> Iterator[None]:
    """The shim's own tests call the legacy API on purpose; tests about warnings opt out."""
    if request.node.get_closest_marker("warnings_visible"):
        yield
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CompileEngineDeprecationWarning)
        yield


def _register_hypothesis_profiles() -> None:
    """Register the profiles of ``[tool.compile_engine_compat.hypothesis]`` in pyproject.toml.

    Deadlines are off (a cold compile takes 0.1-0.5 s and varies with load) and the slow-data
    health checks are suppressed for the same reason. ``--hypothesis-profile`` (applied later,
    in hypothesis' own pytest_configure) and ``HYPOTHESIS_PROFILE`` override the default.
    """
    import os
    import pathlib
    import sys

    if sys.version_info >= (3, 11):
        import tomllib
    else:  # Python 3.10
        import tomli as tomllib
    from hypothesis import HealthCheck, settings

    pyproject = pathlib.Path(__file__).resolve().parent.parent / "pyproject.toml"
    table = tomllib.loads(pyproject.read_text())["tool"]["compile_engine_compat"]["hypothesis"]
    relaxed = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]
    for name, options in table["profiles"].items():
        settings.register_profile(name, deadline=None, suppress_health_check=relaxed, **options)
    settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", table["default"]))


_register_hypothesis_profiles()
