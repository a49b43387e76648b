"""pytest report of legacy calls: where a test run still uses the old API, and a ratchet.

Options (all off by default; the terminal line appears whenever a legacy call happened)::

    --compile-engine-report=PATH            write the report
    --compile-engine-report-format=FORMAT   json (default), markdown, github, junit
    --compile-engine-strict                 fail the run if any legacy call happens
    --compile-engine-baseline=FILE          fail if calls or sites grow past FILE's
    --compile-engine-update-baseline        rewrite FILE when they did not grow (it only shrinks)

The JSON report is ``{"total_calls": N, "sites": [{"path", "line", "api", "count", "replacement",
"docs"}, ...]}`` with paths relative to the rootdir; a baseline file has the same form. Counts come
from the in-process ledger, so calls from threads are exact; under pytest-xdist (if installed)
each worker hands its counts to the controller, which adds them up. The run's own counts are the
ledger's growth since ``pytest_configure``, so an in-process ``pytester`` run reports only itself.
Importing this module does not import TVM.
"""

from __future__ import annotations

import json
import os
import xml.etree.ElementTree as ET
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from ._api_table import API_TABLE
from ._deprecation import ledger
from ._workflow_commands import workflow_command

__all__ = [
    "pytest_addoption",
    "pytest_configure",
    "pytest_sessionfinish",
    "pytest_terminal_summary",
    "pytest_testnodedown",
]

FORMATS = ("json", "markdown", "github", "junit")
_WORKER_KEY = "compile_engine_compat_ledger"
_TOP_SITES = 3

Key = tuple[str, str, int]


@dataclass
class _State:
    start: Counter[Key]
    workers: Counter[Key] = field(default_factory=Counter)
    report: dict[str, Any] | None = None
    failures: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


_STATE = pytest.StashKey[_State]()


def _counts() -> Counter[Key]:
    return Counter({(e.api, e.filename, e.lineno): e.count for e in ledger()})


def pytest_addoption(parser: pytest.Parser) -> None:
    """Register the ``--compile-engine-*`` options."""
    group = parser.getgroup("compile-engine-compat", "legacy compile_engine API calls")
    group.addoption("--compile-engine-report", metavar="PATH", help="write a legacy-call report")
    group.addoption(
        "--compile-engine-report-format",
        choices=FORMATS,
        default="json",
        help="report format (default json); github also prints ::warning annotations",
    )
    group.addoption(
        "--compile-engine-strict", action="store_true", help="fail if any legacy call happens"
    )
    group.addoption(
        "--compile-engine-baseline",
        metavar="FILE",
        help="fail if legacy calls or call sites grow past this report",
    )
    group.addoption(
        "--compile-engine-update-baseline",
        action="store_true",
        help="rewrite the baseline when nothing grew (it only ever shrinks)",
    )


def pytest_configure(config: pytest.Config) -> None:
    """Remember the ledger as it was when the run started."""
    config.stash[_STATE] = _State(start=_counts())


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    """pytest-xdist controller: add a finished worker's counts (hook exists only with xdist)."""
    rows = getattr(node, "workeroutput", {}).get(_WORKER_KEY, [])
    state = node.config.stash[_STATE]
    for api, path, line, count in rows:
        state.workers[(api, path, int(line))] += int(count)


def _relative(path: str, root: Path) -> str:
    try:
        return Path(path).resolve().relative_to(root.resolve()).as_posix()
    except (ValueError, OSError):
        return path


def build_report(counts: Counter[Key], root: Path) -> dict[str, Any]:
    """The JSON report for ``counts`` (``(api, file, line) -> calls``), paths relative to root."""
    sites: list[dict[str, Any]] = []
    for (api, path, line), count in counts.items():
        row = API_TABLE.get(api)
        sites.append(
            {
                "path": _relative(path, root),
                "line": line,
                "api": api,
                "count": count,
                "replacement": row.replacement if row else "",
                "docs": row.docs if row else "",
            }
        )
    sites.sort(key=lambda s: (-s["count"], s["path"], s["line"], s["api"]))
    return {"total_calls": sum(counts.values()), "sites": sites}


def _markdown(report: dict[str, Any]) -> str:
    lines = [
        "# Legacy compile_engine calls",
        "",
        f"**{report['total_calls']} legacy calls from {len(report['sites'])} sites.**",
        "",
        "| site | api | calls | replacement |",
        "|---|---|---:|---|",
    ]
    for s in report["sites"]:
        replacement = s["replacement"].replace("|", "\\|")
        lines.append(
            f"| `{s['path']}:{s['line']}` | `{s['api']}` | {s['count']} | "
            f"{replacement} ([docs]({s['docs']})) |"
        )
    return "\n".join(lines) + "\n"


def _github(report: dict[str, Any]) -> str:
    return "".join(
        workflow_command(
            "warning",
            f"{s['api']} called {s['count']} times: use {s['replacement']}",
            file=s["path"],
            line=s["line"],
            title=f"legacy {s['api']}",
        )
        + "\n"
        for s in report["sites"]
    )


def _junit(report: dict[str, Any]) -> str:
    n = len(report["sites"])
    suite = ET.Element(
        "testsuite",
        name="compile-engine-compat legacy calls",
        tests=str(n),
        failures=str(n),
        errors="0",
        skipped="0",
    )
    for s in report["sites"]:
        case = ET.SubElement(
            suite, "testcase", classname=f"legacy.{s['api']}", name=f"{s['path']}:{s['line']}"
        )
        failure = ET.SubElement(
            case,
            "failure",
            type="CompileEngineDeprecationWarning",
            message=f"{s['api']} called {s['count']} times",
        )
        failure.text = f"Use {s['replacement']}\nSee {s['docs']}"
    root = ET.Element("testsuites", tests=str(n), failures=str(n))
    root.append(suite)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


_RENDER = {
    "json": lambda r: json.dumps(r, indent=2) + "\n",
    "markdown": _markdown,
    "github": _github,
    "junit": _junit,
}


def render(report: dict[str, Any], fmt: str) -> str:
    """Render a report as ``json``, ``markdown``, ``github`` or ``junit``."""
    return _RENDER[fmt](report)


def _check_baseline(state: _State, report: dict[str, Any], path: str, update: bool) -> None:
    calls, sites = report["total_calls"], len(report["sites"])
    if not os.path.exists(path):
        if update:
            Path(path).write_text(render(report, "json"), encoding="utf-8")
            state.notes.append(f"baseline {path} created: {calls} calls from {sites} sites")
        else:
            state.failures.append(
                f"baseline {path} does not exist; create it with --compile-engine-update-baseline"
            )
        return
    base = json.loads(Path(path).read_text(encoding="utf-8"))
    base_calls, base_sites = int(base["total_calls"]), len(base["sites"])
    if calls > base_calls or sites > base_sites:
        state.failures.append(
            f"legacy calls grew past the baseline {path}: {calls} calls from {sites} sites "
            f"(baseline {base_calls} calls from {base_sites} sites)"
        )
    elif update and (calls, sites) != (base_calls, base_sites):
        Path(path).write_text(render(report, "json"), encoding="utf-8")
        state.notes.append(
            f"baseline {path} shrunk to {calls} calls from {sites} sites "
            f"(was {base_calls} calls from {base_sites} sites)"
        )


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Build the report, write it, and apply ``--compile-engine-strict`` / the baseline."""
    config = session.config
    state = config.stash.get(_STATE, None)
    if state is None:
        return
    counts = _counts() - state.start + state.workers
    if hasattr(config, "workerinput"):  # an xdist worker: the controller reports
        rows = [[api, path, line, count] for (api, path, line), count in counts.items()]
        config.workeroutput[_WORKER_KEY] = rows  # type: ignore[attr-defined]
        return
    report = state.report = build_report(counts, config.rootpath)
    option = config.option
    if option.compile_engine_report:
        text = render(report, option.compile_engine_report_format)
        Path(option.compile_engine_report).write_text(text, encoding="utf-8")
    if option.compile_engine_strict and report["total_calls"]:
        state.failures.append(
            f"--compile-engine-strict: {report['total_calls']} legacy calls happened"
        )
    if option.compile_engine_baseline:
        _check_baseline(
            state, report, option.compile_engine_baseline, option.compile_engine_update_baseline
        )
    if state.failures and session.exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def summary_line(report: dict[str, Any]) -> str:
    """``N legacy calls from M sites; top sites: path:line api (count), ...``."""
    top = ", ".join(
        f"{s['path']}:{s['line']} {s['api']} ({s['count']})" for s in report["sites"][:_TOP_SITES]
    )
    line = f"{report['total_calls']} legacy calls from {len(report['sites'])} sites"
    return f"{line}; top sites: {top}" if top else line


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    """Print the one-line summary, github annotations, and any strict/baseline failure."""
    state = config.stash.get(_STATE, None)
    if state is None or state.report is None:
        return
    option = config.option
    asked = option.compile_engine_report or option.compile_engine_strict
    if not (state.report["total_calls"] or asked or option.compile_engine_baseline):
        return
    terminalreporter.section("compile-engine-compat")
    terminalreporter.line(summary_line(state.report))
    if option.compile_engine_report_format == "github":
        terminalreporter.write(_github(state.report))
    for note in state.notes:
        terminalreporter.line(note)
    for failure in state.failures:
        terminalreporter.line(f"FAILED {failure}", red=True)
