"""Storing a kernel never takes the process down: size limits, full disks (in subprocesses).

LLVM ends the process (``report_fatal_error``, exit code 1) when a file it writes fails, so
these run in a child process with a timeout: a regression is an exit code, never a lost run.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

# The child jits one fresh function per case (a new width: always a cold store), under the limit
# the case sets, and reports its results, its cache warnings and whether an entry was stored.
_CHILD = textwrap.dedent(
    """
    import json, os, resource, signal, sys, warnings
    sys.path.insert(0, {tests!r})
    import numpy as np
    from _builders import build
    from tvm import relax
    from compile_engine_compat import CompileEngineDeprecationWarning, compile_engine
    from compile_engine_compat.cache.disk import CompileCacheWarning

    warnings.simplefilter("ignore", CompileEngineDeprecationWarning)
    if {default_sigxfsz!r}:  # as in an embedding interpreter: SIGXFSZ kills, EFBIG never comes
        signal.signal(signal.SIGXFSZ, signal.SIG_DFL)
    engine = compile_engine.get()
    layout = os.path.join(os.environ["COMPILE_ENGINE_COMPAT_CACHE_DIR"], "v2")
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    report = []
    for index, (limit, many) in enumerate({cases!r}):
        width = 8 * (index + 1)
        funcs = [
            build("main", [("x", (4, width + k), "float32")],
                  lambda bb, x: relax.op.nn.relu(bb.emit(relax.op.add(x, x))))
            for k in range(2 if many else 1)
        ]
        before = len(os.listdir(layout)) if os.path.isdir(layout) else 0
        engine.clear()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", CompileCacheWarning)
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit, hard))
            try:
                kernels = engine.jit_many(funcs, "llvm") if many else [engine.jit(funcs[0], "llvm")]
            finally:
                resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        right = True
        for k, kernel in enumerate(kernels):
            x = np.arange(4 * (width + k), dtype="float32").reshape(4, width + k) - 9
            out = np.empty_like(x)
            kernel(x, out)
            right = right and bool((out == np.maximum(x + x, 0)).all())
        report.append({{
            "limit": limit,
            "right": right,
            "warnings": [str(w.message) for w in caught if w.category is CompileCacheWarning],
            "stored": len(os.listdir(layout)) - before,
            "left": sorted(n for n in os.listdir(layout) if n.startswith(".")),
        }})
    print("REPORT " + json.dumps(report))
    """
)


def _run_child(
    cache: Path,
    cases: list[tuple[int, bool]],
    default_sigxfsz: bool = False,
    tmp: Path | None = None,
) -> list:
    cache.mkdir(mode=0o700, exist_ok=True)
    script = _CHILD.format(
        tests=str(Path(__file__).resolve().parents[1]), cases=cases, default_sigxfsz=default_sigxfsz
    )
    env = {**os.environ, "COMPILE_ENGINE_COMPAT_CACHE_DIR": str(cache)}
    if tmp is not None:  # temporary files (TVM's, the compiler's) go to the same full disk
        env["TMPDIR"] = str(tmp)
    env.pop("COMPILE_ENGINE_COMPAT_CACHE_SIZE_MB", None)
    proc = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, f"exit code {proc.returncode}:\n{proc.stderr[-3000:]}"
    (line,) = [x for x in proc.stdout.splitlines() if x.startswith("REPORT ")]
    return list(json.loads(line[len("REPORT ") :]))


def _check(report: list) -> None:
    for case in report:
        assert case["right"], case
        assert case["left"] == [], case  # no staging directory left behind
        # Not stored: one clear one-line warning per library (jit: one; jit_many: one per module
        # it builds), never a traceback. A whole entry whose index record did not fit warns too.
        if not case["stored"]:
            assert case["warnings"], case
        for message in case["warnings"]:
            assert re.match(r"compile cache: (kernel|index record) not stored \(", message), case
            assert "\n" not in message, case


# Limits below, inside and above the sizes written (assembly ~28 KB, library ~20 KB).
_LIMITS = [0, 1024, 8192, 20000, 40000, 1 << 30]


@pytest.mark.long
@pytest.mark.parametrize(
    "default_sigxfsz", [False, True], ids=["sigxfsz-ignored", "sigxfsz-default"]
)
def test_a_file_size_limit_never_aborts_jit(tmp_path, default_sigxfsz):
    cases = [(limit, False) for limit in _LIMITS] + [(1024, True), (1 << 30, True)]
    report = _run_child(tmp_path / "kernels", cases, default_sigxfsz)
    _check(report)
    assert report[-1]["stored"] == 2 and report[-3]["stored"] == 1  # no limit: stored
    assert report[0]["stored"] == 0  # nothing can be written at all
    (single,) = report[0]["warnings"]  # jit: exactly one warning
    assert "File too large" in single


@pytest.fixture
def tiny_tmpfs(tmp_path):
    mount = tmp_path / "tiny"
    mount.mkdir()
    made = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64k,mode=0700", "tmpfs", str(mount)],
        capture_output=True,
        text=True,
    )
    if made.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {made.stderr.strip()}")
    try:
        yield mount
    finally:
        # Never leave a mount behind (pytest later renames and deletes its tmp folders): a
        # lazy unmount when a plain one fails.
        if subprocess.run(["umount", str(mount)], capture_output=True).returncode:
            subprocess.run(["umount", "-l", str(mount)], capture_output=True)


@pytest.mark.long
def test_a_full_disk_never_aborts_jit(tiny_tmpfs):
    # 64 KiB fill up after a couple of entries: every later store finds the disk full.
    (tiny_tmpfs / "tmp").mkdir()
    cases = [(1 << 30, False)] * 5 + [(1 << 30, True)]
    report = _run_child(tiny_tmpfs / "kernels", cases, tmp=tiny_tmpfs / "tmp")
    _check(report)
    assert report[0]["stored"] == 1 and not all(case["stored"] for case in report)
