"""Shared test configuration. One process runs the whole suite: ``import tvm`` costs ~3 s."""

from __future__ import annotations

import warnings

import pytest

from compile_engine_compat import CompileEngineDeprecationWarning


@pytest.fixture
def engine():
    """The global engine, cleared before the test; legacy warnings are expected here."""
    from compile_engine_compat import compile_engine

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CompileEngineDeprecationWarning)
        eng = compile_engine.get()
        eng.clear()
    return eng


@pytest.fixture(autouse=True)
def _legacy_warnings_are_expected(request):
    """The shim's own tests call the legacy API on purpose; tests about warnings opt out."""
    if request.node.get_closest_marker("warnings_visible"):
        yield
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CompileEngineDeprecationWarning)
        yield
