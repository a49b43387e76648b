"""docs/remote-cache.md's threat model: each check it lists names a test, and that test exists.

The lists live between ``<!-- threat-model-checks: ... -->`` markers, one table row a check; the
last cell names the covering test as ``tests/<path>.py::test_name`` (several may be named).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "remote-cache.md"
_LIST = re.compile(
    r"<!-- threat-model-checks: ([^>]*?) -->\n(.*?)<!-- end threat-model-checks", re.S
)
_TEST = re.compile(r"`(tests/[\w/]+\.py)::(test_\w+)`")


def _lists() -> dict[str, list[str]]:
    found = {name.split(" (")[0]: body for name, body in _LIST.findall(DOC.read_text())}
    return {
        name: [row for row in body.splitlines() if row.startswith("| ") and "---" not in row][1:]
        for name, body in found.items()
    }


def _rows() -> list[tuple[str, str]]:
    return [(name, row) for name, rows in _lists().items() for row in rows]


def test_the_threat_model_lists_both_kinds_of_check():
    lists = _lists()
    assert set(lists) == {"remote store", "local files"}
    assert len(lists["remote store"]) >= 10 and lists["local files"]
    text = DOC.read_text()
    assert "Other local users on a shared machine" in text and "A hostile store" in text


@pytest.mark.parametrize(("name", "row"), _rows(), ids=lambda value: str(value)[:60])
def test_each_check_names_a_test_that_exists(name, row):
    named = _TEST.findall(row.rsplit("|", 2)[-2])
    assert named, f"{name}: the row names no test: {row}"
    for path, test in named:
        source = ROOT / path
        assert source.is_file(), f"{name}: {path} does not exist ({row})"
        assert re.search(rf"^def {test}\(", source.read_text(), re.M), f"{path} has no {test}"
