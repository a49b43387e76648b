"""Rule ids, --select/--ignore, noqa comments, the baseline and exit codes (issue 15 item 3)."""

from __future__ import annotations

import json
import urllib.parse
from pathlib import Path

import pytest

from compile_engine_compat import cli
from compile_engine_compat.api_table import API_TABLE, RULE_IDS, RULES
from compile_engine_compat.migrate.scan import scan_paths

APP = (
    "from tvm.relay.backend import compile_engine\n"  # CEC101
    "engine = compile_engine.get()\n"  # CEC102
    "engine.jit(f, 'llvm')\n"  # CEC105
    "engine.clear()\n"  # CEC106
    "te = 'relay.backend.use_auto_scheduler'\n"  # CEC401
)


def _codes(tmp_path: Path, *args: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, list]:
    code = cli.main(["scan", "--format", "json", *args, str(tmp_path)])
    return code, [d["code"] for d in json.loads(capsys.readouterr().out) if "code" in d]


def test_rule_ids_are_derived_stable_and_unique() -> None:
    assert len(set(RULE_IDS.values())) == len(API_TABLE)
    assert {row.rule_id for row in RULES.values()} == set(RULES)
    # Pinned: a reordering of the table would renumber rules that users wrote in noqa comments,
    # baselines and --select lists. Append new rows at the end of their group instead.
    assert RULE_IDS["compile_engine"] == "CEC101"
    assert RULE_IDS["compile_engine.get"] == "CEC102"
    assert RULE_IDS["compile_engine.CompileEngine.jit"] == "CEC105"
    assert RULE_IDS["compile_engine.get_valid_implementations"] == "CEC118"
    assert RULE_IDS["te_compiler"] == "CEC201"
    assert RULE_IDS["te_compiler.lower_to_primfunc"] == "CEC215"
    assert RULE_IDS["relay.backend._make_LoweredOutput"] == "CEC301"
    assert RULE_IDS["relay.backend.lower_call"] == "CEC317"
    assert RULE_IDS["relay.backend.use_auto_scheduler"] == "CEC401"
    assert RULE_IDS["relay.backend.disable_compile_engine_cache"] == "CEC402"
    assert RULE_IDS["compile_engine.CompileEngine.jit_many"] == "CEC502"
    assert RULE_IDS["tir.RemoveNoOp"] == "CEC601"
    assert RULE_IDS["te.keep_schedule_record"] == "CEC645"
    assert RULE_IDS["target.cli_string"] == "CEC701"
    assert RULE_IDS["relay.build"] == "CEC801"
    assert RULE_IDS["relay.prelude"] == "CEC825"
    assert RULE_IDS["relay.testing.run_as_python"] == "CEC826"
    assert RULE_IDS["tvm.contrib.graph_executor.GraphModule"] == "CEC901"


def test_select_and_ignore_take_ids_and_prefixes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "app.py").write_text(APP)
    assert _codes(tmp_path, capsys=capsys) == (
        1,
        ["CEC101", "CEC102", "CEC105", "CEC106", "CEC401"],
    )
    assert _codes(tmp_path, "--select", "CEC4", capsys=capsys) == (1, ["CEC401"])
    assert _codes(tmp_path, "--select", "cec10", "--ignore", "CEC105,CEC106", capsys=capsys) == (
        1,
        ["CEC101", "CEC102"],
    )
    # The more specific selector wins, as in ruff.
    assert _codes(tmp_path, "--ignore", "CEC1", "--select", "CEC105", capsys=capsys) == (
        1,
        ["CEC105"],
    )
    assert _codes(tmp_path, "--ignore", "CEC", capsys=capsys) == (0, [])
    assert cli.main(["scan", "--select", "XYZ9", str(tmp_path)]) == 2
    assert "unknown rule id or prefix 'XYZ9'" in capsys.readouterr().err


def test_noqa_suppresses_on_its_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = APP.replace("engine.jit(f, 'llvm')\n", "engine.jit(f, 'llvm')  # noqa: CEC105\n")
    code = code.replace("engine.clear()\n", "engine.clear()  # NOQA\n")
    code = code.replace("get()\n", "get()  # noqa: CEC101, E501\n")  # another id: not this one
    (tmp_path / "app.py").write_text(code)
    assert _codes(tmp_path, capsys=capsys) == (1, ["CEC101", "CEC102", "CEC401"])


def test_noqa_in_a_notebook_cell(tmp_path: Path) -> None:
    cell = {
        "cell_type": "code",
        "metadata": {},
        "outputs": [],
        "source": [
            "from tvm.relay.backend import compile_engine  # noqa: CEC101\n",
            "compile_engine.get()\n",
        ],
    }
    (tmp_path / "nb.ipynb").write_text(json.dumps({"cells": [cell]}))
    findings, _ = scan_paths([str(tmp_path)])
    assert [(f.cell, f.line, f.code) for f in findings] == [(0, 2, "CEC102")]


def test_baseline_fails_only_on_new_findings(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / "app.py").write_text(APP)
    baseline = tmp_path / "baseline.json"
    args = ["scan", "--baseline", str(baseline), str(src)]
    assert cli.main([*args, "--update-baseline"]) == 0
    assert json.loads(baseline.read_text())["counts"]["app.py"]["CEC105"] == 1
    capsys.readouterr()
    assert cli.main(args) == 0  # nothing new
    err = capsys.readouterr().err
    assert "No legacy uses beyond the baseline" in err and "(5 known)." in err
    # Lines move: still nothing new. A second jit is new.
    (src / "app.py").write_text("import os\n\n" + APP + "engine.jit(g, 'llvm')\n")
    assert cli.main([*args, "--format", "json"]) == 1
    captured = capsys.readouterr()
    new = json.loads(captured.out)
    assert [(d["line"], d["code"]) for d in new] == [(8, "CEC105")]
    # The tripped baseline names each new site: path:line, rule, api and count.
    assert "1 new legacy use beyond the baseline" in captured.err
    assert "  app.py:8 CEC105 compile_engine.CompileEngine.jit (1 use)" in captured.err
    # The text format lists the same site as a finding.
    assert cli.main(args) == 1
    assert "app.py:8:1: CEC105" in capsys.readouterr().out


@pytest.mark.parametrize(
    "content, message",
    [
        (None, "does not exist; create it with --update-baseline"),
        ("", "is not JSON"),
        ("[]", "is not a version-1 scan baseline"),
        ('{"version": 1, "counts": {"a.py": {"CEC101": "x"}}}', "is not a count"),
    ],
)
def test_a_bad_baseline_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str | None, message: str
) -> None:
    (tmp_path / "app.py").write_text(APP)
    baseline = tmp_path / "baseline.json"
    if content is not None:
        baseline.write_text(content)
    assert cli.main(["scan", "--baseline", str(baseline), str(tmp_path / "app.py")]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_every_format_carries_the_rule_id_and_docs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "app.py").write_text(APP)
    cli.main(["scan", str(tmp_path)])
    text = capsys.readouterr().out
    assert "app.py:3:1: CEC105 compile_engine.CompileEngine.jit [safe]" in text
    assert "(run `compile-engine-compat docs CEC105`)" in text
    cli.main(["scan", "--format", "sarif", str(tmp_path)])
    run = json.loads(capsys.readouterr().out)["runs"][0]
    rules = {rule["id"]: rule for rule in run["tool"]["driver"]["rules"]}
    # A link that opens the installed guide at the rule's section.
    help_uri = rules["CEC105"]["helpUri"]
    assert help_uri.startswith("file:///") and help_uri.endswith(
        "/MIGRATION.md#compile-engine-compileengine-jit"
    )
    assert Path(urllib.parse.urlparse(help_uri).path).is_file()
    assert rules["CEC105"]["name"] == "compile_engine.CompileEngine.jit"
    assert {r["ruleId"] for r in run["results"]} == set(rules)
    cli.main(["scan", "--format", "github", str(tmp_path)])
    lines = capsys.readouterr().out.splitlines()
    assert any("title=CEC105 legacy compile_engine.CompileEngine.jit" in line for line in lines)
    assert all("compile-engine-compat docs CEC" in line for line in lines)
