"""Find every use of the legacy API in one parsed Python module (shared by ``scan`` and ``fix``).

Resolution goes through libcst's qualified names, so every import spelling and attribute chain
(``import tvm.relay.backend.compile_engine as ce``, ``from tvm import relay`` then
``relay.backend.compile_engine.get()``, ``from tvm.relay.backend.compile_engine import get``)
lands on the same table row. On top of that:

* engine aliases: a name whose every assignment is ``<module>.get()`` is the engine, so
  ``engine.jit`` is ``compile_engine.CompileEngine.jit``; ``compile_engine.get().jit`` likewise;
* string literals equal to a registered global name or a pass-config key (docstrings and bare
  string statements excepted);
* code under ``try: ... except ImportError:`` is marked ``guarded``: it already copes with a
  missing module, so neither the scanner nor the fixer touches it.

Comments never match (they are not code), and a string matches only when it *is* the name.

Speed: libcst's parse and scope analysis cost ~0.5 ms a line, about 30x CPython's ``ast.parse``.
:func:`relevant_code` keeps libcst off almost all code: a file that spells none of the table's
:func:`.api_table.legacy_words` cannot hold a use and is not parsed at all; in one that does,
``ast.parse`` (C, fast) finds the top-level statements, and only those that spell a legacy word or
import something reach libcst, with every other line blanked so that lines and columns stay put.
Imports are kept because they bind the names a kept statement resolves through.
"""

from __future__ import annotations

import ast
import bisect
import contextlib
import functools
import itertools
import re
from collections.abc import Callable, Collection, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple

import libcst as cst
import libcst.metadata as md

from compile_engine_compat.api_table import (
    API_TABLE,
    ENGINE_GETTERS,
    LEGACY_MODULES,
    SHIM_MODULES,
    LegacyApi,
    legacy_words,
    string_rows,
)
from compile_engine_compat.migrate.code_text import GUARD_NAMES, code_only
from compile_engine_compat.migrate.sources import SkipFile

__all__ = [
    "PARSE_LIMIT",
    "WHOLE_PARSE_LIMIT",
    "LeanMetadataWrapper",
    "LiteralUse",
    "Relevant",
    "Use",
    "cut_statements",
    "find_uses",
    "guards_import",
    "literal_uses",
    "module_of_node",
    "parsed",
    "relevant_code",
    "relevant_part",
    "spells_word",
    "split_lines",
]

Origin = Literal["legacy", "shim"]
Kind = Literal["import", "reference", "method", "string", "dynamic"]


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
    """A legacy string key found by :func:`literal_uses` (what a ``string`` :class:`Use` says)."""

    row: LegacyApi
    line: int
    col: int
    guarded: bool


def _guards(node: ast.Try) -> bool:
    """:func:`guards_import` on the ``ast``: a handler catches ``ImportError`` or wider."""
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
    ``ast`` with the same rules as :class:`_Finder`'s strings (docstrings and bare string
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
_identifier_spells_word = functools.lru_cache(maxsize=8192)(lambda text: bool(_present(text)))


# Lines as Python counts them: \r\n, \r or \n (str.splitlines also splits on \f, \v, ...).
_LINES = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


_VISITOR_NAMES: dict[type, tuple[str, ...]] = {}


def _cached_get_visitors(self: cst.BatchableCSTVisitor) -> dict[str, Any]:
    """``BatchableCSTVisitor.get_visitors`` with the method names cached per class.

    libcst calls ``inspect.getmembers`` on each metadata provider at every traversal: ~3 ms a
    provider, about a third of scanning a small file. The names depend only on the class, so
    they are looked up once; the bound methods are still this instance's, and the result is the
    same mapping.
    """
    names = _VISITOR_NAMES.get(type(self))
    if names is None:
        names = tuple(cst.BatchableCSTVisitor.get_visitors(self))
        _VISITOR_NAMES[type(self)] = names
    return {name: getattr(self, name) for name in names}


# Only the providers scan and fix use (ScopeProvider's own dependency, ExpressionContextProvider,
# included), and only where they do not define their own.
for _provider in (
    md.ScopeProvider,
    md.ExpressionContextProvider,
    md.QualifiedNameProvider,
    md.PositionProvider,
    md.ParentNodeProvider,
):
    if "get_visitors" not in vars(_provider):
        _provider.get_visitors = _cached_get_visitors  # type: ignore[method-assign, union-attr]


class LeanMetadataWrapper(md.MetadataWrapper):
    """A ``MetadataWrapper`` that skips the empty walks of providers that work in ``visit_Module``.

    libcst resolves its batchable providers (``ExpressionContextProvider``, ``ScopeProvider``)
    with a batched walk over every node, calling each provider's ``visit_<Node>`` methods. Those
    two define ``visit_Module`` only, which walks the module with a visitor of its own: the
    batched walk then visits every other node for nothing (a fifth of a file's libcst time). For a
    batch whose providers define no other method, this calls ``visit_Module`` alone, with the
    same metadata resolved; any other batch is walked as libcst walks it.
    """

    def visit_batched(
        self,
        visitors: Iterable[cst.BatchableCSTVisitor],
        before_visit: Callable[[cst.CSTNode], None] | None = None,
        after_leave: Callable[[cst.CSTNode], None] | None = None,
    ) -> cst.CSTNode:
        """``MetadataWrapper.visit_batched``, without the walk when it would call nothing but
        ``visit_Module``."""
        visitors = list(visitors)
        if (
            before_visit is not None
            or after_leave is not None
            or any(set(visitor.get_visitors()) - {"visit_Module"} for visitor in visitors)
        ):
            return super().visit_batched(visitors, before_visit, after_leave)
        with contextlib.ExitStack() as stack:
            for visitor in visitors:
                stack.enter_context(visitor.resolve(self))
            for visitor in visitors:
                visit_module = visitor.get_visitors().get("visit_Module")
                if visit_module is not None:
                    visit_module(self.module)
        return self.module


def parsed(code: str) -> LeanMetadataWrapper:
    """``code`` parsed by libcst and wrapped for metadata; the module is the wrapper's own, not a
    deep copy (which cost a tenth of a scan)."""
    return LeanMetadataWrapper(cst.parse_module(code), unsafe_skip_copy=True)


@dataclass(frozen=True)
class Relevant:
    """The relevant part of a module (see :func:`relevant_code`).

    Attributes
    ----------
    code : str
        The kept lines, whole (so columns are unchanged).
    lines : list of int or None
        ``lines[i]`` is the original line of line ``i + 1`` of ``code``; None when ``code`` is
        the whole module.
    placeholders : frozenset of int
        Lines of ``code`` (1-based) that are a ``pass`` standing in for a block's dropped body,
        not the original line they map to.
    """

    code: str
    lines: list[int] | None = None
    placeholders: frozenset[int] = frozenset()

    def original_line(self, line: int) -> int:
        """The module's line number for a line of :attr:`code`."""
        return self.lines[line - 1] if self.lines is not None else line

    def within(self, outer: Relevant) -> Relevant:
        """This part of ``outer.code``, mapped to the lines of the module ``outer`` came from."""
        if outer.lines is None:
            return self
        count = self.code.count("\n") + 1
        inner = self.lines if self.lines is not None else list(range(1, count + 1))
        return Relevant(self.code, [outer.lines[n - 1] for n in inner], self.placeholders)


#: Above this many characters a module is never given to ``ast.parse`` whole (which holds about
#: 220 bytes of memory per byte of source, and takes a second a megabyte): the top-level
#: statements that can matter are cut out of its text first (:func:`cut_statements`).
WHOLE_PARSE_LIMIT = 1 << 20
#: The most code of one file handed to libcst, which takes about a millisecond a line: a file
#: whose relevant part is larger is skipped, with the reason.
PARSE_LIMIT = 128 << 10
# A line that cannot start a top-level statement: indented, blank, a closing bracket, or the
# continuation of a compound statement.
_NOT_STATEMENT = re.compile(r"[ \t\r\n\f)\]}]|(?:else|elif|except|finally)\b")
_TOP_IMPORT = re.compile(r"(?:from|import)\b")


def _mib(size: int) -> str:
    return f"{size / (1 << 20):.1f} MiB"


def cut_statements(code: str) -> Relevant | None:
    """The top-level statements of a large module that can hold a legacy use, without parsing it.

    Strings and comments are blanked first (:func:`.code_text.code_only`), so a line that starts
    at column 0 outside a string, a bracket or a compound statement's continuation starts a
    top-level statement. Kept, as :func:`relevant_code` keeps them: every top-level import, every
    statement that spells a legacy word, and, to a fixed point, every statement that names an
    alias bound by a kept one. Each piece is checked with ``ast.parse`` and widened to the next
    statement boundary until it parses (a column-0 line inside brackets is not a boundary).

    Returns
    -------
    Relevant or None
        None when the module spells no legacy word.

    Raises
    ------
    SkipFile
        When the statements to keep exceed :data:`WHOLE_PARSE_LIMIT`, or one does not parse.
    """
    if not spells_word(code):
        return None
    lines = _LINES.findall(code)
    blank_lines = _LINES.findall(code_only(code))
    starts = [
        index
        for index, line in enumerate(blank_lines)
        if line
        and not _NOT_STATEMENT.match(line)
        and not (index and blank_lines[index - 1].rstrip("\r\n").endswith("\\"))
    ]
    offsets = list(itertools.accumulate(len(line) for line in lines))
    too_large = SkipFile(
        f"more than {_mib(WHOLE_PARSE_LIMIT)} of its statements spell legacy names "
        f"(a {_mib(len(code))} file): split it to scan it"
    )
    # Lines to keep: those spelling a word (in strings too: keys), and top-level imports. Their
    # own length bounds what is kept from below: a file over the limit stops here, early.
    wanted = {i for i in starts if _TOP_IMPORT.match(blank_lines[i])}
    size = sum(len(lines[i]) for i in wanted)
    for match in re.finditer(words_in(code), code):
        index = bisect.bisect_right(offsets, match.start())
        if index not in wanted:
            wanted.add(index)
            size += len(lines[index])
            if size > WHOLE_PARSE_LIMIT:
                raise too_large
    pieces = _Pieces()
    searched: set[str] = set()
    done: set[int] = set()
    for _ in range(8):  # aliases of aliases: a fixed point, bounded
        for index in sorted(wanted - done):
            done.add(index)
            if pieces.covers(index):
                continue
            at = bisect.bisect_right(starts, index) - 1
            first = starts[at] if at >= 0 else 0
            end = starts[at + 1] if at + 1 < len(starts) else len(lines)
            pieces.add(*_parseable(lines, starts, first, end), lines)
            if pieces.size > WHOLE_PARSE_LIMIT:
                raise too_large
        text = pieces.text(lines)
        names = _aliases(ast.parse(text), text) - searched
        searched |= names
        if not names:
            break
        pattern = re.compile(r"(?<![\w.])(?:" + "|".join(map(re.escape, sorted(names))) + r")\b")
        blank = "".join(blank_lines)
        more = {bisect.bisect_right(offsets, m.start()) for m in pattern.finditer(blank)}
        if more <= wanted:
            break
        wanted |= more
    return Relevant(pieces.text(lines), [i + 1 for b, e in pieces.spans for i in range(b, e)])


class _Pieces:
    """Disjoint, sorted line ranges ``[begin, end)`` of a module, merged as they are added."""

    def __init__(self) -> None:
        self.spans: list[tuple[int, int]] = []
        self.size = 0  # characters in them

    def covers(self, index: int) -> bool:
        at = bisect.bisect_right(self.spans, (index, float("inf"))) - 1
        return at >= 0 and self.spans[at][0] <= index < self.spans[at][1]

    def add(self, begin: int, end: int, lines: list[str]) -> None:
        low = bisect.bisect_left(self.spans, (begin, -1))
        while low > 0 and self.spans[low - 1][1] >= begin:
            low -= 1
        high = low
        while high < len(self.spans) and self.spans[high][0] <= end:
            high += 1
        merged = self.spans[low:high]
        for old_begin, old_end in merged:
            self.size -= sum(len(lines[i]) for i in range(old_begin, old_end))
        begin = min([begin, *(b for b, _ in merged)])
        end = max([end, *(e for _, e in merged)])
        self.size += sum(len(lines[i]) for i in range(begin, end))
        self.spans[low:high] = [(begin, end)]

    def text(self, lines: list[str]) -> str:
        return "".join(line for begin, end in self.spans for line in lines[begin:end])


def _parseable(lines: list[str], starts: list[int], first: int, end: int) -> tuple[int, int]:
    """Widen ``lines[first:end]`` to statement boundaries until ``ast`` parses it.

    Raises
    ------
    SkipFile
        If it still does not parse after a few widenings (a syntax error there).
    """
    for attempt in range(12):
        try:
            ast.parse("".join(lines[first:end]))
            return first, end
        except SyntaxError:
            pass
        except (RecursionError, MemoryError, ValueError):
            break
        if attempt % 2 == 0 and end < len(lines):  # a decorator, or a bracket opened above
            later = bisect.bisect_right(starts, end)
            end = starts[later] if later < len(starts) else len(lines)
        elif first > 0:
            earlier = bisect.bisect_left(starts, first) - 1
            first = starts[earlier] if earlier >= 0 else 0
    raise SkipFile(f"failed to parse: invalid syntax near line {first + 1}")


@functools.lru_cache(maxsize=8)  # scan and fix of one file share the work
def relevant_part(code: str) -> Relevant | None:
    """What libcst is given of a module: :func:`relevant_code` (after :func:`cut_statements` for
    a module larger than :data:`WHOLE_PARSE_LIMIT`), mapped to the module's lines.

    Raises
    ------
    SkipFile
        If that is larger than :data:`PARSE_LIMIT` (or see :func:`cut_statements`).
    """
    outer = cut_statements(code) if len(code) > WHOLE_PARSE_LIMIT else None
    inner = relevant_code(outer.code if outer is not None else code)
    if inner is None:
        return None
    part = inner.within(outer) if outer is not None else inner
    if len(part.code) > PARSE_LIMIT:
        try:
            ast.parse(part.code)
        except SyntaxError as exc:
            raise SkipFile(f"failed to parse: {exc.msg} (line {exc.lineno})") from None
        except (RecursionError, MemoryError, ValueError):
            pass
        raise SkipFile(
            f"{_mib(len(part.code))} of its code uses legacy names, more than the "
            f"{_mib(PARSE_LIMIT)} parsed per file: split it to scan it"
        )
    return part


def relevant_code(code: str) -> Relevant | None:
    """The part of ``code`` that can hold a legacy use, at the same lines and columns.

    Parameters
    ----------
    code : str
        A module's source.

    Returns
    -------
    str or None
        None when ``code`` spells no legacy word (nothing to find). Otherwise the lines of
        ``code`` that matter, whole, with a map back to their line numbers (a block left empty
        gets one ``pass``); all of ``code`` if ``ast`` cannot parse it (libcst then reports or
        handles it). Kept: every top-level
        statement that spells a legacy word or an alias of one (``engine = get()`` then
        ``engine.jit``, followed to a fixed point), the headers of the functions, classes and
        blocks around them (an ``if``/``elif``/``else`` chain keeps only its relevant branches),
        and the imports that bind a name the kept code uses (a ``try`` or ``if`` holding such an
        import is kept whole: it may guard it).
    """
    if not spells_word(code):  # the one test most files ever see: keep it cheapest
        return None
    try:
        tree = ast.parse(code)
    except Exception:  # SyntaxError, RecursionError, MemoryError, ValueError: let libcst judge
        return Relevant(code)
    names = _aliases(tree, code)
    words = [words_in(code)]
    if names:
        words.append(r"\b(?:" + "|".join(map(re.escape, sorted(names))) + r")\b")
    reducer = _Reducer(_LINES.findall(code), re.compile("|".join(words)))
    reducer.mark(tree.body)
    reducer.mark_imports(tree.body)
    return reducer.text()


class _Reducer:
    """Marks the lines of the statements to keep, recursing into simple blocks."""

    # Blocks with one statement list, whose body can be thinned without touching else/except.
    _BLOCKS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.With, ast.AsyncWith)
    _LOOPS = (ast.If, ast.For, ast.AsyncFor, ast.While)

    def __init__(self, lines: list[str], keep: re.Pattern[str]) -> None:
        self.lines = lines
        self.pattern = keep
        self.keep = [False] * len(lines)
        self.passes: dict[int, int] = {}  # line index -> column of a ``pass`` that fills a block

    @staticmethod
    def span(node: ast.stmt) -> tuple[int, int]:
        first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", ()))])
        return first, node.end_lineno or node.lineno

    def _starts_line(self, node: ast.stmt) -> bool:
        return not self.lines[node.lineno - 1][: node.col_offset].strip()

    def mark(self, statements: list[ast.stmt]) -> bool:
        """Mark what to keep of ``statements``; returns whether anything was kept."""
        kept = False
        for node in statements:
            first, last = self.span(node)
            if not self.pattern.search("".join(self.lines[first - 1 : last])):
                continue
            kept = True
            if not self._thin(node, first):
                self.keep[first - 1 : last] = [True] * (last - first + 1)
        return kept

    def _keep(self, node: ast.stmt) -> None:
        first, last = self.span(node)
        self.keep[first - 1 : last] = [True] * (last - first + 1)

    def mark_imports(self, statements: list[ast.stmt]) -> None:
        """Keep the imports that bind a name the kept lines use, in the blocks kept so far, and
        the last import of the module's leading imports: ``fix`` adds its imports after it,
        which then lands where a fix of the whole module puts them."""
        kept_text = "".join(line for line, keep in zip(self.lines, self.keep) if keep)
        used = set(_IDENTIFIER.findall(kept_text))
        self._imports(statements, used)
        leading = None
        for node in statements:
            if isinstance(node, ast.Import | ast.ImportFrom):
                leading = node
            elif not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)):
                break
        if leading is not None and any(self.keep):
            self._keep(leading)

    def _imports(self, statements: list[ast.stmt], used: set[str]) -> None:
        for node in statements:
            first, last = self.span(node)
            if self.keep[first - 1]:  # kept (a header at least): look inside
                for block in ("body", "orelse", "finalbody"):
                    inner = getattr(node, block, None)
                    if isinstance(inner, list) and inner and isinstance(inner[0], ast.stmt):
                        self._imports(inner, used)
                for handler in getattr(node, "handlers", ()):
                    self._imports(handler.body, used)
            elif "import" in "".join(self.lines[first - 1 : last]) and any(
                isinstance(part, ast.Import | ast.ImportFrom)
                and (_binds(part) & used or "*" in _binds(part))
                for part in ast.walk(node)
            ):
                self._keep(node)

    def _body(self, header_first: int, body: list[ast.stmt]) -> None:
        """Keep a block's header lines (from ``header_first``) and the body's relevant part, or a
        ``pass`` for it."""
        body_first = self.span(body[0])[0]
        self.keep[header_first - 1 : body_first - 1] = [True] * (body_first - header_first)
        if not self.mark(body):
            self.passes[body_first - 1] = body[0].col_offset

    def _thin(self, node: ast.stmt, first: int) -> bool:
        """Keep only the relevant part of a compound statement; False if it must be kept whole
        (a ``try``, a ``match``, a body on the header's line)."""
        body = getattr(node, "body", None)
        if not (
            isinstance(node, self._BLOCKS + self._LOOPS)
            and body
            and self._starts_line(body[0])
            and body[0].lineno > node.lineno
        ):
            return False
        orelse: list[ast.stmt] = getattr(node, "orelse", [])
        if orelse and not self._starts_line(orelse[0]):
            return False
        self._body(first, body)
        if not orelse:
            return True
        else_first = self.span(orelse[0])[0]
        text = "".join(self.lines[else_first - 1 : (orelse[-1].end_lineno or else_first)])
        if not self.pattern.search(text):
            return True  # nothing relevant after the body: the rest of the chain is dropped
        elif_ = (
            isinstance(node, ast.If)
            and len(orelse) == 1
            and isinstance(orelse[0], ast.If)
            and self.lines[orelse[0].lineno - 1].lstrip().startswith("elif")
        )
        if elif_:
            if not self._thin(orelse[0], else_first):
                last = orelse[0].end_lineno or else_first
                self.keep[else_first - 1 : last] = [True] * (last - else_first + 1)
            return True
        # ``else:``: the lines from the end of the body to the else body hold its header.
        body_last = body[-1].end_lineno or body[-1].lineno
        self._body(body_last + 1, orelse)
        return True

    def text(self) -> Relevant:
        # Dropped lines are left out, not blanked: libcst builds a node for every empty line.
        out = []
        lines = []
        placeholders = set()
        for index, line in enumerate(self.lines):
            if self.keep[index]:
                out.append(line)
            elif index in self.passes:
                column = self.passes[index]
                out.append(line[:column] + "pass" + line[len(line.rstrip("\r\n")) :])
                placeholders.add(len(out))
            else:
                continue
            lines.append(index + 1)
        return Relevant("".join(out), lines, frozenset(placeholders))


@functools.lru_cache(maxsize=64)
def star_members(module: str) -> frozenset[str]:
    """The names ``from <module> import *`` binds that are rows, for a legacy module spelled
    absolutely or relatively (``..backend.compile_engine``): ``get``, ``CCacheKey``, ..."""
    last = module.rsplit(".", 1)[-1]
    members: set[str] = set()
    for path, prefix in LEGACY_MODULES.items():
        if path.rsplit(".", 1)[-1] == last:
            members |= {
                name[len(prefix) + 1 :].split(".")[0]
                for name in API_TABLE
                if name.startswith(prefix + ".")
            }
    return frozenset(members)


_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")


def _binds(node: ast.Import | ast.ImportFrom) -> set[str]:
    """The names an import statement binds (``*`` for a star import)."""
    if isinstance(node, ast.Import):
        return {alias.asname or alias.name.split(".")[0] for alias in node.names}
    return {alias.asname or alias.name for alias in node.names}


#: The last name of the calls that return the engine (``compile_engine.get()``).
_GETTERS = frozenset(name.rsplit(".", 1)[-1] for name in ENGINE_GETTERS)


def _held_roots(value: ast.expr) -> tuple[bool, set[str]] | None:
    """Can ``value`` hold a legacy module or engine, as the libcst finder binds them? Then
    (whether a string in it spells a legacy word, the identifiers it is made of).

    A name or attribute chain (``ce``, ``relay.backend.compile_engine``); a call of a getter
    through one (``ce.get()``) or of a name (``get_engine()``); ``importlib.import_module`` of a
    legacy module (a string that spells a word). Anything else (``engine.lower(f, t)``, an
    arithmetic) holds a result, not the module or engine.
    """
    if isinstance(value, ast.Call):
        literal = any(
            isinstance(arg, ast.Constant) and isinstance(arg.value, str) and spells_word(arg.value)
            for arg in value.args
        )
        func = value.func
        if isinstance(func, ast.Attribute) and func.attr not in _GETTERS and not literal:
            return None
        chain = _held_roots(func)
        return (literal, chain[1]) if chain is not None else None
    identifiers: set[str] = set()
    while isinstance(value, ast.Attribute):
        identifiers.add(value.attr)
        value = value.value
    if not isinstance(value, ast.Name):
        return None
    identifiers.add(value.id)
    return False, identifiers


#: ``\bimport\b``, written to start with its letters (see :func:`_aliases`).
_IMPORT_WORD = re.compile(r"import\b(?<!\wimport)")
_WORD_START = re.compile(r"\w")


def _names_pattern(names: tuple[str, ...]) -> re.Pattern[str]:
    r"""``\b(?:name|...)\b`` for identifiers, written to start with their letters: ``\b`` before
    a word character is "no word character before it", checked behind the name."""
    alternatives = [
        f"{re.escape(name)}(?<!\\w{re.escape(name)})"
        if _WORD_START.match(name)
        else rf"\b{re.escape(name)}"
        for name in names
    ]
    return re.compile("(?:" + "|".join(alternatives) + r")\b")


def _aliases(tree: ast.Module, code: str | None = None) -> set[str]:
    """Names bound to something legacy, followed to a fixed point.

    ``from <legacy module> import get`` binds ``get``; ``engine = get()`` (or ``self.engine =
    ...``, ``mod = importlib.import_module("...compile_engine")``) binds ``engine``: the
    assignment's value spells a legacy word or an alias. Names bound to anything else are not
    followed, so a common name (``mod``, ``out``) does not pull the whole file in.

    Given the module's ``code``, only the statements around lines that spell a legacy word, an
    ``import`` or a name found so far are walked (most of a module is neither); each round adds
    the names the last one found, until none are new.
    """
    names: set[str] = set()
    starts = [0, *(m.end() for m in re.finditer(r"\r\n|\r|\n", code))] if code else []
    present = re.compile(words_in(code)) if code else None
    while True:
        wanted: list[int] | None = None
        if code is not None:
            # The lines holding a word, an ``import`` or a name. Every match lies within one
            # line, so the lines of each pattern's matches, joined, are those of one alternation
            # of all three; apart, each pattern starts with its letters and is searched in C.
            patterns = [present, _IMPORT_WORD] if present is not None else [_IMPORT_WORD]
            if names:
                patterns.append(_names_pattern(tuple(sorted(names))))
            lines = {
                bisect.bisect_right(starts, m.start()) for p in patterns for m in p.finditer(code)
            }
            wanted = sorted(lines)
        more = _bindings(tree, wanted, names)
        if more <= names:
            return names
        names |= more


def _bindings(tree: ast.Module, wanted: list[int] | None, names: set[str]) -> set[str]:
    """One round of :func:`_aliases`: the names bound to a legacy word or to one of ``names``,
    walking only the nodes that span a ``wanted`` line (all when None)."""
    bound_names: set[str] = set()
    pending: list[tuple[set[str], set[str]]] = []
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        first = getattr(node, "lineno", None)
        if wanted is not None and first is not None:
            at = bisect.bisect_left(wanted, first)
            if at == len(wanted) or wanted[at] > (getattr(node, "end_lineno", None) or first):
                continue  # no wanted line inside this node
        if isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if spells_word(module):
                bound_names |= {alias.asname or alias.name for alias in node.names} - {"*"}
                if any(alias.name == "*" for alias in node.names):
                    bound_names |= star_members(module)
            else:  # ``from tvm.relay.backend import compile_engine as ce``: ``ce``
                bound_names |= {a.asname or a.name for a in node.names if spells_word(a.name)}
            continue
        if isinstance(node, ast.Import):
            bound_names |= {a.asname for a in node.names if a.asname and spells_word(a.name)}
            continue
        if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            bound = {
                t.id if isinstance(t, ast.Name) else t.attr
                for t in targets
                if isinstance(t, ast.Name | ast.Attribute)
            }
            roots = _held_roots(node.value)
            if bound and roots is not None:
                if any(map(_identifier_spells_word, roots[1])) or roots[0]:
                    bound_names |= bound
                else:
                    pending.append((bound, roots[1]))
        stack.extend(ast.iter_child_nodes(node))
    known = names | bound_names
    changed = True
    while changed:
        changed = False
        for bound, identifiers in pending:
            if not bound <= known and identifiers & known:
                known |= bound
                changed = True
    return known


@dataclass(frozen=True)
class Use:
    """One use of a legacy name.

    Attributes
    ----------
    node : libcst.CSTNode
        The node in the wrapper's module: an ``ImportAlias``, a ``Name``/``Attribute`` reference
        (for ``method``, the ``Attribute`` whose ``attr`` is the method), or a string.
    kind : {"import", "reference", "method", "string", "dynamic"}
        ``dynamic``: reached through ``importlib.import_module``/``getattr`` with a literal name,
        through a module alias made that way, or through ``from tvm.relay.backend import *``;
        no mechanical fix.
    row : LegacyApi
    origin : {"legacy", "shim"}
        Reached through ``tvm.relay.backend`` (or a registered name) or through the shim.
    line, col : int
        1-based position of ``node``.
    guarded : bool
        Inside a ``try`` that handles ``ImportError``.
    statement : libcst.CSTNode or None
        For imports: the ``Import``/``ImportFrom`` statement.
    module : str or None
        For ``from`` imports: the absolute module imported from (a relative import resolved).
    module_node : libcst.CSTNode or None
        For references: the sub-expression that names the legacy module (``relay.backend.
        compile_engine`` in ``relay.backend.compile_engine.get``), if the reference spells it.
    """

    node: cst.CSTNode
    kind: Kind
    row: LegacyApi
    origin: Origin
    line: int
    col: int
    guarded: bool
    statement: cst.CSTNode | None = None
    module_node: cst.CSTNode | None = None
    module: str | None = None


def dotted(node: cst.CSTNode) -> str:
    """``a.b.c`` for a Name/Attribute chain, ``""`` for anything else."""
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        base = dotted(node.value)
        return f"{base}.{node.attr.value}" if base else ""
    return ""


def _split(qualified: str) -> tuple[str, str, Origin] | None:
    """``tvm.relay.backend.compile_engine.get`` -> (module path, row name, origin)."""
    for modules, origin in ((LEGACY_MODULES, "legacy"), (SHIM_MODULES, "shim")):
        for module, prefix in modules.items():
            if qualified == module:
                return module, prefix, origin  # type: ignore[return-value]
            if qualified.startswith(module + "."):
                return module, prefix + qualified[len(module) :], origin  # type: ignore[return-value]
    return None


#: Is a dotted module (``myproj.backend.compile_engine``) the project's own, on disk?
LocalModules = Callable[[str], bool]


def absolute(name: str, package: str | None, local: LocalModules | None = None) -> str | None:
    """Resolve a relative dotted name (``..backend.compile_engine.get``) against ``package``.

    Outside a known package (no ``__init__.py`` found), a relative name counts only when it
    spells at least the last two components of a legacy module (``..backend.compile_engine``):
    enough to recognise TVM's own layout without guessing at a one-word ``from . import x``.

    Inside a package that is not TVM (``myproj.sub``), ``from ..backend import compile_engine``
    resolves to ``myproj.backend.compile_engine``; given ``local``, such a name that spells a
    legacy module's layout is that legacy module unless the project has the module itself (a
    copied or vendored piece of TVM's tree, whose imports still name TVM's layout).
    """
    if not name.startswith("."):
        return name
    level = len(name) - len(name.lstrip("."))
    rest = name[level:]
    resolved = None
    if package:
        parts = package.split(".")
        if level - 1 < len(parts) + 1:  # else beyond the top-level package
            base = parts[: len(parts) - (level - 1)]
            resolved = ".".join([*base, rest] if rest else base) or None
        if local is None or (resolved is not None and _split(resolved) is not None):
            return resolved
    for module in LEGACY_MODULES:
        parts = module.split(".")
        for size in range(len(parts) - 1, 1, -1):
            suffix = ".".join(parts[-size:])
            if rest == suffix or rest.startswith(suffix + "."):
                own = absolute("." * level + suffix, package) if package else None
                if own is not None and local is not None and local(own):
                    return resolved
                return module + rest[len(suffix) :]
    return resolved


def module_of_node(qualified: str) -> str | None:
    """The legacy or shim module path a qualified name lies in, if any."""
    split = _split(qualified)
    return split[0] if split else None


def guards_import(node: cst.Try) -> bool:
    """True when one of the ``try``'s handlers catches ``ImportError`` (or something wider)."""
    for handler in node.handlers:
        if handler.type is None:
            return True
        types = handler.type.elements if isinstance(handler.type, cst.Tuple) else [handler.type]
        for item in types:
            expr = item.value if isinstance(item, cst.Element) else item
            if dotted(expr).rsplit(".", 1)[-1] in GUARD_NAMES:
                return True
    return False


_IMPORTERS = {"importlib.import_module", "builtins.__import__"}


class Binding(NamedTuple):
    """What an alias holds."""

    #: The row-name prefix of its members: ``compile_engine`` (a module) or
    #: ``compile_engine.CompileEngine`` (the engine).
    prefix: str
    origin: Origin
    #: Reached through ``importlib``/``getattr`` or a star import of ``tvm.relay.backend``:
    #: the import swap cannot fix it.
    dynamic: bool = False


class Resolved(NamedTuple):
    """A name resolved to a row: its name, origin, and whether the fix cannot reach it."""

    name: str
    origin: Origin
    #: Bound by ``from tvm.relay.backend import *``: no import names it for the fix to swap.
    dynamic: bool = False


#: Row-name prefixes that are modules (an alias of one holds the module).
_MODULE_PREFIXES = frozenset(LEGACY_MODULES.values()) | frozenset(SHIM_MODULES.values())


class _Resolver(cst.CSTVisitor):
    """What both passes share: relative names, the enclosing class, and alias bindings."""

    # Not QualifiedNameProvider: its pass over every node of the module cost a quarter of a
    # file's libcst time; :meth:`_qualified` asks the scopes about the nodes that matter only.
    METADATA_DEPENDENCIES = (md.ScopeProvider, md.PositionProvider)

    def __init__(self, package: str | None, local: LocalModules | None = None) -> None:
        super().__init__()
        self.package = package
        self.local = local
        #: Name targets bound to a module or engine: ``e = compile_engine.get()``,
        #: ``mod = importlib.import_module("tvm.relay.backend.compile_engine")``.
        self.targets: dict[cst.CSTNode, Binding] = {}
        #: ``(class, "self.engine")`` -> binding, None once anything else is assigned there.
        self.attributes: dict[tuple[cst.ClassDef | None, str], Binding | None] = {}
        #: Modules star-imported (``from X import *``), absolute: their rows' names are bound.
        self.stars: list[str] = []
        self._classes: list[cst.ClassDef] = []
        self._qualified_names: dict[cst.CSTNode, Collection[md.QualifiedName]] = {}

    # No ``visit_<Node>_<field>`` hooks here: skip libcst's lookup of one per field of every
    # node (a tenth of a traversal).
    def on_visit_attribute(self, node: cst.CSTNode, attribute: str) -> None:
        """Nothing: this visitor has no per-field hooks."""

    def on_leave_attribute(self, original_node: cst.CSTNode, attribute: str) -> None:
        """Nothing: this visitor has no per-field hooks."""

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._classes.append(node)

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self._classes.pop()

    @property
    def _class(self) -> cst.ClassDef | None:
        return self._classes[-1] if self._classes else None

    def _qualified(self, node: cst.CSTNode) -> Collection[md.QualifiedName]:
        """What ``QualifiedNameProvider`` gives ``node``: its scope's qualified names for it,
        none if it has no scope (computed once per node)."""
        names = self._qualified_names.get(node)
        if names is None:
            scope = self.get_metadata(md.ScopeProvider, node, None)
            names = scope.get_qualified_names_for(node) if scope else set()
            self._qualified_names[node] = names
        return names

    def _absolute(self, name: str) -> str | None:
        return absolute(name, self.package, self.local)

    def _split(self, qualified: str) -> tuple[str, str, Origin] | None:
        name = self._absolute(qualified)
        return _split(name) if name else None

    def _resolve(self, node: cst.CSTNode) -> Resolved | None:
        """The row name and origin of a Name/Attribute, if all its meanings are legacy or shim."""
        qualified = self._qualified(node)
        if not qualified:
            return self._star(node) if self.stars else None
        splits = [self._split(q.name) for q in qualified]
        if any(s is None for s in splits):
            return None
        origins = {s[2] for s in splits if s}
        names = sorted({s[1] for s in splits if s})
        # Legacy in ``try`` and shim in ``except ImportError``: that is the shim's name.
        return Resolved(names[0], "legacy" if origins == {"legacy"} else "shim")

    def _star(self, name: cst.CSTNode) -> Resolved | None:
        """A name no assignment binds, read as a member of a star-imported legacy module (and
        the attribute chains from it)."""
        if isinstance(name, cst.Attribute):
            base = self._resolve(name.value)
            member = f"{base.name}.{name.attr.value}" if base else ""
            if base and member in API_TABLE:
                return base._replace(name=member)
            return None
        if not isinstance(name, cst.Name) or name.value.startswith("_"):  # ``*`` skips private
            return None
        scope = self.get_metadata(md.ScopeProvider, name, None)
        if scope is None:
            return None
        accesses = [access for access in scope.accesses[name] if access.node is name]
        if not accesses or any(access.referents for access in accesses):
            return None  # not a read (an attribute's name), or bound here or a builtin
        for module in self.stars:
            split = _split(f"{module}.{name.value}")
            if split and split[1] in API_TABLE:
                # From a legacy module, the import swap fixes it; from its package, nothing does.
                return Resolved(split[1], split[2], dynamic=_split(module) is None)
        return None

    def _name_alias(self, name: cst.Name) -> Binding | None:
        """The binding if every assignment reaching ``name`` binds the same module or engine."""
        scope = self.get_metadata(md.ScopeProvider, name, None)
        if scope is None:
            return None
        bound: set[Binding] = set()
        for access in scope.accesses[name]:
            if access.node is not name:
                continue
            for referent in access.referents:
                target = getattr(referent, "node", None)
                if target not in self.targets:
                    return None
                bound.add(self.targets[target])
        return bound.pop() if len(bound) == 1 else None

    def _alias(self, node: cst.CSTNode) -> Binding | None:
        """What an alias holds: a Name bound as above, or ``self.engine`` within its class."""
        if isinstance(node, cst.Name):
            return self._name_alias(node)
        if isinstance(node, cst.Attribute):
            text = dotted(node)
            return self.attributes.get((self._class, text)) if text else None
        return None

    def _held(self, node: cst.CSTNode) -> Binding | None:
        """What ``node`` holds, if a module or an engine: an alias, a getter or importlib call,
        or a dotted name of a legacy module (``relay.backend.compile_engine``)."""
        held = self._alias(node)
        if held is None and isinstance(node, cst.Call):
            held = self._engine_call(node) or self._imported_module(node)
        if held is None and isinstance(node, cst.Name | cst.Attribute):
            resolved = self._resolve(node)
            held = Binding(*resolved) if resolved else None
        return held

    def _literal(self, node: cst.CSTNode) -> str | None:
        if isinstance(node, cst.SimpleString | cst.ConcatenatedString):
            try:
                value = node.evaluated_value
            except Exception:  # malformed escapes: not a name
                return None
            return value if isinstance(value, str) else None
        return None

    def _imported_module(self, call: cst.Call) -> Binding | None:
        """``importlib.import_module("tvm.relay.backend.compile_engine")``: that module's row."""
        if not call.args or call.args[0].keyword is not None:
            return None
        names = {q.name for q in self._qualified(call.func)}
        literal = self._literal(call.args[0].value)
        if not names & _IMPORTERS or literal is None:
            return None
        split = _split(literal)
        if split and split[1] in API_TABLE and literal == split[0]:
            return Binding(split[1], split[2], dynamic=True)
        return None

    def _engine_call(self, call: cst.Call) -> Binding | None:
        """``compile_engine.get()`` (any spelling, or through a module alias): the engine."""
        resolved = self._resolve(call.func)
        if resolved and resolved.name in ENGINE_GETTERS:
            return Binding(ENGINE_GETTERS[resolved.name], resolved.origin, resolved.dynamic)
        if isinstance(call.func, cst.Attribute):
            held = self._alias(call.func.value)
            if held is None and isinstance(call.func.value, cst.Call):
                held = self._imported_module(call.func.value)
            getter = f"{held.prefix}.{call.func.attr.value}" if held else ""
            if held and getter in ENGINE_GETTERS:
                return Binding(ENGINE_GETTERS[getter], held.origin, held.dynamic)
        return None


class _EngineTargets(_Resolver):
    """First pass: star imports, and names and ``self.`` attributes bound to an engine or a
    legacy module."""

    def on_visit(self, node: cst.CSTNode) -> bool:
        # What this pass reads are statements (imports, assignments, classes), and no statement
        # lies inside an expression: its subtrees, most of the module's nodes, are not walked.
        return not isinstance(node, cst.BaseExpression) and super().on_visit(node)

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        if isinstance(node.names, cst.ImportStar):
            relative = "." * len(node.relative)
            text = relative + (dotted(node.module) if node.module is not None else "")
            module = self._absolute(text) if text else None
            if module and any(
                legacy == module or legacy.startswith(module + ".") for legacy in LEGACY_MODULES
            ):
                self.stars.append(module)
        return False

    def _bind(self, target: cst.CSTNode, value: cst.CSTNode | None) -> None:
        binding = None
        if isinstance(value, cst.Call):
            binding = self._engine_call(value) or self._imported_module(value)
        elif isinstance(value, cst.Name | cst.Attribute):  # ``ce2 = compile_engine``
            held = self._held(value)
            if held is not None and (
                held.prefix in _MODULE_PREFIXES or held.prefix in ENGINE_GETTERS.values()
            ):
                binding = held
        if isinstance(target, cst.Name):
            if binding:
                self.targets[target] = binding
        elif isinstance(target, cst.Attribute) and dotted(target):
            key = (self._class, dotted(target))
            if binding is None or self.attributes.get(key, binding) != binding:
                self.attributes[key] = None  # assigned something else too: not an alias
            else:
                self.attributes[key] = binding

    def visit_Assign(self, node: cst.Assign) -> None:
        if len(node.targets) == 1:
            self._bind(node.targets[0].target, node.value)
        else:
            for target in node.targets:
                self._bind(target.target, None)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._bind(node.target, node.value)


class _Finder(_Resolver):
    def __init__(self, first: _EngineTargets) -> None:
        super().__init__(first.package, first.local)
        self.uses: list[Use] = []
        self.targets = first.targets
        self.attributes = first.attributes
        self.stars = first.stars
        self._guards: list[cst.Try] = []
        self._strings = string_rows()

    # -- bookkeeping ----------------------------------------------------------------------------

    def _add(self, node: cst.CSTNode, kind: Kind, row: LegacyApi, origin: Origin, **extra: object):
        start = self.get_metadata(md.PositionProvider, node).start
        self.uses.append(
            Use(node, kind, row, origin, start.line, start.column + 1, bool(self._guards), **extra)  # type: ignore[arg-type]
        )

    def visit_Try(self, node: cst.Try) -> None:
        self._guards.append(node) if guards_import(node) else None

    def leave_Try(self, original_node: cst.Try) -> None:
        if self._guards and self._guards[-1] is original_node:
            self._guards.pop()

    # -- imports --------------------------------------------------------------------------------

    def visit_Import(self, node: cst.Import) -> bool:
        for alias in node.names:
            split = _split(dotted(alias.name))
            if split and split[2] == "legacy" and split[1] in API_TABLE:
                self._add(alias, "import", API_TABLE[split[1]], "legacy", statement=node)
        return False

    def _relative_module(self, node: cst.ImportFrom, module_text: str) -> str | None:
        """The absolute module of a relative ``from`` import: the first imported name that is
        legacy decides (``from ..backend import compile_engine`` is TVM's layout), else the
        module itself."""
        relative = "." * len(node.relative)
        imported = node.names if isinstance(node.names, list | tuple) else ()
        for alias in imported:
            spelled = f"{relative}{module_text}{'.' if module_text else ''}{dotted(alias.name)}"
            full = self._absolute(spelled)
            if full and _split(full):
                return full.rsplit(".", 1)[0]
        return self._absolute(relative + module_text)

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        module = dotted(node.module) if node.module is not None else ""
        if node.relative:
            module = self._relative_module(node, module) or ""
        if not module:
            return False
        names = node.names if isinstance(node.names, list | tuple) else None
        if names is None:  # from X import *
            split = _split(module)
            if split and split[2] == "legacy" and split[1] in API_TABLE:
                self._add(
                    node, "import", API_TABLE[split[1]], "legacy", statement=node, module=module
                )
            return False
        for alias in names:
            split = _split(f"{module}.{dotted(alias.name)}")
            if split is None or split[2] != "legacy":
                continue
            row = API_TABLE.get(split[1]) or API_TABLE.get(split[1].rsplit(".", 1)[0])
            if row is not None and module != "tvm.relay.backend._backend":
                self._add(alias, "import", row, "legacy", statement=node, module=module)
        return False

    # -- references -----------------------------------------------------------------------------

    def _module_node(self, node: cst.CSTNode) -> cst.CSTNode | None:
        while isinstance(node, cst.Attribute | cst.Name):
            for qualified in self._qualified(node):
                name = self._absolute(qualified.name)
                if name in LEGACY_MODULES or name in SHIM_MODULES:
                    return node
            if isinstance(node, cst.Name):
                return None
            node = node.value
        return None

    def _member(self, node: cst.CSTNode, held: Binding, member: str) -> None:
        """A member of a module or engine held by an alias or call: fixed with the import unless
        reached dynamically."""
        row = API_TABLE.get(f"{held.prefix}.{member}")
        if row is not None:
            self._add(node, "dynamic" if held.dynamic else "method", row, held.origin)

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        method = node.attr.value
        if isinstance(node.value, cst.Call):
            held = self._engine_call(node.value) or self._imported_module(node.value)
            if held:
                self._member(node, held, method)
            return True
        resolved = self._resolve(node)
        if resolved and resolved.name in API_TABLE:
            self._add(
                node,
                "dynamic" if resolved.dynamic else "reference",
                API_TABLE[resolved.name],
                resolved.origin,
                module_node=self._module_node(node),
            )
            return False
        held = self._alias(node.value)
        if held and f"{held.prefix}.{method}" in API_TABLE:
            self._member(node, held, method)
            return False
        return True

    def visit_Call(self, node: cst.Call) -> None:
        imported = self._imported_module(node)
        if imported:
            self._add(node, "dynamic", API_TABLE[imported.prefix], imported.origin)
            return
        # getattr(<module, engine or alias>, "name"): the literal names the member.
        if not (isinstance(node.func, cst.Name) and node.func.value == "getattr"):
            return
        if len(node.args) < 2 or any(arg.keyword or arg.star for arg in node.args[:2]):
            return
        member = self._literal(node.args[1].value)
        holder = node.args[0].value
        if not member:
            return
        held = self._held(holder)
        if held is not None:
            row = API_TABLE.get(f"{held.prefix}.{member}")
            if row is not None:
                self._add(node, "dynamic", row, held.origin)
            return
        # getattr(relay.backend, "compile_engine"): the literal completes a legacy module's name.
        for qualified in self._qualified(holder):
            base = self._absolute(qualified.name)
            split = _split(f"{base}.{member}") if base else None
            if split and split[1] in API_TABLE:
                self._add(node, "dynamic", API_TABLE[split[1]], split[2])
                return

    def visit_Name(self, node: cst.Name) -> None:
        resolved = self._resolve(node)
        # A plain name bound to the module itself is the import's business, not a use; one bound
        # by ``from tvm.relay.backend import *`` has no import the fix could swap.
        if resolved and resolved.name in API_TABLE and ("." in resolved.name or resolved.dynamic):
            kind: Kind = "dynamic" if resolved.dynamic else "reference"
            self._add(node, kind, API_TABLE[resolved.name], resolved.origin)

    # -- strings --------------------------------------------------------------------------------

    def visit_Expr(self, node: cst.Expr) -> bool:
        # Docstrings and bare string statements are prose.
        return not isinstance(node.value, cst.SimpleString | cst.ConcatenatedString)

    def _string(self, node: cst.SimpleString | cst.ConcatenatedString) -> None:
        try:
            value = node.evaluated_value
        except Exception:  # malformed escapes: not a name
            return
        if isinstance(value, str) and value in self._strings:
            self._add(node, "string", self._strings[value], "legacy")

    def visit_SimpleString(self, node: cst.SimpleString) -> None:
        self._string(node)

    def visit_ConcatenatedString(self, node: cst.ConcatenatedString) -> bool:
        self._string(node)
        return False


def find_uses(
    wrapper: md.MetadataWrapper, package: str | None = None, local: LocalModules | None = None
) -> list[Use]:
    """Every use of a legacy (or shim) name in the wrapped module, in source order.

    Parameters
    ----------
    wrapper : libcst.metadata.MetadataWrapper
        The parsed module; ``Use.node`` refers to nodes of ``wrapper.module``.
    package : str, optional
        The dotted package the module lies in, to resolve relative imports.
    local : callable, optional
        Whether a dotted module is the project's own (see :func:`absolute`).

    Returns
    -------
    list of Use
    """
    targets = _EngineTargets(package, local)
    wrapper.visit(targets)
    finder = _Finder(targets)
    wrapper.visit(finder)
    return sorted(finder.uses, key=lambda use: (use.line, use.col))


def iter_unguarded(uses: list[Use], origins: tuple[Origin, ...] = ("legacy",)) -> Iterator[Use]:
    """The uses outside ``try/except ImportError`` guards, of the given origins."""
    return (use for use in uses if not use.guarded and use.origin in origins)
