"""Bounded resources: a 20 MB file is scanned and fixed under 1 GB resident and 30 s each.

Each command runs in a child process that reports its own peak resident set size and CPU time
(``getrusage(RUSAGE_SELF)``), so that nothing else this test process ran counts. The CPU time is
held to the limit always; the wall time too when the machine is not oversubscribed (other jobs
then stretch it).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SIZE = 20 * 1024 * 1024
LIMIT_BYTES = 1 << 30
LIMIT_SECONDS = 30.0
_CHILD = """
import resource, sys
from compile_engine_compat import cli
code = cli.main(sys.argv[1:])
usage = resource.getrusage(resource.RUSAGE_SELF)
print("USAGE", usage.ru_maxrss, usage.ru_utime + usage.ru_stime, file=sys.stderr)
sys.exit(code)
"""

pytestmark = pytest.mark.slow


def _run(*argv: str) -> tuple[subprocess.CompletedProcess[str], float, int]:
    """Run the CLI in a child; returns (the process, its seconds, its peak RSS in bytes).

    The seconds are its CPU time, or its wall time when the machine has a CPU to spare.
    """
    env = dict(os.environ, PYTHONPATH=str(ROOT), COMPILE_ENGINE_COMPAT_JOBS="1")
    idle = os.getloadavg()[0] < (os.cpu_count() or 1)
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-c", _CHILD, *argv],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    wall = time.perf_counter() - start
    rss_kb, cpu = proc.stderr.rsplit("USAGE", 1)[1].split()[:2]
    return proc, max(wall, float(cpu)) if idle else float(cpu), int(rss_kb) * 1024


def _write(path: Path, head: str, unit: str, tail: str) -> None:
    """A file of about SIZE bytes: ``head``, ``unit`` repeated (``{i}`` numbered), ``tail``."""
    with open(path, "w", encoding="utf-8") as out:
        out.write(head)
        size = len(head)
        index = 0
        while size < SIZE:
            text = unit.format(i=index)
            out.write(text)
            size += len(text)
            index += 1
        out.write(tail)


@pytest.mark.long
def test_a_20_mb_module_is_scanned_and_fixed_within_1_gb_and_30_s(tmp_path):
    big = tmp_path / "generated.py"
    _write(
        big,
        "from tvm.relay.backend import compile_engine\nimport numpy as np\n\n",
        "def f{i}(x, y):\n    z = np.add(x, y) * {i}\n"
        "    return [z, {{'k': {i}}}, 'relay {i}']\n\n",
        "engine = compile_engine.get()\nengine.jit(f0, 'llvm')\n",
    )
    assert big.stat().st_size >= SIZE
    lines = big.read_text().count("\n")
    proc, elapsed, rss = _run("scan", "--isolated", "--no-cache", "--format", "json", str(big))
    assert proc.returncode == 1, proc.stderr
    assert '"code": "CEC105"' in proc.stdout and f'"line": {lines}' in proc.stdout
    assert elapsed < LIMIT_SECONDS and rss < LIMIT_BYTES, (elapsed, rss)
    proc, elapsed, rss = _run("fix", "--isolated", "--no-cache", str(big))
    assert proc.returncode == 0, proc.stderr
    assert elapsed < LIMIT_SECONDS and rss < LIMIT_BYTES, (elapsed, rss)
    with open(big, encoding="utf-8") as fixed:
        assert fixed.readline() == "from compile_engine_compat import compile_engine\n"
    assert big.read_text().endswith("engine = compile_engine.get()\nengine.jit(f0, 'llvm')\n")


@pytest.mark.long
def test_a_20_mb_module_full_of_legacy_names_is_skipped_with_its_reason_in_bounds(tmp_path):
    dense = tmp_path / "dense.py"
    _write(
        dense,
        "from tvm.relay.backend import compile_engine\n",
        "def g{i}(f, t):\n    return compile_engine.get().lower(f, t)\n\n",
        "",
    )
    for command in ("scan", "fix"):
        proc, elapsed, rss = _run(command, "--isolated", "--no-cache", str(dense))
        assert "more than 1.0 MiB of its statements spell legacy names" in proc.stdout
        assert "split it to scan it" in proc.stdout
        assert elapsed < LIMIT_SECONDS and rss < LIMIT_BYTES, (command, elapsed, rss)
    assert dense.read_text().startswith("from tvm.relay.backend import compile_engine\n")


def test_a_file_over_the_size_cap_is_reported_skipped_with_its_reason(tmp_path):
    huge = tmp_path / "huge.py"
    with open(huge, "wb") as out:  # sparse: no 33 MB written
        out.truncate(33 * 1024 * 1024)
    proc, elapsed, rss = _run("scan", "--isolated", "--no-cache", str(tmp_path))
    assert "huge.py: skipped: larger than 32 MiB (34603008 bytes)" in proc.stdout
    assert elapsed < LIMIT_SECONDS and rss < LIMIT_BYTES
