"""PEP 702: type checkers flag each legacy call, with the runtime warning's text, and only once."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

import compile_engine_compat
from compile_engine_compat import CompileEngineDeprecationWarning
from compile_engine_compat.api_table import API_TABLE
from compile_engine_compat.deprecations import message_text
from compile_engine_compat.migrate import stubs as _stubs

PACKAGE_PARENT = Path(compile_engine_compat.__file__).resolve().parent.parent

# A downstream file: each line marked "# legacy: ROW" is a legacy call a type checker must flag.
# (mypy skips the bodies of unannotated functions unless --check-untyped-defs is given.)
DOWNSTREAM = """\
from compile_engine_compat import compile_engine, te_compiler

def build(func: object, target: str) -> object:
    engine = compile_engine.get()  # legacy: compile_engine.get
    cached = engine.lower(func, target)  # legacy: compile_engine.CompileEngine.lower
    kernel = engine.jit(func, target)  # legacy: compile_engine.CompileEngine.jit
    engine.clear()  # legacy: compile_engine.CompileEngine.clear
    key = compile_engine.CCacheKey(func, target)  # legacy: compile_engine.CCacheKey
    compiler = te_compiler.get()  # legacy: te_compiler.get
    prim = te_compiler.lower_to_primfunc(func, target)  # legacy: te_compiler.lower_to_primfunc
    compiler.items()  # legacy: te_compiler.TECompiler.items
    return cached.outputs, kernel, key, prim, compile_engine.OpImplementation
"""


def test_committed_stubs_are_current():
    for module_name, path in _stubs.STUB_MODULES.items():
        assert path.read_text(encoding="utf-8") == _stubs.generate(module_name), (
            f"{path.name} is stale: run python -m compile_engine_compat.migrate.stubs"
        )


def test_every_shim_function_and_method_row_is_marked():
    text = "".join(path.read_text(encoding="utf-8") for path in _stubs.STUB_MODULES.values())
    rows = [
        row
        for name, row in API_TABLE.items()
        if name.startswith(("compile_engine.", "te_compiler."))
    ]
    assert len(rows) > 30
    for row in rows:
        assert repr(message_text(row)) in text, row.name


@pytest.mark.long
def test_mypy_flags_each_legacy_call_of_a_downstream_file(tmp_path):
    user = tmp_path / "user_code.py"
    user.write_text(DOWNSTREAM)
    env = dict(os.environ)
    if PACKAGE_PARENT.name not in ("site-packages", "dist-packages"):
        # A source checkout (editable installs use an import hook mypy does not run); an
        # installed package is found by mypy itself (PEP 561, py.typed), and must not be here.
        # The package alone: the checkout's root also holds tvm-stubs, whose partial stubs mypy
        # would pair with a tvm package beside them (installed, they sit beside TVM).
        search = tmp_path / "search"
        search.mkdir()
        (search / "compile_engine_compat").symlink_to(PACKAGE_PARENT / "compile_engine_compat")
        env["MYPYPATH"] = str(search)
        env.pop("PYTHONPATH", None)  # the checkout's root, and its tvm-stubs, with it
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--enable-error-code",
            "deprecated",
            "--ignore-missing-imports",
            "--follow-imports=silent",
            "--no-incremental",
            "--cache-dir",
            os.devnull,
            str(user),
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=300,
    )
    flagged = {
        int(m.group(1)): m.group(2)
        for m in re.finditer(r"user_code\.py:(\d+): error: (.*)\[deprecated\]", proc.stdout)
    }
    expected = {
        number: line.split("# legacy: ")[1]
        for number, line in enumerate(DOWNSTREAM.splitlines(), start=1)
        if "# legacy: " in line
    }
    assert set(flagged) == set(expected), proc.stdout + proc.stderr
    for number, row in expected.items():
        # The checker's message is the runtime warning's text.
        assert message_text(API_TABLE[row]) in flagged[number], (row, flagged[number])


def test_runtime_warns_once_per_call_not_twice(engine):
    from _builders import add3

    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        engine.lower(add3((4,)), "llvm")
    lowered = [w for w in record if issubclass(w.category, DeprecationWarning)]
    assert len(lowered) == 1
    assert isinstance(lowered[0].message, CompileEngineDeprecationWarning)
    assert lowered[0].filename == __file__
