"""tvm-stubs: mypy and pyright flag the legacy calls of code written with the ORIGINAL spelling.

TVM 0.27 has no ``tvm.relay.backend.compile_engine``; the partial stub package ``tvm-stubs``
(shipped in the wheel) gives the checkers the legacy modules, marked with the runtime warnings'
text, and nothing else of ``tvm``. The checkers run on a site-packages laid out as ``pip install``
lays it out: the installed TVM, this package, and ``tvm-stubs`` beside them.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

import compile_engine_compat
from compile_engine_compat.api_table import API_TABLE
from compile_engine_compat.deprecations import message_text
from compile_engine_compat.migrate import stubs as _stubs

PACKAGE = Path(compile_engine_compat.__file__).resolve().parent
ROOT = PACKAGE.parent
SITE = Path(sysconfig.get_paths()["purelib"])

# Each line marked "# legacy: ROW[, ROW]" must be flagged once per row, with the row's text.
ORIGINAL = """\
import tvm
from tvm import relay
from tvm.relay.backend import compile_engine
from tvm.relay.backend import _backend
import tvm.relay.backend.te_compiler as te_compiler


def build(func: object, target: str) -> object:
    engine = compile_engine.get()  # legacy: compile_engine.get
    cached = engine.lower(func, target)  # legacy: compile_engine.CompileEngine.lower
    kernel = engine.jit(func, target)  # legacy: compile_engine.CompileEngine.jit
    key = compile_engine.CCacheKey(func, target)  # legacy: compile_engine.CCacheKey
    compiler = te_compiler.get()  # legacy: te_compiler.get
    prim = te_compiler.lower_to_primfunc(func, target)  # legacy: te_compiler.lower_to_primfunc
    relay.backend.compile_engine.get()  # legacy: compile_engine.get
    handle = _backend._CompileEngineGlobal()  # legacy: relay.backend._CompileEngineGlobal
    module = tvm.IRModule({})
    return cached, kernel, key, compiler, prim, handle, module


reveal_type(tvm.compile)
"""


def _expected() -> dict[int, str]:
    return {
        number: line.split("# legacy: ")[1]
        for number, line in enumerate(ORIGINAL.splitlines(), start=1)
        if "# legacy: " in line
    }


def test_committed_tvm_stubs_are_current_and_partial():
    for path, text in _stubs.tvm_stubs().items():
        assert path.read_text(encoding="utf-8") == text, f"{path} is stale: run the generator"
    assert (_stubs.TVM_STUBS / "py.typed").read_text() == "partial\n"
    held = {p.relative_to(_stubs.TVM_STUBS).as_posix() for p in _stubs.TVM_STUBS.rglob("*.pyi")}
    # Only the legacy modules and the packages that lead to them: never tvm/__init__.pyi.
    assert held == {
        "relay/__init__.pyi",
        "relay/backend/__init__.pyi",
        "relay/backend/_backend.pyi",
        "relay/backend/compile_engine.pyi",
        "relay/backend/te_compiler.pyi",
    }


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """A virtual environment whose site-packages holds what an install of the wheel holds."""
    root = tmp_path_factory.mktemp("site")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root / "venv")], check=True)
    packages = Path(
        subprocess.run(
            [
                str(root / "venv/bin/python"),
                "-c",
                "import sysconfig;print(sysconfig.get_paths()['purelib'])",
            ],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    for name in ("tvm", "tvm_ffi", "numpy", "typing_extensions.py"):
        if (SITE / name).exists():
            (packages / name).symlink_to(SITE / name)
    (packages / "compile_engine_compat").symlink_to(PACKAGE)
    shutil.copytree(_stubs.TVM_STUBS, packages / "tvm-stubs")
    (root / "user_code.py").write_text(ORIGINAL)
    return root


def _mypy(site: Path) -> str:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--python-executable",
            str(site / "venv/bin/python"),
            "--enable-error-code",
            "deprecated",
            "--follow-imports=silent",
            "--no-incremental",
            "--cache-dir",
            os.devnull,
            "user_code.py",
        ],
        capture_output=True,
        text=True,
        cwd=site,
        timeout=600,
        # Only the site's packages: not a checkout on PYTHONPATH (with its own tvm-stubs).
        env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
    )
    return proc.stdout + proc.stderr


@pytest.mark.slow
def test_mypy_flags_each_legacy_call_of_the_original_spelling(site):
    out = _mypy(site)
    flagged = {
        int(m.group(1)): m.group(2)
        for m in re.finditer(r"user_code\.py:(\d+): error: (.*)\[deprecated\]", out)
    }
    expected = _expected()
    assert set(flagged) == set(expected), out
    for number, row in expected.items():
        assert message_text(API_TABLE[row]) in flagged[number], (row, flagged[number])
    # Nothing else is an error: the imports resolve, tvm's own names are untouched.
    assert len(re.findall(r": error:", out)) == len(expected), out
    assert 'Revealed type is "Any"' in out  # tvm.compile: untyped TVM, as without the stubs


def _pyright(site: Path, stubs: bool) -> dict:
    pyright = shutil.which("pyright")
    usable = pyright is not None and (
        subprocess.run([pyright, "--version"], capture_output=True, timeout=300).returncode == 0
    )
    if pyright is None or not usable:
        pytest.skip("pyright is not installed or cannot start (pip install pyright; needs node)")
    held = site / "venv" / "held-tvm-stubs"
    packages = next((site / "venv/lib").glob("python*/site-packages"))
    if not stubs:
        (packages / "tvm-stubs").rename(held)
    try:
        config = {"venvPath": str(site), "venv": "venv", "reportDeprecated": "error"}
        (site / "pyrightconfig.json").write_text(json.dumps(config))
        proc = subprocess.run(
            [pyright, "--outputjson", "user_code.py"],
            capture_output=True,
            text=True,
            cwd=site,
            timeout=600,
        )
    finally:
        if not stubs:
            held.rename(packages / "tvm-stubs")
    return json.loads(proc.stdout)


@pytest.mark.slow
def test_pyright_flags_each_legacy_call_and_keeps_tvms_own_types(site):
    report = _pyright(site, stubs=True)
    diagnostics = report["generalDiagnostics"]
    deprecated = {
        d["range"]["start"]["line"] + 1: d["message"]
        for d in diagnostics
        if d.get("rule") == "reportDeprecated"
    }
    expected = _expected()
    assert set(deprecated) == set(expected), diagnostics
    for number, row in expected.items():
        assert message_text(API_TABLE[row]) in deprecated[number], (row, deprecated[number])
    errors = [d for d in diagnostics if d["severity"] == "error"]
    assert len(errors) == len(expected), errors

    def revealed(report: dict) -> str:
        return next(
            d["message"]
            for d in report["generalDiagnostics"]
            if d["message"].startswith('Type of "tvm.compile"')
        )

    # tvm.compile's type is the one pyright reads from the installed TVM, with or without stubs.
    with_stubs = revealed(report)
    assert "Executable" in with_stubs
    assert revealed(_pyright(site, stubs=False)) == with_stubs
