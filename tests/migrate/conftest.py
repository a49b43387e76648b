"""The tests of scan and fix keep the result cache in a temporary folder, not the checkout."""

from __future__ import annotations

import pytest

from compile_engine_compat.migrate.config import CACHE_ENV


@pytest.fixture(autouse=True)
def _cache_outside_the_checkout(tmp_path_factory, monkeypatch):
    monkeypatch.setenv(CACHE_ENV, str(tmp_path_factory.getbasetemp() / "result-cache"))
