"""``compile-engine-compat scan``: find every use of the legacy API without running the code.

Usage::

    compile-engine-compat scan PATH... [--format text|json|sarif|github] [--include-shim]
                                       [--output FILE]

Every import form of ``tvm.relay.backend.compile_engine`` / ``te_compiler``, attribute chains
(``relay.backend.compile_engine.get()``), calls through engine aliases (``engine = get();
engine.jit(...)``), registered global names and the ``relay.backend.*`` pass-config keys. Code
under ``try/except ImportError`` already copes and is not reported. ``--include-shim`` also reports
calls that go through ``compile_engine_compat`` (the next step of the burn-down).

Relay-era code (Relay building, ``relay.build`` and the executors, AutoTVM, ``tvm.nd``) is
classified by :mod:`.relay_uses` against what ``install()`` serves.

Each finding's ``fix`` says what ``compile-engine-compat fix`` can do: ``safe`` (the default fix
removes it and keeps behaviour), ``unsafe`` (only ``fix --unsafe``, a modern rewrite), ``manual``
(a person ports it; Relay-era findings say why in ``detail``), ``served`` (a Relay-era use that
runs as written under ``install()``; ``detail`` states the difference).
Exit codes follow ruff: 0 no findings, 1 findings, 2 a usage error (a missing path, bad
arguments) or an internal error. A file that cannot be read -- not a regular file, too large, not
decodable, not parsable, a notebook that is not one, nested too deep for the parser -- is
*skipped*: it is listed with its reason in every output format, the rest of the run goes on, and
it does not change the exit code (ruff likewise exits 0 on a clean run that skipped files it could
not read; the report makes the skip visible).
"""

from __future__ import annotations

import argparse
import functools
import json
import multiprocessing
import os
import re
import sys
import threading
import urllib.parse
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TextIO

import libcst as cst
import libcst.metadata as md

from compile_engine_compat.api_table import (
    API_TABLE,
    DEFINITION_MODULES,
    DOCS_URL,
    RULES,
    Fix,
    LegacyApi,
)
from compile_engine_compat.migrate.baseline import (
    BaselineError,
    count,
    load_baseline,
    new_items,
    write_baseline,
)
from compile_engine_compat.migrate.legacy_uses import (
    Use,
    find_uses,
    literal_uses,
    relevant_code,
    spells_word,
)
from compile_engine_compat.migrate.relay_uses import relay_uses, spells_relay_word
from compile_engine_compat.migrate.sources import (
    DEEP_STACK_THREAD,
    SkipFile,
    Source,
    SourceFile,
    call_with_deep_stack,
    check_nesting,
    iter_sources,
    read_source,
)
from compile_engine_compat.migrate.workflow_commands import workflow_command
from compile_engine_compat.version import __version__

__all__ = ["Finding", "Skipped", "format_findings", "main", "scan_paths", "scan_source"]

FORMATS = ("text", "json", "sarif", "github")


@dataclass(frozen=True)
class Finding:
    """One legacy use in one file (``line``/``col`` 1-based; ``cell`` set for notebooks)."""

    path: str
    line: int
    col: int
    api: str
    replacement: str
    fix: Fix
    cell: int | None = None
    #: Relay-era findings: the name used and the difference (``served``) or the reason
    #: (``manual``) that applies to it.
    detail: str = ""

    @property
    def code(self) -> str:
        """The rule id, e.g. ``CEC105``."""
        return API_TABLE[self.api].rule_id

    @property
    def docs(self) -> str:
        """Where to read about it (installed: MIGRATION.md in the package, or ``docs ID``)."""
        return API_TABLE[self.api].docs

    def as_dict(self) -> dict[str, object]:
        """The JSON form: path, line, col, code, api, replacement, fix, docs (cell in notebooks)."""
        out: dict[str, object] = {
            "path": self.path,
            "line": self.line,
            "col": self.col,
            "code": self.code,
            "api": self.api,
            "replacement": self.replacement,
            "fix": self.fix,
            "docs": self.docs,
        }
        if self.cell is not None:
            out["cell"] = self.cell
        if self.detail:
            out["detail"] = self.detail
        return out


@dataclass(frozen=True)
class Skipped:
    """A file that was not scanned, and why (``internal``: a bug of ours, exit code 2)."""

    path: str
    reason: str
    internal: bool = False

    def __str__(self) -> str:
        return f"{self.path}: skipped: {self.reason}"

    def as_dict(self) -> dict[str, object]:
        """The JSON form: ``{"path": ..., "skipped": reason}``."""
        return {"path": self.path, "skipped": self.reason}


def skipped_for(display: str, exc: BaseException) -> Skipped:
    """The :class:`Skipped` record for an exception raised while reading or parsing a file.

    Shared by ``scan`` and ``fix`` so that both report a bad file with the same words.
    """
    if isinstance(exc, SkipFile):
        return Skipped(display, str(exc))
    if isinstance(exc, cst.ParserSyntaxError):
        return Skipped(display, f"failed to parse: {exc.message} (line {exc.raw_line})")
    first = str(exc).splitlines()[0] if str(exc) else ""
    return Skipped(display, f"internal error: {type(exc).__name__}: {first}", internal=True)


def finding_fix(use: Use) -> Fix:
    """What the fixer does about ``use`` (see the module docstring)."""
    if use.kind == "dynamic":  # importlib/getattr with a literal: nothing to swap mechanically
        return "manual"
    if use.origin == "legacy":
        return use.row.fix
    return "unsafe" if use.row.rewrite is not None else "manual"


def scan_source(source: Source, include_shim: bool = False) -> list[Finding]:
    """Findings in one parsed source, in source order.

    Raises
    ------
    SkipFile
        If the code nests too deeply for the parser.
    libcst.ParserSyntaxError
        If the code does not parse.
    """
    if source.module in DEFINITION_MODULES:
        return []  # a TVM <=0.19 tree's own definition of the legacy API
    # (row, line in the code, column, fix, detail) of each unguarded use of the wanted origins.
    # The engine's finder first: a file it cannot parse is skipped with libcst's message.
    hits = _engine_hits(source, include_shim) if spells_word(source.code) else []
    if spells_relay_word(source.code):  # with the test above, the only one most files see
        hits += _relay_hits(source)
    if not hits:
        return []
    # One finding per place, rule and detail (an import of two names from one refused module
    # would otherwise be reported twice, identically).
    hits = sorted(set(hits), key=lambda hit: (hit[1], hit[2], hit[0].rule_id, hit[4]))
    findings = []
    # Split into lines only when a suppression can exist: most files have none.
    lines = _LINE_BREAKS.split(source.code) if "noqa" in source.code.lower() else None
    for row, code_line, col, fix, detail in hits:
        if lines is not None and _suppressed(lines[code_line - 1], row.rule_id):
            continue
        line, cell = source.locate(code_line)
        findings.append(
            Finding(source.display, line, col, row.name, row.replacement, fix, cell, detail)
        )
    return findings


_Hit = tuple[LegacyApi, int, int, Fix, str]


def _relay_hits(source: Source) -> list[_Hit]:
    """Relay building, relay.build/executors and AutoTVM: served or manual (``_relay_uses``)."""
    return [
        (use.row, use.line, use.col, use.fix, use.detail)
        for use in relay_uses(source.code, source.package)
    ]


def _engine_hits(source: Source, include_shim: bool) -> list[_Hit]:
    """The compile_engine/te_compiler API, its globals and the config keys (libcst)."""
    hits: list[_Hit]
    literal = literal_uses(source.code)
    if literal is not None:  # only pass-config keys (or nothing): no resolver, no libcst
        hits = [(use.row, use.line, use.col, use.row.fix, "") for use in literal if not use.guarded]
    else:
        relevant = relevant_code(source.code)
        if relevant is None:  # spells no legacy word: nothing to parse
            return []
        check_nesting(relevant.code)
        uses = call_with_deep_stack(_parse_and_find, relevant.code, source)
        origins = ("legacy", "shim") if include_shim else ("legacy",)
        hits = [
            (use.row, relevant.original_line(use.line), use.col, finding_fix(use), "")
            for use in uses
            if not use.guarded and use.origin in origins
        ]
    return hits


_LINE_BREAKS = re.compile(r"\r\n|\r|\n")
# ruff's syntax: a bare noqa comment covers everything on its line, "noqa: CEC101, CEC105" those.
_NOQA = re.compile(r"#\s*noqa(?::[\s]?(?P<codes>[A-Z]+[0-9]+(?:[,\s]+[A-Z]+[0-9]+)*))?", re.I)


def _suppressed(line: str, rule_id: str) -> bool:
    """Does a ``# noqa`` comment on ``line`` cover ``rule_id``?"""
    for match in _NOQA.finditer(line):
        codes = match.group("codes")
        if codes is None or rule_id in re.split(r"[,\s]+", codes.upper()):
            return True
    return False


def _parse_and_find(code: str, source: Source) -> list[Use]:
    # unsafe_skip_copy: the module is ours alone; the default deep copy costs a tenth of the scan.
    wrapper = md.MetadataWrapper(cst.parse_module(code), unsafe_skip_copy=True)
    return find_uses(wrapper, source.package, source.local_module)


def _scan_file(file: SourceFile, include_shim: bool) -> tuple[list[Finding], Skipped | None]:
    try:
        return scan_source(read_source(file.path, file.display), include_shim), None
    except Exception as exc:  # one bad file never ends the run
        return [], skipped_for(file.display, exc)


#: Below this many files a process pool costs more than it saves.
_PARALLEL_MIN_FILES = 200


def _workers(files: int) -> int:
    """How many processes to scan ``files`` files with (1: in this process).

    Forked workers only: they start in milliseconds with everything imported (a spawned worker
    would import libcst again, ~0.3 s). Never when this process runs other threads, which a
    forked child would not have; the idle deep-stack parse thread is the exception (a child
    starts its own).
    """
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    if (
        files < _PARALLEL_MIN_FILES
        or (cpus or 1) < 2
        or "fork" not in multiprocessing.get_all_start_methods()
        or any(
            thread is not threading.main_thread() and thread.name != DEEP_STACK_THREAD
            for thread in threading.enumerate()
        )
    ):
        return 1
    return min(cpus or 1, 8)


def scan_paths(
    paths: Sequence[str], include_shim: bool = False
) -> tuple[list[Finding], list[Skipped]]:
    """Scan every source under ``paths``; a file that cannot be scanned is skipped, not fatal.

    Large trees are scanned by forked worker processes, one per CPU; results come back in the
    order of the files, as a sequential scan gives them.

    Returns
    -------
    findings : list of Finding
    skipped : list of Skipped
        The files not scanned, with the reason.

    Raises
    ------
    FileNotFoundError
        If one of ``paths`` does not exist (a usage error).
    """
    files = list(iter_sources(paths))
    scan_one = functools.partial(_scan_file, include_shim=include_shim)
    workers = _workers(len(files))
    results: Iterable[tuple[list[Finding], Skipped | None]]
    if workers > 1:
        with multiprocessing.get_context("fork").Pool(workers) as pool:
            results = pool.map(scan_one, files, chunksize=max(1, len(files) // (workers * 8)))
    else:
        results = map(scan_one, files)
    findings: list[Finding] = []
    skipped: list[Skipped] = []
    for found, skip in results:
        findings += found
        if skip is not None:
            skipped.append(skip)
    return findings, skipped


# -- output formats -----------------------------------------------------------------------------


def _where(finding: Finding) -> str:
    cell = f"[cell {finding.cell}]" if finding.cell is not None else ""
    return f"{finding.path}{cell}:{finding.line}:{finding.col}"


def _line(f: Finding) -> str:
    if not f.detail:
        return f"{_where(f)}: {f.code} {f.api} [{f.fix}] use {f.replacement}; see {f.docs}"
    if f.fix == "manual":  # the detail names the reason and the replacement
        return f"{_where(f)}: {f.code} {f.api} [manual] {f.detail}; see {f.docs}"
    return (
        f"{_where(f)}: {f.code} {f.api} [{f.fix}] {f.detail.rstrip('.')}; modern: {f.replacement}"
    )


def _text(findings: list[Finding], skipped: list[Skipped]) -> str:
    lines = [_line(f) for f in findings]
    lines += [str(skip) for skip in skipped]
    kinds = Counter(f.fix for f in findings)
    files = len({f.path for f in findings})
    summary = (
        f"Found {len(findings)} legacy uses in {files} files "
        f"({kinds['safe']} safe, {kinds['unsafe']} unsafe, {kinds['manual']} manual"
        + (f", {kinds['served']} served under install()" if kinds["served"] else "")
        + ")."
    )
    if skipped:
        summary += f" Skipped {len(skipped)} files that could not be scanned."
    lines.append(summary)
    if kinds["safe"] or kinds["unsafe"]:
        lines.append("Run `compile-engine-compat fix PATH` (add --unsafe for unsafe fixes).")
    return "\n".join(lines)


def _json(findings: list[Finding], skipped: list[Skipped]) -> str:
    # One flat list, as ruff's: findings, then one {"path", "skipped"} entry per skipped file.
    return json.dumps([f.as_dict() for f in findings] + [s.as_dict() for s in skipped], indent=2)


def _sarif(findings: list[Finding], skipped: list[Skipped]) -> str:
    codes = sorted({f.code for f in findings})
    rules = [
        {
            "id": code,
            "name": RULES[code].name,
            "shortDescription": {"text": f"legacy compile_engine API: {RULES[code].name}"},
            "help": {"text": f"Use {RULES[code].replacement}. See {RULES[code].docs}"},
            "helpUri": RULES[code].docs_anchor,
        }
        for code in codes
    ]
    results = [
        {
            "ruleId": f.code,
            "ruleIndex": codes.index(f.code),
            "level": "note" if f.fix == "safe" else "warning",
            "message": {"text": f"{f.code} {f.api} is legacy ({f.fix} fix): use {f.replacement}"},
            "locations": [
                {
                    "physicalLocation": {
                        "artifactLocation": {"uri": _uri(f.path)},
                        "region": {"startLine": f.line, "startColumn": f.col},
                    }
                }
            ],
            "properties": {
                "fix": f.fix,
                "api": f.api,
                **({"cell": f.cell} if f.cell is not None else {}),
            },
        }
        for f in findings
    ]
    # SARIF's place for "this file was not analysed": the invocation's notifications.
    notifications = [
        {
            "level": "error" if skip.internal else "warning",
            "message": {"text": f"skipped: {skip.reason}"},
            "locations": [{"physicalLocation": {"artifactLocation": {"uri": _uri(skip.path)}}}],
        }
        for skip in skipped
    ]
    driver = {
        "name": "compile-engine-compat",
        "version": __version__,
        "informationUri": DOCS_URL,
        "rules": rules,
    }
    invocation = {
        "executionSuccessful": not any(skip.internal for skip in skipped),
        "toolExecutionNotifications": notifications,
    }
    sarif = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{"tool": {"driver": driver}, "invocations": [invocation], "results": results}],
    }
    # ensure_ascii (the default): any name, even one with control characters or lone
    # surrogates from undecodable bytes, becomes a valid JSON escape.
    return json.dumps(sarif, indent=2)


def _uri(path: str) -> str:
    """A SARIF artifact URI: a relative reference, percent-encoded (RFC 3986)."""
    return urllib.parse.quote(path.encode("utf-8", "surrogateescape"), safe="/")


def _github(findings: list[Finding], skipped: list[Skipped]) -> str:
    lines = [
        workflow_command(
            "warning",
            f"{f.api} ({f.fix} fix): use {f.replacement}. See {f.docs}",
            file=f.path,
            line=f.line,
            col=f.col,
            title=f"{f.code} legacy {f.api}",
        )
        for f in findings
    ]
    lines += [
        workflow_command(
            "error" if skip.internal else "warning",
            f"skipped: {skip.reason}",
            file=skip.path,
            title="compile-engine-compat could not scan this file",
        )
        for skip in skipped
    ]
    return "\n".join(lines)


_FORMATTERS: dict[str, Callable[[list[Finding], list[Skipped]], str]] = {
    "text": _text,
    "json": _json,
    "sarif": _sarif,
    "github": _github,
}


def format_findings(
    findings: Iterable[Finding], fmt: str = "text", skipped: Iterable[Skipped] = ()
) -> str:
    """Render findings (and the skipped files) as ``text``, ``json``, ``sarif`` or ``github``."""
    return _FORMATTERS[fmt](list(findings), list(skipped))


def parse_selectors(text: str | None) -> list[str]:
    """``"CEC1,CEC205"`` -> ``["CEC1", "CEC205"]``, each a rule id or the prefix of one.

    Raises
    ------
    ValueError
        Naming the first selector that matches no rule id.
    """
    if not text:
        return []
    selectors = [part.strip().upper() for part in text.split(",") if part.strip()]
    for selector in selectors:
        if not any(code.startswith(selector) for code in RULES):
            raise ValueError(f"unknown rule id or prefix {selector!r} (ids are CEC101-CEC502)")
    return selectors


def select(findings: list[Finding], chosen: list[str], ignored: list[str]) -> list[Finding]:
    """The findings whose rule id starts with a ``chosen`` selector (all if none) and with no
    ``ignored`` one; the longer matching selector wins, as in ruff (``--select CEC1 --ignore
    CEC105`` keeps CEC101 and drops CEC105)."""

    def longest(code: str, selectors: list[str]) -> int:
        return max((len(s) for s in selectors if code.startswith(s)), default=-1)

    out = []
    for finding in findings:
        # With no --select everything is selected, less specifically than any --ignore.
        picked = longest(finding.code, chosen) if chosen else 0
        dropped = longest(finding.code, ignored)
        if picked >= 0 and (picked > dropped if chosen else dropped < 0):
            out.append(finding)
    return out


def _baseline_key(finding: Finding) -> tuple[str, str]:
    return finding.path, finding.code


def main(argv: Sequence[str]) -> int:
    """Run ``compile-engine-compat scan``; returns 0 clean, 1 findings, 2 usage/internal error."""
    parser = argparse.ArgumentParser(
        prog="compile-engine-compat scan",
        description="Find uses of the legacy compile_engine / te_compiler API.",
        epilog="Exit codes (as ruff): 0 no findings, 1 findings, 2 usage or internal error. "
        "Files that cannot be read are skipped and listed; they do not change the exit code.",
    )
    parser.add_argument("paths", nargs="+", metavar="PATH", help=".py/.ipynb files or folders")
    parser.add_argument("--format", choices=FORMATS, default="text")
    parser.add_argument(
        "--include-shim", action="store_true", help="also report calls through the shim"
    )
    parser.add_argument("--output", "-o", help="write the report here instead of stdout")
    parser.add_argument("--select", metavar="IDS", help="only these rule ids or prefixes (CEC1)")
    parser.add_argument("--ignore", metavar="IDS", help="never these rule ids or prefixes")
    parser.add_argument(
        "--baseline", metavar="FILE", help="report (and fail on) only findings not in FILE"
    )
    parser.add_argument(
        "--update-baseline",
        action="store_true",
        help="write today's findings to the --baseline FILE (exit 0)",
    )
    args = parser.parse_args(list(argv))
    try:
        chosen, ignored = parse_selectors(args.select), parse_selectors(args.ignore)
        if args.update_baseline and not args.baseline:
            raise ValueError("--update-baseline needs --baseline FILE")
        known = load_baseline(args.baseline) if args.baseline and not args.update_baseline else None
        findings, skipped = scan_paths(args.paths, args.include_shim)
    except (FileNotFoundError, ValueError) as exc:  # BaselineError is a ValueError
        print(f"compile-engine-compat scan: {exc}", file=sys.stderr)
        return 2
    findings = select(findings, chosen, ignored)
    if args.update_baseline:
        try:
            write_baseline(args.baseline, count(findings, _baseline_key))
        except BaselineError as exc:
            print(f"compile-engine-compat scan: {exc}", file=sys.stderr)
            return 2
        print_safely(f"Wrote {len(findings)} findings to the baseline {args.baseline}.")
        return 0
    hidden = 0
    if known is not None:
        new = new_items(findings, known, _baseline_key)
        hidden, findings = len(findings) - len(new), new
    report = format_findings(findings, args.format, skipped)
    if args.output:
        try:
            with open(args.output, "w", encoding="utf-8", errors="surrogateescape") as out:
                out.write(report + "\n")
        except OSError as exc:
            print(f"compile-engine-compat scan: cannot write {args.output}: {exc}", file=sys.stderr)
            return 2
    elif report:
        print_safely(report)
    if hidden:
        print_safely(f"{hidden} findings in the baseline {args.baseline} not shown.", sys.stderr)
    if args.format != "text":  # the machine formats carry the skips; say so to a person too
        for skip in skipped:
            print_safely(str(skip), sys.stderr)
    if any(skip.internal for skip in skipped):
        return 2
    return 1 if findings else 0


def print_safely(text: str, stream: TextIO | None = None) -> None:
    """Print, never failing on a file name the terminal cannot encode (a lone surrogate)."""
    stream = stream or sys.stdout
    encoding = getattr(stream, "encoding", None) or "utf-8"
    stream.write(text.encode(encoding, "backslashreplace").decode(encoding) + "\n")
