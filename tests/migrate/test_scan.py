"""The static scanner: every import and call form, exactness, formats, notebooks, exit codes."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from compile_engine_compat import cli
from compile_engine_compat.migrate.scan import scan_paths

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "scan"
_EXPECT = re.compile(r"# expect: (.*)$")
_ITEM = re.compile(r"([\w.]+)\[(safe|unsafe|manual)\]")


def _expected_py(path: Path) -> Counter:
    expected: Counter = Counter()
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        match = _EXPECT.search(line)
        if match:
            for api, fix in _ITEM.findall(match.group(1)):
                expected[(None, number, api, fix)] += 1
    return expected


def _expected_notebook(path: Path) -> Counter:
    expected: Counter = Counter()
    for index, cell in enumerate(json.loads(path.read_text())["cells"]):
        if cell["cell_type"] != "code":
            continue
        for number, line in enumerate("".join(cell["source"]).split("\n"), start=1):
            match = _EXPECT.search(line)
            if match:
                for api, fix in _ITEM.findall(match.group(1)):
                    expected[(index, number, api, fix)] += 1
    return expected


def _found(path: Path) -> Counter:
    findings, errors = scan_paths([str(path)])
    assert errors == []
    return Counter((f.cell, f.line, f.api, f.fix) for f in findings)


@pytest.mark.parametrize(
    "name", sorted(p.name for p in FIXTURES.iterdir() if p.suffix in (".py", ".ipynb"))
)
def test_fixture_findings_match_expect_comments(name):
    path = FIXTURES / name
    expected = _expected_notebook(path) if path.suffix == ".ipynb" else _expected_py(path)
    assert _found(path) == expected


def test_negative_and_guarded_fixtures_really_are_empty():
    # The parametrized test would pass vacuously if a fixture lost its content.
    for name in ("negatives.py", "guarded.py"):
        source = (FIXTURES / name).read_text()
        assert "compile_engine" in source and "relay.backend" in source
        assert _found(FIXTURES / name) == Counter()


def test_every_fixture_form_is_covered():
    apis = {f.api for f in scan_paths([str(FIXTURES)])[0]}
    for required in (
        "compile_engine",
        "te_compiler",
        "compile_engine.get",
        "compile_engine.CompileEngine.jit",
        "te_compiler.TECompiler.jit",
        "relay.backend._CompileEngineGlobal",
        "relay.backend.use_auto_scheduler",
        "relay.backend.disable_compile_engine_cache",
    ):
        assert required in apis


def test_columns_are_one_based_and_point_at_the_name():
    findings, _ = scan_paths([str(FIXTURES / "import_as.py")])
    first = findings[0]
    assert (first.line, first.col, first.api) == (1, 8, "compile_engine")  # "import " is 7 chars
    call = next(f for f in findings if f.api == "compile_engine.CCacheKey")
    line = (FIXTURES / "import_as.py").read_text().splitlines()[call.line - 1]
    assert line[call.col - 1 :].startswith("ce.CCacheKey")


def test_json_output_schema_and_relative_paths(tmp_path, capsys):
    code = cli.main(["scan", "--format", "json", str(FIXTURES)])
    assert code == 1
    data = json.loads(capsys.readouterr().out)
    assert data and all(
        set(d)
        in (
            {"path", "line", "col", "code", "api", "replacement", "fix", "url", "hint"},
            {"path", "line", "col", "code", "api", "replacement", "fix", "url", "hint", "cell"},
        )
        for d in data
    )
    assert {d["path"] for d in data} >= {"import_as.py", "relay_chain.py", "notebook.ipynb"}
    assert {d["fix"] for d in data} == {"safe", "manual"}
    assert all(d["replacement"] for d in data)


def test_exit_codes(tmp_path, capsys):
    clean = tmp_path / "clean"
    clean.mkdir()
    shutil.copy(FIXTURES / "negatives.py", clean)
    assert cli.main(["scan", str(clean)]) == 0
    (clean / "broken.py").write_text("def (: compile_engine\n")
    # ruff's convention: a file that cannot be parsed is reported and skipped, not exit 2; one
    # that may hold legacy code is not known to be clean: exit 1, unless it is excluded.
    assert cli.main(["scan", str(clean)]) == 1
    assert "broken.py: skipped: failed to parse" in capsys.readouterr().out
    assert cli.main(["scan", "--extend-exclude", "broken.py", str(clean)]) == 0
    assert cli.main(["scan", str(tmp_path / "missing")]) == 2  # a usage error


def test_sarif_and_github_formats(tmp_path, capsys):
    out = tmp_path / "scan.sarif"
    assert cli.main(["scan", "--format", "sarif", "-o", str(out), str(FIXTURES)]) == 1
    sarif = json.loads(out.read_text())
    run = sarif["runs"][0]
    assert sarif["version"] == "2.1.0"
    rules = [rule["id"] for rule in run["tool"]["driver"]["rules"]]
    for result in run["results"]:
        assert rules[result["ruleIndex"]] == result["ruleId"]
        region = result["locations"][0]["physicalLocation"]["region"]
        assert region["startLine"] >= 1 and region["startColumn"] >= 1
    capsys.readouterr()
    assert cli.main(["scan", "--format", "github", str(FIXTURES / "pass_config.py")]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2
    assert lines[0].startswith("::warning file=") and ",line=3,col=11," in lines[0]


def test_text_format_summary(capsys):
    assert cli.main(["scan", str(FIXTURES / "global_funcs.py")]) == 1
    out = capsys.readouterr().out
    assert "global_funcs.py:6:34: CEC303 relay.backend._CompileEngineGlobal [manual]" in out
    assert "see MIGRATION.md#relay-backend--compileengineglobal" in out
    assert "(run `compile-engine-compat docs CEC303`)" in out
    assert "Found 3 legacy uses in 1 file (0 safe, 0 unsafe, 3 manual)." in out


def test_include_shim_lists_what_still_goes_through_the_shim(tmp_path):
    code = (
        "from compile_engine_compat import compile_engine\n"
        "engine = compile_engine.get()\n"
        "engine.clear()\n"
        "shape = compile_engine.get_shape(s)\n"
    )
    (tmp_path / "app.py").write_text(code)
    assert scan_paths([str(tmp_path)]) == ([], [])
    findings, _ = scan_paths([str(tmp_path)], include_shim=True)
    assert [(f.line, f.api, f.fix) for f in findings] == [
        (2, "compile_engine.get", "manual"),
        (3, "compile_engine.CompileEngine.clear", "unsafe"),
        (4, "compile_engine.get_shape", "unsafe"),
    ]


def _full_parse_findings(path: Path) -> Counter:
    """What the scanner found before the pre-filter: libcst on the whole file."""
    import libcst as cst
    import libcst.metadata as md

    from compile_engine_compat.migrate.legacy_uses import find_uses
    from compile_engine_compat.migrate.sources import read_source

    source = read_source(path, path.name)
    uses = find_uses(md.MetadataWrapper(cst.parse_module(source.code)))
    return Counter(
        (source.locate(u.line)[1], source.locate(u.line)[0], u.col, u.row.name)
        for u in uses
        if not u.guarded and u.origin == "legacy"
    )


@pytest.mark.parametrize(
    "name", sorted(p.name for p in FIXTURES.iterdir() if p.suffix in (".py", ".ipynb"))
)
def test_the_prefilter_finds_exactly_what_a_full_parse_finds(name):
    findings, _ = scan_paths([str(FIXTURES / name)])
    assert Counter((f.cell, f.line, f.col, f.api) for f in findings) == _full_parse_findings(
        FIXTURES / name
    )


def test_relevant_code_drops_what_cannot_matter_and_keeps_lines():
    from compile_engine_compat.migrate.relevant_code import relevant_code

    assert relevant_code("import numpy as np\nx = np.zeros(3)\n") is None
    code = (
        "import numpy as np\n"
        "from tvm.relay.backend.compile_engine import get\n"
        "def unrelated():\n"
        "    return np.zeros(3)\n"
        "class Runner:\n"
        "    def __init__(self):\n"
        "        self.engine = get()\n"
        "    def other(self):\n"
        "        return 1\n"
        "    def check(self, engine):\n"
        "        return 2\n"
        "    def run(self, f):\n"
        "        return self.engine.jit(f)\n"
    )
    relevant = relevant_code(code)
    assert relevant is not None
    assert "unrelated" not in relevant.code and "return 1" not in relevant.code
    kept = relevant.code.splitlines()
    assert kept[-1] == "        return self.engine.jit(f)"
    assert relevant.original_line(len(kept)) == 13
    assert "    def other(self):" not in kept
    # The header names an alias, the body does not: the block keeps one ``pass``.
    assert "    def check(self, engine):" in kept and "        pass" in kept


def test_legacy_words_cover_every_row():
    from compile_engine_compat.api_table import API_TABLE, legacy_words, string_rows
    from compile_engine_compat.migrate.relay_uses import ROOTS, spells_relay_word

    words = legacy_words()
    for row in API_TABLE.values():
        if row.name == "target.cli_string":
            continue  # a value the engine translates at run time: no name to spell statically
        spelled = [*row.old_paths, row.shim, row.name]
        if row.fix == "served" or row.name == "relay.unsupported":  # the Relay-era finder's
            assert any(spells_relay_word(path) for path in row.old_paths), row.name
            assert any(path.startswith(tuple(ROOTS)) for path in row.old_paths) or (
                # the device aliases TVM 0.19 kept at the top level (tvm.gpu is tvm.cuda)
                row.name in ("tvm.context", "tvm.device", "tvm.gpu", "tvm.cl", "tvm.mtl")
            )
            continue
        assert any(word in text for text in spelled for word in words), row.name
    for key in string_rows():
        assert any(word in key for word in words)


RECALL = Path(__file__).resolve().parents[1] / "fixtures" / "scan_recall"


def test_recall_relative_imports_attribute_aliases_and_importlib():
    """Each file reproduces a site the scanner used to miss (issue 15, "Recall")."""
    findings, skipped = scan_paths([str(RECALL)])
    assert skipped == []
    found = Counter((f.path, f.line, f.api, f.fix) for f in findings)
    expected: Counter = Counter()
    for path in sorted(RECALL.rglob("*.py")):
        display = path.relative_to(RECALL).as_posix()
        for (_, line, api, fix), count in _expected_py(path).items():
            expected[(display, line, api, fix)] += count
    assert found == expected
    # The real v0.7.0 lines: the call's line, not the alias's.
    assert ("python/tvm/relay/transform/memory_alloc.py", 14) in {
        (f.path, f.line) for f in findings
    }
    jit = [f for f in findings if f.api == "compile_engine.CompileEngine.jit"]
    assert ("python/tvm/relay/testing/py_converter.py", 17) in {(f.path, f.line) for f in jit}


def test_fix_handles_relative_imports_and_leaves_dynamic_uses_to_a_person(tmp_path):
    tree = tmp_path / "tree"
    shutil.copytree(RECALL, tree)
    assert cli.main(["fix", str(tree)]) == 0
    alloc = (tree / "python/tvm/relay/transform/memory_alloc.py").read_text()
    assert "from compile_engine_compat import compile_engine  # expect" in alloc
    assert "from .. import op" in alloc
    sibling = (tree / "python/tvm/relay/backend/sibling.py").read_text()
    assert "from compile_engine_compat import compile_engine  # expect" in sibling
    findings, _ = scan_paths([str(tree)])
    assert {f.fix for f in findings} == {"manual"}
    assert {f.path for f in findings} == {"app/dynamic.py", "python/tvm/relay/backend/sibling.py"}


_PARALLEL_AGAINST_SEQUENTIAL = """
import json, sys
from compile_engine_compat.migrate import scan

workers = scan.workers_for(241)
parallel = scan.scan_paths([sys.argv[1]])
scan.workers_for = lambda files: 1
sequential = scan.scan_paths([sys.argv[1]])
print(json.dumps({
    "workers": workers,
    "same": parallel == sequential,
    "findings": len(parallel[0]),
    "unparsed": [s.path for s in parallel[1]],
}))
"""


def test_a_large_tree_is_scanned_in_parallel_with_the_sequential_result(tmp_path):
    # In a fresh process: the scanner never forks one that runs other threads (this test
    # process has the remote cache tests' server threads), so only a fresh one shows the fork.
    for index in range(240):
        body = "x = 1\n" if index % 7 else (FIXTURES / "import_as.py").read_text()
        if index % 11 == 0:
            body += 'CONFIG = {"tir.noalias": True}\n'
        (tmp_path / f"m{index:03d}.py").write_text(body)
    (tmp_path / "broken.py").write_text("from tvm.relay.backend import compile_engine (((\n")
    environment = {k: v for k, v in os.environ.items() if k != "COMPILE_ENGINE_COMPAT_JOBS"}
    done = subprocess.run(
        [sys.executable, "-c", _PARALLEL_AGAINST_SEQUENTIAL, str(tmp_path)],
        capture_output=True,
        text=True,
        env=environment,
        timeout=120,
        check=True,
    )
    result = json.loads(done.stdout)
    assert result["workers"] > 1 or len(os.sched_getaffinity(0)) < 2
    assert result["same"]
    assert result["findings"] > 40 and result["unparsed"] == ["broken.py"]
