"""Put a fixed part of a module back into the whole module, line for line.

``fix`` rewrites only the relevant part of a module (:func:`.relevant_code.relevant_part`: its
imports and the statements that use legacy names), which libcst parses in a fraction of the time
and memory the whole file would take. The relevant part holds whole lines of the module, each
mapped to its line there, so the fixer's edits -- a changed line, an import added after the
imports, a removed statement -- are whole-line edits that map back. :func:`splice` refuses (and
``fix`` then fixes the whole module, or skips a file too large for that) when an edit does not
map cleanly:

* it touches a ``pass`` that stands in for a dropped block body;
* it spans lines that are not adjacent in the module;
* it drops an import whose name the rest of the module still uses (the fixer judged the name
  unused from the relevant part alone).
"""

from __future__ import annotations

import ast
import difflib
import re
import textwrap

from compile_engine_compat.migrate.code_text import code_only
from compile_engine_compat.migrate.relevant_code import Relevant
from compile_engine_compat.migrate.word_filter import split_lines

__all__ = ["splice"]

_Edit = tuple[int, int, list[str]]  # [start, end) of the module's lines (0-based), new lines


def splice(code: str, relevant: Relevant, fixed: str) -> str | None:
    """``code`` with ``relevant.code`` replaced by ``fixed``; None when that is not clean.

    Parameters
    ----------
    code : str
        The whole module.
    relevant : Relevant
        A part of it (``relevant.lines`` maps its lines to the module's).
    fixed : str
        ``relevant.code`` after the fix.
    """
    if relevant.lines is None:
        return fixed
    old = split_lines(relevant.code)
    new = split_lines(fixed)
    lines = split_lines(code)
    edits: list[_Edit] = []
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        if any(n in relevant.placeholders for n in range(i1 + 1, i2 + 1)):
            return None
        if i1 == i2:  # an insertion: after the line before it (an import after the imports)
            at = relevant.original_line(i1) if i1 > 0 else relevant.original_line(1) - 1
            edits.append((at, at, _trim_blank(new[j1:j2], lines, at)))
            continue
        originals = [relevant.original_line(n) for n in range(i1 + 1, i2 + 1)]
        if originals == list(range(originals[0], originals[-1] + 1)):
            edits.append((originals[0] - 1, originals[-1], new[j1:j2]))
        elif tag == "replace" and i2 - i1 == j2 - j1:  # line for line, across a gap
            edits += [(n - 1, n, [line]) for n, line in zip(originals, new[j1:j2], strict=True)]
        elif all(line.strip() == "pass" for line in new[j1:j2]):
            # Statements removed across a gap, and the ``pass`` that fills their emptied block.
            edits += [(n - 1, n, new[j1:j2] if n == originals[0] else []) for n in originals]
        else:
            return None
    lost = _lost_imports(lines, edits)
    passes: list[int] = []  # where the fix put a ``pass`` of its own, in the spliced lines
    shift = 0
    for start, end, replacement in sorted(edits):
        old_text = lines[start + shift : end + shift]
        passes += [
            start + shift + offset
            for offset, line in enumerate(replacement)
            if line.strip() == "pass" and line not in old_text
        ]
        lines[start + shift : end + shift] = replacement
        shift += len(replacement) - (end - start)
    for index in reversed(passes):
        if _has_sibling(lines, index):
            del lines[index]
    spliced = "".join(lines)
    if lost is None or (lost and _still_used(spliced, lost)):
        return None
    return spliced


def _trim_blank(block: list[str], lines: list[str], at: int) -> list[str]:
    """An inserted block without the blank lines the module already has around ``at`` (the
    fixer spaced the block from the statement it saw next, which may have been far away)."""
    block = list(block)
    while block and not block[-1].strip() and at < len(lines) and not lines[at].strip():
        block.pop()
    while block and not block[0].strip() and at > 0 and not lines[at - 1].strip():
        block.pop(0)
    return block


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


def _has_sibling(lines: list[str], index: int) -> bool:
    """Does the ``pass`` at ``lines[index]`` share its block with another statement?

    The fixer puts a ``pass`` where it emptied a block of the relevant part; the module's block
    may hold statements the relevant part left out. Read from the indentation of the nearest
    code lines: one before it at the same depth or deeper that is not a block header, or one
    after it at the same depth.
    """
    depth = _indent(lines[index])

    def code_lines(indices: range) -> list[str]:
        found = []
        for i in indices:
            stripped = lines[i].strip()
            if stripped and not stripped.startswith("#"):
                found.append(lines[i])
                break
        return found

    before = code_lines(range(index - 1, -1, -1))
    after = code_lines(range(index + 1, len(lines)))
    if before and _indent(before[0]) >= depth and not before[0].rstrip().endswith(":"):
        return True
    return bool(after) and _indent(after[0]) == depth


def _bound_by_imports(text: str) -> set[str] | None:
    """Names the import statements of ``text`` bind; None if it does not parse on its own."""
    try:
        tree = ast.parse(textwrap.dedent(text))
    except SyntaxError:
        return None
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            for alias in node.names:
                names.add(alias.asname or alias.name.split(".")[0])
    return names


def _lost_imports(lines: list[str], edits: list[_Edit]) -> set[str] | None:
    """The names the edits stop importing; None when an edited import cannot be read alone."""
    lost: set[str] = set()
    for start, end, replacement in edits:
        before = "".join(lines[start:end])
        if "import" not in before:
            continue
        old_names = _bound_by_imports(before)
        new_names = _bound_by_imports("".join(replacement))
        if old_names is None or new_names is None:
            return None
        lost |= old_names - new_names
    return lost


_IMPORT_LINE = re.compile(r"[ \t]*(?:import|from)\b")


def _still_used(code: str, names: set[str]) -> bool:
    """Does ``code`` use one of ``names`` outside its import statements (strings and comments
    aside)?"""
    pattern = re.compile(r"(?<![\w.])(?:" + "|".join(map(re.escape, sorted(names))) + r")\b")
    return any(
        pattern.search(line) and not _IMPORT_LINE.match(line)
        for line in split_lines(code_only(code))
    )
