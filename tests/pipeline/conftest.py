"""Fixtures of the pipeline tests."""

from __future__ import annotations

import pytest

from compile_engine_compat.pipeline.schedule import cpu_rules


@pytest.fixture
def parallel_rules(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every block with a rule runs its parallel loop on the pool, however small: the schedule
    cases are small, and their tests are about what the rules make of a block."""
    monkeypatch.setattr(cpu_rules, "SINGLE_THREAD_PRODUCT_SUMS", 0)
    monkeypatch.setattr(cpu_rules, "SINGLE_THREAD_ELEMENTS", 0)
