"""``compile-engine-compat scan``: find every use of the legacy API without running the code.

Usage::

    compile-engine-compat scan PATH... [--format text|json|sarif|github] [--include-shim]
                                       [--output FILE]

Every import form of ``tvm.relay.backend.compile_engine`` / ``te_compiler``, attribute chains
(``relay.backend.compile_engine.get()``), calls through engine aliases (``engine = get();
engine.jit(...)``), registered global names and the ``relay.backend.*`` pass-config keys. Code
under ``try/except ImportError`` already copes and is not reported. ``--include-shim`` also reports
calls that go through ``compile_engine_compat`` (the next step of the burn-down).

Each finding's ``fix`` says what ``compile-engine-compat fix`` can do: ``safe`` (the default fix
removes it and keeps behaviour), ``unsafe`` (only ``fix --unsafe``, a modern rewrite), ``manual``.
The exit code is 1 when there are findings, 2 when a file could not be parsed, else 0.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import libcst as cst
import libcst.metadata as md

from ._api_table import API_TABLE, DOCS_URL, Fix
from ._legacy_uses import Use, find_uses
from ._sources import Source, iter_sources, read_source
from ._version import __version__
from ._workflow_commands import workflow_command

__all__ = ["Finding", "format_findings", "main", "scan_paths", "scan_source"]

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

    def as_dict(self) -> dict[str, object]:
        """The JSON form: path, line, col, api, replacement, fix (and cell for notebooks)."""
        out: dict[str, object] = {
            "path": self.path,
            "line": self.line,
            "col": self.col,
            "api": self.api,
            "replacement": self.replacement,
            "fix": self.fix,
        }
        if self.cell is not None:
            out["cell"] = self.cell
        return out


def finding_fix(use: Use) -> Fix:
    """What the fixer does about ``use`` (see the module docstring)."""
    if use.origin == "legacy":
        return use.row.fix
    return "unsafe" if use.row.rewrite is not None else "manual"


def scan_source(source: Source, include_shim: bool = False) -> list[Finding]:
    """Findings in one parsed source, in source order.

    Raises
    ------
    libcst.ParserSyntaxError
        If the code does not parse.
    """
    wrapper = md.MetadataWrapper(cst.parse_module(source.code))
    origins = ("legacy", "shim") if include_shim else ("legacy",)
    findings = []
    for use in find_uses(wrapper):
        if use.guarded or use.origin not in origins:
            continue
        line, cell = source.locate(use.line)
        findings.append(
            Finding(
                source.display,
                line,
                use.col,
                use.row.name,
                use.row.replacement,
                finding_fix(use),
                cell,
            )
        )
    return findings


def scan_paths(paths: Sequence[str], include_shim: bool = False) -> tuple[list[Finding], list[str]]:
    """Scan every source under ``paths``.

    Returns
    -------
    findings : list of Finding
    errors : list of str
        ``path: message`` for files that could not be read or parsed.
    """
    findings: list[Finding] = []
    errors: list[str] = []
    for path, display in iter_sources(paths):
        try:
            findings += scan_source(read_source(path, display), include_shim)
        except (OSError, ValueError, cst.ParserSyntaxError) as exc:
            errors.append(f"{display}: failed to parse: {str(exc).splitlines()[0]}")
    return findings, errors


# -- output formats -----------------------------------------------------------------------------


def _where(finding: Finding) -> str:
    cell = f"[cell {finding.cell}]" if finding.cell is not None else ""
    return f"{finding.path}{cell}:{finding.line}:{finding.col}"


def _text(findings: list[Finding]) -> str:
    lines = [
        f"{_where(f)}: {f.api} [{f.fix}] use {f.replacement} ({API_TABLE[f.api].docs})"
        for f in findings
    ]
    kinds = Counter(f.fix for f in findings)
    files = len({f.path for f in findings})
    lines.append(
        f"Found {len(findings)} legacy uses in {files} files "
        f"({kinds['safe']} safe, {kinds['unsafe']} unsafe, {kinds['manual']} manual)."
    )
    if kinds["safe"] or kinds["unsafe"]:
        lines.append("Run `compile-engine-compat fix PATH` (add --unsafe for unsafe fixes).")
    return "\n".join(lines)


def _json(findings: list[Finding]) -> str:
    return json.dumps([f.as_dict() for f in findings], indent=2)


def _sarif(findings: list[Finding]) -> str:
    apis = sorted({f.api for f in findings})
    rules = [
        {
            "id": api,
            "shortDescription": {"text": f"legacy compile_engine API: {api}"},
            "help": {"text": f"Use {API_TABLE[api].replacement}"},
            "helpUri": API_TABLE[api].docs,
        }
        for api in apis
    ]
    results = [
        {
            "ruleId": f.api,
            "ruleIndex": apis.index(f.api),
            "level": "note" if f.fix == "safe" else "warning",
            "message": {"text": f"{f.api} is legacy ({f.fix} fix): use {f.replacement}"},
            "locations": [
                {
                    "physicalLocation": {
                        "artifactLocation": {"uri": f.path},
                        "region": {"startLine": f.line, "startColumn": f.col},
                    }
                }
            ],
            "properties": {"fix": f.fix, **({"cell": f.cell} if f.cell is not None else {})},
        }
        for f in findings
    ]
    driver = {
        "name": "compile-engine-compat",
        "version": __version__,
        "informationUri": DOCS_URL,
        "rules": rules,
    }
    sarif = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{"tool": {"driver": driver}, "results": results}],
    }
    return json.dumps(sarif, indent=2)


def _github(findings: list[Finding]) -> str:
    return "\n".join(
        workflow_command(
            "warning",
            f"{f.api} ({f.fix} fix): use {f.replacement}",
            file=f.path,
            line=f.line,
            col=f.col,
            title=f"legacy {f.api}",
        )
        for f in findings
    )


_FORMATTERS: dict[str, Callable[[list[Finding]], str]] = {
    "text": _text,
    "json": _json,
    "sarif": _sarif,
    "github": _github,
}


def format_findings(findings: Iterable[Finding], fmt: str = "text") -> str:
    """Render findings as ``text``, ``json``, ``sarif`` or ``github``."""
    return _FORMATTERS[fmt](list(findings))


def main(argv: Sequence[str]) -> int:
    """Run ``compile-engine-compat scan``; returns 1 with findings, 2 on unreadable files."""
    parser = argparse.ArgumentParser(
        prog="compile-engine-compat scan",
        description="Find uses of the legacy compile_engine / te_compiler API.",
    )
    parser.add_argument("paths", nargs="+", metavar="PATH", help=".py/.ipynb files or folders")
    parser.add_argument("--format", choices=FORMATS, default="text")
    parser.add_argument(
        "--include-shim", action="store_true", help="also report calls through the shim"
    )
    parser.add_argument("--output", "-o", help="write the report here instead of stdout")
    args = parser.parse_args(list(argv))
    try:
        findings, errors = scan_paths(args.paths, args.include_shim)
    except FileNotFoundError as exc:
        print(f"compile-engine-compat scan: {exc}", file=sys.stderr)
        return 2
    report = format_findings(findings, args.format)
    if args.output:
        with open(args.output, "w", encoding="utf-8") as out:
            out.write(report + "\n")
    elif report:
        print(report)
    for error in errors:
        print(f"{error}", file=sys.stderr)
    if errors:
        return 2
    return 1 if findings else 0
