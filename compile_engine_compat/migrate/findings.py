"""What ``scan`` reports: findings and skipped files, and their output formats.

Every format carries the rule id of each finding (``code``, ``ruleId``, the annotation's title),
a link that opens the rule's section of the installed guide (``url``), and how to read it in a
terminal (``hint``: ``run `compile-engine-compat docs CEC105```). Every file name is escaped:
the text formats through :func:`.terminal.visible`, JSON and SARIF through ``json.dumps`` (and
SARIF's URIs percent-encoded), the GitHub format through :mod:`.workflow_commands`, so no control
character of a hostile file name reaches the output raw.
"""

from __future__ import annotations

import json
import urllib.parse
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from compile_engine_compat.api_table import API_TABLE, GUIDE_URL, RULES, Fix
from compile_engine_compat.migrate.terminal import Colour, plural, visible
from compile_engine_compat.migrate.workflow_commands import workflow_command
from compile_engine_compat.version import __version__

__all__ = ["Finding", "Skipped", "format_findings", "format_statistics", "summary"]


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
    #: The file on disk (``path`` is as displayed), for ``--add-noqa``; not part of equality.
    source_path: str = field(default="", compare=False, repr=False)

    @property
    def code(self) -> str:
        """The rule id, e.g. ``CEC105``."""
        return API_TABLE[self.api].rule_id

    @property
    def docs(self) -> str:
        """Where to read about it, as prose (the guide's anchor and the ``docs`` command)."""
        return API_TABLE[self.api].docs

    @property
    def url(self) -> str:
        """A link to the rule's section of the installed guide."""
        return API_TABLE[self.api].url

    @property
    def hint(self) -> str:
        """How to read the rule in a terminal."""
        return API_TABLE[self.api].hint

    def as_dict(self) -> dict[str, object]:
        """The JSON form: path, line, col, code, api, replacement, fix, url, hint (cell in
        notebooks, detail for Relay-era findings)."""
        out: dict[str, object] = {
            "path": self.path,
            "line": self.line,
            "col": self.col,
            "code": self.code,
            "api": self.api,
            "replacement": self.replacement,
            "fix": self.fix,
            "url": self.url,
            "hint": self.hint,
        }
        if self.cell is not None:
            out["cell"] = self.cell
        if self.detail:
            out["detail"] = self.detail
        return out


@dataclass(frozen=True)
class Skipped:
    """A file that was not scanned, and why (``internal``: a bug of ours, exit code 2;
    ``may_hold_legacy``: it spells a legacy name, or could not be read to tell, so ``scan``
    cannot say it is clean: exit code 1, as ruff's for a file it could not check)."""

    path: str
    reason: str
    internal: bool = False
    may_hold_legacy: bool = True

    def __str__(self) -> str:
        text = f"{visible(self.path)}: skipped: {visible(self.reason)}"
        return text + (" (it may hold legacy code)" if self.may_hold_legacy else "")

    def as_dict(self) -> dict[str, object]:
        """The JSON form: ``{"path": ..., "skipped": reason}``."""
        return {"path": self.path, "skipped": self.reason}


# -- text ---------------------------------------------------------------------------------------


def _where(finding: Finding) -> str:
    cell = f"[cell {finding.cell}]" if finding.cell is not None else ""
    return f"{visible(finding.path)}{cell}:{finding.line}:{finding.col}"


def _line(f: Finding, colour: Colour) -> str:
    head = f"{colour(_where(f), 'bold')}: {colour(f.code, 'red')} {f.api} [{f.fix}]"
    if not f.detail:
        return f"{head} use {f.replacement}; see {f.docs}"
    detail = visible(f.detail)
    if f.fix == "manual":  # the detail names the reason and the replacement
        return f"{head} {detail}; see {f.docs}"
    return f"{head} {detail.rstrip('.')}; modern: {f.replacement}"


def summary(findings: list[Finding], skipped: list[Skipped]) -> str:
    """``Found 3 legacy uses in 1 file (3 safe, ...).`` and the skipped files' count."""
    kinds = Counter(f.fix for f in findings)
    files = len({f.path for f in findings})
    served = f", {kinds['served']} served under install()" if kinds["served"] else ""
    text = (
        f"Found {plural(len(findings), 'legacy use')} in {plural(files, 'file')} "
        f"({kinds['safe']} safe, {kinds['unsafe']} unsafe, {kinds['manual']} manual{served})."
    )
    if skipped:
        unknown = sum(skip.may_hold_legacy for skip in skipped)
        text += f" Skipped {plural(len(skipped), 'file')} that could not be scanned"
        text += f" ({unknown} may hold legacy code)." if unknown else "."
    return text


def _text(findings: list[Finding], skipped: list[Skipped], colour: Colour) -> str:
    lines = [_line(f, colour) for f in findings]
    lines += [str(skip) for skip in skipped]
    lines.append(summary(findings, skipped))
    if any(f.fix in ("safe", "unsafe") for f in findings):
        lines.append("Run `compile-engine-compat fix PATH` (add --unsafe for unsafe fixes).")
    return "\n".join(lines)


# -- machine formats ----------------------------------------------------------------------------


def _json(findings: list[Finding], skipped: list[Skipped], colour: Colour) -> str:
    # One flat list, as ruff's: findings, then one {"path", "skipped"} entry per skipped file.
    return json.dumps([f.as_dict() for f in findings] + [s.as_dict() for s in skipped], indent=2)


def _sarif(findings: list[Finding], skipped: list[Skipped], colour: Colour) -> str:
    codes = sorted({f.code for f in findings})
    rules = [
        {
            "id": code,
            "name": RULES[code].name,
            "shortDescription": {"text": f"legacy compile_engine API: {RULES[code].name}"},
            "help": {"text": f"Use {RULES[code].replacement}. {RULES[code].hint}."},
            "helpUri": RULES[code].url,
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
        "informationUri": GUIDE_URL,
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


def _github(findings: list[Finding], skipped: list[Skipped], colour: Colour) -> str:
    lines = [
        workflow_command(
            "warning",
            f"{f.api} ({f.fix} fix): use {f.replacement}. See {f.url} ({f.hint})",
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


_FORMATTERS: dict[str, Callable[[list[Finding], list[Skipped], Colour], str]] = {
    "text": _text,
    "json": _json,
    "sarif": _sarif,
    "github": _github,
}


def format_findings(
    findings: Iterable[Finding],
    fmt: str = "text",
    skipped: Iterable[Skipped] = (),
    colour: Colour | None = None,
) -> str:
    """Render findings (and the skipped files) as ``text``, ``json``, ``sarif`` or ``github``;
    ``colour`` applies to text only (off by default)."""
    return _FORMATTERS[fmt](list(findings), list(skipped), colour or Colour(enabled=False))


def format_statistics(findings: Iterable[Finding], fmt: str = "text") -> str:
    """``--statistics``: one line (or JSON object) per rule, most frequent first, as ruff's."""
    counts = Counter(f.code for f in findings)
    fixes = {f.code: f.fix for f in findings}
    ordered = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    if fmt == "json":
        rows = [
            {"code": code, "name": RULES[code].name, "count": n, "fix": fixes[code]}
            for code, n in ordered
        ]
        return json.dumps(rows, indent=2)
    width = max((len(str(n)) for _, n in ordered), default=1)
    return "\n".join(
        f"{str(n).rjust(width)}\t{code}\t{RULES[code].name}\t[{fixes[code]}]" for code, n in ordered
    )
