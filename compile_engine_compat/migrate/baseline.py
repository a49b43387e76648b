"""Baselines: legacy uses may only shrink. One module for both ratchets.

* The pytest report's baseline is a report as ``--compile-engine-report`` writes it in JSON,
  ``{"total_calls": N, "sites": [...], ...}``. A new report *grew* when it has more calls or
  more sites than the baseline (:func:`compare`); a baseline may be rewritten only when nothing
  grew, so it only ever shrinks.
* ``scan --baseline FILE`` counts findings per (file, rule id), not per line: editing a file
  above a legacy call moves it, and a line-keyed baseline would call the moved call new. A count
  that grows is new (:func:`new_items`); ``--update-baseline`` writes the lower count, so it
  ratchets down the same way. File format::

    {"version": 1, "tool": "compile-engine-compat scan",
     "counts": {"src/app.py": {"CEC101": 1, "CEC105": 2}}}

The comparisons are pure functions (no pytest, no parsing of sources).
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

__all__ = [
    "BaselineError",
    "Ratchet",
    "compare",
    "count",
    "grown_sites",
    "load_baseline",
    "new_items",
    "parse_baseline",
    "validate_baseline",
    "write_baseline",
]

# -- the pytest report's ratchet: total calls and call sites ------------------------------------

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


def grown_sites(baseline: Mapping[str, Any], report: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The sites that make a report grow past its baseline, most calls first.

    Sites are compared per (file, api): a group with more calls or more sites than the
    baseline's has grown, and its sites that are new, or have more calls than the baseline's
    site at that line, are returned, each with ``"baseline_count"`` (0 for a new one).
    """

    def groups(sites: Iterable[Mapping[str, Any]]) -> dict[tuple[str, str], dict[int, int]]:
        out: dict[tuple[str, str], dict[int, int]] = {}
        for site in sites:
            lines = out.setdefault((str(site.get("path")), str(site.get("api"))), {})
            line = int(site.get("line", 0))
            lines[line] = lines.get(line, 0) + int(site.get("count", 0))
        return out

    base = groups(baseline["sites"])
    now = groups(report["sites"])
    grown = []
    for site in report["sites"]:
        key = (str(site["path"]), str(site["api"]))
        new_lines, old_lines = now[key], base.get(key, {})
        if sum(new_lines.values()) <= sum(old_lines.values()) and len(new_lines) <= len(old_lines):
            continue
        was = old_lines.get(site["line"], 0)
        if site["count"] > was:
            grown.append({**site, "baseline_count": was})
    return sorted(grown, key=lambda s: (-s["count"], s["path"], s["line"]))


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


# -- the scanner's ratchet: findings per (file, rule id) ----------------------------------------

VERSION = 1
_T = TypeVar("_T")


class BaselineError(ValueError):
    """The baseline file is missing, unreadable or not a baseline; ``str`` is one line."""


def load_baseline(path: str) -> Counter[tuple[str, str]]:
    """Read a baseline file into ``(path, rule id) -> count``.

    Raises
    ------
    BaselineError
        With one line naming the file and the problem.
    """
    if os.path.exists(path) and not os.path.isfile(path):  # never block on a FIFO
        raise BaselineError(f"baseline {path} is not a regular file")
    try:
        with open(path, "rb") as handle:
            data = json.loads(handle.read(16 * 1024 * 1024))
    except FileNotFoundError:
        raise BaselineError(
            f"baseline {path} does not exist; create it with --update-baseline"
        ) from None
    except OSError as exc:
        raise BaselineError(f"cannot read baseline {path}: {exc.strerror or exc}") from None
    except (ValueError, RecursionError) as exc:
        raise BaselineError(f"baseline {path} is not JSON: {exc}") from None
    counts = data.get("counts") if isinstance(data, dict) else None
    if not isinstance(data, dict) or data.get("version") != VERSION or not isinstance(counts, dict):
        raise BaselineError(f"baseline {path} is not a version-{VERSION} scan baseline")
    out: Counter[tuple[str, str]] = Counter()
    for file, rules in counts.items():
        if not isinstance(rules, dict):
            raise BaselineError(f"baseline {path}: the entry for {file!r} is not an object")
        for rule, count in rules.items():
            if not isinstance(count, int) or isinstance(count, bool) or count < 0:
                raise BaselineError(f"baseline {path}: {file!r} {rule!r} is not a count")
            out[(file, rule)] = count
    return out


def write_baseline(path: str, counts: Counter[tuple[str, str]]) -> None:
    """Write ``counts`` as a baseline file (sorted, so that diffs of it are readable).

    Raises
    ------
    BaselineError
        If the file cannot be written.
    """
    nested: dict[str, dict[str, int]] = {}
    for (file, rule), count in sorted(counts.items()):
        if count:
            nested.setdefault(file, {})[rule] = count
    text = json.dumps(
        {"version": VERSION, "tool": "compile-engine-compat scan", "counts": nested}, indent=2
    )
    try:
        Path(path).write_text(text + "\n", encoding="utf-8")
    except OSError as exc:
        raise BaselineError(f"cannot write baseline {path}: {exc.strerror or exc}") from None


def new_items(
    items: Sequence[_T], baseline: Counter[tuple[str, str]], key: Callable[[_T], tuple[str, str]]
) -> list[_T]:
    """The items beyond the baseline's count for their key, in order.

    Within one key the first ``count`` items are the known ones; any later ones are new. The
    ratchet is generic so that another report (the pytest plugin's) can apply the same rule.
    """
    seen: Counter[tuple[str, str]] = Counter()
    out = []
    for item in items:
        k = key(item)
        seen[k] += 1
        if seen[k] > baseline.get(k, 0):
            out.append(item)
    return out


def count(items: Iterable[_T], key: Callable[[_T], tuple[str, str]]) -> Counter[tuple[str, str]]:
    """``key -> number of items``: what a baseline records."""
    return Counter(key(item) for item in items)
