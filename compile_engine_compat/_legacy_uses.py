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
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

import libcst as cst
import libcst.metadata as md

from ._api_table import (
    API_TABLE,
    ENGINE_GETTERS,
    LEGACY_MODULES,
    SHIM_MODULES,
    LegacyApi,
    string_rows,
)

__all__ = ["Use", "find_uses", "guards_import", "module_of_node"]

Origin = Literal["legacy", "shim"]
Kind = Literal["import", "reference", "method", "string"]

_GUARD_NAMES = {"ImportError", "ModuleNotFoundError", "Exception", "BaseException"}


@dataclass(frozen=True)
class Use:
    """One use of a legacy name.

    Attributes
    ----------
    node : libcst.CSTNode
        The node in the wrapper's module: an ``ImportAlias``, a ``Name``/``Attribute`` reference
        (for ``method``, the ``Attribute`` whose ``attr`` is the method), or a string.
    kind : {"import", "reference", "method", "string"}
    row : LegacyApi
    origin : {"legacy", "shim"}
        Reached through ``tvm.relay.backend`` (or a registered name) or through the shim.
    line, col : int
        1-based position of ``node``.
    guarded : bool
        Inside a ``try`` that handles ``ImportError``.
    statement : libcst.CSTNode or None
        For imports: the ``Import``/``ImportFrom`` statement.
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
            if dotted(expr).rsplit(".", 1)[-1] in _GUARD_NAMES:
                return True
    return False


class _EngineTargets(cst.CSTVisitor):
    """First pass: names bound to an engine singleton (``e = compile_engine.get()``)."""

    METADATA_DEPENDENCIES = (md.QualifiedNameProvider,)

    def __init__(self) -> None:
        super().__init__()
        self.targets: dict[cst.Name, tuple[str, Origin]] = {}

    def _bind(self, target: cst.CSTNode, value: cst.CSTNode | None) -> None:
        if not isinstance(target, cst.Name) or not isinstance(value, cst.Call):
            return
        for qualified in self.get_metadata(md.QualifiedNameProvider, value.func, set()):
            split = _split(qualified.name)
            if split and split[1] in ENGINE_GETTERS:
                self.targets[target] = (ENGINE_GETTERS[split[1]], split[2])

    def visit_Assign(self, node: cst.Assign) -> None:
        if len(node.targets) == 1:
            self._bind(node.targets[0].target, node.value)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._bind(node.target, node.value)


class _Finder(cst.CSTVisitor):
    METADATA_DEPENDENCIES = (md.QualifiedNameProvider, md.PositionProvider, md.ScopeProvider)

    def __init__(self, engine_targets: dict[cst.Name, tuple[str, Origin]]) -> None:
        super().__init__()
        self.uses: list[Use] = []
        self._engine_targets = engine_targets
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

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        if node.relative or node.module is None:
            return False
        module = dotted(node.module)
        names = node.names if isinstance(node.names, list | tuple) else None
        if names is None:  # from X import *
            split = _split(module)
            if split and split[2] == "legacy" and split[1] in API_TABLE:
                self._add(node, "import", API_TABLE[split[1]], "legacy", statement=node)
            return False
        for alias in names:
            split = _split(f"{module}.{dotted(alias.name)}")
            if split is None or split[2] != "legacy":
                continue
            row = API_TABLE.get(split[1]) or API_TABLE.get(split[1].rsplit(".", 1)[0])
            if row is not None and module != "tvm.relay.backend._backend":
                self._add(alias, "import", row, "legacy", statement=node)
        return False

    # -- references -----------------------------------------------------------------------------

    def _resolve(self, node: cst.CSTNode) -> tuple[str, Origin] | None:
        """The row name and origin of a Name/Attribute, if all its meanings are legacy or shim."""
        qualified = self.get_metadata(md.QualifiedNameProvider, node, set())
        splits = [_split(q.name) for q in qualified]
        if not splits or any(s is None for s in splits):
            return None
        origins = {s[2] for s in splits if s}
        names = sorted({s[1] for s in splits if s})
        # Legacy in ``try`` and shim in ``except ImportError``: that is the shim's name.
        return names[0], ("legacy" if origins == {"legacy"} else "shim")

    def _module_node(self, node: cst.CSTNode) -> cst.CSTNode | None:
        while isinstance(node, cst.Attribute | cst.Name):
            for qualified in self.get_metadata(md.QualifiedNameProvider, node, set()):
                if qualified.name in LEGACY_MODULES or qualified.name in SHIM_MODULES:
                    return node
            if isinstance(node, cst.Name):
                return None
            node = node.value
        return None

    def _engine_alias(self, name: cst.Name) -> tuple[str, Origin] | None:
        """The engine class prefix if every assignment reaching ``name`` binds the engine."""
        scope = self.get_metadata(md.ScopeProvider, name, None)
        if scope is None:
            return None
        bound: set[tuple[str, Origin]] = set()
        for access in scope.accesses[name]:
            if access.node is not name:
                continue
            for referent in access.referents:
                target = getattr(referent, "node", None)
                if target not in self._engine_targets:
                    return None
                bound.add(self._engine_targets[target])
        return bound.pop() if len(bound) == 1 else None

    def _engine_call(self, call: cst.Call) -> tuple[str, Origin] | None:
        resolved = self._resolve(call.func)
        if resolved and resolved[0] in ENGINE_GETTERS:
            return ENGINE_GETTERS[resolved[0]], resolved[1]
        return None

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        method = node.attr.value
        if isinstance(node.value, cst.Call):
            engine = self._engine_call(node.value)
            if engine and f"{engine[0]}.{method}" in API_TABLE:
                self._add(node, "method", API_TABLE[f"{engine[0]}.{method}"], engine[1])
            return True
        resolved = self._resolve(node)
        if resolved and resolved[0] in API_TABLE:
            self._add(
                node,
                "reference",
                API_TABLE[resolved[0]],
                resolved[1],
                module_node=self._module_node(node),
            )
            return False
        if isinstance(node.value, cst.Name):
            engine = self._engine_alias(node.value)
            if engine and f"{engine[0]}.{method}" in API_TABLE:
                self._add(node, "method", API_TABLE[f"{engine[0]}.{method}"], engine[1])
                return False
        return True

    def visit_Name(self, node: cst.Name) -> None:
        resolved = self._resolve(node)
        # A plain name bound to the module itself is the import's business, not a use.
        if resolved and resolved[0] in API_TABLE and "." in resolved[0]:
            self._add(node, "reference", API_TABLE[resolved[0]], resolved[1])

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


def find_uses(wrapper: md.MetadataWrapper) -> list[Use]:
    """Every use of a legacy (or shim) name in the wrapped module, in source order.

    Parameters
    ----------
    wrapper : libcst.metadata.MetadataWrapper
        The parsed module; ``Use.node`` refers to nodes of ``wrapper.module``.

    Returns
    -------
    list of Use
    """
    targets = _EngineTargets()
    wrapper.visit(targets)
    finder = _Finder(targets.targets)
    wrapper.visit(finder)
    return sorted(finder.uses, key=lambda use: (use.line, use.col))


def iter_unguarded(uses: list[Use], origins: tuple[Origin, ...] = ("legacy",)) -> Iterator[Use]:
    """The uses outside ``try/except ImportError`` guards, of the given origins."""
    return (use for use in uses if not use.guarded and use.origin in origins)
