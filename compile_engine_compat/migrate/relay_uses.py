"""Classify Relay-era code for ``scan`` and ``fix``: what runs on the shim, what needs a port.

Relay building (``relay.var``, ``relay.nn.conv2d``, ``relay.Function``), ``relay.build`` and the
executors, and AutoTVM either run as written under ``compile_engine_compat.install()`` -- on the
shim's Relay front end, with a difference the API table's row states (fix kind ``served``) -- or
fail there, because the front end does not serve the name (fix kind ``manual``, with the reason
and the replacement). Which is which comes from ``_relay_surface.py``, the manifest generated from
the live front end, so the scanner never imports TVM and never disagrees with what ``install()``
really serves. A file that would fail under the shim therefore always has a ``manual`` finding.

What is reported, so that a Relay-heavy test file gives a short report:

* every use of a name the front end lacks or refuses (``relay.frontend.from_onnx``,
  ``relay.transform.FoldConstant``, ``autotvm.tuner.XGBTuner``), one finding each: each needs
  a port;
* the uses that run as written, one finding per row and file: the first use, its detail
  counting the others (Relay building, ``relay.build``, ``relay.create_executor``,
  ``graph_executor.GraphModule``, ``tvm.nd``, AutoTVM's decorators).

Files inside the ``tvm`` package itself (a TVM <=0.19 source tree) are Relay, not users of it,
and are not classified.

Names resolve through the file's imports (every ``import``/``from`` form, relative imports
against the file's package, attribute chains from a bound name), read off the text with strings
and comments blanked (:mod:`.code_text`: a third of a TVM <=0.19 tree is Relay-era files, and
parsing them cost more than the rest of the scan). The
``tvm.relay.backend.compile_engine``/``te_compiler`` names are the libcst finder's
(:mod:`.legacy_uses`), and code under ``try: ... except ImportError:`` already copes.
"""

from __future__ import annotations

import functools
import re
from typing import NamedTuple

from compile_engine_compat.api_table import API_TABLE, LEGACY_MODULES, Fix, LegacyApi
from compile_engine_compat.migrate import relay_surface as surface
from compile_engine_compat.migrate.code_text import (
    code_only,
    guarded_lines,
    imports,
)
from compile_engine_compat.migrate.legacy_uses import absolute
from compile_engine_compat.surfaces.moved_names import MOVED_NAMES
from compile_engine_compat.surfaces.v019_surface import absent_names, route, served_names

__all__ = ["ROOTS", "RelayUse", "relay_uses", "spells_relay_word"]

#: The TVM <=0.19 modules whose names are classified here -> the row of their plain uses.
ROOTS: dict[str, str] = {
    "tvm.relay": "relay.building",
    "tvm.autotvm": "tvm.autotvm",
    "tvm.contrib.graph_executor": "tvm.contrib.graph_executor.GraphModule",
    "tvm.nd": "tvm.nd",
    # TVM 0.27 keeps MetaSchedule under tvm.s_tir: the old path is a finding, relay_integration's.
    "tvm.meta_schedule": "tvm.meta_schedule.relay_integration",
}
#: The roots of the chains that reach a classified name, beside the bound classified names.
_TVM_ROOTS = {
    "tvm": ("relay", "autotvm", "nd", "context", "contrib.graph_executor", "meta_schedule"),
    "tvm.contrib": ("graph_executor",),
}


def _tvm_next() -> dict[str, str]:
    """What must follow a name bound to a TVM package for a chain to reach a classified name:
    the roots above, and every TVM 0.19 name TVM 0.27 lacks (the census's list) under it."""
    tails: dict[str, set[str]] = {package: set(t) for package, t in _TVM_ROOTS.items()}
    for name in absent_names():
        parts = name.split(".")
        for cut in range(1, len(parts)):
            tails.setdefault(".".join(parts[:cut]), set()).add(".".join(parts[cut:]))
    return {
        package: r"(?=\.(?:"
        + "|".join(re.escape(t) for t in sorted(found, key=len, reverse=True))
        + r")\b)"
        for package, found in tails.items()
    }


_TVM_NEXT = _tvm_next()
#: Substrings of which every such use spells one (``from tvm import nd`` spells " nd"; the
#: TVM 0.19 names TVM 0.27 lacks are reached through ``tvm``).
_WORDS = ("relay", "autotvm", "graph_executor", "tvm.nd", " nd", "tvm.context", "tvm.device", "tvm")
#: TVM 0.19 names ``install()`` serves outside the roots (the moved names' rows).
_MOVED = frozenset(
    row.legacy.replace(":", ".") for row in MOVED_NAMES if not row.legacy.endswith(":*")
)
#: The libcst finder's modules: not classified here.
_ENGINE_MODULES = tuple(LEGACY_MODULES)
_ENGINE_PACKAGE = "tvm.relay.backend"
_UNSUPPORTED = API_TABLE["relay.unsupported"]

#: Dotted legacy path -> its row, for the rows that name their own paths under a root (a
#: root's own row covers what is left under it, after the refusals and these).
_ROW_PATHS: dict[str, LegacyApi] = {
    path: row
    for row in API_TABLE.values()
    for path in row.old_paths
    if path not in ROOTS
    and path.startswith(tuple(f"{root}." for root in ROOTS))
    and all(part.isidentifier() for part in path.split("."))
}


class RelayUse(NamedTuple):
    """One classified use: its row, where it is (1-based), and what the finding says."""

    row: LegacyApi
    line: int
    col: int
    fix: Fix
    detail: str


@functools.lru_cache(maxsize=8)  # asked of one file's code up to three times in a scan
def spells_relay_word(code: str) -> bool:
    """Can ``code`` hold a Relay-era use at all? (Substring tests: most files end here.)"""
    return any(word in code for word in _WORDS)


def _within(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def _prefixes(name: str) -> list[str]:
    """``a.b.c`` -> ``["a.b.c", "a.b", "a"]``: longest first."""
    parts = name.split(".")
    return [".".join(parts[:size]) for size in range(len(parts), 0, -1)]


@functools.lru_cache(maxsize=4096)
def classify(name: str) -> tuple[LegacyApi, Fix, str] | None:
    """The row, fix kind and detail of a use of the dotted TVM name ``name``; None if not ours.

    Parameters
    ----------
    name : str
        A fully qualified name such as ``"tvm.relay.nn.conv2d"``.
    """
    root = next((r for r in ROOTS if _within(name, r)), None)
    if root is None:
        if name == "tvm.context" or name.startswith("tvm.context."):
            return API_TABLE["tvm.context"], "served", f"{name}: {API_TABLE['tvm.context'].note}"
        return _absent(name)
    if any(_within(name, module) for module in _ENGINE_MODULES) or name == _ENGINE_PACKAGE:
        # ``tvm.relay.backend`` alone serves only the engine modules: a use of it is reaching
        # for them (``getattr(relay.backend, "compile_engine")``), the libcst finder's to report.
        return None
    prefixes = _prefixes(name)
    for prefix in prefixes:
        if prefix in surface.REFUSED:
            return _UNSUPPORTED, "manual", f"{name}: {surface.REFUSED[prefix]}"
    for prefix in prefixes:
        row = _ROW_PATHS.get(prefix)
        if row is not None:
            return row, row.fix, f"{name}: {row.note}"
    for prefix in prefixes:
        if prefix in surface.NAMES or (prefix == name and prefix in surface.MODULES):
            row = API_TABLE[ROOTS[root]]
            return row, "served", f"{name}: {row.note}"
        if prefix in surface.MODULES:  # a served module without the next name
            missing = name[: len(prefix) + 1 + len(name[len(prefix) + 1 :].split(".")[0])]
            return _UNSUPPORTED, "manual", f"{missing}: {surface.MISSING[root]}"
    return None


def _absent(name: str) -> tuple[LegacyApi, Fix, str] | None:
    """A TVM 0.19 name TVM 0.27 lacks (the census's list): its route; served where
    ``install()`` serves it (a moved name, or a name of a module it serves)."""
    found = next((p for p in _prefixes(name) if p in absent_names()), None)
    if found is None:
        return None
    way = route(found)
    gone = f"{found}: TVM 0.27 has no {found.rpartition('.')[2]!r} here"
    if found in served_names() or found in _MOVED or found in surface.MODULES:
        return API_TABLE[way.row], "served", f"{gone}; install() serves it; see {way.docs}"
    instead = f"; instead: {way.replacement}" if way.replacement else ""
    return API_TABLE[way.row], "manual", f"{gone}: {way.why}{instead}"


class _Locator:
    """Line and column of offsets that mostly come in increasing order (C-speed counting from
    the previous one, rather than a table of every line's start)."""

    def __init__(self, code: str) -> None:
        self._code = code
        self._offset = 0
        self._line = 1

    def locate(self, offset: int) -> tuple[int, int]:
        """(1-based line, 1-based character column) of ``offset``."""
        if offset < self._offset:
            self._offset, self._line = 0, 1
        self._line += self._code.count("\n", self._offset, offset)
        self._offset = offset
        return self._line, offset - self._code.rfind("\n", 0, offset)


@functools.lru_cache(maxsize=256)
def _chains(heads: tuple[tuple[str, str], ...]) -> re.Pattern[str]:
    """A pattern of the attribute chains from bound names: each ``(name, what must follow)``.

    Each name is matched first and its context checked behind it after (a name not preceded by
    ``.``, a word character, ``def`` or ``class``): a pattern that starts with the names lets the
    engine skip ahead to their first letters in C, where lookbehinds first would try a match at
    every position (four times slower over a TVM-era tree).
    """
    alternatives = [
        f"{name}(?<![\\w.]{name})(?<!def {name})(?<!class {name}){follows}"
        for name, follows in ((re.escape(head), follows) for head, follows in heads)
    ]
    return re.compile(
        "(" + "|".join(alternatives) + r")\b"
        r"((?:\.[A-Za-z_]\w*)*+)(?P<rebound>[ \t]*=(?!=))?"
    )


@functools.lru_cache(maxsize=8)  # scan and fix of one file share the work
def relay_uses(code: str, package: str | None = None) -> tuple[RelayUse, ...]:
    """The Relay-era uses of a module's source, classified, in source order.

    Parameters
    ----------
    code : str
        Python source.
    package : str, optional
        The dotted package the module lies in, to resolve its relative imports.
    """
    if not spells_relay_word(code) or (package or "").split(".")[0] == "tvm":
        return ()  # TVM's own sources are Relay itself, not a user of it
    code = code_only(code)
    statements = imports(code, lambda module: absolute(module, package))
    bound = {local: name for statement in statements for local, name in statement.binds}
    heads = sorted(
        local for local, name in bound.items() if name in _TVM_NEXT or classify(name) is not None
    )
    if not heads:
        return ()
    where = _Locator(code)
    guarded = guarded_lines(code)
    found: list[RelayUse] = []
    # The first plain use per row, and how many there are (reported as one finding each).
    plain: dict[str, tuple[int, int, str]] = {}
    plain_count: dict[str, int] = {}

    def record(name: str, offset: int) -> None:
        hit = classify(name)
        if hit is None:
            return
        row, fix, detail = hit
        # A TVM 0.19 name TVM 0.27 lacks (the census's), served: each use is a finding.
        each = not any(_within(name, root) for root in (*ROOTS, "tvm.context"))
        if fix == "served" and not each and not guarded and row.name in plain:
            plain_count[row.name] += 1  # only counted: where it is does not matter
            return
        line, col = where.locate(offset)
        if line in guarded:
            return
        if fix == "served" and not each:  # runs as written: one finding per row and file
            plain_count[row.name] = plain_count.get(row.name, 0) + 1
            plain.setdefault(row.name, (line, col, name))
        else:
            found.append(RelayUse(row, line, col, fix, detail))

    for statement in statements:
        for name in statement.names:  # an import itself: only what is refused or has a row
            hit = classify(name)
            if hit is not None and (
                hit[1] == "manual"
                or hit[0].name not in ROOTS.values()
                or not any(_within(name, root) for root in ROOTS)  # a census name
            ):
                record(name, statement.start)
    # A bound name, then its attribute chain (not an attribute itself, nor a def or class name).
    # A name bound to ``tvm`` (or ``tvm.contrib``) only matters before a classified attribute:
    # matching only those skips the tvm.te/tvm.cpu/... chains that fill a TVM-era file.
    chains = _chains(tuple((head, _TVM_NEXT.get(bound[head], "")) for head in heads))
    spans = iter([(s.start, s.end) for s in statements])
    span = next(spans, None)
    for match in chains.finditer(code):
        start = match.start()
        while span is not None and span[1] <= start:
            span = next(spans, None)
        if span is not None and span[0] <= start:
            continue  # inside the import statement itself
        head, attributes, rebound = match.group(1, 2, 3)
        if rebound and not attributes:
            continue  # a keyword argument or a new binding of the name, not a use
        record(bound[head] + attributes, start)
    for row_name, (line, col, name) in plain.items():
        more = plain_count[row_name] - 1
        row = API_TABLE[row_name]
        detail = f"{name}{f' (and {more} more uses in this file)' if more else ''}: {row.note}"
        found.append(RelayUse(row, line, col, "served", detail))
    return tuple(sorted(found, key=lambda use: (use.line, use.col)))
