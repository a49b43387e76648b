"""A ratchet for existing findings: ``scan --baseline FILE`` fails only on new ones.

The baseline counts findings per (file, rule id), not per line: editing a file above a legacy call
moves it, and a line-keyed baseline would call the moved call new. A count that grows is new; a
count that shrinks is progress (``--update-baseline`` writes the lower count, so it only ever
ratchets down, as the pytest report's baseline does). File format::

    {"version": 1, "tool": "compile-engine-compat scan",
     "counts": {"src/app.py": {"CEC101": 1, "CEC105": 2}}}
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TypeVar

__all__ = ["BaselineError", "load_baseline", "new_items", "write_baseline"]

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
