"""The pytest report plugin, run in-process with pytester against the real shim."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

# The inner runs import the shim (and with it TVM, NumPy and torch); pytester then drops every
# module imported during a run from sys.modules, and a C extension imported a second time in one
# process crashes it. Imported here, outside the runs, they are imported once.
import compile_engine_compat.compile_engine  # noqa: F401
from compile_engine_compat.api_table import API_TABLE

pytest_plugins = ["pytester"]

# Legacy calls at known lines (makepyfile drops the leading newline): get() on line 6 (x3), in
# 4 threads x 25 on line 10, clear() on line 13.
LEGACY_TESTS = """
import threading
from compile_engine_compat import compile_engine


def test_calls():
    engines = [compile_engine.get() for _ in range(3)]

    def worker():
        for _ in range(25):
            compile_engine.get()
    threads = [threading.Thread(target=worker) for _ in range(4)]
    [t.start() for t in threads]; [t.join() for t in threads]
    engines[0].clear()
"""
CLEAN_TESTS = "def test_nothing():\n    assert True\n"


@pytest.fixture
def legacy(pytester):
    pytester.makepyfile(test_legacy=LEGACY_TESTS)
    return pytester


def _report(pytester, *args):
    result = pytester.runpytest("-p", "no:cacheprovider", *args)
    return result


def test_json_report_counts_are_exact(legacy):
    result = _report(legacy, "--compile-engine-report=report.json")
    assert result.ret == 0
    report = json.loads((legacy.path / "report.json").read_text())
    assert report["total_calls"] == 3 + 100 + 1
    sites = {(s["path"], s["line"], s["api"]): s for s in report["sites"]}
    assert {k: s["count"] for k, s in sites.items()} == {
        ("test_legacy.py", 10, "compile_engine.get"): 100,
        ("test_legacy.py", 6, "compile_engine.get"): 3,
        ("test_legacy.py", 13, "compile_engine.CompileEngine.clear"): 1,
    }
    site = sites[("test_legacy.py", 10, "compile_engine.get")]
    assert set(site) == {"path", "line", "code", "api", "count", "replacement", "url", "hint"}
    assert site["code"] == "CEC102"  # the rule id scan reports for the same API
    assert site["url"].startswith("file:///") and site["url"].endswith(
        "/MIGRATION.md#compile-engine-get"
    )
    assert site["hint"] == "run `compile-engine-compat docs CEC102`"
    assert report["sites"][0]["count"] == 100  # most-called first
    result.stdout.fnmatch_lines(
        [
            "104 legacy calls from 3 sites; top sites: "
            "test_legacy.py:10 CEC102 compile_engine.get (100), *"
        ]
    )


def test_markdown_and_github_formats(legacy):
    _report(legacy, "--compile-engine-report=r.md", "--compile-engine-report-format=markdown")
    markdown = (legacy.path / "r.md").read_text()
    assert "**104 legacy calls from 3 sites.**" in markdown
    url = API_TABLE["compile_engine.get"].url
    assert f"| `test_legacy.py:10` | [`CEC102`]({url}) | `compile_engine.get` | 100 |" in markdown
    result = _report(
        legacy, "--compile-engine-report=r.txt", "--compile-engine-report-format=github"
    )
    annotations = (legacy.path / "r.txt").read_text().splitlines()
    assert len(annotations) == 3
    assert annotations[0].startswith(
        "::warning file=test_legacy.py,line=10,title=CEC102 legacy compile_engine.get::"
        "compile_engine.get called 100 times: use "
    )
    result.stdout.fnmatch_lines(["::warning file=test_legacy.py,line=6,*"])


def test_junit_format(legacy):
    _report(legacy, "--compile-engine-report=r.xml", "--compile-engine-report-format=junit")
    root = ET.parse(legacy.path / "r.xml").getroot()
    cases = root.findall("./testsuite/testcase")
    assert len(cases) == 3 and root.get("tests") == "3"
    names = {case.get("name"): case for case in cases}
    failure = names["test_legacy.py:13"].find("failure")
    assert failure is not None and failure.get("message") == (
        "CEC106 compile_engine.CompileEngine.clear called 1 time"
    )
    assert names["test_legacy.py:13"].get("classname") == (
        "legacy.CEC106.compile_engine.CompileEngine.clear"
    )


def test_strict_fails_only_when_legacy_calls_happen(legacy):
    result = _report(legacy, "--compile-engine-strict")
    assert result.ret == 1
    result.stdout.fnmatch_lines(["FAILED --compile-engine-strict: 104 legacy calls happened"])
    result.assert_outcomes(passed=1)
    legacy.makepyfile(test_legacy=CLEAN_TESTS)
    assert _report(legacy, "--compile-engine-strict").ret == 0


def test_baseline_ratchet(legacy):
    baseline = legacy.path / "baseline.json"
    missing = _report(legacy, f"--compile-engine-baseline={baseline}")
    assert missing.ret == 1 and not baseline.exists()
    created = _report(
        legacy, f"--compile-engine-baseline={baseline}", "--compile-engine-update-baseline"
    )
    assert created.ret == 0 and json.loads(baseline.read_text())["total_calls"] == 104
    assert _report(legacy, f"--compile-engine-baseline={baseline}").ret == 0  # same counts

    grown = LEGACY_TESTS.replace("range(25)", "range(26)")
    legacy.makepyfile(test_legacy=grown)
    result = _report(
        legacy, f"--compile-engine-baseline={baseline}", "--compile-engine-update-baseline"
    )
    assert result.ret == 1
    result.stdout.fnmatch_lines(
        [
            "FAILED legacy calls grew past the baseline *: 108 calls*; 1 site grew:",
            "  test_legacy.py:10 CEC102 compile_engine.get (104 calls, baseline 100)",
        ]
    )
    assert json.loads(baseline.read_text())["total_calls"] == 104  # never grows

    fewer = LEGACY_TESTS.replace("range(25)", "range(5)").replace("engines[0].clear()", "")
    legacy.makepyfile(test_legacy=fewer)
    assert _report(legacy, f"--compile-engine-baseline={baseline}").ret == 0
    assert json.loads(baseline.read_text())["total_calls"] == 104  # only --update rewrites it
    result = _report(
        legacy, f"--compile-engine-baseline={baseline}", "--compile-engine-update-baseline"
    )
    assert result.ret == 0
    shrunk = json.loads(baseline.read_text())
    assert shrunk["total_calls"] == 23 and len(shrunk["sites"]) == 2
    result.stdout.fnmatch_lines(["baseline * shrunk to 23 legacy calls from 2 sites*"])


def test_no_summary_without_legacy_calls(pytester):
    pytester.makepyfile(test_clean=CLEAN_TESTS)
    result = _report(pytester)
    assert result.ret == 0
    assert "legacy calls" not in result.stdout.str()


def test_plugin_does_not_import_tvm():
    code = (
        "import sys, compile_engine_compat.pytest_plugin as p; "
        "assert hasattr(p, 'pytest_addoption'); assert 'tvm' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


# -- pytest-xdist: a crashed worker's calls are counted, and the report says it is incomplete ---

# --dist loadfile keeps each file on one worker, in order: test_dies.py's worker makes 40 + 5
# calls in two tests, then dies in a third; test_lives.py's worker makes 7 calls and finishes.
XDIST_DIES = """
import os
from compile_engine_compat.deprecations import warn_legacy


def test_forty():
    for _ in range(40):
        warn_legacy("compile_engine.get")


def test_five():
    for _ in range(5):
        warn_legacy("compile_engine.CompileEngine.clear")


def test_dies(request):
    # A foreign line in the worker's stream: the sum skips it and says so.
    stream = request.config.workerinput.get("compile_engine_compat_stream")
    if stream:
        with open(stream, "ab") as handle:
            handle.write(b"[not a record]\\n")
    os._exit(1)
"""
XDIST_LIVES = """
from compile_engine_compat.deprecations import warn_legacy


def test_seven():
    for _ in range(7):
        warn_legacy("compile_engine.get")
"""


def _xdist(pytester, *args):
    pytest.importorskip("xdist")
    return pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "-n", "2", "--dist", "loadfile", "--max-worker-restart=0",
        *args, timeout=120,
    )  # fmt: skip


def test_xdist_counts_the_calls_of_a_crashed_worker(pytester):
    pytester.makepyfile(test_dies=XDIST_DIES, test_lives=XDIST_LIVES)
    baseline = pytester.path / "baseline.json"
    baseline.write_text(json.dumps({"total_calls": 1000, "sites": [{}] * 10}))
    result = _xdist(
        pytester,
        "--compile-engine-report=report.json",
        "--compile-engine-strict",
        f"--compile-engine-baseline={baseline}",
        "--compile-engine-update-baseline",
    )
    report = json.loads((pytester.path / "report.json").read_text())
    assert report["total_calls"] == 40 + 5 + 7
    counts = {(s["path"], s["api"]): s["count"] for s in report["sites"]}
    assert counts == {
        ("test_dies.py", "compile_engine.get"): 40,
        ("test_dies.py", "compile_engine.CompileEngine.clear"): 5,
        ("test_lives.py", "compile_engine.get"): 7,
    }
    assert report["complete"] is False
    crashed, skipped = report["incomplete"]
    assert crashed.startswith("worker gw") and " crashed: " in crashed
    assert skipped == f"1 malformed lines in worker {crashed.split()[1]}'s counts"
    result.stdout.fnmatch_lines(
        [
            "52 legacy calls from 3 sites; *",
            "report incomplete: worker gw* crashed*; 1 malformed lines in worker gw*'s counts;"
            " the counts are a lower bound",
            "FAILED --compile-engine-strict: the report is incomplete, so calls may be missing",
            "FAILED baseline * not checked: the report is incomplete, so calls may be missing",
        ]
    )
    # fail closed: under the baseline, yet neither passed nor shrunk
    assert json.loads(baseline.read_text())["total_calls"] == 1000
    assert result.ret == 1


def test_xdist_complete_run_counts_exactly(pytester):
    pytester.makepyfile(test_lives=XDIST_LIVES, test_more=XDIST_LIVES.replace("7", "3"))
    result = _xdist(pytester, "--compile-engine-report=report.json")
    report = json.loads((pytester.path / "report.json").read_text())
    assert report["total_calls"] == 10 and report["complete"] is True
    assert "incomplete" not in report
    assert result.ret == 0
    assert "report incomplete" not in result.stdout.str()


def test_xdist_workers_lost_after_their_tests_fail_the_baseline_closed(pytester):
    """Workers lost at their session end fail no test; only the report can notice.

    gw0 dies in its session end; gw1 finishes but its tally never reaches the controller (a
    later hook drops it). Both streamed every test phase, so no call is missing, yet the
    report cannot know that: it says incomplete, and the baseline check fails closed.
    """
    pytester.makepyfile(test_lives=XDIST_LIVES, test_more=XDIST_LIVES.replace("7", "3"))
    pytester.makeconftest(
        """
        import os
        import pytest

        @pytest.hookimpl(trylast=True)
        def pytest_sessionfinish(session):
            worker = getattr(session.config, "workerinput", {}).get("workerid")
            if worker == "gw0":
                os._exit(0)
            if worker == "gw1":
                session.config.workeroutput.pop("compile_engine_compat_ledger", None)
        """
    )
    baseline = pytester.path / "baseline.json"
    baseline.write_text(json.dumps({"total_calls": 10, "sites": [{}, {}]}))
    result = _xdist(
        pytester, f"--compile-engine-baseline={baseline}", "--compile-engine-report=r.json"
    )
    report = json.loads((pytester.path / "r.json").read_text())
    assert report["total_calls"] == 10 and report["complete"] is False
    reasons = sorted(report["incomplete"])
    assert len(reasons) == 2, reasons
    assert reasons[0].startswith("worker gw0 crashed: ")
    assert reasons[1] == "worker gw1 sent no final tally"
    result.stdout.fnmatch_lines(
        [
            "10 legacy calls from 2 sites; *",
            "report incomplete: worker gw* the counts are a lower bound",
            "FAILED baseline * not checked: the report is incomplete, so calls may be missing",
        ]
    )
    result.assert_outcomes(passed=2)
    assert result.ret == 1


# -- report and baseline paths are checked up front: one usage-error line each ------------------

_BAD_BASELINES = {
    "invalid JSON": (b"{not json", "not valid JSON: Expecting property name *line 1 column 2"),
    "empty": (b"", "the file is empty; create it with --compile-engine-update-baseline"),
    "blank": (b"  \n", "the file is empty; *"),
    "not UTF-8": (b'{"total_calls": 1, "sites": ["\xff"]}', "not UTF-8 text (byte 30)"),
    "a JSON array": (b"[]", 'expected a JSON object {"total_calls": *, got a JSON array'),
    "null": (b"null", "expected a JSON object *, got a JSON null"),
    "no sites": (b'{"total_calls": 3}', "expected a JSON object *; sites is missing"),
    "string total": (b'{"total_calls": "3", "sites": []}', "*; total_calls is '3'"),
    "boolean total": (b'{"total_calls": true, "sites": []}', "*; total_calls is True"),
    "negative total": (b'{"total_calls": -1, "sites": []}', "*; total_calls is -1"),
    "sites not objects": (b'{"total_calls": 1, "sites": [1]}', "*; sites is [[]1]"),
}


def _usage_error(result, line):
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    errors = [text for text in result.stderr.lines if text.strip()]
    assert len(errors) == 1, result.stderr.lines
    assert "Traceback" not in result.stdout.str() + result.stderr.str()
    result.stderr.fnmatch_lines([f"ERROR: {line}"])


@pytest.mark.parametrize("case", list(_BAD_BASELINES))
def test_a_bad_baseline_is_one_usage_error_line(pytester, case):
    content, reason = _BAD_BASELINES[case]
    pytester.makepyfile(test_clean=CLEAN_TESTS)
    (pytester.path / "base.json").write_bytes(content)
    result = _report(pytester, "--compile-engine-baseline=base.json")
    _usage_error(result, f"--compile-engine-baseline=base.json: {reason}")
    assert (pytester.path / "base.json").read_bytes() == content


def test_bad_report_and_baseline_paths_are_one_usage_error_line(pytester):
    pytester.makepyfile(test_clean=CLEAN_TESTS)
    result = _report(pytester, "--compile-engine-report=/nonexistent/r.json")
    _usage_error(
        result, "--compile-engine-report=/nonexistent/r.json: directory /nonexistent does not exist"
    )
    result = _report(pytester, f"--compile-engine-report={pytester.path}")
    _usage_error(result, f"--compile-engine-report={pytester.path}: is a directory")
    result = _report(pytester, f"--compile-engine-baseline={pytester.path}")
    _usage_error(result, f"--compile-engine-baseline={pytester.path}: not a regular file*")
    missing = "--compile-engine-baseline=/nonexistent/b.json"
    result = _report(pytester, missing, "--compile-engine-update-baseline")
    _usage_error(result, f"{missing}: directory /nonexistent does not exist")
    result = _report(pytester, "--compile-engine-update-baseline")
    _usage_error(result, "--compile-engine-update-baseline needs --compile-engine-baseline=FILE")


def test_a_fifo_baseline_is_refused_not_waited_on(pytester):
    pytester.makepyfile(test_clean=CLEAN_TESTS)
    os.mkfifo(pytester.path / "base.json")
    result = pytester.runpytest_subprocess("--compile-engine-baseline=base.json", timeout=60)
    _usage_error(result, "--compile-engine-baseline=base.json: not a regular file (a FIFO)")


# -- hostile file names: one annotation per site, well-formed XML --------------------------------

# Legacy calls attributed to hostile file names, as code compiled from such files is.
HOSTILE_NAMES = {
    "injected": "x\n::error title=INJECTED::pwned\n.py",
    "spoofed": "a,line=999::fake.py",
    "control": "ctl\x01\x08\x0b\x0c\x1b[31m\x7f\r.py",
    "undecodable": "bytes\udcff\udcfe.py",  # a non-UTF-8 file name, as os.fsdecode gives it
}
HOSTILE_TESTS = f"""
from compile_engine_compat.deprecations import warn_legacy

NAMES = {list(HOSTILE_NAMES.values())!r}


def test_hostile():
    for name in [NAMES[0], NAMES[2], *NAMES]:  # most-called, so the terminal shows them
        exec(compile('warn_legacy("compile_engine.get")', name, "exec"))
"""


def test_github_annotations_cannot_be_injected_or_spoofed(pytester):
    pytester.makepyfile(test_hostile=HOSTILE_TESTS)
    fmt = "--compile-engine-report-format=github"
    result = _report(pytester, "--compile-engine-report=r.txt", fmt)
    assert result.ret == 0
    # The runner splits its output at CR and LF only (str.splitlines would also split at \x0b).
    lines = (pytester.path / "r.txt").read_text(encoding="utf-8").rstrip("\n").split("\n")
    assert len(lines) == len(HOSTILE_NAMES)  # a newline in a name starts no second command
    assert not any("\r" in line for line in lines)
    assert all(line.startswith("::warning file=") for line in lines)
    assert all(line.count("::") == 2 for line in lines)  # no property ends early
    assert all(",line=1,title=" in line and ",line=999" not in line for line in lines)
    by_name = {line.split(",line=")[0]: line for line in lines}
    assert "::warning file=x%0A%3A%3Aerror title=INJECTED%3A%3Apwned%0A.py" in by_name
    assert "::warning file=a%2Cline=999%3A%3Afake.py" in by_name
    # The terminal shows the same annotations, and nothing a runner would read as a command.
    printed = [line for line in result.stdout.lines if line.startswith("::")]
    assert len(printed) == len(HOSTILE_NAMES)
    assert all(line.startswith("::warning file=") for line in printed)
    result.stdout.fnmatch_lines(
        [
            "6 legacy calls from 4 sites; top sites: "
            "ctl\\x01\\x08\\x0b\\x0c\\x1b[[]31m\\x7f\\r.py:1 *, "
            "x\\n::error title=INJECTED::pwned\\n.py:1 *"
        ]
    )
    (summary,) = [line for line in result.stdout.lines if line.startswith("6 legacy calls")]
    assert summary.isprintable()  # nor can a name colour or rewrite the log


def test_junit_stays_well_formed_with_hostile_names(pytester):
    pytester.makepyfile(test_hostile=HOSTILE_TESTS)
    fmt = "--compile-engine-report-format=junit"
    assert _report(pytester, "--compile-engine-report=r.xml", fmt).ret == 0
    root = ET.parse(pytester.path / "r.xml").getroot()  # raises on a forbidden character
    names = sorted(case.attrib["name"] for case in root.iter("testcase"))
    assert names == sorted(
        [
            "x\n::error title=INJECTED::pwned\n.py:1",
            "a,line=999::fake.py:1",
            "ctl#x01#x08#x0B#x0C#x1B[31m\x7f\r.py:1",
            "bytes\\xff\\xfe.py:1",
        ]
    )


def test_json_and_markdown_hold_hostile_names(pytester):
    pytester.makepyfile(test_hostile=HOSTILE_TESTS)
    assert _report(pytester, "--compile-engine-report=r.json").ret == 0
    report = json.loads((pytester.path / "r.json").read_text(encoding="utf-8"))
    assert sorted(s["path"] for s in report["sites"]) == sorted(
        [*list(HOSTILE_NAMES.values())[:3], "bytes\\xff\\xfe.py"]
    )
    fmt = "--compile-engine-report-format=markdown"
    assert _report(pytester, "--compile-engine-report=r.md", fmt).ret == 0
    rows = (pytester.path / "r.md").read_text(encoding="utf-8").split("\n")
    assert sum(row.startswith("| `") for row in rows) == len(HOSTILE_NAMES)  # a row per site


def test_a_report_that_cannot_be_written_at_the_end_is_one_failure_line(pytester):
    out = pytester.mkdir("out")
    pytester.makepyfile(
        test_gone=f"import shutil\n\ndef test_removes_the_report_dir():\n"
        f"    shutil.rmtree({str(out)!r})\n"
    )
    result = _report(pytester, "--compile-engine-report=out/r.json")
    assert result.ret == 1
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["FAILED could not write the report */out/r.json: No such file*"])
    assert "Traceback" not in result.stdout.str() + result.stderr.str()


def test_a_report_fifo_nobody_reads_is_a_failure_not_a_hang(pytester):
    pytester.makepyfile(test_clean=CLEAN_TESTS)
    os.mkfifo(pytester.path / "r.json")
    result = pytester.runpytest_subprocess("--compile-engine-report=r.json", timeout=60)
    assert result.ret == 1
    result.stdout.fnmatch_lines(
        ["FAILED could not write the report *r.json: a FIFO with no reader"]
    )


# -- settings from pyproject.toml --------------------------------------------------------------

SECTION = """
[tool.compile-engine-compat]
ignore = ["CEC106"]
per-file-ignores = {"test_other.py" = ["CEC1"]}

[tool.compile-engine-compat.pytest]
report = "legacy.json"
report-format = "json"
strict = true
"""
OTHER_TESTS = (
    "from compile_engine_compat import compile_engine\n\n"
    "def test_other():\n    compile_engine.get()\n"
)


def test_the_pyproject_section_gives_what_the_flags_give(legacy):
    legacy.makepyfile(test_other=OTHER_TESTS)
    flags = _report(legacy, "--compile-engine-report=flags.json", "--compile-engine-strict")
    assert flags.ret == 1
    flagged = json.loads((legacy.path / "flags.json").read_text())
    legacy.makefile(".toml", pyproject=SECTION)
    configured = _report(legacy)
    assert configured.ret == 1  # strict, from the section
    configured.stdout.fnmatch_lines(["FAILED --compile-engine-strict: 103 legacy calls happened"])
    report = json.loads((legacy.path / "legacy.json").read_text())
    # The flags run counted everything; the section drops CEC106 and test_other.py's CEC1xx.
    kept = [
        site
        for site in flagged["sites"]
        if site["code"] != "CEC106" and site["path"] != "test_other.py"
    ]
    assert report["sites"] == kept and report["total_calls"] == 103
    # A flag still overrides the section's default.
    _report(legacy, "--compile-engine-report=md.md", "--compile-engine-report-format=markdown")
    assert (legacy.path / "md.md").read_text().startswith("# Legacy compile_engine calls")


def test_a_bad_section_is_a_usage_error(legacy):
    legacy.makefile(".toml", pyproject='[tool.compile-engine-compat]\nselcet = ["CEC1"]\n')
    result = legacy.runpytest_subprocess(timeout=120)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "unknown key 'selcet' (did you mean 'select'?)" in result.stderr.str()


def test_a_new_call_site_is_named_when_the_baseline_trips(legacy):
    baseline = legacy.path / "baseline.json"
    args = [f"--compile-engine-baseline={baseline}"]
    assert _report(legacy, *args, "--compile-engine-update-baseline").ret == 0
    legacy.makepyfile(test_legacy=LEGACY_TESTS + "    compile_engine.get().clear()\n")
    result = _report(legacy, *args)
    assert result.ret == 1
    result.stdout.fnmatch_lines(
        [
            "FAILED legacy calls grew past the baseline *; 2 sites grew:",
            "  test_legacy.py:14 CEC106 compile_engine.CompileEngine.clear (1 call, new)",
            "  test_legacy.py:14 CEC102 compile_engine.get (1 call, new)",
        ]
    )
