"""``scan`` against merely ``ast.parse``-ing every file, in one process (issue 15's speed goal).

Usage::

    python bench/scan_speed.py [TREE ...] [--rounds N]

Each TREE defaults to apache/tvm v0.7.0 ``python/`` + ``tests/python/`` under
``/work/tvm-trees``. The two measurements alternate round by round so that a busy machine slows
both alike; the goal is ``scan`` at most 0.5x the ``ast.parse`` time (medians). ``fix --diff``'s
planning pass (``fix_file`` on every file, nothing written) is timed beside them.
"""

from __future__ import annotations

import argparse
import ast
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from compile_engine_compat.migrate.fix import fix_file
from compile_engine_compat.migrate.scan import scan_paths
from compile_engine_compat.migrate.sources import iter_sources

DEFAULT_TREES = (
    "/work/tvm-trees/v0.7.0/python",
    "/work/tvm-trees/v0.7.0/tests/python",
)


def _parse_all(paths: Sequence[str]) -> int:
    """``ast.parse`` every file (read from disk each time, as scan does); returns the count."""
    count = 0
    for file in iter_sources(paths):
        if file.path.suffix != ".py":
            continue
        try:
            ast.parse(file.path.read_bytes())
        except (SyntaxError, ValueError):
            pass
        count += 1
    return count


def _scan_all(paths: Sequence[str]) -> int:
    findings, _ = scan_paths(paths)
    return len(findings)


def _fix_all(paths: Sequence[str]) -> int:
    return sum(len(fix_file(file, unsafe=False).changes) for file in iter_sources(paths))


def _timed(func: Callable[[Sequence[str]], int], paths: Sequence[str]) -> tuple[float, int]:
    start = time.perf_counter()
    result = func(paths)
    return time.perf_counter() - start, result


def _spread(times: list[float]) -> str:
    return (
        f"median {statistics.median(times):6.3f} s  "
        f"(min {min(times):.3f}, max {max(times):.3f}, {len(times)} rounds)"
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Print the ast.parse, scan and fix times side by side, and the scan/parse ratio."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trees", nargs="*", default=list(DEFAULT_TREES))
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)
    missing = [tree for tree in args.trees if not Path(tree).exists()]
    if missing:
        print(f"no such tree: {', '.join(missing)}", file=sys.stderr)
        return 2
    parse_times: list[float] = []
    scan_times: list[float] = []
    fix_times: list[float] = []
    files = findings = changes = 0
    for _ in range(args.rounds):
        elapsed, files = _timed(_parse_all, args.trees)
        parse_times.append(elapsed)
        elapsed, findings = _timed(_scan_all, args.trees)
        scan_times.append(elapsed)
        elapsed, changes = _timed(_fix_all, args.trees)
        fix_times.append(elapsed)
    ratio = statistics.median(scan_times) / statistics.median(parse_times)
    print(f"trees: {' '.join(args.trees)} ({files} .py files)")
    print(f"ast.parse every file  {_spread(parse_times)}")
    print(f"scan                  {_spread(scan_times)}  {findings} findings")
    print(f"fix (plan, no write)  {_spread(fix_times)}  {changes} changes")
    print(f"scan / ast.parse = {ratio:.2f} (goal <= 0.50)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
