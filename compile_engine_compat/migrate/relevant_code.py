"""The part of a module that can hold a legacy use: what ``scan`` and ``fix`` give libcst.

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
import functools
import itertools
import re
from dataclasses import dataclass

from compile_engine_compat.api_table import (
    API_TABLE,
    ENGINE_GETTERS,
    LEGACY_MODULES,
)
from compile_engine_compat.migrate.code_text import code_only
from compile_engine_compat.migrate.sources import SkipFile
from compile_engine_compat.migrate.word_filter import (
    identifier_spells_word,
    spells_word,
    split_lines,
    words_in,
)

__all__ = [
    "PARSE_LIMIT",
    "WHOLE_PARSE_LIMIT",
    "Relevant",
    "cut_statements",
    "relevant_code",
    "relevant_part",
    "star_members",
]


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
    lines = split_lines(code)
    blank_lines = split_lines(code_only(code))
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
    reducer = _Reducer(split_lines(code), re.compile("|".join(words)))
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
                if any(map(identifier_spells_word, roots[1])) or roots[0]:
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
