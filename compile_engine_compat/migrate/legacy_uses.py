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

Only the statements that can hold a use reach libcst (:mod:`.relevant_code`), through the
lean metadata wrapper of :mod:`.lean_libcst`.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass
from typing import Literal, NamedTuple

import libcst as cst
import libcst.metadata as md

from compile_engine_compat.api_table import (
    API_TABLE,
    ENGINE_GETTERS,
    LEGACY_MODULES,
    SHIM_MODULES,
    LegacyApi,
    string_rows,
)
from compile_engine_compat.migrate.code_text import GUARD_NAMES

__all__ = [
    "Use",
    "absolute",
    "dotted",
    "find_uses",
    "guards_import",
    "iter_unguarded",
    "module_of_node",
]

Origin = Literal["legacy", "shim"]
Kind = Literal["import", "reference", "method", "string", "dynamic"]


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
