"""The import surface: drop-in module, top-level names, lazy TVM import, the demo command."""

from __future__ import annotations

import subprocess
import sys

import pytest

import compile_engine_compat
from compile_engine_compat import cli, compile_engine

LEGACY_NAMES = [
    "get",
    "CompileEngine",
    "CCacheKey",
    "CCacheValue",
    "LoweredOutput",
    "CachedFunc",
    "lower_call",
    "get_shape",
    "select_implementation",
    "get_valid_implementations",
]


@pytest.mark.parametrize("name", LEGACY_NAMES)
def test_legacy_names_exist_in_module_and_top_level(name):
    assert getattr(compile_engine, name) is getattr(compile_engine_compat, name)


def test_loggers_are_the_legacy_ones():
    import logging

    assert compile_engine.logger is logging.getLogger("compile_engine")
    assert compile_engine.autotvm_logger is logging.getLogger("autotvm")


def test_unknown_top_level_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        compile_engine_compat.nope  # noqa: B018


def test_importing_the_package_does_not_import_tvm():
    code = "import sys, compile_engine_compat; print('tvm' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_cli_help_and_unknown_command(capsys):
    assert cli.main(["--help"]) == 0
    assert "demo" in capsys.readouterr().out
    assert cli.main(["no-such-command"]) == 2


def test_demo_runs_and_matches_the_new_path(capsys):
    assert cli.main(["demo"]) == 0
    out = capsys.readouterr().out
    assert "OK: every kernel matches the new path" in out
    assert "legacy-call ledger" in out
    assert "legacy_demo.py" in out  # calls are attributed to the legacy program's lines


def test_top_level_get_registers_the_legacy_globals():
    code = (
        "import compile_engine_compat as c, tvm; c.get;"
        "print(tvm.get_global_func('relay.backend._CompileEngineGlobal', allow_missing=True)"
        " is not None)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip().endswith("True")
