"""The pytest report plugin, run in-process with pytester against the real shim."""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

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
    assert set(site) == {"path", "line", "api", "count", "replacement", "docs"}
    assert site["docs"].startswith(
        "MIGRATION.md#compile-engine-get (run `compile-engine-compat docs"
    )
    assert report["sites"][0]["count"] == 100  # most-called first
    result.stdout.fnmatch_lines(
        ["104 legacy calls from 3 sites; top sites: test_legacy.py:10 compile_engine.get (100), *"]
    )


def test_markdown_and_github_formats(legacy):
    _report(legacy, "--compile-engine-report=r.md", "--compile-engine-report-format=markdown")
    markdown = (legacy.path / "r.md").read_text()
    assert "**104 legacy calls from 3 sites.**" in markdown
    assert "| `test_legacy.py:10` | `compile_engine.get` | 100 |" in markdown
    result = _report(
        legacy, "--compile-engine-report=r.txt", "--compile-engine-report-format=github"
    )
    annotations = (legacy.path / "r.txt").read_text().splitlines()
    assert len(annotations) == 3
    assert annotations[0].startswith(
        "::warning file=test_legacy.py,line=10,title=legacy compile_engine.get::"
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
        "compile_engine.CompileEngine.clear called 1 times"
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
    result.stdout.fnmatch_lines(["FAILED legacy calls grew past the baseline *: 108 calls*"])
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
    result.stdout.fnmatch_lines(["baseline * shrunk to 23 calls from 2 sites*"])


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
