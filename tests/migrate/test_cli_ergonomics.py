"""scan/fix ergonomics: statistics, exit codes, version, colour, noqa, progress, the cache, and
file names that cannot reach the output raw."""

from __future__ import annotations

import json
import re
import textwrap

import pytest

from compile_engine_compat import cli
from compile_engine_compat.migrate import fix as fix_module
from compile_engine_compat.migrate import scan as scan_module
from compile_engine_compat.migrate.noqa import Noqa, add_noqa
from compile_engine_compat.version import __version__

APP = textwrap.dedent(
    """\
    from tvm.relay.backend import compile_engine as ce
    engine = ce.get()
    engine.jit(f, t)
    engine.clear()
    """
)


@pytest.fixture
def app(tmp_path):
    (tmp_path / "app.py").write_text(APP)
    return tmp_path


def test_statistics_count_per_rule(app, capsys):
    assert cli.main(["scan", "--isolated", "--statistics", str(app)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert [line.split("\t")[1] for line in out] == ["CEC101", "CEC102", "CEC105", "CEC106"]
    assert out[0] == "1\tCEC101\tcompile_engine\t[safe]"
    cli.main(["scan", "--isolated", "--statistics", "--format", "json", str(app)])
    rows = json.loads(capsys.readouterr().out)
    assert rows[0] == {"code": "CEC101", "name": "compile_engine", "count": 1, "fix": "safe"}


def test_exit_zero_and_version(app, capsys):
    assert cli.main(["scan", "--isolated", "--exit-zero", str(app)]) == 0
    capsys.readouterr()
    for argv in (["--version"], ["scan", "--version"], ["fix", "--version"]):
        with pytest.raises(SystemExit) if argv[0] != "--version" else _nothing():
            assert cli.main(argv) == 0
        assert capsys.readouterr().out.strip() == f"compile-engine-compat {__version__}"


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_colour_only_on_a_terminal_and_never_with_no_color(app, capsys, monkeypatch):
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    cli.main(["scan", "--isolated", str(app)])
    assert "\x1b[" not in capsys.readouterr().out  # captured: not a tty
    monkeypatch.setenv("FORCE_COLOR", "1")
    cli.main(["scan", "--isolated", str(app)])
    assert "\x1b[31mCEC101\x1b[0m" in capsys.readouterr().out
    monkeypatch.delenv("FORCE_COLOR")
    monkeypatch.setattr("sys.stdout.isatty", lambda: True, raising=False)
    monkeypatch.setenv("NO_COLOR", "1")
    cli.main(["scan", "--isolated", str(app)])
    assert "\x1b[" not in capsys.readouterr().out


def test_add_noqa_makes_the_scan_pass_and_fix_leave_those_lines(app, capsys):
    code = APP + 'K = """\n  text\n"""; C = {"tir.noalias": 1}\nx = \\\n    ce.get()\n'
    (app / "app.py").write_text(code)
    assert cli.main(["scan", "--isolated", "--add-noqa", str(app)]) == 0
    assert "Added 6 noqa directives to 1 file." in capsys.readouterr().out
    new = (app / "app.py").read_text()
    assert "from tvm.relay.backend import compile_engine as ce  # noqa: CEC101\n" in new
    assert "engine.jit(f, t)  # noqa: CEC105\n" in new
    assert '"""; C = {"tir.noalias": 1}  # noqa: CEC615\n' in new
    # A finding on a continued line: the comment goes where the logical line ends.
    assert "x = \\\n    ce.get()  # noqa: CEC102\n" in new
    assert cli.main(["scan", "--isolated", str(app)]) == 0
    assert cli.main(["fix", "--isolated", str(app)]) == 0
    assert (app / "app.py").read_text() == new  # fix rewrites nothing a noqa covers
    # A second run adds nothing; a new rule on a noqa line extends its list.
    assert cli.main(["scan", "--isolated", "--add-noqa", str(app)]) == 0
    assert "Added 0 noqa directives to 0 files." in capsys.readouterr().out
    merged, added = add_noqa("ce.get().clear()  # noqa: CEC102\n", {1: {"CEC106"}})
    assert (merged, added) == ("ce.get().clear()  # noqa: CEC102, CEC106\n", 1)


def test_noqa_for_one_rule_leaves_the_others_to_fix(tmp_path):
    code = "from tvm.relay.backend import compile_engine  # noqa: CEC101\nimport tvm\n"
    code += "tvm.relay.backend.compile_engine.get()\n"
    (tmp_path / "a.py").write_text(code)
    assert cli.main(["fix", "--isolated", str(tmp_path)]) == 0
    after = (tmp_path / "a.py").read_text()
    assert after.startswith("from tvm.relay.backend import compile_engine  # noqa: CEC101\n")
    assert "compile_engine_compat.compile_engine.get()" in after


def test_noqa_target_lines():
    noqa = Noqa('s = """\nx\n"""  # noqa: CEC615\ny = 1 + \\\n    2  # noqa\n')
    assert noqa.target(1) == 3 and noqa.target(2) == 3 and noqa.target(4) == 5
    assert noqa.covers(1, "CEC615") and not noqa.covers(1, "CEC101") and noqa.covers(4, "CEC1")


def test_fix_exit_non_zero_on_fix_and_selection(app, capsys):
    args = ["fix", "--isolated", "--exit-non-zero-on-fix", str(app)]
    assert cli.main([*args, "--ignore", "CEC1"]) == 0  # nothing selected: nothing changed
    assert (app / "app.py").read_text() == APP
    assert cli.main(args) == 1
    assert "compile_engine_compat" in (app / "app.py").read_text()
    assert cli.main(args) == 0  # nothing left to change


def test_fix_shows_progress_on_a_large_tree(tmp_path, capsys, monkeypatch):
    for index in range(12):
        (tmp_path / f"m{index}.py").write_text(APP if index % 3 == 0 else "x = 1\n")
    monkeypatch.setattr(fix_module, "PROGRESS_MIN_FILES", 10)
    assert cli.main(["fix", "--isolated", "--diff", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert "fix: 1/12 files" in err and "fix: 12/12 files" in err
    monkeypatch.setattr(fix_module, "PROGRESS_MIN_FILES", 13)
    cli.main(["fix", "--isolated", "--diff", str(tmp_path)])
    assert "fix: " not in capsys.readouterr().err


def test_the_cache_serves_a_second_run_and_not_a_changed_file(app, monkeypatch, capsys):
    cache = app / "cache"
    args = ["scan", "--isolated", "--cache-dir", str(cache), "--format", "json", str(app)]
    assert cli.main(args) == 1
    first = capsys.readouterr().out
    assert (cache / "CACHEDIR.TAG").is_file() and (cache / ".gitignore").read_text().endswith("*\n")
    calls = []
    real = scan_module.scan_source

    def counted(*args, **kwargs):
        calls.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(scan_module, "scan_source", counted)
    assert cli.main(args) == 1
    assert capsys.readouterr().out == first and calls == []  # served from the cache
    # fix scans through the same cache: it parses only to rewrite.
    assert cli.main(["fix", "--isolated", "--cache-dir", str(cache), "--diff", str(app)]) == 1
    assert calls == []
    capsys.readouterr()
    (app / "app.py").write_text(APP + "engine.lower(f, t)\n")
    assert cli.main(args) == 1
    assert len(calls) == 1 and "CEC104" in capsys.readouterr().out
    assert cli.main([*args, "--no-cache"]) == 1
    assert len(calls) == 2


def test_a_cached_result_that_depended_on_a_module_existing_is_checked(tmp_path):
    from compile_engine_compat.migrate.config import Configs

    for folder in ("proj", "proj/sub"):
        (tmp_path / folder).mkdir(parents=True, exist_ok=True)
        (tmp_path / folder / "__init__.py").write_text("")
    (tmp_path / "proj/sub/m.py").write_text(
        "from ..backend import compile_engine\ncompile_engine.get()\n"
    )
    configs = Configs({"cache_dir": tmp_path / "cache"}, isolated=True)
    first = scan_module.run_scan([str(tmp_path / "proj")], configs, use_cache=True)
    assert {f.code for f in first.findings} == {"CEC101", "CEC102"}
    # The project now has its own backend/compile_engine.py: not TVM's any more.
    (tmp_path / "proj/backend").mkdir()
    (tmp_path / "proj/backend/__init__.py").write_text("")
    (tmp_path / "proj/backend/compile_engine.py").write_text("def get():\n    pass\n")
    again = scan_module.run_scan([str(tmp_path / "proj")], configs, use_cache=True)
    assert again.findings == []


# -- hostile file names ------------------------------------------------------------------------

HOSTILE = "x\n::error title=INJECTED::pwned\x1b[31m.py"


def _no_raw_control(text: str) -> bool:
    return not re.search(r"[\x00-\x08\x0b-\x1f\x7f]", text) and "\n::error" not in text


@pytest.mark.parametrize("fmt", ["text", "json", "sarif", "github"])
def test_a_newline_file_name_prints_escaped_in_every_format(tmp_path, capsys, fmt):
    (tmp_path / HOSTILE).write_text(APP)
    (tmp_path / "undecodable\udcff.py").write_text("def (:\n")  # skipped: its name shows too
    assert cli.main(["scan", "--isolated", "--format", fmt, str(tmp_path)]) == 1
    captured = capsys.readouterr()
    for stream in (captured.out, captured.err):
        assert _no_raw_control(stream), stream
    assert "::error title=INJECTED" not in captured.out.replace("\\n::error", "")
    cli.main(["scan", "--isolated", "--statistics", "--format", fmt, str(tmp_path)])
    assert all(_no_raw_control(stream) for stream in capsys.readouterr())


def test_fix_and_baseline_reports_escape_file_names(tmp_path, capsys):
    (tmp_path / HOSTILE).write_text(APP)
    baseline = tmp_path / "b.json"
    cli.main(["fix", "--isolated", "--diff", str(tmp_path)])
    assert all(_no_raw_control(stream) for stream in capsys.readouterr())
    cli.main(
        ["scan", "--isolated", "--baseline", str(baseline), "--update-baseline", str(tmp_path)]
    )
    baseline.write_text(json.dumps({"version": 1, "counts": {}}))
    assert cli.main(["scan", "--isolated", "--baseline", str(baseline), str(tmp_path)]) == 1
    captured = capsys.readouterr()
    assert "x\\n::error title=INJECTED::pwned\\x1b[31m.py:2 CEC102" in captured.err
    assert all(_no_raw_control(stream) for stream in (captured.out, captured.err))
