"""Run upstream TVM's own Relay test files against the shim and print the pass table.

Not part of the default suite (``tests/conftest.py`` ignores this folder). It fetches nothing:
give it an apache/tvm checkout (or a tree extracted from one), for instance::

    git -C /path/to/tvm archive v0.19.0 tests/python/relay | tar -x -C /tmp/tvm019
    PYTHONPATH=$PWD python tests/upstream/run_relay_tests.py /tmp/tvm019

Each named file is copied, byte for byte, into its own scratch directory beside a ``conftest.py``
holding only ``import compile_engine_compat; compile_engine_compat.install()`` (with upstream's
helper package ``utils/`` beside it, which ``test_any.py`` imports), and run by
``python -m pytest`` in its own subprocess under a timeout. A file that kills the interpreter or
runs out of time is a row that says so. The table counts collected, passed, failed, skipped and
errored test instances per file (from pytest's JUnit XML), and the total pass rate over the
collected instances that did not skip. ``--top N`` lists the N most frequent first error lines,
to show which missing piece blocks the most tests.
"""

from __future__ import annotations

import argparse
import collections
import os
import shutil
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

#: The files of ``tests/python/relay`` this script runs by default (upstream's names).
DEFAULT_FILES = (
    "test_op_level1.py",
    "test_op_level2.py",
    "test_op_level3.py",
    "test_op_level4.py",
    "test_op_level5.py",
    "test_op_level6.py",
    "test_op_level10.py",
    "test_ir_nodes.py",
    "test_backend_graph_executor.py",
    "test_backend_interpreter.py",
    "test_build_module.py",
    "test_type_infer.py",
    "test_vm.py",
    "test_any.py",
    "test_op_grad_level1.py",
)

#: The whole conftest each copied file runs beside.
CONFTEST = "import compile_engine_compat; compile_engine_compat.install()\n"

#: Where the files sit inside an apache/tvm checkout.
RELAY_TESTS = Path("tests") / "python" / "relay"

REPO_ROOT = Path(__file__).resolve().parents[2]


@dataclass
class FileResult:
    """One file's counts, or why there are none."""

    name: str
    collected: int = 0
    passed: int = 0
    failed: int = 0
    skipped: int = 0
    errors: int = 0
    wall_s: float = 0.0
    note: str = ""
    messages: list[str] = field(default_factory=list)


def relay_test_dir(tree: Path) -> Path:
    """The folder holding the Relay test files in ``tree`` (a checkout, or that folder itself)."""
    for candidate in (tree / RELAY_TESTS, tree):
        if (candidate / DEFAULT_FILES[0]).is_file():
            return candidate
    raise SystemExit(f"no {RELAY_TESTS}/{DEFAULT_FILES[0]} under {tree}: give an apache/tvm tree")


def first_line(text: str) -> str:
    """The line of a failure message that names the error (the last ``E`` line, else the first)."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    errors = [ln[1:].strip() for ln in lines if ln.startswith("E ")]
    line = errors[0] if errors else (lines[0] if lines else "")
    return line[:160]


def read_junit(path: Path, result: FileResult) -> None:
    """Fill ``result``'s counts from pytest's JUnit XML.

    A collection error is a ``testcase`` with no class name: an error, not a collected test.
    """
    root = ET.parse(path).getroot()
    for case in root.iter("testcase"):
        outcome = {child.tag for child in case}
        collection_error = not case.get("classname") and "error" in outcome
        if collection_error:
            result.errors += 1
            result.note = result.note or "collection error"
        elif "skipped" in outcome:
            result.skipped += 1
        elif "error" in outcome:
            result.errors += 1
        elif "failure" in outcome:
            result.failed += 1
        else:
            result.passed += 1
        if not collection_error:
            result.collected += 1
        for child in case:
            if child.tag in ("failure", "error"):
                text = child.get("message", "") + "\n" + (child.text or "")
                result.messages.append(first_line(text))


def run_file(source: Path, scratch: Path, timeout_s: float, extra: list[str]) -> FileResult:
    """Copy ``source`` beside the one-line conftest and run pytest on it in a subprocess."""
    result = FileResult(source.name)
    work = scratch / source.stem
    work.mkdir(parents=True)
    shutil.copy2(source, work / source.name)
    # Upstream's helper package (``from utils import ref_funcs``), importable as it is from the
    # tests' own folder.
    helpers = source.parent / "utils"
    if helpers.is_dir():
        shutil.copytree(helpers, work / "utils")
    (work / "conftest.py").write_text(CONFTEST)
    junit = work / "junit.xml"
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO_ROOT), env.get("PYTHONPATH", "")) if p)
    cmd = [
        sys.executable,
        "-m",
        "pytest",
        source.name,
        "-q",
        "-p",
        "no:cacheprovider",
        "-W",
        "ignore::DeprecationWarning",
        f"--junitxml={junit}",
        *extra,
    ]
    start = time.perf_counter()
    try:
        proc = subprocess.run(
            cmd, cwd=work, env=env, capture_output=True, text=True, timeout=timeout_s
        )
    except subprocess.TimeoutExpired:
        result.wall_s = time.perf_counter() - start
        result.note = f"timed out after {timeout_s:.0f} s"
        return result
    result.wall_s = time.perf_counter() - start
    if proc.returncode < 0 or proc.returncode > 5:
        signal = -proc.returncode if proc.returncode < 0 else proc.returncode - 128
        result.note = f"crashed (rc {proc.returncode}, signal {signal})"
    if junit.is_file():
        read_junit(junit, result)
    elif not result.note:
        tail = (proc.stdout + proc.stderr).strip().splitlines()[-1:] or [""]
        result.note = f"no report (rc {proc.returncode}): {tail[0][:100]}"
    return result


def table(results: list[FileResult]) -> str:
    """The pass table, per file and in total."""
    counts = " ".join(f"{h:>5}" for h in ("coll", "pass", "fail", "skip", "err"))
    head = f"{'file':34} {counts} {'wall s':>7}  note"
    rows = [head, "-" * len(head)]
    for r in results:
        rows.append(
            f"{r.name:34} {r.collected:5d} {r.passed:5d} {r.failed:5d} {r.skipped:5d} "
            f"{r.errors:5d} {r.wall_s:7.1f}  {r.note}"
        )
    total = FileResult("total")
    for r in results:
        for attr in ("collected", "passed", "failed", "skipped", "errors", "wall_s"):
            setattr(total, attr, getattr(total, attr) + getattr(r, attr))
    rows.append("-" * len(head))
    rows.append(
        f"{'total':34} {total.collected:5d} {total.passed:5d} {total.failed:5d} "
        f"{total.skipped:5d} {total.errors:5d} {total.wall_s:7.1f}"
    )
    ran = total.collected - total.skipped
    rate = 100.0 * total.passed / ran if ran else 0.0
    rows.append(f"pass rate: {total.passed}/{ran} collected, non-skipped instances ({rate:.1f}%)")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    """Command line: ``run_relay_tests.py TREE [--files ...] [--timeout S] [--top N] [-- ARGS]``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tree", type=Path, help="an apache/tvm checkout or extracted tree")
    parser.add_argument("--files", nargs="+", default=list(DEFAULT_FILES), help="file names")
    parser.add_argument("--timeout", type=float, default=1800.0, help="seconds per file")
    parser.add_argument("--top", type=int, default=0, help="list the N most frequent errors")
    parser.add_argument("--keep", action="store_true", help="keep the scratch directory")
    argv = list(sys.argv[1:] if argv is None else argv)
    # Everything after "--" goes to pytest untouched (``-- -k resize -x``).
    pytest_args = argv[argv.index("--") + 1 :] if "--" in argv else []
    args = parser.parse_args(argv[: len(argv) - len(pytest_args) - (1 if "--" in argv else 0)])
    tests = relay_test_dir(args.tree.resolve())
    scratch = Path(tempfile.mkdtemp(prefix="relay-upstream-"))
    results = []
    try:
        for name in args.files:
            source = tests / name
            if not source.is_file():
                results.append(FileResult(name, note="not in this tree"))
                continue
            result = run_file(source, scratch, args.timeout, pytest_args)
            print(
                f"{name}: {result.passed}/{result.collected} passed {result.note}",
                file=sys.stderr,
                flush=True,
            )
            results.append(result)
    finally:
        if args.keep:
            print(f"scratch kept at {scratch}", file=sys.stderr)
        else:
            shutil.rmtree(scratch, ignore_errors=True)
    print(table(results))
    if args.top:
        counts = collections.Counter(m for r in results for m in r.messages)
        print(f"\nmost frequent errors (of {sum(counts.values())}):")
        for message, n in counts.most_common(args.top):
            print(f"{n:5d}  {message}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
