"""The pytest report's compile cache line: one run's counts, its xdist workers' included."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

_SUITE = """
import sys
sys.path.insert(0, {tests!r})
import pytest
from _builders import build
from tvm import relax


@pytest.mark.parametrize("width", [8, 12, 16, 20])
def test_jit(width):
    from compile_engine_compat import compile_engine

    func = build("main", [("x", (4, width), "float32")], lambda bb, x: relax.op.abs(x))
    compile_engine.get().jit(func, "llvm")
"""


def _environment(tmp_path: Path, setenv: Callable[[str, str], object]) -> None:
    """Both tiers on: a local directory and a shared one, with a key."""
    local = tmp_path / "local"
    local.mkdir(mode=0o700, exist_ok=True)
    (tmp_path / "shared").mkdir(exist_ok=True)
    setenv("COMPILE_ENGINE_COMPAT_CACHE_DIR", str(local))
    setenv("COMPILE_ENGINE_COMPAT_REMOTE_CACHE", (tmp_path / "shared").as_uri())
    setenv("COMPILE_ENGINE_COMPAT_CACHE_KEY", "k" * 40)


def _run(tmp_path: Path, *options: str) -> str:
    """Run a small jit suite under pytest with both tiers on; return its output."""
    suite = tmp_path / "test_suite.py"
    suite.write_text(_SUITE.format(tests=str(Path(__file__).resolve().parents[1])))
    env = {k: v for k, v in os.environ.items() if not k.startswith("COMPILE_ENGINE_COMPAT_")}
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[2])
    _environment(tmp_path, env.__setitem__)
    plugin = "compile_engine_compat.cache.pytest_line"
    command = [sys.executable, "-m", "pytest", "-q", "-p", plugin, "-p", "no:cacheprovider",
               "--rootdir", str(tmp_path), str(suite), *options]  # fmt: skip
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_the_line_counts_the_run(tmp_path, monkeypatch, capsys):
    """In this process (TVM is imported already): a nested pytest run with the plugin."""
    suite = tmp_path / "test_cache_line_suite.py"
    suite.write_text(_SUITE.format(tests=str(Path(__file__).resolve().parents[1])))
    _environment(tmp_path, monkeypatch.setenv)
    plugin = "compile_engine_compat.cache.pytest_line"
    options = ["-q", "-p", plugin, "-p", "no:xdist", "-p", "no:cacheprovider"]
    assert pytest.main([*options, "--rootdir", str(tmp_path), str(suite)]) == 0
    out = capsys.readouterr().out
    # Four functions, each an index record and a kernel: missed in both tiers, then published.
    assert "compile cache: local: 0 hits, 8 misses; remote: 0 hits, 8 misses" in out
    assert "8 published" in out
    assert pytest.main([*options, "--compile-cache-line=never", str(suite)]) == 0
    assert "compile cache:" not in capsys.readouterr().out  # (a second run: all local hits)


@pytest.mark.fleet
def test_the_line_sums_the_xdist_workers_counts(tmp_path):
    out = _run(tmp_path, "-n", "2")
    assert "compile cache: local: 0 hits, 8 misses; remote: 0 hits, 8 misses" in out
    assert "8 published" in out
