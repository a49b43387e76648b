"""Which code spells a legacy word, and the legacy string keys found without libcst.

A file, a line or an identifier that spells none of the table's
:func:`.api_table.legacy_words` cannot hold a use: :func:`spells_word` and
:func:`present_words` say so with one C regex search per group of words sharing a prefix. A
file that spells only TVM <=0.19 pass-config keys needs no name resolution: :func:`literal_uses`
finds them on the ``ast``. Shared by ``scan`` and ``fix`` (through :mod:`.relevant_code` and
:mod:`.legacy_uses`).
"""

from __future__ import annotations

import ast
import bisect
import functools
import re
from collections.abc import Iterator
from typing import NamedTuple

from compile_engine_compat.api_table import (
    LegacyApi,
    legacy_words,
    string_rows,
)
from compile_engine_compat.migrate.code_text import GUARD_NAMES

__all__ = [
    "LiteralUse",
    "identifier_spells_word",
    "literal_uses",
    "present_words",
    "spells_word",
    "split_lines",
    "words_in",
]

_WORDS = legacy_words()


class _WordGroup(NamedTuple):
    """Legacy words that share their first four characters, searched together."""

    #: The group's longest common prefix: a text without it spells none of the words.
    gate: str
    words: tuple[str, ...]
    #: ``gate`` followed by a lookahead capturing the longest word's rest that follows each
    #: occurrence (None for a single word, or a gate whose occurrences could overlap).
    rests: re.Pattern[str] | None


def _overlaps(text: str) -> bool:
    """Can two occurrences of ``text`` overlap (does a proper prefix equal a suffix)?"""
    return any(text[:size] == text[-size:] for size in range(1, len(text)))


def _common_prefix(words: tuple[str, ...]) -> str:
    """The longest string every one of ``words`` starts with."""
    size = 0
    while all(len(word) > size and word[size] == words[0][size] for word in words):
        size += 1
    return words[0][:size]


def _groups(words: tuple[str, ...]) -> tuple[_WordGroup, ...]:
    """The words grouped by their first four characters (63 words, 11 groups).

    A group of many words whose gate is common in TVM code (``tir.``: 32 pass-config keys, and
    every ``tvm.tir`` call spells it) is searched once, with a regular expression anchored on the
    gate, rather than once per word: each occurrence of the gate reports the longest word that
    continues it, and a word is present when it begins such a report.
    """
    by_stem: dict[str, list[str]] = {}
    for word in words:
        by_stem.setdefault(word[:4], []).append(word)
    groups = []
    for group in map(tuple, by_stem.values()):
        gate = _common_prefix(group)
        rests = None
        if len(group) > 1 and not _overlaps(gate):
            longest_first = sorted((word[len(gate) :] for word in group), key=len, reverse=True)
            alternatives = "|".join(map(re.escape, longest_first))
            rests = re.compile(f"{re.escape(gate)}(?=({alternatives}))")
        groups.append(_WordGroup(gate, group, rests))
    return tuple(groups)


_GROUPS = _groups(_WORDS)


def _present(text: str) -> tuple[str, ...]:
    found: list[str] = []
    for gate, group, rests in _GROUPS:
        if gate not in text:
            continue
        if rests is None:
            found += [word for word in group if word in text]
            continue
        reported = set(rests.findall(text))
        size = len(gate)
        found += [word for word in group if any(r.startswith(word[size:]) for r in reported)]
    return tuple(found)


#: The legacy words a file's code spells. Cached: scan and fix ask several times about one
#: file's code (a string compares by identity first, so a hit costs nothing).
present_words = functools.lru_cache(maxsize=8)(_present)


def words_in(code: str) -> str:
    """A pattern of the legacy words ``code`` spells: an alternation of 63 words costs the
    regular-expression engine far more than one of the one or two a file holds."""
    return _words_pattern(present_words(code))


@functools.lru_cache(maxsize=256)
def _words_pattern(words: tuple[str, ...]) -> str:
    return "|".join(re.escape(word) for word in words) or r"(?!)"


def spells_word(text: str) -> bool:
    """Does ``text`` contain a legacy word? Substring tests: faster than the alternation."""
    return bool(present_words(text))


#: Words that are whole string keys (TVM <=0.19 pass-config keys) and nothing else: a file that
#: spells only these needs no name resolution, so :func:`literal_uses` finds them on the ``ast``.
_LITERAL_ONLY = string_rows()
_RESOLVED_WORDS = tuple(word for word in _WORDS if word not in _LITERAL_ONLY)


class LiteralUse(NamedTuple):
    """A legacy string key found by :func:`literal_uses` (what a ``string``
    :class:`.legacy_uses.Use` says)."""

    row: LegacyApi
    line: int
    col: int
    guarded: bool


def _guards(node: ast.Try) -> bool:
    """:func:`.legacy_uses.guards_import` on the ``ast``: a handler catches ``ImportError`` or
    wider."""
    for handler in node.handlers:
        if handler.type is None:
            return True
        types = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
        for item in types:
            name = item.attr if isinstance(item, ast.Attribute) else getattr(item, "id", "")
            if name in GUARD_NAMES:
                return True
    return False


def literal_uses(code: str) -> list[LiteralUse] | None:
    """The legacy string keys of a file that spells nothing else legacy; None otherwise.

    Most files that pass the word filter only because they name a TVM <=0.19 pass-config key
    (``"tir.noalias"``) need neither alias resolution nor libcst: the keys are found on the
    ``ast`` with the same rules as :class:`.legacy_uses.Use`'s strings (docstrings and bare string
    statements are prose, f-strings are not literals, a ``try`` guarding imports marks its whole
    statement guarded) and the same 1-based character columns.

    Returns
    -------
    list of LiteralUse or None
        None when the code spells a word that needs the full resolver, or ``ast`` cannot parse
        it (libcst then reports the error).
    """
    present = present_words(code)
    if any(word in _RESOLVED_WORDS for word in present):
        return None
    if not present:
        return []  # (callers test spells_word first: most files end there)
    try:
        tree = ast.parse(code)
    except Exception:  # SyntaxError, RecursionError, MemoryError: the full path reports it
        return None
    lines = split_lines(code)
    # Only the statements and expressions around a line that spells a key are walked (a key must
    # be spelled whole on one line, as the full path's statement filter also requires).
    if code.count("\r") == code.count("\r\n"):  # "\n" ends every line: one C search
        # (Only the keys it spells: the alternation of all of them starts with common letters.)
        wanted = sorted(_lines_of(re.finditer(words_in(code), code), code))
    else:  # old Mac line ends ("\r" alone): test line by line
        spelled = re.compile(words_in(code))
        wanted = [n for n, line in enumerate(lines, 1) if spelled.search(line)]
    if not wanted:  # a key split over lines ("tir." "noalias"): walk everything
        wanted = list(range(1, len(lines) + 1))
    found: list[LiteralUse] = []
    stack: list[tuple[ast.AST, bool]] = [(tree, False)]  # iterative: no recursion limit
    while stack:
        node, guarded = stack.pop()
        first = getattr(node, "lineno", None)
        if first is not None:
            at = bisect.bisect_left(wanted, first)
            last = getattr(node, "end_lineno", None) or first
            if at == len(wanted) or wanted[at] > last:
                continue  # no wanted line inside this node
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue  # a docstring or bare string: prose
        if isinstance(node, ast.JoinedStr):
            continue  # an f-string is not a literal key
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            row = _LITERAL_ONLY.get(node.value)
            if row is not None:
                found.append(LiteralUse(row, node.lineno, _ast_column(lines, node), guarded))
            continue
        inner = guarded or (isinstance(node, ast.Try) and _guards(node))
        stack.extend((child, inner) for child in ast.iter_child_nodes(node))
    return sorted(found, key=lambda use: (use.line, use.col))


def _lines_of(matches: Iterator[re.Match[str]], code: str) -> set[int]:
    """The 1-based lines (ended by ``"\\n"``) that matches in order start on, counting the line
    breaks from one match to the next rather than from the start each time."""
    lines: set[int] = set()
    line, counted = 1, 0
    for match in matches:
        line += code.count("\n", counted, match.start())
        counted = match.start()
        lines.add(line)
    return lines


def split_lines(code: str) -> list[str]:
    """The lines of ``code`` as Python numbers them, each with its line break (``str.splitlines``
    also splits at form feeds and Unicode separators, which would shift every line after one)."""
    return _LINES.findall(code)


def _ast_column(lines: list[str], node: ast.expr | ast.stmt) -> int:
    """The 1-based character column of an ``ast`` node (ast counts UTF-8 bytes; libcst, and the
    findings, count characters)."""
    prefix = lines[node.lineno - 1].encode("utf-8")[: node.col_offset]
    return len(prefix.decode("utf-8", errors="replace")) + 1


#: The same test for identifiers, which repeat across a tree (cached; files are not).
identifier_spells_word = functools.lru_cache(maxsize=8192)(lambda text: bool(_present(text)))


# Lines as Python counts them: \r\n, \r or \n (str.splitlines also splits on \f, \v, ...).
_LINES = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")
