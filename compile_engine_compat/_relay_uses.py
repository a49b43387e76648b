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
  ``relay.transform.FoldConstant``, ``autotvm.tuner.XGBTuner``), one finding each;
* every use of a name with its own row (``relay.build``, ``relay.create_executor``,
  ``graph_executor.GraphModule``, ``autotvm.apply_history_best``, ``tvm.nd.array``), one each;
* the rest of Relay building and of ``tvm.autotvm``: the first use in the file, its detail
  counting the others.

Files inside the ``tvm`` package itself (a TVM <=0.19 source tree) are Relay, not users of it,
and are not classified.

Names resolve through the file's imports on the ``ast`` (every ``import``/``from`` form,
relative imports against the file's package, attribute chains from a bound name). The
``tvm.relay.backend.compile_engine``/``te_compiler`` names are the libcst finder's
(:mod:`._legacy_uses`), and code under ``try: ... except ImportError:`` already copes.
"""

from __future__ import annotations

import ast
import functools
from typing import NamedTuple

from . import _relay_surface as surface
from ._api_table import API_TABLE, LEGACY_MODULES, Fix, LegacyApi
from ._legacy_uses import absolute, ast_column, guards_import_ast, source_lines
from ._sources import SkipFile, check_nesting

__all__ = ["ROOTS", "RelayUse", "relay_uses", "spells_relay_word"]

#: The TVM <=0.19 modules whose names are classified here -> the row of their plain uses.
ROOTS: dict[str, str] = {
    "tvm.relay": "relay.building",
    "tvm.autotvm": "tvm.autotvm",
    "tvm.contrib.graph_executor": "tvm.contrib.graph_executor.GraphModule",
    "tvm.nd": "tvm.nd",
}
#: Rows whose uses are reported once per file (the first, counting the rest): plain building.
_PER_FILE = frozenset({"relay.building", "tvm.autotvm"})
#: Substrings of which every such use spells one (``from tvm import nd`` spells " nd").
_WORDS = ("relay", "autotvm", "graph_executor", "tvm.nd", " nd", "tvm.context")
#: The libcst finder's modules: not classified here.
_ENGINE_MODULES = tuple(LEGACY_MODULES)
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
        return None
    if any(_within(name, module) for module in _ENGINE_MODULES):
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


def _chain(node: ast.Attribute) -> tuple[ast.Name, list[str]] | None:
    """``a.b.c`` -> (``a``, ``["b", "c"]``); None when the chain starts at a call or subscript."""
    parts: list[str] = []
    current: ast.expr = node
    while isinstance(current, ast.Attribute):
        parts.append(current.attr)
        current = current.value
    if not isinstance(current, ast.Name):
        return None
    return current, parts[::-1]


def _bindings(tree: ast.Module, package: str | None) -> dict[str, str]:
    """Local name -> the dotted TVM name an import binds it to (flow-insensitive)."""
    bound: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    bound[alias.asname] = alias.name
                else:
                    head = alias.name.split(".")[0]
                    bound[head] = head
        elif isinstance(node, ast.ImportFrom):
            module = absolute("." * node.level + (node.module or ""), package)
            if module is None:
                continue
            for alias in node.names:
                if alias.name != "*":
                    bound[alias.asname or alias.name] = f"{module}.{alias.name}"
    return bound


@functools.lru_cache(maxsize=8)  # scan and fix of one file share the parse
def relay_uses(code: str, package: str | None = None) -> tuple[RelayUse, ...]:
    """The Relay-era uses of a module's source, classified, in source order.

    Parameters
    ----------
    code : str
        Python source.
    package : str, optional
        The dotted package the module lies in, to resolve its relative imports.

    Raises
    ------
    SkipFile
        If the code does not parse or nests too deeply for the parser.
    """
    if not spells_relay_word(code) or (package or "").split(".")[0] == "tvm":
        return ()  # TVM's own sources are Relay itself, not a user of it
    try:
        tree = ast.parse(code)
    except SyntaxError as exc:
        raise SkipFile(f"failed to parse: {exc.msg} (line {exc.lineno})") from None
    except (RecursionError, MemoryError):
        check_nesting(code)  # names the depth and line, as scan's other paths do
        raise SkipFile("nested too deeply for the parser") from None
    bound = _bindings(tree, package)
    if not any(
        classify(name) is not None or name in ("tvm", "tvm.contrib") for name in bound.values()
    ):
        return ()
    lines = source_lines(code)
    found: list[RelayUse] = []
    # First plain use per row, and how many more (reported as one finding each).
    plain: dict[str, tuple[int, int, str]] = {}
    plain_count: dict[str, int] = {}

    def record(name: str, node: ast.expr | ast.stmt) -> None:
        hit = classify(name)
        if hit is None:
            return
        row, fix, detail = hit
        line, col = node.lineno, ast_column(lines, node)
        if fix == "served" and row.name in _PER_FILE:
            plain_count[row.name] = plain_count.get(row.name, 0) + 1
            plain[row.name] = min(plain.get(row.name, (line, col, name)), (line, col, name))
        else:
            found.append(RelayUse(row, line, col, fix, detail))

    stack: list[tuple[ast.AST, bool]] = [(tree, False)]  # iterative: no recursion limit
    while stack:
        node, guarded = stack.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            if not guarded:
                for name in _imported(node, package):
                    hit = classify(name)
                    if hit is not None and (
                        hit[1] == "manual" or hit[0].name not in ROOTS.values()
                    ):
                        record(name, node)
            continue
        if isinstance(node, ast.Attribute):
            chain = _chain(node)
            if chain is not None:
                head, parts = chain
                if not guarded and head.id in bound:
                    record(".".join([bound[head.id], *parts]), node)
                continue
        elif isinstance(node, ast.Name):
            if not guarded and node.id in bound:
                record(bound[node.id], node)
            continue
        inner = guarded or (isinstance(node, ast.Try) and guards_import_ast(node))
        stack.extend((child, inner) for child in ast.iter_child_nodes(node))
    for row_name, (line, col, name) in plain.items():
        more = plain_count[row_name] - 1
        row = API_TABLE[row_name]
        detail = f"{name}{f' (and {more} more uses in this file)' if more else ''}: {row.note}"
        found.append(RelayUse(row, line, col, "served", detail))
    return tuple(sorted(found, key=lambda use: (use.line, use.col)))


def _imported(node: ast.Import | ast.ImportFrom, package: str | None) -> list[str]:
    """The dotted names an import statement brings in (``from m import *``: ``m``)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    module = absolute("." * node.level + (node.module or ""), package)
    if module is None:
        return []
    return [module if alias.name == "*" else f"{module}.{alias.name}" for alias in node.names]
