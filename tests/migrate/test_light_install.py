"""The tooling installs without TVM: scan and fix never import it, and the pre-commit hooks'
environment holds only the base install (libcst), ready in seconds."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]
_RUNTIME = ("apache-tvm", "apache-tvm-ffi", "numpy")


def test_the_base_install_has_no_runtime_dependency_and_the_tvm_extra_has_it():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    names = {
        dep.split(";")[0].split("<")[0].split(">")[0].split("=")[0].strip().lower()
        for dep in project["dependencies"]
    }
    assert names.isdisjoint(_RUNTIME) and "libcst" in names
    extras = project["optional-dependencies"]
    assert {re.split(r"[<>=;\[ ]", dep)[0] for dep in extras["tvm"]} >= set(_RUNTIME)
    assert "compile-engine-compat[tvm]" in extras["test"]


_NO_TVM = """
import sys
from compile_engine_compat import cli
codes = [cli.main(argv) for argv in ARGVS]
loaded = sorted(m for m in sys.modules if m.split(".")[0] in ("tvm", "tvm_ffi", "numpy", "torch"))
print("CODES", codes, "LOADED", loaded)
"""


def test_scan_fix_docs_and_the_plugin_never_import_tvm(tmp_path):
    (tmp_path / "app.py").write_text(
        "from tvm.relay.backend import compile_engine\nfrom tvm import relay\n"
        "compile_engine.get().jit(f, 'llvm')\nx = relay.var('x')\n"
    )
    argvs = [
        ["scan", "--isolated", str(tmp_path)],
        ["scan", "--isolated", "--format", "sarif", "--statistics", str(tmp_path)],
        ["fix", "--isolated", "--diff", "--unsafe", str(tmp_path)],
        ["fix", "--isolated", str(tmp_path)],
        ["docs", "CEC105"],
    ]
    code = f"ARGVS = {argvs!r}\n" + _NO_TVM + "import compile_engine_compat.pytest_plugin\n"
    code += "print('AFTER_PLUGIN', sorted(m for m in sys.modules if m.startswith('tvm')))\n"
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
        timeout=300,
    )
    assert "CODES [1, 1, 1, 0, 0] LOADED []" in proc.stdout, proc.stdout + proc.stderr
    assert "AFTER_PLUGIN []" in proc.stdout


_FIND = "import importlib.util as u, sys; sys.exit(any(map(u.find_spec, ('tvm', 'numpy'))))"
_CHECK_HOOK = f"""
- id: check-no-tvm
  name: the hook environment has no TVM
  entry: python -c "{_FIND}"
  language: python
  pass_filenames: false
  always_run: true
"""


def _copy_of_this_repository(target: Path) -> Path:
    """This checkout's files (committed or not, less what git ignores), as a one-commit repo,
    with a hook that fails if the hooks' environment can import TVM (one environment per repo
    and language: the scan hook's own)."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")
    for name in filter(None, listed):
        source = ROOT / os.fsdecode(name)
        if source.is_file() and not source.is_relative_to(ROOT / "tests"):
            (target / os.fsdecode(name)).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / os.fsdecode(name))
    hooks = target / ".pre-commit-hooks.yaml"
    hooks.write_text(hooks.read_text() + _CHECK_HOOK)
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "copy", "--no-verify"]):
        subprocess.run(
            ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
            cwd=target,
            check=True,
            capture_output=True,
        )
    return target


@pytest.mark.long
def test_pre_commit_try_repo_installs_the_hooks_without_tvm_in_seconds(tmp_path):
    pre_commit = shutil.which("pre-commit")
    if pre_commit is None or shutil.which("git") is None:
        pytest.skip("pre-commit (pip install pre-commit) and git are needed")
    repo = _copy_of_this_repository(tmp_path / "repo")
    project = tmp_path / "project"
    project.mkdir()
    (project / "app.py").write_text("from tvm.relay.backend import compile_engine\n")
    (project / "pyproject.toml").write_text('[tool.compile-engine-compat]\nignore = ["CEC6"]\n')
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    subprocess.run(["git", "add", "-A"], cwd=project, check=True)

    def try_repo(home: Path) -> tuple[subprocess.CompletedProcess[str], float]:
        start = time.perf_counter()
        proc = subprocess.run(
            [pre_commit, "try-repo", str(repo), "--files", "app.py", "pyproject.toml"],
            cwd=project,
            capture_output=True,
            text=True,
            env=dict(os.environ, PRE_COMMIT_HOME=str(home)),
            timeout=600,
        )
        return proc, time.perf_counter() - start

    try_repo(tmp_path / "warm")  # fills pip's cache, as any earlier install would
    proc, elapsed = try_repo(tmp_path / "fresh")  # a new hook environment, warm pip cache
    out = proc.stdout + proc.stderr
    assert "the hook environment has no TVM" in out and "Passed" in out, out
    assert "app.py:1:31: CEC101 compile_engine [safe]" in out, out
    # The 15 s goal holds on a machine that is not oversubscribed (measured at about 5-8 s,
    # 2 CPUs); under a load above the CPU count the time measures the other jobs too.
    if os.getloadavg()[0] < (os.cpu_count() or 1):
        assert elapsed < 15, f"hook environment took {elapsed:.1f} s to install and run"
