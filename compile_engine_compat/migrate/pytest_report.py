"""pytest report of legacy calls: where a test run still uses the old API, and a ratchet.

Options (all off by default; the terminal line appears whenever a legacy call happened)::

    --compile-engine-report=PATH            write the report
    --compile-engine-report-format=FORMAT   json (default), markdown, github, junit
    --compile-engine-strict                 fail the run if any legacy call happens
    --compile-engine-baseline=FILE          fail if calls or sites grow past FILE's
    --compile-engine-update-baseline        rewrite FILE when they did not grow (it only shrinks)

The JSON report is ``{"total_calls": N, "complete": bool, "sites": [{"path", "line", "code",
"api", "count", "replacement", "url", "hint"}, ...]}`` with paths relative to the rootdir, plus
``"incomplete": [reason, ...]`` when ``complete`` is false; a baseline file has the same form
(a baseline written before sites carried ``code``/``url``/``hint`` still reads). ``code`` is the
rule id ``scan`` reports for the same API, so one API has one identity in a CI run.

The options' defaults come from ``[tool.compile-engine-compat.pytest]`` in the ``pyproject.toml``
above the rootdir (``report``, ``report-format``, ``strict``, ``baseline``), and the report
counts only the sites the section's ``select``/``extend-select``/``ignore``/``per-file-ignores``/
``exclude``/``extend-exclude``/``target-version`` keep, as ``scan`` would (:mod:`.config`). A
baseline that grows fails the run naming each new site: path:line, rule, api and calls.

Counts come from the in-process ledger, so calls from threads are exact. The run's own counts
are the ledger's growth since ``pytest_configure``, so an in-process ``pytester`` run reports
only itself.

Under pytest-xdist each worker streams its counts to its own JSON Lines file (the ledger's format)
after every test phase, and hands its final tally to the controller when it finishes. The
controller adds up the final tallies, and for a worker that crashed or never sent one, what that
worker had streamed to disk: every call of every phase it finished. Such a report is marked
incomplete, and ``--compile-engine-strict`` and the baseline check fail on it (fail closed).

The report and baseline paths are checked when pytest starts: a missing directory, or a baseline
that is empty, not JSON or not a report, stops the run with one usage-error line.
Importing this module does not import TVM.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import shutil
import stat
import tempfile
import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Generator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from compile_engine_compat import deprecations as _deprecation
from compile_engine_compat.api_table import API_TABLE
from compile_engine_compat.migrate import baseline as _baseline
from compile_engine_compat.migrate.config import REPORT_FORMATS, ConfigError, Configs, Settings
from compile_engine_compat.migrate.ledger_io import (
    append_records,
    open_regular,
    read_ledger,
    write_all,
)
from compile_engine_compat.migrate.terminal import plural, visible
from compile_engine_compat.migrate.workflow_commands import workflow_command

__all__ = [
    "pytest_addoption",
    "pytest_configure",
    "pytest_configure_node",
    "pytest_runtest_makereport",
    "pytest_sessionfinish",
    "pytest_terminal_summary",
    "pytest_testnodedown",
]

FORMATS = REPORT_FORMATS
_WORKER_KEY = "compile_engine_compat_ledger"  # workeroutput: the worker's final tally
_STREAM_KEY = "compile_engine_compat_stream"  # workerinput: the file the worker streams to
_TOP_SITES = 3
# XML 1.0 allows tab, LF, CR and these ranges only; anything else makes the file unparseable.
_XML_FORBIDDEN = re.compile("[^\t\n\r\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")

_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)

Key = tuple[str, str, int]


@dataclass
class _State:
    start: Counter[Key]
    workers: Counter[Key] = field(default_factory=Counter)
    report: dict[str, Any] | None = None
    failures: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    # Why the counts may be short (a worker crashed, a tally never came): the report says so.
    incomplete: list[str] = field(default_factory=list)
    report_path: str | None = None  # absolute, fixed at configure time
    report_format: str = "json"
    strict: bool = False
    baseline_path: str | None = None
    #: The project's settings (which sites count), None on an xdist worker.
    settings: Settings | None = None
    baseline: dict[str, Any] | None = None  # parsed at configure time; None if missing
    # xdist controller: where workers stream, and worker id -> whether its tally is counted.
    stream_dir: str | None = None
    nodes: dict[str, bool] = field(default_factory=dict)
    # xdist worker: the file it streams to, and the counts already there.
    stream_path: str | None = None
    streamed: Counter[Key] = field(default_factory=Counter)
    seen: dict[Key, int] = field(default_factory=dict)  # the ledger at the last stream


_STATE = pytest.StashKey[_State]()


def _snapshot() -> dict[Key, int]:
    """The in-process ledger's counts as a plain dict copy.

    Workers take one after every test phase: copying the dict costs a few microseconds, where
    ``ledger()`` builds and sorts an entry per site (about 100 us for 100 sites).
    """
    return _deprecation.ledger_counts()


def _counts() -> Counter[Key]:
    return Counter(_snapshot())


def pytest_addoption(parser: pytest.Parser) -> None:
    """Register the ``--compile-engine-*`` options."""
    group = parser.getgroup("compile-engine-compat", "legacy compile_engine API calls")
    group.addoption("--compile-engine-report", metavar="PATH", help="write a legacy-call report")
    group.addoption(
        "--compile-engine-report-format",
        choices=FORMATS,
        default=None,
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


# -- configure: paths checked before any test runs ---------------------------------------------


def _shown(path: str) -> str:
    # A newline in a path would break the one-line error.
    return path if path.isprintable() else repr(path)


def _writable_target(option: str, path: str) -> str | None:
    """Why ``path`` cannot be written as a file later, or None when it can."""
    target = Path(path)
    if target.is_dir():
        return f"{option}={_shown(path)}: is a directory"
    parent = target.parent
    if not parent.is_dir():
        return f"{option}={_shown(path)}: directory {_shown(str(parent))} does not exist"
    if not os.access(target if target.exists() else parent, os.W_OK):
        return f"{option}={_shown(path)}: not writable"
    return None


def _load_baseline(path: str, update: bool) -> dict[str, Any] | None:
    """The baseline at ``path``, None if it does not exist yet; a bad one is a usage error."""
    option = "--compile-engine-baseline"
    if not os.path.lexists(path):
        problem = _writable_target(option, path) if update else None
        if problem:
            raise pytest.UsageError(problem)
        return None
    try:
        # Never block: a FIFO given as the baseline is refused, not waited on.
        with os.fdopen(open_regular(path, os.O_RDONLY), "rb") as handle:
            raw = handle.read()
        baseline = _baseline.parse_baseline(raw)
    except OSError as exc:
        raise pytest.UsageError(f"{option}={_shown(path)}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise pytest.UsageError(f"{option}={_shown(path)}: {exc}") from None
    problem = _writable_target(option, path) if update else None
    if problem:
        raise pytest.UsageError(problem)
    return baseline


def pytest_configure(config: pytest.Config) -> None:
    """Remember the ledger as it was when the run started; check the report and baseline paths.

    Raises
    ------
    pytest.UsageError
        The report path cannot be written, the baseline is unreadable or not a report, or
        ``--compile-engine-update-baseline`` comes without a baseline.
    """
    state = _State(start=_counts())
    workerinput = getattr(config, "workerinput", None)
    if workerinput is not None:  # an xdist worker: the controller checked the options
        state.stream_path = workerinput.get(_STREAM_KEY)
        config.stash[_STATE] = state
        return
    option = config.option
    try:
        settings = state.settings = Configs().for_folder(config.rootpath)
    except ConfigError as exc:
        raise pytest.UsageError(str(exc)) from None
    defaults = settings.pytest
    report = option.compile_engine_report or (str(defaults.report) if defaults.report else None)
    state.report_format = option.compile_engine_report_format or defaults.report_format or "json"
    state.strict = bool(option.compile_engine_strict or defaults.strict)
    baseline = option.compile_engine_baseline or (
        str(defaults.baseline) if defaults.baseline else None
    )
    if report:
        problem = _writable_target("--compile-engine-report", report)
        if problem:
            raise pytest.UsageError(problem)
        # A test that changes directory must not move the report.
        state.report_path = os.path.abspath(report)
    if baseline:
        state.baseline_path = baseline
        state.baseline = _load_baseline(baseline, option.compile_engine_update_baseline)
    elif option.compile_engine_update_baseline:  # it would silently do nothing
        raise pytest.UsageError(
            "--compile-engine-update-baseline needs --compile-engine-baseline=FILE"
        )
    config.stash[_STATE] = state


# -- pytest-xdist: workers stream, the controller adds up -----------------------------------------


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """pytest-xdist controller: give each worker a file of its own to stream its counts to."""
    state = node.config.stash.get(_STATE, None)
    if state is None:
        return
    if state.stream_dir is None:
        state.stream_dir = tempfile.mkdtemp(prefix="compile-engine-compat-xdist-")
        node.config.add_cleanup(lambda: shutil.rmtree(state.stream_dir, ignore_errors=True))
    worker = node.workerinput["workerid"]
    # A replacement for a crashed worker gets a new id, so each file has one writer.
    node.workerinput[_STREAM_KEY] = os.path.join(state.stream_dir, f"{worker}.jsonl")
    state.nodes[worker] = False


def _stream(state: _State) -> None:
    """Worker: append the calls counted since the last stream to the worker's file."""
    assert state.stream_path is not None
    raw = _snapshot()
    if raw == state.seen:  # the usual case: no legacy call in this phase
        return
    counted = Counter(raw) - state.start
    delta = counted - state.streamed
    if not delta:
        state.seen = raw
        return
    pid = os.getpid()
    records = [
        {"api": api, "path": path, "line": line, "count": count, "pid": pid}
        for (api, path, line), count in delta.items()
    ]
    try:
        append_records(state.stream_path, records)
    except OSError:
        # The final tally still carries these; only a crash after this point loses them, and
        # then the controller marks the report incomplete anyway.
        return
    state.streamed, state.seen = counted, raw


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: Any) -> Generator[None, Any, None]:
    """pytest-xdist worker: stream the counts after each test phase, so a crash loses little.

    ``makereport`` runs once per phase (setup, call, teardown), right after it, and knows its
    config; elsewhere (no xdist, or the controller) this costs one attribute lookup.
    """
    yield
    state = item.config.stash.get(_STATE, None)
    if state is not None and state.stream_path is not None:
        _stream(state)


def _one_line(text: object) -> str:
    return " ".join(str(text).split())[:200]


def _read_stream(state: _State, worker: str) -> None:
    """Controller: add what a lost worker streamed to disk, noting any malformed line."""
    assert state.stream_dir is not None
    path = os.path.join(state.stream_dir, f"{worker}.jsonl")
    if not os.path.exists(path):  # it finished no phase with a legacy call
        return
    try:
        totals = read_ledger(path)
    except OSError as exc:
        state.incomplete.append(f"worker {worker}'s streamed counts unreadable: {exc.strerror}")
        return
    for row in totals:
        state.workers[(row["api"], row["path"], row["line"])] += row["count"]
    if totals.skipped:
        state.incomplete.append(f"{totals.skipped} malformed lines in worker {worker}'s counts")


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    """pytest-xdist controller: add a finished worker's tally, or what a lost one streamed."""
    state = node.config.stash.get(_STATE, None)
    if state is None:
        return
    worker = node.workerinput["workerid"]
    rows = getattr(node, "workeroutput", {}).get(_WORKER_KEY)
    if error is not None:
        state.incomplete.append(f"worker {worker} crashed: {_one_line(error)}")
    elif rows is None:
        state.incomplete.append(f"worker {worker} sent no final tally")
    if state.nodes.get(worker):  # xdist may report one worker down twice (keyboard interrupt)
        return
    state.nodes[worker] = True
    if rows is not None:
        for api, path, line, count in rows:
            state.workers[(api, path, int(line))] += int(count)
    elif state.stream_dir is not None:
        _read_stream(state, worker)


def _collect_lost_workers(state: _State) -> None:
    """Controller: count what workers that never went down streamed, and say the report is short."""
    for worker, counted in state.nodes.items():
        if not counted:
            state.nodes[worker] = True
            state.incomplete.append(f"worker {worker} never reported")
            _read_stream(state, worker)


# -- the report ---------------------------------------------------------------------------------


def _relative(path: str, root: Path) -> str:
    try:
        return Path(path).resolve().relative_to(root.resolve()).as_posix()
    except (ValueError, OSError):
        return path


def _printable_path(path: str) -> str:
    """A file name that encodes as UTF-8: undecodable bytes become ``\\xNN`` text.

    ``co_filename`` keeps such bytes as lone surrogates, which no UTF-8 report, terminal or
    XML file can hold.
    """
    try:
        return path.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:  # a surrogate that is not an escaped byte
        return path.encode("utf-8", "backslashreplace").decode("utf-8")


def build_report(
    counts: Counter[Key],
    root: Path,
    incomplete: list[str] | None = None,
    settings: Settings | None = None,
) -> dict[str, Any]:
    """The JSON report for ``counts``.

    Parameters
    ----------
    counts : Counter
        ``(api, file, line) -> calls``.
    root : Path
        Paths are made relative to it where they lie under it.
    incomplete : list of str, optional
        Why the counts may be short; the report is ``complete`` when there is none.
    settings : Settings, optional
        The project's settings: only the sites they select and do not exclude are counted.

    Returns
    -------
    dict
        ``{"total_calls", "complete", "sites"}``, and ``"incomplete"`` when not complete.
    """
    sites: list[dict[str, Any]] = []
    total = 0
    for (api, path, line), count in counts.items():
        row = API_TABLE.get(api)
        if settings is not None and not _selected(settings, row.rule_id if row else "", path):
            continue
        total += count
        sites.append(
            {
                "path": _printable_path(_relative(path, root)),
                "line": line,
                "code": row.rule_id if row else "",
                "api": api,
                "count": count,
                "replacement": row.replacement if row else "",
                "url": row.url if row else "",
                "hint": row.hint if row else "",
            }
        )
    sites.sort(key=lambda s: (-s["count"], s["path"], s["line"], s["api"]))
    report: dict[str, Any] = {"total_calls": total, "complete": not incomplete}
    if incomplete:
        report["incomplete"] = list(incomplete)
    report["sites"] = sites
    return report


def _selected(settings: Settings, code: str, path: str) -> bool:
    """Does a call of rule ``code`` at ``path`` count, by the project's settings?"""
    if code and not settings.enabled(code, settings.ignored_for(path)):
        return False
    return not settings.excluded(path, False, ())


def _incomplete_line(report: dict[str, Any]) -> str | None:
    """``report incomplete: <reasons>; ...``, or None for a complete report."""
    if report.get("complete", True):
        return None
    reasons = "; ".join(report.get("incomplete", []))
    return f"report incomplete: {reasons}; the counts are a lower bound"


def _cell(text: str) -> str:
    # A '|' ends a table cell and a newline ends the row.
    return " ".join(text.replace("|", "\\|").splitlines())


def _calls_line(report: dict[str, Any]) -> str:
    """``N legacy calls from M sites``, with correct plurals."""
    calls = plural(report["total_calls"], "legacy call")
    return f"{calls} from {plural(len(report['sites']), 'site')}"


def _markdown(report: dict[str, Any]) -> str:
    lines = ["# Legacy compile_engine calls", "", f"**{_calls_line(report)}.**", ""]
    incomplete = _incomplete_line(report)
    if incomplete:
        lines += [f"> **Warning:** {_cell(incomplete)}", ""]
    lines += [
        "| site | rule | api | calls | replacement |",
        "|---|---|---|---:|---|",
    ]
    for s in report["sites"]:
        code = s.get("code", "")
        rule = f"[`{code}`]({s['url']})" if s.get("url") else f"`{code}`"
        lines.append(
            f"| `{_cell(s['path'])}:{s['line']}` | {rule} | `{s['api']}` | {s['count']} | "
            f"{_cell(s['replacement'])} ({_cell(s.get('hint', ''))}) |"
        )
    return "\n".join(lines) + "\n"


def _github(report: dict[str, Any]) -> str:
    lines = [
        workflow_command(
            "warning",
            f"{s['api']} called {plural(s['count'], 'time')}: use {s['replacement']}. "
            f"See {s.get('url', '')} ({s.get('hint', '')})",
            file=s["path"],
            line=s["line"],
            title=f"{s.get('code', '')} legacy {s['api']}".strip(),
        )
        for s in report["sites"]
    ]
    incomplete = _incomplete_line(report)
    if incomplete:
        lines.append(workflow_command("error", incomplete, title="compile-engine-compat"))
    return "".join(line + "\n" for line in lines)


def _xml(text: str) -> str:
    """Text XML 1.0 can hold: forbidden characters become ``#xNN``, as pytest's junitxml does."""
    return _XML_FORBIDDEN.sub(lambda m: f"#x{ord(m.group()):02X}", text)


def _junit(report: dict[str, Any]) -> str:
    n = len(report["sites"])
    incomplete = _incomplete_line(report)
    errors = 1 if incomplete else 0
    suite = ET.Element(
        "testsuite",
        name="compile-engine-compat legacy calls",
        tests=str(n + errors),
        failures=str(n),
        errors=str(errors),
        skipped="0",
    )
    for s in report["sites"]:
        code = s.get("code", "")
        case = ET.SubElement(
            suite,
            "testcase",
            classname=_xml(f"legacy.{code}.{s['api']}" if code else f"legacy.{s['api']}"),
            name=_xml(f"{s['path']}:{s['line']}"),
        )
        failure = ET.SubElement(
            case,
            "failure",
            type="CompileEngineDeprecationWarning",
            message=_xml(f"{code} {s['api']} called {plural(s['count'], 'time')}".strip()),
        )
        failure.text = _xml(f"Use {s['replacement']}\nSee {s.get('url', '')} ({s.get('hint', '')})")
    if incomplete:
        case = ET.SubElement(suite, "testcase", classname="compile_engine_compat", name="report")
        ET.SubElement(case, "error", type="IncompleteReport", message=_xml(incomplete))
    root = ET.Element("testsuites", tests=str(n + errors), failures=str(n), errors=str(errors))
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


def _write_file(path: str, data: bytes) -> None:
    """Write ``data`` to ``path``, never blocking on the open (a FIFO nobody reads)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | _NONBLOCK | _CLOEXEC, 0o666)
    try:
        if _NONBLOCK:
            os.set_blocking(fd, True)  # O_NONBLOCK was for the open only
        write_all(fd, data, path)
    finally:
        os.close(fd)


def _replace_file(path: str, data: bytes) -> None:
    """Write ``data`` beside ``path`` and rename it over ``path``: never a torn baseline."""
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        mode = 0o644
    fd, staging = tempfile.mkstemp(dir=os.path.dirname(path) or ".", suffix=".tmp")
    try:
        try:
            if hasattr(os, "fchmod"):  # mkstemp makes it 0600; keep the baseline's own mode
                os.fchmod(fd, mode)
            write_all(fd, data, staging)
        finally:
            os.close(fd)
        os.replace(staging, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(staging)
        raise


def _write(state: _State, path: str, text: str, what: str) -> bool:
    """Write the report or the baseline at session end; a failure is one line, not a traceback.

    The report may be any writable path (``/dev/stdout`` too); the baseline, a regular file, is
    replaced atomically.
    """
    data = text.encode("utf-8", "backslashreplace")
    try:
        if what == "baseline":
            _replace_file(path, data)
        else:
            _write_file(path, data)
    except OSError as exc:
        reason = "a FIFO with no reader" if exc.errno == errno.ENXIO else exc.strerror or exc
        state.failures.append(f"could not write the {what} {_shown(path)}: {reason}")
        return False
    return True


def _check_baseline(state: _State, report: dict[str, Any], path: str, update: bool) -> None:
    """Apply the ratchet; an incomplete report can fail the check but never pass or update it."""
    complete = report["complete"]
    if state.baseline is None:
        if not update:
            state.failures.append(
                f"baseline {path} does not exist; create it with --compile-engine-update-baseline"
            )
        elif not complete:
            state.failures.append(f"baseline {path} not created: the report is incomplete")
        elif _write(state, path, render(report, "json"), "baseline"):
            state.notes.append(f"baseline {path} created: {_calls_line(report)}")
        return
    ratchet = _baseline.compare(state.baseline, report)
    if ratchet.grew:
        new = [
            f"  {_visible(s['path'])}:{s['line']} {s.get('code', '')} {s['api']} "
            f"({plural(s['count'], 'call')}"
            + (f", baseline {s['baseline_count']})" if s["baseline_count"] else ", new)")
            for s in _baseline.grown_sites(state.baseline, report)
        ]
        state.failures.append(
            f"legacy calls grew past the baseline {path}: {ratchet.describe()}; "
            f"{plural(len(new), 'site')} grew:\n" + "\n".join(new)
        )
    elif not complete:
        state.failures.append(
            f"baseline {path} not checked: the report is incomplete, so calls may be missing"
        )
    elif update and ratchet.shrank and _write(state, path, render(report, "json"), "baseline"):
        state.notes.append(
            f"baseline {path} shrunk to {_calls_line(report)} (was "
            f"{plural(ratchet.base_calls, 'call')} from {plural(ratchet.base_sites, 'site')})"
        )


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Build the report, write it, and apply ``--compile-engine-strict`` / the baseline."""
    config = session.config
    state = config.stash.get(_STATE, None)
    if state is None:
        return
    if hasattr(config, "workerinput"):  # an xdist worker: the controller reports
        if state.stream_path is not None:
            _stream(state)  # e.g. session-scoped fixtures' teardown
        # execnet sends UTF-8 only: a file name with undecodable bytes travels escaped.
        rows = [
            [api, _printable_path(path), line, n]
            for (api, path, line), n in (_counts() - state.start).items()
        ]
        config.workeroutput[_WORKER_KEY] = rows  # type: ignore[attr-defined]
        return
    if state.stream_dir is not None:
        _collect_lost_workers(state)
        shutil.rmtree(state.stream_dir, ignore_errors=True)
    counts = _counts() - state.start + state.workers
    report = state.report = build_report(counts, config.rootpath, state.incomplete, state.settings)
    option = config.option
    if state.report_path:
        text = render(report, state.report_format)
        _write(state, state.report_path, text, "report")
    if state.strict:
        if report["total_calls"]:
            state.failures.append(
                f"--compile-engine-strict: {plural(report['total_calls'], 'legacy call')} happened"
            )
        if not report["complete"]:
            state.failures.append(
                "--compile-engine-strict: the report is incomplete, so calls may be missing"
            )
    if state.baseline_path:
        _check_baseline(state, report, state.baseline_path, option.compile_engine_update_baseline)
    if state.failures and session.exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


_visible = visible


def summary_line(report: dict[str, Any]) -> str:
    """``N legacy calls from M sites; top sites: path:line api (count), ...``."""
    top = ", ".join(
        f"{_visible(s['path'])}:{s['line']} {s.get('code', '')} {s['api']} ({s['count']})"
        for s in report["sites"][:_TOP_SITES]
    )
    line = _calls_line(report)
    return f"{line}; top sites: {top}" if top else line


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    """Print the one-line summary, github annotations, and any strict/baseline failure."""
    state = config.stash.get(_STATE, None)
    if state is None or state.report is None:
        return
    asked = state.report_path or state.strict
    incomplete = _incomplete_line(state.report)
    if not (state.report["total_calls"] or asked or state.baseline_path or incomplete):
        return
    terminalreporter.section("compile-engine-compat")
    terminalreporter.line(summary_line(state.report))
    if incomplete:
        terminalreporter.line(_visible(incomplete), red=True)
    if state.report_format == "github":
        terminalreporter.write(_github(state.report))
    for note in state.notes:
        terminalreporter.line(note)
    for failure in state.failures:
        terminalreporter.line(f"FAILED {failure}", red=True)
