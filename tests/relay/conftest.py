"""Fixtures of the Relay tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture
def installed_alias() -> Iterator[None]:
    """``compile_engine_compat.install()`` for the test (left installed if it already was)."""
    from compile_engine_compat.surfaces.import_alias import install, installed, uninstall

    was = installed()
    install()
    yield
    if not was:
        uninstall()
