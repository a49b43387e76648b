"""The baseline ratchet: legacy calls and call sites may only shrink.

A baseline is a report as ``--compile-engine-report`` writes it in JSON,
``{"total_calls": N, "sites": [...], ...}``. A new report *grew* when it has more calls or more
sites than the baseline; a baseline may be rewritten only when nothing grew, so it only ever
shrinks. The functions here are pure (no files, no pytest) so that the pytest report and the
scanner compare the same way.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["Ratchet", "compare", "parse_baseline", "validate_baseline"]

_MISSING = object()
_SHAPE = 'a JSON object {"total_calls": <non-negative integer>, "sites": [<object>, ...]}'


@dataclass(frozen=True)
class Ratchet:
    """A new report against its baseline.

    Attributes
    ----------
    calls, sites : int
        The new report's total calls and number of call sites.
    base_calls, base_sites : int
        The baseline's.
    """

    calls: int
    sites: int
    base_calls: int
    base_sites: int

    @property
    def grew(self) -> bool:
        """More calls or more sites than the baseline: the check fails."""
        return self.calls > self.base_calls or self.sites > self.base_sites

    @property
    def shrank(self) -> bool:
        """Nothing grew and something changed: the baseline may be rewritten to this report."""
        return not self.grew and (self.calls, self.sites) != (self.base_calls, self.base_sites)

    def describe(self) -> str:
        """``N calls from M sites (baseline X calls from Y sites)``."""
        return (
            f"{self.calls} calls from {self.sites} sites "
            f"(baseline {self.base_calls} calls from {self.base_sites} sites)"
        )


def compare(baseline: Mapping[str, Any], report: Mapping[str, Any]) -> Ratchet:
    """Compare a new report with the baseline it must not grow past.

    Parameters
    ----------
    baseline : mapping
        The old report, as :func:`validate_baseline` accepts it.
    report : mapping
        The new report, same shape.

    Returns
    -------
    Ratchet
        The counts of both; ``grew`` says whether the check fails.
    """
    return Ratchet(
        calls=int(report["total_calls"]),
        sites=len(report["sites"]),
        base_calls=int(baseline["total_calls"]),
        base_sites=len(baseline["sites"]),
    )


def validate_baseline(data: object) -> dict[str, Any]:
    """Check that decoded JSON has a baseline's shape.

    Parameters
    ----------
    data : object
        What ``json.loads`` returned.

    Returns
    -------
    dict
        ``data`` itself, now known to be a baseline.

    Raises
    ------
    ValueError
        One line saying what is wrong and what was expected.
    """
    if not isinstance(data, dict):
        raise ValueError(f"expected {_SHAPE}, got a JSON {_json_kind(data)}")
    calls, sites = data.get("total_calls", _MISSING), data.get("sites", _MISSING)
    # bool is an int subclass, and JSON true is not a count.
    if not isinstance(calls, int) or isinstance(calls, bool) or calls < 0:
        raise ValueError(f"expected {_SHAPE}; total_calls is {_short(calls)}")
    if not isinstance(sites, list) or not all(isinstance(site, dict) for site in sites):
        raise ValueError(f"expected {_SHAPE}; sites is {_short(sites)}")
    return data


def parse_baseline(raw: bytes) -> dict[str, Any]:
    """Decode a baseline file's bytes.

    Parameters
    ----------
    raw : bytes
        The file's content.

    Returns
    -------
    dict
        The validated baseline.

    Raises
    ------
    ValueError
        One line: the file is empty, not UTF-8, not JSON, or not a baseline's shape.
    """
    if not raw.strip():
        raise ValueError("the file is empty; create it with --compile-engine-update-baseline")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"not UTF-8 text (byte {exc.start})") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(
            f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
        ) from None
    except RecursionError:  # nesting past the decoder's guard
        raise ValueError("not valid JSON: nested too deeply") from None
    return validate_baseline(data)


def _json_kind(value: object) -> str:
    kinds = (
        (list, "array"),
        (str, "string"),
        (bool, "boolean"),
        (int, "number"),
        (float, "number"),
    )
    if value is None:
        return "null"
    return next((name for kind, name in kinds if isinstance(value, kind)), type(value).__name__)


def _short(value: object) -> str:
    text = "missing" if value is _MISSING else repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
