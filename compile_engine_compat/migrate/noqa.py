"""``# noqa`` comments: which findings they suppress, and where ``--add-noqa`` writes them.

ruff's syntax: a bare ``# noqa`` covers everything on its line, ``# noqa: CEC101, CEC105`` those
rules. A finding inside a string that spans lines (where a comment cannot go) or on a line
continued with a backslash is covered by a comment on the line where that string or continuation
ends, as in ruff. ``scan`` reports nothing a comment covers, ``fix`` rewrites nothing a comment
covers, and ``scan --add-noqa`` adds the comments that make the current findings pass.

Comments are found with :func:`.code_text.strings_and_comments` (one regular-expression pass in
C), never with ``tokenize``, so that a large file costs no more here than elsewhere.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable, Mapping

from compile_engine_compat.migrate.code_text import strings_and_comments

__all__ = ["Noqa", "add_noqa"]

_NOQA = re.compile(r"#\s*noqa(?::[\s]?(?P<codes>[A-Z]+[0-9]+(?:[,\s]+[A-Z]+[0-9]+)*))?", re.I)
_LINE_END = re.compile(r"\r\n|\r|\n")
_ALL = frozenset({"*"})


class Noqa:
    """The ``noqa`` comments of one module's code."""

    def __init__(self, code: str) -> None:
        self._code = code
        #: line -> the codes its comment names (``{"*"}``: a bare noqa).
        self.comments: dict[int, frozenset[str]] = {}
        #: (first line, last line) of each string that spans lines.
        self._spans: list[tuple[int, int]] = []
        self._starts = [0] + [m.end() for m in _LINE_END.finditer(code)]
        for match in strings_and_comments(code):
            first = self.line_of(match.start())
            if match.group().startswith("#"):
                for noqa in _NOQA.finditer(match.group()):
                    codes = noqa.group("codes")
                    named = frozenset(re.split(r"[,\s]+", codes.upper())) if codes else _ALL
                    self.comments[first] = self.comments.get(first, frozenset()) | named
            else:
                last = self.line_of(match.end() - 1)
                if last > first:
                    self._spans.append((first, last))

    def line_of(self, offset: int) -> int:
        """The 1-based line of a character offset."""
        return bisect.bisect_right(self._starts, offset)

    def _line_text(self, line: int) -> str:
        start = self._starts[line - 1]
        end = self._starts[line] if line < len(self._starts) else len(self._code)
        return self._code[start:end].rstrip("\r\n")

    def target(self, line: int) -> int:
        """The line whose comment covers a finding on ``line``."""
        for first, last in self._spans:  # few: multi-line strings only
            if first <= line < last:
                line = last
        while line < len(self._starts) and self._line_text(line).endswith("\\"):
            line += 1
        return line

    def covers(self, line: int, rule_id: str) -> bool:
        """Does a ``noqa`` comment cover rule ``rule_id`` on ``line``?"""
        if not self.comments:
            return False
        codes = self.comments.get(self.target(line))
        return codes is not None and (codes is _ALL or "*" in codes or rule_id in codes)


def add_noqa(code: str, wanted: Mapping[int, Iterable[str]]) -> tuple[str, int]:
    """``code`` with ``# noqa: ...`` comments covering the given rules on the given lines.

    Parameters
    ----------
    code : str
        A module's source.
    wanted : mapping
        Line -> rule ids found there.

    Returns
    -------
    new_code : str
    added : int
        The number of lines given (or extended) a comment.
    """
    noqa = Noqa(code)
    by_line: dict[int, set[str]] = {}
    for line, codes in wanted.items():
        target = noqa.target(line)
        missing = {code for code in codes if not noqa.covers(line, code)}
        if missing:
            by_line.setdefault(target, set()).update(missing)
    if not by_line:
        return code, 0
    lines = _LINE_END.split(code)
    ends = _LINE_END.findall(code)
    for line, codes in by_line.items():
        text = lines[line - 1]
        existing = noqa.comments.get(line)
        if existing:
            # Extend the comment there: a "noqa: CEC101" comment becomes "noqa: CEC101, CEC102".
            match = [m for m in _NOQA.finditer(text) if m.group("codes")][-1]
            merged = ", ".join(sorted(existing | codes))
            text = text[: match.start()] + f"# noqa: {merged}" + text[match.end() :]
        else:
            text = text.rstrip() + f"  # noqa: {', '.join(sorted(codes))}"
        lines[line - 1] = text
    out = [line + (ends[i] if i < len(ends) else "") for i, line in enumerate(lines)]
    return "".join(out), len(by_line)
