"""``scan`` and ``fix`` against merely ``ast.parse``-ing every file, in one process.

Usage::

    python bench/scan_speed.py TREE [TREE ...] [--rounds N] [--jobs N]

For the trees given (e.g. apache/tvm v0.7.0 ``python/`` and ``tests/python/``, checked out
anywhere), it prints the machine's load before and after, the file count, lines and bytes, and
per round, alternating the order so that a busy machine slows all three alike:

* ``ast.parse`` of every ``.py`` file, read from disk each time;
* ``scan`` (:func:`run_scan`, no result cache, as a first run in CI);
* ``fix``'s planning pass (:func:`plan_paths`: scan, then the rewrite of each file that needs
  one, nothing written; no cache).

It prints medians with min and max, the ratios of the medians, and the median (min, max) of
each round's own ratio, which a burst of load elsewhere on a shared machine skews less.
``--jobs 1`` (the default) keeps scan and fix in this one process, the fair comparison with
``ast.parse``; ``--jobs N`` lets them fork N workers as they do on large trees. Last, a recall
check: how many files name the legacy modules in code (strings and comments aside, TVM's own
definition files excepted) and how many of them have a finding.
"""

from __future__ import annotations

import argparse
import ast
import importlib.metadata
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from compile_engine_compat.api_table import DEFINITION_MODULES
from compile_engine_compat.migrate.code_text import code_only
from compile_engine_compat.migrate.config import Configs
from compile_engine_compat.migrate.discovery import Discovery
from compile_engine_compat.migrate.fix import plan_paths
from compile_engine_compat.migrate.scan import run_scan
from compile_engine_compat.migrate.sources import read_source

_ENGINE_WORDS = ("compile_engine", "te_compiler", "_CompileEngine", "_TECompiler")


def _files(trees: Sequence[str]) -> list[Path]:
    return [file.path for file, _ in Discovery(Configs(isolated=True)).files(trees)]


def _parse_all(trees: Sequence[str]) -> int:
    count = 0
    for path in _files(trees):
        if path.suffix != ".py":
            continue
        try:
            ast.parse(path.read_bytes())
        except (SyntaxError, ValueError):
            pass
        count += 1
    return count


def _scan_all(trees: Sequence[str]) -> int:
    return len(run_scan(trees, Configs(isolated=True)).findings)


def _fix_all(trees: Sequence[str]) -> int:
    results, _ = plan_paths(trees, Configs(isolated=True))
    return sum(len(result.changes) for result in results)


def _timed(func: Callable[[Sequence[str]], int], trees: Sequence[str]) -> tuple[float, int]:
    start = time.perf_counter()
    result = func(trees)
    return time.perf_counter() - start, result


def _spread(times: list[float]) -> str:
    return (
        f"median {statistics.median(times):7.3f} s  "
        f"(min {min(times):.3f}, max {max(times):.3f}, {len(times)} rounds)"
    )


def _load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f} on {os.cpu_count()} CPUs"


def _recall(trees: Sequence[str]) -> tuple[int, int]:
    """(files naming an engine module in code, those of them with a finding)."""
    found = {f.source_path for f in run_scan(trees, Configs(isolated=True)).findings}
    naming = 0
    covered = 0
    for file, _ in Discovery(Configs(isolated=True)).files(trees):
        try:
            source = read_source(file.path, file.display)
        except Exception:
            continue
        if source.module in DEFINITION_MODULES:
            continue
        code = code_only(source.code)
        if any(word in code for word in _ENGINE_WORDS):
            naming += 1
            covered += str(source.path) in found
    return naming, covered


def main(argv: Sequence[str] | None = None) -> int:
    """Print the conditions, then ast.parse, scan and fix times side by side, and the ratios."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("trees", nargs="+", metavar="TREE")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--jobs", type=int, default=1, help="scan/fix worker processes")
    args = parser.parse_args(argv)
    missing = [tree for tree in args.trees if not Path(tree).exists()]
    if missing:
        print(f"no such tree: {', '.join(missing)}", file=sys.stderr)
        return 2
    os.environ["COMPILE_ENGINE_COMPAT_JOBS"] = str(args.jobs)
    files = _files(args.trees)
    sizes = [path.stat().st_size for path in files]
    lines = sum(path.read_bytes().count(b"\n") for path in files)
    print(f"before: {_load()}")
    libcst_version = importlib.metadata.version("libcst")
    print(
        f"python {platform.python_version()}, libcst {libcst_version}, {platform.machine()}, "
        f"scan/fix jobs {args.jobs}"
    )
    print(f"trees: {' '.join(args.trees)}")
    print(f"{len(files)} files, {lines:,} lines, {sum(sizes) / 1e6:.1f} MB")
    measures: dict[str, Callable[[Sequence[str]], int]] = {
        "ast.parse": _parse_all,
        "scan": _scan_all,
        "fix": _fix_all,
    }
    times: dict[str, list[float]] = {name: [] for name in measures}
    results: dict[str, int] = {}
    order = list(measures)
    for round_index in range(args.rounds):
        for name in order[round_index % 3 :] + order[: round_index % 3]:
            elapsed, results[name] = _timed(measures[name], args.trees)
            times[name].append(elapsed)
    print(f"ast.parse every file  {_spread(times['ast.parse'])}  {results['ast.parse']} files")
    print(f"scan                  {_spread(times['scan'])}  {results['scan']} findings")
    print(f"fix (plan, no write)  {_spread(times['fix'])}  {results['fix']} changes")
    parse = statistics.median(times["ast.parse"])
    scan = statistics.median(times["scan"])
    fix = statistics.median(times["fix"])
    print(f"scan / ast.parse = {scan / parse:.2f}   fix / ast.parse = {fix / parse:.2f}", end="")
    print(f"   fix / scan = {fix / scan:.2f}   (ratios of the medians)")
    # Each round's own ratio: the three ran back to back there, so a burst of load elsewhere on
    # a shared machine skews one round's pair, not the ratio of medians taken across rounds.
    for name in ("scan", "fix"):
        ratios = [own / base for own, base in zip(times[name], times["ast.parse"], strict=True)]
        print(
            f"{name} / ast.parse per round: median {statistics.median(ratios):.2f} "
            f"(min {min(ratios):.2f}, max {max(ratios):.2f})"
        )
    naming, covered = _recall(args.trees)
    print(f"recall: {covered} of {naming} files naming the engine modules in code have findings")
    print(f"after: {_load()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
