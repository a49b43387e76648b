"""Read a module's imports, guarded lines and name chains from its text, without a parser.

A Relay-era test file is Relay from top to bottom: parsing it with ``ast`` and walking every node
cost about twice ``ast.parse`` of the file, and such files are a third of a TVM <=0.19 tree. The
Relay-era finder (:mod:`.relay_uses`) reads the text instead, with C regular expressions (ruff's
fast-path idea): :func:`code_only` blanks strings and comments first, keeping every offset, so
that only code can match what follows.

Known limits, each rare in real code and each only ever *missing* a use, never inventing one:
a name chain broken over lines (``relay.\\\\n  var``), an import inside an ``if x: import y``
one-liner, and a name shadowed by a local of the same name.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import NamedTuple

__all__ = [
    "GUARD_NAMES",
    "Import",
    "code_only",
    "guarded_lines",
    "imports",
    "strings_and_comments",
]

#: A comment or a string literal (any prefix, quote and length; an unterminated one ends at its
#: line or at the end of the file). Possessive loops: no backtracking on long strings.
#:
#: Written to start with a character class, so that the regular-expression engine skips ahead
#: with its C loop over that class instead of trying a match at every position; what the first
#: character was is then read back with lookbehinds. It matches exactly what
#: ``(?<!\w)[rRbBuUfF]{0,2}<quoted>|#[^\r\n]*`` matches (a sixth faster over a TVM-era tree;
#: the rest of :func:`code_only`'s time is the call per string that blanks it).
_QUOTED_REST = (  # the rest of a string after its opening quote Q: '' for a triple quote, or not
    r"(?:QQ(?:[^Q\\]++|\\.|Q(?!QQ))*+(?:QQQ|\Z)"
    r"|(?:[^Q\\\r\n]++|\\.)*+Q?)"
)
_QUOTED = "|".join(f"{quote}{_QUOTED_REST.replace('Q', quote)}" for quote in "'\"")
_STRING_OR_COMMENT = re.compile(
    r"[#'\"rRbBuUfF](?:"
    r"(?<=#)[^\r\n]*+"  # a comment
    + "".join(
        f"|(?<={quote})(?<!\\w.){_QUOTED_REST.replace('Q', quote)}" for quote in "'\""
    )  # a string without a prefix (not right after a name: ``x'...'`` is no string start)
    + rf"|(?<=[rRbBuUfF])(?<!\w.)[rRbBuUfF]?(?:{_QUOTED})"  # one with a prefix of 1 or 2
    + ")",
    re.S,
)
_NOT_NEWLINE = re.compile(r"[^\r\n]")
#: One import statement, at a line's start or after ``;`` (see :func:`_import_statements`).
_IMPORT = re.compile(
    r"(?:^|;)[ \t]*(?P<statement>"
    r"from[ \t]+(?P<module>\.*[\w.]*)[ \t]+import[ \t]+(?P<names>\([^)]*\)|[^\r\n;]*)"
    r"|import[ \t]+(?P<modules>[^\r\n;]*))",
    re.M,
)
_TRY = re.compile(r"^([ \t]*)try[ \t]*:", re.M)
_HANDLER = re.compile(r"except\b[ \t]*(?P<types>[^:]*):")
_WORD = re.compile(r"\w+")
#: Handlers that make a ``try`` cope with a missing module (for both finders).
GUARD_NAMES = frozenset({"ImportError", "ModuleNotFoundError", "Exception", "BaseException"})


def _blank(match: re.Match[str]) -> str:
    text = match.group()
    if "\n" in text or "\r" in text:  # a multi-line string: keep its line breaks
        return _NOT_NEWLINE.sub(" ", text)
    return " " * len(text)


def strings_and_comments(code: str) -> Iterator[re.Match[str]]:
    """Each string literal and comment of ``code``, in order (a comment's match starts with
    ``#``)."""
    return _STRING_OR_COMMENT.finditer(code)


def code_only(code: str) -> str:
    """``code`` with every string literal and comment blanked (newlines and offsets kept)."""
    return _STRING_OR_COMMENT.sub(_blank, code)


class Import(NamedTuple):
    """One import statement of :func:`code_only` text."""

    #: Offset of its first character (``import``/``from``), and of its end.
    start: int
    end: int
    #: (local name, the dotted name it binds to).
    binds: list[tuple[str, str]]
    #: The dotted names it imports (``from m import *``: ``m``).
    names: list[str]


def _aliases(text: str) -> list[tuple[str, str | None]]:
    """``a.b as c, d`` -> ``[("a.b", "c"), ("d", None)]`` (parentheses and line breaks allowed)."""
    out: list[tuple[str, str | None]] = []
    for item in text.replace("\\", " ").strip().strip("()").split(","):
        words = item.split()
        if len(words) == 1:
            out.append((words[0], None))
        elif len(words) == 3 and words[1] == "as":
            out.append((words[0], words[2]))
    return out


def _import_statements(code: str) -> Iterator[re.Match[str]]:
    """What ``_IMPORT.finditer(code)`` gives, ten times faster over a TVM-era tree.

    A statement's ``import`` keyword is on the line it starts on (after ``^`` or a ``;``), so
    the next statement starts on the line of the next ``import`` in the text, or later: only
    the candidate starts on that line (its start, each ``;``) are tried, found by C substring
    searches instead of the engine trying ``^|;`` at every position.
    """
    at = code.find("import")
    end = 0  # where the last statement ended: the next starts there or later
    while at >= 0:
        line_end = code.find("\n", at)
        line_end = len(code) if line_end < 0 else line_end
        candidate = max(end, code.rfind("\n", 0, at) + 1)
        while candidate >= 0:
            match = _IMPORT.match(code, candidate)
            if match is not None:
                yield match
                end = match.end()
                break
            candidate = code.find(";", candidate + 1, line_end)
        else:
            end = line_end
        at = code.find("import", end)


def imports(code: str, resolve: Callable[[str], str | None]) -> list[Import]:
    """The import statements of :func:`code_only` text, in order.

    Parameters
    ----------
    code : str
        Text from :func:`code_only`.
    resolve : callable
        Turns a relative module (``..backend``) into an absolute one, or None when it cannot.
    """
    found = []
    for match in _import_statements(code):
        start = match.start("statement")
        binds: list[tuple[str, str]] = []
        names: list[str] = []
        if match.group("modules") is not None:
            for name, asname in _aliases(match.group("modules")):
                names.append(name)
                binds.append((asname, name) if asname else (name.split(".")[0],) * 2)
        else:
            module = resolve(match.group("module"))
            if module is None:
                continue
            for name, asname in _aliases(match.group("names")):
                names.append(module if name == "*" else f"{module}.{name}")
                if name != "*":
                    binds.append((asname or name, f"{module}.{name}"))
        found.append(Import(start, match.end(), binds, names))
    return found


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


def guarded_lines(code: str) -> set[int]:
    """Lines (1-based) of :func:`code_only` text inside a ``try`` whose handler catches
    ``ImportError`` or wider (the whole statement, handlers included, as the libcst finder)."""
    guarded: set[int] = set()
    if "try" not in code:
        return guarded
    lines = code.splitlines()  # blanked text: no form feeds or separators left in strings
    for match in _TRY.finditer(code):
        first = code.count("\n", 0, match.start()) + 1
        depth = len(match.group(1))
        catches = False
        last = first
        for number in range(first + 1, len(lines) + 1):
            line = lines[number - 1]
            stripped = line.strip()
            if not stripped:
                continue
            if _indent(line) < depth:
                break
            if _indent(line) == depth:
                handler = _HANDLER.match(stripped)
                if handler is not None:
                    types = set(_WORD.findall(handler.group("types")))
                    catches |= not types or bool(types & GUARD_NAMES)
                elif not stripped.startswith(("else", "finally")):
                    break
            last = number
        if catches:
            guarded.update(range(first, last + 1))
    return guarded
