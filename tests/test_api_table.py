"""The one table: replacements exist in the installed TVM, every warned name has a row, and
MIGRATION.md is generated from it and current."""

from __future__ import annotations

import ast
import importlib
import string
import sys
from pathlib import Path

import pytest

import compile_engine_compat
from compile_engine_compat import cli
from compile_engine_compat.api_table import (
    API_TABLE,
    LEGACY_CONFIG_KEYS,
    lookup,
    string_rows,
)
from compile_engine_compat.migrate.docs import generate

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = Path(compile_engine_compat.__file__).parent


def _resolve(dotted: str) -> object:
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attr in parts[cut:]:
            obj = getattr(obj, attr)
        return obj
    raise ImportError(dotted)


@pytest.mark.parametrize("row", list(API_TABLE.values()), ids=lambda r: r.name)
def test_replacement_symbols_exist_in_installed_tvm(row):
    assert row.replacement_symbols, f"{row.name} names no replacement symbol"
    for symbol in row.replacement_symbols:
        assert _resolve(symbol) is not None, symbol


@pytest.mark.parametrize("row", list(API_TABLE.values()), ids=lambda r: r.name)
def test_shim_drop_in_exists(row):
    engine_class = importlib.import_module("compile_engine_compat.compile_engine").CompileEngine
    method = row.name.rsplit(".", 1)[-1]
    if method.endswith("_many") and not hasattr(engine_class, method):
        pytest.skip("batch lowering (a shim addition) is not in this build yet")
    if row.shim.startswith("compile_engine_compat.") and " " not in row.shim:
        assert _resolve(row.shim) is not None
    else:  # registered globals, pass-config keys, TVM <=0.19 target strings, refused Relay
        assert row.name.startswith("relay.backend.") or row.name in (
            *LEGACY_CONFIG_KEYS,
            "target.cli_string",
            "relay.unsupported",
        )


def test_every_warned_name_has_a_row():
    names = set()
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.Call)
                and getattr(node.func, "id", getattr(node.func, "attr", None))
                in ("warn_legacy", "legacy_api")
                and node.args
                and isinstance(node.args[0], ast.Constant)
            ):
                names.add(node.args[0].value)
    # Spelled in the code (decorators, dynamic warnings); the rest are made from their cores.
    assert len(names) > 20
    assert len(names | {row.name for row in API_TABLE.values() if row.core}) > 45
    for name in names:
        assert isinstance(name, str)
        assert lookup(name).name == name


def test_rows_are_well_formed():
    anchors = [row.anchor for row in API_TABLE.values()]
    assert len(set(anchors)) == len(anchors)
    for row in API_TABLE.values():
        assert row.fix in ("safe", "unsafe", "manual", "served")
        if row.rewrite:
            fields = [f for _, f, _, _ in string.Formatter().parse(row.rewrite) if f]
            ast.parse(row.rewrite.format(*[f"a{i}" for i in range(len(fields))]), mode="eval")
    assert set(string_rows()) >= {
        "relay.backend.use_auto_scheduler",
        "relay.backend.disable_compile_engine_cache",
        "relay.backend._CompileEngineLower",
    }


def test_migration_md_is_current(capsys):
    text = (ROOT / "MIGRATION.md").read_text()
    assert text == generate(), "run: compile-engine-compat docs -o MIGRATION.md"
    assert cli.main(["docs", "--check", str(ROOT / "MIGRATION.md")]) == 0
    for row in API_TABLE.values():
        assert f'<a id="{row.anchor}"></a>' in text
        assert f"`{row.replacement}`" in text
    for hand_written in (
        "`CachedFunc.schedule` is a `tvm.s_tir.Schedule`",
        "`target=None` uses `tvm.target.Target.current()`",
        "`CCacheKey` take a `relax.Function`",
    ):
        assert hand_written in text


def test_docs_check_reports_a_stale_file(tmp_path, capsys):
    stale = tmp_path / "MIGRATION.md"
    stale.write_text("# old\n")
    assert cli.main(["docs", "--check", str(stale)]) == 1
    assert "out of date" in capsys.readouterr().out
    assert cli.main(["docs", "-o", str(stale)]) == 0
    assert stale.read_text() == generate()


def test_shim_additions_claim_no_legacy_path():
    """lower_many/jit_many never existed in TVM: MIGRATION.md must not say they did."""
    text = generate()
    for method in ("lower_many", "jit_many"):
        name = f"compile_engine.CompileEngine.{method}"
        assert API_TABLE[name].old_paths == ()
        assert f"tvm.relay.backend.{name}" not in text
    section = text.split("## Shim additions on the legacy engine", 1)[1]
    assert section.count("- **Old:** none; added by compile-engine-compat") == 2


def test_the_installed_package_ships_a_current_migration_guide():
    """Warnings point at MIGRATION.md#...: the package itself must hold it (package data)."""
    from compile_engine_compat.migrate.docs import PACKAGED

    assert PACKAGED.read_text(encoding="utf-8") == generate(), (
        "run: compile-engine-compat docs -o compile_engine_compat/MIGRATION.md"
    )
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert "MIGRATION.md" in setuptools["package-data"]["compile_engine_compat"]
    for row in API_TABLE.values():
        assert f'<a id="{row.anchor}"></a>' in PACKAGED.read_text(encoding="utf-8")
        assert row.docs.startswith(f"MIGRATION.md#{row.anchor} ")
        assert f"compile-engine-compat docs {row.rule_id}" in row.docs


def test_docs_prints_one_row_by_id_name_or_old_path(capsys):
    for key in ("CEC105", "cec105", "compile_engine.CompileEngine.jit"):
        assert cli.main(["docs", key]) == 0
        out = capsys.readouterr().out
        assert out.startswith("CEC105  compile_engine.CompileEngine.jit\n")
        assert "- **Modern:** `ex = tvm.compile(" in out and "<a id" not in out
    assert cli.main(["docs", "tvm.relay.backend.compile_engine.get"]) == 0
    assert "CEC102" in capsys.readouterr().out
    assert cli.main(["docs", "relay.backend.use_auto_scheduler"]) == 0
    assert "- **Note:** The key never reaches C++" in capsys.readouterr().out
    assert cli.main(["docs", "compile_engine.jt"]) == 2
    assert "did you mean" in capsys.readouterr().err
    assert cli.main(["docs", "--path"]) == 0
    assert capsys.readouterr().out.strip().endswith("compile_engine_compat/MIGRATION.md")


def test_the_guide_has_a_row_for_every_relay_op():
    from compile_engine_compat.relay import OP_TABLE, REFUSED_OPS

    text = generate()
    for name, row in OP_TABLE.items():
        assert f"| `relay.{name}` | `{row.relax_op}` |" in text, name
    for name in REFUSED_OPS:
        assert f"- `relay.{name}`: " in text, name


def test_the_guide_lists_every_rule_id():
    text = generate()
    for row in API_TABLE.values():
        assert f"| `{row.rule_id}` | [`{row.name}`]" in text
        assert f"- **Rule:** `{row.rule_id}`" in text
