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
_STRING_OR_COMMENT = re.compile(
    # The lookahead first: most positions start neither, and fail on one character class
    # (halves the time over a TVM-era test file).
    r"(?=[#'\"rRbBuUfF])(?:"
    r"#[^\r\n]*+"
    r"|(?<![\w])[rRbBuUfF]{0,2}(?:"
    r"'''(?:[^'\\]++|\\.|'(?!''))*+(?:'''|\Z)"
    r'|"""(?:[^"\\]++|\\.|"(?!""))*+(?:"""|\Z)'
    r"|'(?:[^'\\\r\n]++|\\.)*+'?"
    r'|"(?:[^"\\\r\n]++|\\.)*+"?'
    r"))",
    re.S,
)
_NOT_NEWLINE = re.compile(r"[^\r\n]")
#: One import statement, at a line's start or after ``;``.
_IMPORT = re.compile(
    r"(?:^|;)[ \t]*(?:"
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
    for match in _IMPORT.finditer(code):
        start = match.start() + len(match.group()) - len(match.group().lstrip(";\t "))
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
