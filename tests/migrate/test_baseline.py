"""The baseline ratchet as a pure function, shared by the pytest report and the scanner."""

from __future__ import annotations

import pytest

from compile_engine_compat.migrate.baseline import compare, parse_baseline, validate_baseline


def _report(calls: int, sites: int) -> dict:
    return {"total_calls": calls, "sites": [{}] * sites}


@pytest.mark.parametrize(
    ("new", "grew", "shrank"),
    [
        ((10, 3), False, False),  # unchanged
        ((11, 3), True, False),  # more calls
        ((10, 4), True, False),  # more sites
        ((20, 2), True, False),  # more calls, fewer sites: still grew
        ((2, 5), True, False),  # fewer calls, more sites: still grew
        ((9, 3), False, True),
        ((10, 1), False, True),
        ((0, 0), False, True),
    ],
)
def test_compare(new, grew, shrank):
    ratchet = compare(_report(10, 3), _report(*new))
    assert (ratchet.grew, ratchet.shrank) == (grew, shrank)
    assert (
        ratchet.describe() == f"{new[0]} calls from {new[1]} sites (baseline 10 calls from 3 sites)"
    )


def test_a_report_with_extra_keys_is_a_baseline():
    report = {"total_calls": 2, "complete": True, "sites": [{"path": "a.py", "count": 2}]}
    assert validate_baseline(report) is report
    assert parse_baseline(b'{"total_calls": 0, "sites": []}') == {"total_calls": 0, "sites": []}


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (b"", "the file is empty"),
        (b"{", "not valid JSON: Expecting property name enclosed in double quotes at line 1"),
        (b"[" * 100_000, "not valid JSON"),
        (b"\xff", "not UTF-8 text (byte 0)"),
        (b"3", "got a JSON number"),
        (b'{"sites": []}', "total_calls is missing"),
        (b'{"total_calls": 1.0, "sites": []}', "total_calls is 1.0"),
        (b'{"total_calls": 1, "sites": {}}', "sites is {}"),
        (b'{"total_calls": 1, "sites": [null]}', "sites is [None]"),
    ],
)
def test_parse_baseline_says_what_is_wrong_in_one_line(raw, message):
    with pytest.raises(ValueError, match=None) as error:
        parse_baseline(raw)
    assert message in str(error.value) and "\n" not in str(error.value)
