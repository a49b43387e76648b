"""``compile-engine-compat fix``: move legacy code onto the shim (or, with ``--unsafe``, past it).

Usage::

    compile-engine-compat fix PATH... [--diff] [--unsafe]

Built on libcst, so formatting and comments survive. The safe fix re-points every legacy import
and attribute chain at the shim, after which the program runs unchanged on modern TVM::

    from tvm.relay.backend import compile_engine
    # -> from compile_engine_compat import compile_engine
    import tvm.relay.backend.compile_engine as ce
    # -> from compile_engine_compat import compile_engine as ce
    from tvm.relay.backend.te_compiler import get
    # -> from compile_engine_compat.te_compiler import get
    tvm.relay.backend.compile_engine.get()
    # -> compile_engine_compat.compile_engine.get()  (and imports that module)

Imports of ``tvm.relay`` left unused afterwards are removed. ``--unsafe`` also rewrites calls that
the API table gives a modern rewrite for (``LegacyApi.rewrite``), through the legacy path or the
shim. Code under ``try/except ImportError`` is left alone. Running it twice changes nothing the
second time. The report follows tf_upgrade_v2: counts first, then ``file:line:col`` per change and
per item that needs a person. ``--diff`` prints a unified diff and writes nothing (exit 1 if there
would be changes).
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import dataclasses
import difflib
import functools
import json
import multiprocessing
import os
import re
import string
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import libcst as cst
import libcst.metadata as md
from libcst.codemod import CodemodContext
from libcst.codemod.visitors import AddImportsVisitor, RemoveImportsVisitor

from compile_engine_compat.api_table import (
    API_TABLE,
    DEFINITION_MODULES,
    LEGACY_MODULES,
    MODULE_SHIMS,
    LegacyApi,
)
from compile_engine_compat.migrate.code_text import code_only
from compile_engine_compat.migrate.config import Configs, Settings
from compile_engine_compat.migrate.discovery import Discovery
from compile_engine_compat.migrate.lean_libcst import parsed
from compile_engine_compat.migrate.legacy_uses import LocalModules, Use, dotted, find_uses
from compile_engine_compat.migrate.noqa import Noqa
from compile_engine_compat.migrate.options import add_options, configs_from
from compile_engine_compat.migrate.relay_uses import relay_uses, spells_relay_word
from compile_engine_compat.migrate.relevant_code import (
    PARSE_LIMIT,
    WHOLE_PARSE_LIMIT,
    Relevant,
    relevant_part,
)
from compile_engine_compat.migrate.scan import Finding, scan_file, skipped_for, workers_for
from compile_engine_compat.migrate.sources import (
    SkipFile,
    Source,
    SourceFile,
    call_with_deep_stack,
    cell_text,
    check_nesting,
    forget_folders,
    is_magic,
    read_source,
    write_source,
)
from compile_engine_compat.migrate.splice import splice
from compile_engine_compat.migrate.terminal import plural, print_safely, visible
from compile_engine_compat.migrate.word_filter import literal_uses, spells_word, split_lines

__all__ = ["Change", "FileFix", "fix_code", "main"]

#: Legacy module -> shim module, from the table (the ``_backend`` FFI namespace has no drop-in).
_SHIM_OF = MODULE_SHIMS
_RELAY_PACKAGE = "tvm.relay.backend"


@dataclass(frozen=True)
class Change:
    """One edit (``kind`` ``safe``/``unsafe``) or one item left for a person (``manual``)."""

    line: int
    col: int
    kind: str
    message: str
    #: Notebooks: the cell index (``line`` is then the line in that cell).
    cell: int | None = None
    #: The rule id of the use it is about.
    code: str = ""


@dataclass
class FileFix:
    """The outcome for one file."""

    display: str
    before: str
    after: str
    changes: list[Change] = field(default_factory=list)
    manual: list[Change] = field(default_factory=list)
    #: Relay-era uses that run as written under ``install()`` (kind ``served``), with the
    #: difference each has.
    served: list[Change] = field(default_factory=list)
    #: Why the file was not fixed (or not written), ``""`` if it was.
    skipped: str = ""
    #: The skip is a bug of ours (exit code 2), not a bad file.
    internal: bool = False
    #: What was read, for writing back in the same encoding.
    source: Source | None = None


def _expr(code: str) -> cst.BaseExpression:
    return cst.parse_expression(code)


def _line(code: str) -> cst.SimpleStatementLine:
    statement = cst.parse_statement(code + "\n")
    assert isinstance(statement, cst.SimpleStatementLine)
    return statement


def _alias_text(name: str, asname: cst.AsName | None) -> str:
    alias = dotted(asname.name) if asname is not None else ""
    return f"{name} as {alias}" if alias and alias != name else name


def _drop_trailing_comma(names: list[cst.ImportAlias]) -> list[cst.ImportAlias]:
    if names:
        names[-1] = names[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    return names


class _Plan:
    """What to change, keyed by nodes of the original module."""

    def __init__(self, module: cst.Module, positions: dict[cst.CSTNode, md.CodeRange]) -> None:
        self.module = module
        self.positions = positions
        # statement -> (rewritten statement or None to drop it, extra import lines)
        self.statements: dict[cst.CSTNode, tuple[cst.BaseSmallStatement | None, list[str]]] = {}
        self.chains: dict[cst.CSTNode, cst.BaseExpression] = {}
        self.calls: dict[cst.CSTNode, str] = {}
        self.drop_calls: set[cst.CSTNode] = set()
        self.needed: set[str] = set()
        self.changes: list[Change] = []

    def note(self, node: cst.CSTNode, kind: str, message: str) -> None:
        start = self.positions[node].start
        self.changes.append(Change(start.line, start.column + 1, kind, message))

    def code(self, node: cst.CSTNode) -> str:
        return self.module.code_for_node(node).strip()

    # -- imports --------------------------------------------------------------------------------

    def plan_import(self, statement: cst.Import, aliases: list[cst.ImportAlias]) -> None:
        kept = [alias for alias in statement.names if alias not in aliases]
        lines = []
        for alias in aliases:
            shim = _SHIM_OF.get(dotted(alias.name))
            if shim is None:
                return
            if alias.asname is None:
                # ``import tvm.relay.backend.compile_engine``: its chains are re-pointed.
                self.needed.add(shim)
                lines.append(f"import {shim}")
            else:
                package, name = shim.rsplit(".", 1)
                lines.append(f"from {package} import {_alias_text(name, alias.asname)}")
        new = statement.with_changes(names=_drop_trailing_comma(kept)) if kept else None
        self._replace(statement, new, lines)

    def plan_import_from(
        self, statement: cst.ImportFrom, aliases: list[cst.ImportAlias], module: str
    ) -> None:
        """``module`` is the absolute module imported from (a relative import resolved)."""
        absolute = {"relative": ()}  # the shim is imported absolutely, whatever the old form
        if module in _SHIM_OF:  # from tvm.relay.backend.compile_engine import ...
            new = statement.with_changes(module=_expr(_SHIM_OF[module]), **absolute)
            self._replace(statement, new, [])
            return
        if module != _RELAY_PACKAGE or not isinstance(statement.names, Sequence):
            return
        moved = [a for a in aliases if f"{module}.{dotted(a.name)}" in _SHIM_OF]
        kept = [a for a in statement.names if a not in moved]
        if not kept:
            new = statement.with_changes(module=_expr("compile_engine_compat"), **absolute)
            self._replace(statement, new, [])
            return
        names = ", ".join(_alias_text(dotted(a.name), a.asname) for a in moved)
        new = statement.with_changes(names=_drop_trailing_comma(kept))
        self._replace(statement, new, [f"from compile_engine_compat import {names}"])

    def _replace(
        self,
        statement: cst.BaseSmallStatement,
        new: cst.BaseSmallStatement | None,
        lines: list[str],
    ) -> None:
        self.statements[statement] = (new, lines)
        after = [self.code(new)] if new is not None else []
        after += lines
        replacement = "; ".join(after)
        self.note(statement, "safe", f"Replaced '{self.code(statement)}' with '{replacement}'")

    # -- references and calls -------------------------------------------------------------------

    def plan_chain(self, use: Use) -> None:
        node = use.module_node
        if not isinstance(node, cst.Attribute) or node in self.chains:
            return
        for legacy, shim in _SHIM_OF.items():
            if use.row.name.split(".")[0] == LEGACY_MODULES[legacy]:
                self.chains[node] = _expr(shim)
                self.needed.add(shim)
                self.note(node, "safe", f"Re-pointed '{self.code(node)}' to '{shim}'")

    def plan_rewrite(self, use: Use, parents: dict[cst.CSTNode, cst.CSTNode]) -> None:
        template = use.row.rewrite
        call = parents.get(use.node)
        if template is None or not isinstance(call, cst.Call) or call.func is not use.node:
            return
        if any(arg.keyword is not None or arg.star for arg in call.args):
            return
        fields = [int(f) for _, f, _, _ in string.Formatter().parse(template) if f]
        if len(call.args) != (max(fields) + 1 if fields else 0):
            return
        if template == "":
            if isinstance(parents.get(call), cst.Expr):
                self.drop_calls.add(call)
                self.note(call, "unsafe", f"Removed '{self.code(call)}' ({use.row.note})")
            return
        self.calls[call] = template
        args = [self.code(arg.value) for arg in call.args]
        new = template.format(*args)
        self.note(call, "unsafe", f"Rewrote '{self.code(call)}' as '{new}' ({use.row.note})")


class _Apply(cst.CSTTransformer):
    def __init__(self, plan: _Plan) -> None:
        super().__init__()
        self.plan = plan
        #: ids of the ``pass`` placeholders that carry a removed line's comments
        self.orphans: set[int] = set()

    def leave_Attribute(
        self, original_node: cst.Attribute, updated_node: cst.Attribute
    ) -> cst.BaseExpression:
        return self.plan.chains.get(original_node, updated_node)

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        template = self.plan.calls.get(original_node)
        if template is None:
            return updated_node
        args = [cst.Module([]).code_for_node(arg.value) for arg in updated_node.args]
        return _expr(template.format(*args))

    def leave_Expr(
        self, original_node: cst.Expr, updated_node: cst.Expr
    ) -> cst.Expr | cst.RemovalSentinel:
        if original_node.value in self.plan.drop_calls:
            return cst.RemovalSentinel.REMOVE
        return updated_node

    def leave_SimpleStatementLine(
        self, original_node: cst.SimpleStatementLine, updated_node: cst.SimpleStatementLine
    ) -> cst.BaseStatement | cst.FlattenSentinel[cst.BaseStatement] | cst.RemovalSentinel:
        body: list[cst.BaseSmallStatement] = []
        extra: list[cst.BaseStatement] = []
        for original, updated in zip(original_node.body, updated_node.body, strict=False):
            new, lines = self.plan.statements.get(original, (updated, []))
            if new is not None:
                body.append(new)
            extra += [_line(text) for text in lines]
        if len(updated_node.body) != len(original_node.body):  # a dropped call
            body = list(updated_node.body)
        if body:
            body[-1] = body[-1].with_changes(semicolon=cst.MaybeSentinel.DEFAULT)
            lines_out: list[cst.BaseStatement] = [updated_node.with_changes(body=body), *extra]
        elif extra:
            first = extra[0].with_changes(
                leading_lines=updated_node.leading_lines,
                trailing_whitespace=updated_node.trailing_whitespace,
            )
            lines_out = [first, *extra[1:]]
        elif any(line.comment for line in updated_node.leading_lines):
            # The comment above a removed call ("# Run the reference result") describes the code
            # that follows it: keep a placeholder that hands its lines on (see _adopt_comments).
            orphan = _line("pass").with_changes(leading_lines=updated_node.leading_lines)
            self.orphans.add(id(orphan))
            return orphan
        else:
            return cst.RemovalSentinel.REMOVE
        return cst.FlattenSentinel(lines_out) if len(lines_out) > 1 else lines_out[0]

    def _adopt_comments(
        self, body: Sequence[cst.BaseStatement], footer: Sequence[cst.EmptyLine]
    ) -> tuple[list[cst.BaseStatement], list[cst.EmptyLine]]:
        """Drop the placeholders of removed lines, moving their comments to the next statement
        (or the block's footer when none follows)."""
        out: list[cst.BaseStatement] = []
        carried: list[cst.EmptyLine] = []
        for statement in body:
            if id(statement) in self.orphans:
                carried += statement.leading_lines  # type: ignore[attr-defined]
                continue
            if carried:
                lines = [*carried, *statement.leading_lines]  # type: ignore[attr-defined]
                statement = statement.with_changes(leading_lines=lines)
                carried = []
            out.append(statement)
        return out, [*carried, *footer]

    def leave_IndentedBlock(
        self, original_node: cst.IndentedBlock, updated_node: cst.IndentedBlock
    ) -> cst.IndentedBlock:
        body, footer = self._adopt_comments(updated_node.body, updated_node.footer)
        if not body:  # every statement was a dropped call
            body = [_line("pass").with_changes(leading_lines=footer)]
            footer = list(updated_node.footer)
        return updated_node.with_changes(body=body, footer=footer)

    def leave_Module(self, original_node: cst.Module, updated_node: cst.Module) -> cst.Module:
        body, footer = self._adopt_comments(updated_node.body, updated_node.footer)
        return updated_node.with_changes(body=body, footer=footer)


class _NameUse(cst.CSTVisitor):
    """Does any code (not an import) use the name ``tvm``?"""

    def __init__(self) -> None:
        super().__init__()
        self.found = False

    def visit_Import(self, node: cst.Import) -> bool:
        return False

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        return False

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        return True

    def visit_Name(self, node: cst.Name) -> None:
        self.found = self.found or node.value == "tvm"


def _shim_imports(module: cst.Module) -> list[cst.ImportFrom]:
    """Top-level ``from compile_engine_compat[.x] import ...`` statements."""
    found = []
    for line in module.body:
        if not isinstance(line, cst.SimpleStatementLine):
            continue
        for statement in line.body:
            if isinstance(statement, cst.ImportFrom) and statement.module is not None:
                if dotted(statement.module).split(".")[0] == "compile_engine_compat":
                    found.append(statement)
    return found


def _tidy_imports(
    module: cst.Module, plan: _Plan, bare_tvm_dropped: bool, outside: frozenset[str]
) -> cst.Module:
    """Add the imports the new code needs, and remove those it left unused.

    ``outside``: the names the rest of the file uses, when ``module`` is only its relevant part;
    their imports stay, whatever ``module`` alone says.
    """
    context = CodemodContext()
    code = module.code
    for needed in sorted(plan.needed):
        # A chain that --unsafe then removed or rewrote (``relay.backend.compile_engine.get()
        # .clear()``) needs no import: add only those the new code still spells.
        if needed + "." in code:
            AddImportsVisitor.add_needed_import(context, needed)
    if bare_tvm_dropped:
        finder = _NameUse()
        module.visit(finder)
        if finder.found or "tvm" in outside:
            AddImportsVisitor.add_needed_import(context, "tvm")
    # Each codemod visitor re-runs scope analysis over the whole module (~0.3 s a thousand
    # lines): run them only when they have something to do.
    if context.scratch.get(AddImportsVisitor.CONTEXT_KEY):
        module = AddImportsVisitor(context).transform_module(module)
    if not (plan.chains or plan.calls or plan.drop_calls):
        return module  # only import statements changed: no other name lost a use
    context = CodemodContext()
    for package, name in (("tvm", "relay"), ("tvm.relay", "backend")):
        if name not in outside:
            RemoveImportsVisitor.remove_unused_import(context, package, name)
    if plan.calls or plan.drop_calls:
        # A rewritten call may leave its shim import unused: ``get_shape`` or the module itself.
        for statement in _shim_imports(module):
            package = dotted(statement.module) if statement.module else ""
            for alias in statement.names if isinstance(statement.names, Sequence) else ():
                asname = dotted(alias.asname.name) if alias.asname else None
                if (asname or dotted(alias.name)) not in outside:
                    RemoveImportsVisitor.remove_unused_import(
                        context, package, dotted(alias.name), asname
                    )
    return RemoveImportsVisitor(context).transform_module(module)


def fix_code(
    code: str,
    unsafe: bool = False,
    package: str | None = None,
    local: LocalModules | None = None,
    selected: Callable[[str], bool] | None = None,
) -> tuple[str, list[Change], list[Change]]:
    """Fix one module's source.

    Parameters
    ----------
    code : str
        Python source.
    unsafe : bool
        Also apply the table's modern rewrites.
    package : str, optional
        The dotted package the module lies in, to resolve its relative imports.
    local : callable, optional
        Whether a dotted module is the project's own (``Source.local_module``).
    selected : callable, optional
        Whether a rule id is selected (default: every rule). A use whose rule is not selected,
        or that a ``# noqa`` comment covers, is neither rewritten nor listed.

    Returns
    -------
    new_code : str
    changes : list of Change
        The edits made, in source order.
    manual : list of Change
        Legacy uses left for a person, the Relay-era names the shim does not serve included.

    Raises
    ------
    SkipFile
        If ``code`` nests too deeply for the parser (see ``_sources.check_nesting``).
    libcst.ParserSyntaxError
        If ``code`` does not parse.
    """
    noqa = Noqa(code) if "noqa" in code.lower() else None

    def wanted(line: int, rule_id: str) -> bool:
        if selected is not None and not selected(rule_id):
            return False
        return noqa is None or not noqa.covers(line, rule_id)

    new_code, changes, manual = _fix_engine_code(code, unsafe, package, local, wanted)
    relay_manual = [item for item in relay_items(code, package)[0] if wanted(item.line, item.code)]
    if relay_manual:
        manual = sorted([*manual, *relay_manual], key=lambda item: (item.line, item.col))
    return new_code, changes, manual


def relay_items(code: str, package: str | None = None) -> tuple[list[Change], list[Change]]:
    """The report items of the Relay-era uses of ``code``: (manual, served); see ``_relay_uses``.

    ``fix`` rewrites none of them: a served use runs as written under ``install()``, with the
    difference its item states, and a manual one fails there until it is ported.
    """
    if not spells_relay_word(code):
        return [], []
    manual: list[Change] = []
    served: list[Change] = []
    for use in relay_uses(code, package):
        if use.fix == "manual":
            text = f"{use.row.name} needs a manual port: {use.detail} ({use.row.docs})"
            manual.append(Change(use.line, use.col, "manual", text, code=use.row.rule_id))
        else:
            text = f"{use.row.name} runs as written under install(): {use.detail} ({use.row.docs})"
            served.append(Change(use.line, use.col, "served", text, code=use.row.rule_id))
    return manual, served


#: (line, rule id) -> should fix act on a use there? Selection and ``noqa`` comments.
Wanted = Callable[[int, str], bool]


def _fix_engine_code(
    code: str, unsafe: bool, package: str | None, local: LocalModules | None, wanted: Wanted
) -> tuple[str, list[Change], list[Change]]:
    """:func:`fix_code` for the compile_engine/te_compiler API, its globals and config keys.

    Only the relevant part of the module is parsed and fixed, then spliced back (:mod:`.splice`);
    when the splice is not clean, the whole module is fixed instead, if it is small enough.
    """
    if not spells_word(code):  # as fast as scan on files with nothing to do
        return code, [], []
    literal = literal_uses(code) if len(code) <= WHOLE_PARSE_LIMIT else None
    if literal is not None:  # only pass-config keys: each is a manual item, nothing to rewrite
        return (
            code,
            [],
            [
                _manual(use.row, use.line, use.col)
                for use in literal
                if not use.guarded and wanted(use.line, use.row.rule_id)
            ],
        )
    relevant = relevant_part(code)
    if relevant is None:
        return code, [], []
    check_nesting(relevant.code)

    def wanted_there(line: int, rule_id: str) -> bool:
        return wanted(relevant.original_line(line), rule_id)

    # libcst recurses per nesting level: a valid 400-term chain needs more than 1,000 frames.
    fixed, changes, manual = call_with_deep_stack(
        _fix_code,
        relevant.code,
        unsafe,
        package,
        local,
        wanted_there,
        _outside_names(code, relevant),
    )
    changes = [dataclasses.replace(c, line=relevant.original_line(c.line)) for c in changes]
    manual = [dataclasses.replace(c, line=relevant.original_line(c.line)) for c in manual]
    if fixed == relevant.code:
        return code, changes, manual
    spliced = splice(code, relevant, fixed)
    if spliced is not None:
        return spliced, changes, manual
    if len(code) > PARSE_LIMIT:
        raise SkipFile(
            "not rewritten: its fix does not map back line for line, and it is too large to "
            "fix whole; fix the lines listed by hand"
        )
    check_nesting(code)
    return call_with_deep_stack(_fix_code, code, unsafe, package, local, wanted)


_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")


def _outside_names(code: str, relevant: Relevant) -> frozenset[str]:
    """The identifiers of the module's code that its relevant part leaves out (strings and
    comments aside): the fixer must not remove an import those lines still use."""
    if relevant.lines is None:
        return frozenset()
    kept = {
        line
        for index, line in enumerate(relevant.lines, start=1)
        if index not in relevant.placeholders
    }
    dropped = (
        text
        for number, text in enumerate(split_lines(code_only(code)), start=1)
        if number not in kept
    )
    return frozenset(_IDENTIFIER.findall("".join(dropped)))


def _manual(row: LegacyApi, line: int, col: int) -> Change:
    """The report item for a use left for a person."""
    text = f"{row.name} needs a manual port: {row.replacement} ({row.docs})"
    return Change(line, col, "manual", text, code=row.rule_id)


def _fix_code(
    code: str,
    unsafe: bool,
    package: str | None,
    local: LocalModules | None,
    wanted: Wanted,
    outside: frozenset[str] = frozenset(),
) -> tuple[str, list[Change], list[Change]]:
    wrapper = parsed(code)
    found = [use for use in find_uses(wrapper, package, local) if not use.guarded]
    uses = [use for use in found if wanted(use.line, use.row.rule_id)]
    # An import statement with a use left alone (noqa, not selected) is left alone whole.
    kept = {use.statement for use in found if use not in uses and use.statement is not None}
    plan = _Plan(wrapper.module, dict(wrapper.resolve(md.PositionProvider)))
    parents = dict(wrapper.resolve(md.ParentNodeProvider))
    by_statement: dict[cst.CSTNode, list[Use]] = {}
    manual: list[Change] = []
    for use in uses:
        if use.statement in kept:
            continue
        if use.origin == "legacy" and use.kind == "import" and use.statement is not None:
            by_statement.setdefault(use.statement, []).append(use)
        elif use.origin == "legacy" and use.kind == "reference":
            plan.plan_chain(use)
        if unsafe and use.kind != "dynamic":
            plan.plan_rewrite(use, parents)
        if use.origin == "legacy" and (use.row.fix == "manual" or use.kind == "dynamic"):
            manual.append(_manual(use.row, use.line, use.col))
    bare_tvm_dropped = False
    for statement, stmt_uses in by_statement.items():
        aliases = [use.node for use in stmt_uses if isinstance(use.node, cst.ImportAlias)]
        if isinstance(statement, cst.Import):
            bare_tvm_dropped |= any(a.asname is None for a in aliases)
            plan.plan_import(statement, aliases)
        elif isinstance(statement, cst.ImportFrom):
            source = stmt_uses[0].module or dotted(statement.module or cst.Name("_"))
            plan.plan_import_from(statement, aliases, source)
    if not plan.changes:
        return code, [], manual
    module = wrapper.module.visit(_Apply(plan))
    module = _tidy_imports(module, plan, bare_tvm_dropped, outside)
    changes = sorted(plan.changes, key=lambda c: (c.line, c.col))
    return module.code, changes, manual


def _outside(file: SourceFile) -> str:
    """Why ``fix`` must not write ``file`` (a symlink), or ``""`` when it may."""
    if not file.path.is_symlink():
        return ""
    real = Path(os.path.realpath(file.path))
    root = Path(os.path.realpath(file.root))
    where = "inside" if real.is_relative_to(root) else "outside"
    # Never written through: a link out of the tree would let fix edit vendored or system
    # files; a link inside it points at a file that is fixed on its own.
    return f"symlink to a file {where} {file.root.as_posix() or '.'}: not followed"


def fix_file(
    file: SourceFile, unsafe: bool, selected: Callable[[str], bool] | None = None
) -> FileFix:
    """Fix one file in memory (nothing is written); a file that cannot be fixed is skipped.

    A TVM <=0.19 tree's own definition of the legacy API is left alone, as ``scan`` leaves it.
    """
    link = _outside(file)
    if link:
        return FileFix(file.display, "", "", skipped=link)
    try:
        source = read_source(file.path, file.display)
    except SkipFile as exc:
        return FileFix(file.display, "", "", skipped=str(exc))
    if source.module in DEFINITION_MODULES:
        return FileFix(file.display, source.code, source.code, source=source)
    if source.is_notebook:
        return _fix_notebook(source, unsafe, selected)
    before = source.code
    try:
        after, changes, manual = fix_code(
            before, unsafe, source.package, source.local_module, selected
        )
        served = relay_items(before, source.package)[1]
    except Exception as exc:  # one bad file never ends the run; same words as scan
        skip = skipped_for(file.display, exc)
        return FileFix(file.display, before, before, skipped=skip.reason, internal=skip.internal)
    return FileFix(file.display, before, after, changes, manual, served, source=source)


def _finding_item(finding: Finding) -> Change:
    """The report item of a finding ``fix`` does not rewrite (manual or served)."""
    row = API_TABLE[finding.api]
    if finding.fix == "served":
        text = f"{row.name} runs as written under install(): {finding.detail} ({row.docs})"
    else:
        text = f"{row.name} needs a manual port: {finding.detail or row.replacement} ({row.docs})"
    kind = "served" if finding.fix == "served" else "manual"
    return Change(finding.line, finding.col, kind, text, finding.cell, finding.code)


def plan_file(file: SourceFile, settings: Settings, unsafe: bool, use_cache: bool) -> FileFix:
    """What ``fix`` does to one file: scanned first (through the result cache), and rewritten
    only when the scan found something it can fix, with the rules ``settings`` select."""
    if unsafe and not settings.include_shim:
        settings = dataclasses.replace(settings, include_shim=True)
    findings, skip = scan_file(file, settings, use_cache)
    if skip is not None:
        return FileFix(file.display, "", "", skipped=skip.reason, internal=skip.internal)
    fixable = {"safe", "unsafe"} if unsafe else {"safe"}
    if not any(finding.fix in fixable for finding in findings):
        items = [_finding_item(f) for f in findings]
        return FileFix(
            file.display,
            "",
            "",
            manual=[item for item in items if item.kind == "manual"],
            served=[item for item in items if item.kind == "served"],
        )
    ignored = settings.ignored_for(file.path)
    return fix_file(file, unsafe, lambda code: settings.enabled(code, ignored))


_CELL_MARK = "# compile-engine-compat cell "
_MAGIC_MARK = "pass  # compile-engine-compat magic "
_CELL_LINE = re.compile(r"^# compile-engine-compat cell (\d+)$", re.M)
_MAGIC_LINE = re.compile(r"^([ \t]*)pass  # compile-engine-compat magic (\d+)$", re.M)


def _json_layout(notebook: dict[str, Any], raw: bytes) -> Callable[[Any], str] | None:
    """The ``json.dumps`` settings that reproduce ``raw`` exactly, if any.

    Rewriting a notebook re-serialises it; only when the untouched notebook round-trips byte for
    byte is it certain that outputs and metadata come out unchanged (nbformat writes
    ``indent=1, sort_keys=True, ensure_ascii=False`` and a final newline).
    """
    text = raw.decode("utf-8", "replace")
    for indent in (1, 2, 4, None):
        for sort_keys in (True, False):
            for ensure_ascii in (False, True):
                dumped = json.dumps(
                    notebook, indent=indent, sort_keys=sort_keys, ensure_ascii=ensure_ascii
                )
                for end in ("\n", ""):
                    if dumped + end == text:
                        return functools.partial(
                            _dumps,
                            indent=indent,
                            sort_keys=sort_keys,
                            ensure_ascii=ensure_ascii,
                            end=end,
                        )
    return None


def _dumps(value: Any, indent: int | None, sort_keys: bool, ensure_ascii: bool, end: str) -> str:
    return json.dumps(value, indent=indent, sort_keys=sort_keys, ensure_ascii=ensure_ascii) + end


def _fix_notebook(
    source: Source, unsafe: bool, selected: Callable[[str], bool] | None = None
) -> FileFix:
    """Fix a notebook's code cells as one module (an import in one cell serves the next).

    Each cell is preceded by a marker comment and each magic line becomes a marked ``pass``, so
    that the fixed module splits back into the same cells with the magics restored; cell magics
    (``%%bash``) are left out. Outputs, metadata and untouched cells keep their bytes.
    """
    raw = source.raw.decode("utf-8", "replace")
    notebook = source.notebook or {}
    magics: list[str] = []
    parts: list[str] = []
    trailing: dict[int, int] = {}
    for index, cell in enumerate(notebook.get("cells", [])):
        text = cell_text(cell)
        if cell.get("cell_type") != "code" or text.startswith("%%"):
            continue
        lines = []
        for line in text.split("\n"):
            if is_magic(line):
                lines.append(line[: len(line) - len(line.lstrip())] + f"{_MAGIC_MARK}{len(magics)}")
                magics.append(line)
            else:
                lines.append(line)
        trailing[index] = len(text) - len(text.rstrip("\n"))
        parts.append(f"{_CELL_MARK}{index}\n" + "\n".join(lines).rstrip("\n"))
    code = "\n".join(parts) + "\n"
    unchanged = FileFix(source.display, raw, raw, source=source)
    try:
        new_code, changes, manual = fix_code(code, unsafe, selected=selected)
        served = relay_items(code)[1]
    except Exception as exc:  # one bad file never ends the run; same words as scan
        skip = skipped_for(source.display, exc)
        return FileFix(source.display, raw, raw, skipped=skip.reason, internal=skip.internal)
    starts = [(m.start(), int(m.group(1))) for m in _CELL_LINE.finditer(code)]
    marker_lines = [(code.count("\n", 0, pos) + 1, cell) for pos, cell in starts]

    def in_cell(item: Change) -> Change:
        line, cell = item.line, None
        for first, index in marker_lines:
            if first < item.line:
                line, cell = item.line - first, index
        return dataclasses.replace(item, line=line, cell=cell)

    changes, manual = [in_cell(c) for c in changes], [in_cell(c) for c in manual]
    served = [in_cell(c) for c in served]
    if new_code == code:
        return dataclasses.replace(unchanged, manual=manual, served=served)
    dump = _json_layout(notebook, source.raw)
    if dump is None:
        reason = "not rewritten: its JSON layout is not one json.dumps writes (scan still reads it)"
        return FileFix(source.display, raw, raw, changes, manual, served, skipped=reason)
    pieces = _CELL_LINE.split(new_code)
    cells_out = {int(pieces[i]): pieces[i + 1] for i in range(1, len(pieces), 2)}
    if [cell for _, cell in starts] != [int(pieces[i]) for i in range(1, len(pieces), 2)]:
        return FileFix(
            source.display,
            raw,
            raw,
            changes,
            manual,
            served,
            skipped="not rewritten: the fix moved a cell boundary",
        )
    fixed = copy.deepcopy(notebook)
    for index, piece in cells_out.items():
        text = piece[1:] if piece.startswith("\n") else piece  # the marker line's own newline
        if index == starts[0][1]:
            text = pieces[0] + text  # imports the fix added above the first cell
        text = _MAGIC_LINE.sub(lambda m: magics[int(m.group(2))], text)
        text = text.rstrip("\n") + "\n" * trailing[index]
        cell = fixed["cells"][index]
        if text == cell_text(cell):
            continue
        if isinstance(cell.get("source"), list):
            cell["source"] = re.findall(r"[^\n]*\n|[^\n]+$", text)
        else:
            cell["source"] = text
    return FileFix(source.display, raw, dump(fixed), changes, manual, served, source=source)


def write_back(result: FileFix) -> str:
    """Write a fixed file in its original encoding; returns ``""`` or why it was not written."""
    assert result.source is not None
    return write_source(result.source, result.after)


def report(results: list[FileFix]) -> str:
    """The tf_upgrade_v2-style report: counts, then ``file:line:col`` per change and item."""
    changed = [r for r in results if r.changes and not r.skipped]
    n_changes = sum(len(r.changes) for r in results)
    n_manual = sum(len(r.manual) for r in results)
    n_served = sum(len(r.served) for r in results)
    lines = [
        "compile-engine-compat fix",
        f"Changed {len(changed)} of {plural(len(results), 'file')}: {plural(n_changes, 'change')}.",
        f"Detected {plural(n_manual, 'legacy use')} needing a manual port.",
    ]
    if n_served:
        lines.append(
            f"Left {plural(n_served, 'Relay-era use')} running as written under "
            "compile_engine_compat.install(), each with its difference below."
        )
    skipped = [r for r in results if r.skipped]
    lines += [f"Skipped {visible(r.display)}: {visible(r.skipped)}" for r in skipped]
    for result in results:
        if not (result.changes or result.manual or result.served):
            continue
        lines.append(f"\nFile: {visible(result.display)}")
        items = sorted([*result.manual, *result.served], key=lambda i: (i.cell or 0, i.line, i.col))
        for item in [*result.changes, *items]:
            severity = "WARNING" if item.kind == "manual" else "INFO"
            cell = f"[cell {item.cell}]" if item.cell is not None else ""
            where = f"{visible(result.display)}{cell}:{item.line}:{item.col}"
            lines.append(f"{where}: {severity}: {visible(item.message)}")
    return "\n".join(lines)


#: From this many files on, ``fix`` shows its progress on stderr.
PROGRESS_MIN_FILES = 200


class _Progress:
    """``fix: 120/1029 files`` on stderr: rewritten in place on a terminal, a line a quarter in a
    log, nothing for a small tree."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.shown = total >= PROGRESS_MIN_FILES
        isatty = getattr(sys.stderr, "isatty", None)
        self.tty = callable(isatty) and bool(isatty())
        self._next = 0

    def __call__(self, done: int) -> None:
        if not self.shown:
            return
        if self.tty:
            end = "\n" if done == self.total else ""
            sys.stderr.write(f"\rfix: {done}/{self.total} files{end}")
            sys.stderr.flush()
        elif done >= self._next or done == self.total:
            sys.stderr.write(f"fix: {done}/{self.total} files\n")
            self._next = done + max(1, self.total // 4)


def _plan_one(item: tuple[SourceFile, Settings], unsafe: bool, use_cache: bool) -> FileFix:
    return plan_file(item[0], item[1], unsafe, use_cache)


def plan_paths(
    paths: Sequence[str],
    configs: Configs | None = None,
    unsafe: bool = False,
    use_cache: bool = False,
    progress: bool = False,
) -> tuple[list[FileFix], list[str]]:
    """Plan the fix of every file under ``paths`` (nothing written), in forked workers for a
    large tree as ``scan`` does; returns the results in file order and the discovery's notes.

    Raises
    ------
    FileNotFoundError
        If one of ``paths`` does not exist.
    ConfigError
        If a ``pyproject.toml`` on the way has a bad section.
    """
    forget_folders()
    discovery = Discovery(configs)
    files = list(discovery.files(paths))
    plan_one = functools.partial(_plan_one, unsafe=unsafe, use_cache=use_cache)
    workers = workers_for(len(files))
    shown = _Progress(len(files)) if progress else None
    results: list[FileFix] = []
    with contextlib.ExitStack() as stack:
        planned: Iterable[FileFix]
        if workers > 1:
            pool = stack.enter_context(multiprocessing.get_context("fork").Pool(workers))
            planned = pool.imap(plan_one, files, chunksize=max(1, len(files) // (workers * 16)))
        else:
            planned = map(plan_one, files)
        for result in planned:
            results.append(result)
            if shown is not None:
                shown(len(results))
    return results, discovery.notes


def main(argv: Sequence[str]) -> int:
    """Run ``compile-engine-compat fix``; with ``--diff`` returns 1 when there are changes."""
    parser = argparse.ArgumentParser(
        prog="compile-engine-compat fix",
        description="Swap legacy compile_engine imports to the shim (libcst; keeps formatting).",
        epilog="Exit codes: 0 done (or nothing to do), 1 with --diff or --exit-non-zero-on-fix "
        "when files change, 2 usage or internal error.",
    )
    add_options(parser)
    parser.add_argument("--diff", action="store_true", help="print a diff, write nothing")
    parser.add_argument("--unsafe", action="store_true", help="also rewrite calls to modern TVM")
    parser.add_argument(
        "--exit-non-zero-on-fix",
        action="store_true",
        help="exit 1 when a file was changed (pre-commit: the commit then stops for a review)",
    )
    args = parser.parse_args(list(argv))
    try:
        configs = configs_from(args)
        results, notes = plan_paths(
            args.paths, configs, args.unsafe, not args.no_cache, progress=True
        )
    except (FileNotFoundError, ValueError) as exc:  # ConfigError is a ValueError
        print_safely(f"compile-engine-compat fix: {visible(str(exc))}", sys.stderr)
        return 2
    for note in notes:
        print_safely(f"compile-engine-compat fix: {visible(note)}", sys.stderr)
    written = False
    for result in results:
        if result.after == result.before:
            continue
        if args.diff:
            sys.stdout.writelines(
                difflib.unified_diff(
                    result.before.splitlines(keepends=True),
                    result.after.splitlines(keepends=True),
                    f"a/{visible(result.display)}",
                    f"b/{visible(result.display)}",
                )
            )
        else:
            result.skipped = write_back(result)
            written |= not result.skipped
    print_safely(report(results), sys.stderr if args.diff else sys.stdout)
    if any(r.internal for r in results):
        return 2
    if args.diff:
        return 1 if any(r.after != r.before for r in results) else 0
    return 1 if written and args.exit_non_zero_on_fix else 0
