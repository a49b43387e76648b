"""The shipped pre-commit hooks: scan on every commit, fix as a manual stage (issue 15 item 4)."""

from __future__ import annotations

from pathlib import Path

import pytest

from compile_engine_compat import cli

ROOT = Path(__file__).resolve().parents[2]


def test_hooks_name_real_subcommands_and_fix_is_manual():
    yaml = pytest.importorskip("yaml")
    hooks = {
        hook["id"]: hook for hook in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    }
    assert set(hooks) == {"compile-engine-compat-scan", "compile-engine-compat-fix"}
    for hook in hooks.values():
        program, command, *flags = hook["entry"].split()
        assert program == "compile-engine-compat" and command in cli.SUBCOMMANDS
        # pre-commit names every staged file: the settings' exclusions must still apply.
        assert flags == ["--force-exclude"]
        assert hook["language"] == "python"
        assert set(hook["types_or"]) == {"python", "jupyter"}
    assert "stages" not in hooks["compile-engine-compat-scan"]
    assert hooks["compile-engine-compat-fix"]["stages"] == ["manual"]


def test_scan_takes_the_file_list_pre_commit_passes(tmp_path, capsys):
    legacy = tmp_path / "a.py"
    legacy.write_text("from tvm.relay.backend import compile_engine\n")
    clean = tmp_path / "b.py"
    clean.write_text("import os\n")
    assert cli.main(["scan", str(clean)]) == 0
    assert cli.main(["scan", str(clean), str(legacy)]) == 1
    assert "CEC101" in capsys.readouterr().out
