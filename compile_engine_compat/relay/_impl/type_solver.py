"""Relay's type solver (TVM 0.19's ``TypeSolver``), over the front end's Python types.

Relay typed a program by unification: every type is a node of a union-find forest, an
``IncompleteType`` is a node still to be decided, and ``Unify(a, b)`` merges the two nodes
(an incomplete side takes the other's type; two complete types are unified child by child and
both nodes merged into the result). A ``TypeRelation`` (``Broadcast``, ``Identity``, an op's
relation) is a constraint over some types: ``Solve`` runs the queued relations in the order
they were added, each with its arguments resolved so far; a relation that cannot decide yet
returns ``False`` and runs again when a type it reads is merged. ``Solve`` answers whether
every relation was resolved.

Errors are TVM 0.19's: a failed unification is a diagnostic (``tvm.error.DiagnosticError``,
a ``TVMError``) naming the two types, raised when the diagnostics are rendered; a type that
would contain itself (the occurs check) raises at once.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from typing import Any

import tvm
import tvm_ffi
from tvm import tirx

from compile_engine_compat.relay.adt import TypeData
from compile_engine_compat.relay.ty import (
    FuncType,
    IncompleteType,
    RefType,
    TensorType,
    TupleType,
    Type,
    TypeCall,
    TypeConstraint,
    TypeRelation,
    TypeVar,
)
from compile_engine_compat.relay.type_functor import TypeMutator, TypeVisitor

__all__ = ["TypeReporter", "TypeSolver", "bind_type_vars", "unify_dim"]

#: The relation function behind a ``TypeRelation``'s ``func`` (an ``EnvFunc`` or a callable).
RelationLookup = Callable[[Any], Callable[..., bool]]


class _Node:
    """A type's node: its parent in the union-find forest, its type, the relations reading it."""

    __slots__ = ("parent", "rels", "resolved_type")

    def __init__(self, resolved_type: Type) -> None:
        self.parent: _Node | None = None
        self.resolved_type = resolved_type
        self.rels: list[_Relation] = []

    def root(self) -> _Node:
        node = self
        while node.parent is not None:
            node = node.parent
        walk = self  # path compression
        while walk.parent is not None and walk.parent is not node:
            walk.parent, walk = node, walk.parent
        return node


class _Relation:
    __slots__ = ("args", "in_queue", "rel", "resolved")

    def __init__(self, rel: TypeRelation, args: list[_Node]) -> None:
        self.rel = rel
        self.args = args
        self.resolved = False
        self.in_queue = False


def _pretty(typ: Any) -> str:
    return repr(typ)


def _dim_text(dim: Any) -> str:
    return str(int(dim.value)) if isinstance(dim, tirx.IntImm) else str(dim)


def _is_any_dim(dim: Any) -> bool:
    return isinstance(dim, tirx.Var) and str(dim.name).startswith("any_dim")


def unify_dim(lhs: Any, rhs: Any) -> Any:
    """Relay's ``UnifyDim``: the dimension two dimensions agree on, or None.

    ``Any`` agrees with anything (the result is ``Any``); a shape variable takes the other
    side's constant; two constants agree when equal.
    """
    if lhs.same_as(rhs):
        return lhs
    if _is_any_dim(lhs):
        return lhs
    if _is_any_dim(rhs):
        return rhs
    lhs_const, rhs_const = isinstance(lhs, tirx.IntImm), isinstance(rhs, tirx.IntImm)
    if isinstance(lhs, tirx.Var) and rhs_const:
        return rhs
    if lhs_const and isinstance(rhs, tirx.Var):
        return lhs
    if lhs_const and rhs_const and int(lhs.value) == int(rhs.value):
        return lhs
    if not (lhs_const or rhs_const) and tvm_ffi.structural_equal(lhs, rhs):
        return lhs
    return None


class _Binder(TypeMutator):
    """Replaces type variables at once (``Bind(type, {var: type})``), type parameters too."""

    def __init__(self, mapping: dict[int, Type]) -> None:
        super().__init__()
        self.mapping = mapping

    def visit_type_var(self, typ: TypeVar) -> Type:
        return self.mapping.get(id(typ), typ)

    visit_global_type_var = visit_type_var


def bind_type_vars(typ: Type, mapping: Sequence[tuple[TypeVar, Type]]) -> Type:
    """``typ`` with each type variable of ``mapping`` replaced by its type (simultaneously)."""
    return _Binder({id(var): new for var, new in mapping}).visit(typ)


class _Resolver(TypeMutator):
    """Every incomplete type the solver knows replaced by what it was resolved to."""

    def __init__(self, solver: TypeSolver) -> None:
        super().__init__()
        self.solver = solver

    def visit_incomplete_type(self, typ: IncompleteType) -> Type:
        node = self.solver.known(typ)
        if node is None:
            return typ
        resolved = node.root().resolved_type
        return typ if resolved is typ else self.visit(resolved)


class _Children(TypeVisitor):
    """Every type inside a type (the type itself included), each once."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[Type] = []

    def visit(self, typ: Type | TypeData) -> Any:
        if id(typ) not in self.memo_map and isinstance(typ, Type):
            self.found.append(typ)
        return super().visit(typ)


class _OccursIn(TypeVisitor):
    def __init__(self, solver: TypeSolver, target: _Node) -> None:
        super().__init__()
        self.solver, self.target, self.found = solver, target, False

    def visit_incomplete_type(self, typ: IncompleteType) -> None:
        node = self.solver.known(typ)
        if node is not None and node.root() is self.target:
            self.found = True


class TypeReporter:
    """What a relation function is handed (Relay's ``TypeReporter``): ``Assign``, ``Assert``,
    ``AssertEQ`` and ``GetModule``."""

    def __init__(self, solver: TypeSolver) -> None:
        self.solver = solver

    def Assign(self, dst: Type, src: Type) -> None:
        """Unify ``dst`` with ``src``."""
        self.solver.unify(dst, src)

    def Assert(self, cond: Any) -> bool:
        """Whether ``cond`` (a boolean expression) holds, or may hold."""
        try:
            return bool(tvm.arith.Analyzer().can_prove(cond)) or not isinstance(
                tvm.arith.Analyzer().simplify(cond), tirx.IntImm
            )
        except Exception:
            return bool(cond)

    def AssertEQ(self, lhs: Any, rhs: Any) -> bool:
        """Whether two dimensions may be equal (an ``Any`` or a variable may)."""
        if isinstance(lhs, int):
            lhs = tirx.IntImm("int64", lhs)
        if isinstance(rhs, int):
            rhs = tirx.IntImm("int64", rhs)
        return unify_dim(lhs, rhs) is not None or not (
            isinstance(lhs, tirx.IntImm) and isinstance(rhs, tirx.IntImm)
        )

    def GetModule(self) -> Any:
        """The module being typed (None for a solver made on its own)."""
        return self.solver.module


class TypeSolver:
    """TVM 0.19's type solver (see the module docstring).

    Parameters
    ----------
    relation_of : callable
        Maps a ``TypeRelation``'s ``func`` to the Python function
        ``func(types, num_inputs, attrs, reporter) -> bool``.
    module : object, optional
        What ``reporter.GetModule()`` answers.
    """

    def __init__(self, relation_of: RelationLookup, module: Any = None) -> None:
        self.relation_of = relation_of
        self.module = module
        self.nodes: dict[int, tuple[Type, _Node]] = {}
        self.relations: list[_Relation] = []
        self.queue: deque[_Relation] = deque()
        self.diagnostics: list[str] = []
        self.reporter = TypeReporter(self)

    # -- the forest ------------------------------------------------------------------------------
    def known(self, typ: Type) -> _Node | None:
        """The node of ``typ`` when the solver has one."""
        entry = self.nodes.get(id(typ))
        return entry[1] if entry is not None else None

    def node(self, typ: Type) -> _Node:
        """The node of ``typ``, made (with the nodes of the types inside it) on first sight."""
        if not isinstance(typ, Type):
            raise TypeError(f"the type solver takes relay types, got {typ!r}")
        entry = self.nodes.get(id(typ))
        if entry is not None:
            return entry[1]
        made = _Node(typ)
        self.nodes[id(typ)] = (typ, made)  # the type is kept: its id stays its own
        return made

    def _merge(self, src: _Node, dst: _Node) -> None:
        if src is dst:
            return
        src.parent = dst
        for rel in src.rels:
            if not rel.resolved:
                self._enqueue(rel)
            dst.rels.append(rel)

    def _enqueue(self, rel: _Relation) -> None:
        if not rel.in_queue:
            rel.in_queue = True
            self.queue.append(rel)

    # -- unification -----------------------------------------------------------------------------
    def unify(self, lhs: Type, rhs: Type) -> Type:
        """The type ``lhs`` and ``rhs`` agree on; both are merged into it.

        A mismatch is recorded as a diagnostic (raised by :meth:`render`) and ``lhs``'s type
        is returned, as Relay did; an incomplete type unified with a type holding it raises
        ``tvm.error.InternalError`` at once.
        """
        left, right = self.node(lhs).root(), self.node(rhs).root()
        if left is right:
            return left.resolved_type
        if isinstance(left.resolved_type, IncompleteType):
            self._occurs_check(left, right.resolved_type)
            self._merge(left, right)
            return right.resolved_type
        if isinstance(right.resolved_type, IncompleteType):
            self._occurs_check(right, left.resolved_type)
            self._merge(right, left)
            return left.resolved_type
        resolved = self._unify_complete(left.resolved_type, right.resolved_type)
        if resolved is None:
            self.diagnostics.append(
                "The Relay type checker is unable to show the following types match:\n"
                f"  {_pretty(left.resolved_type)}\n  {_pretty(right.resolved_type)}"
            )
            return left.resolved_type
        top = self.node(resolved).root()
        self._merge(left, top)
        self._merge(right, top)
        return resolved

    def _occurs_check(self, var: _Node, typ: Type) -> None:
        probe = _OccursIn(self, var)
        probe.visit(typ)
        if probe.found:
            raise tvm.error.InternalError(
                f"Incomplete type {_pretty(var.resolved_type)} occurs in {_pretty(typ)}, "
                "cannot unify"
            )

    def _unify_all(self, lhs: Sequence[Type], rhs: Sequence[Type]) -> list[Type]:
        return [self.unify(a, b) for a, b in zip(lhs, rhs, strict=True)]

    def _unify_complete(self, lhs: Type, rhs: Type) -> Type | None:
        if isinstance(lhs, TypeVar) or isinstance(rhs, TypeVar):
            return lhs if lhs is rhs else None  # global type variables too: only themselves
        if isinstance(lhs, TensorType):
            return self._unify_tensors(lhs, rhs) if isinstance(rhs, TensorType) else None
        if isinstance(lhs, TupleType):
            if not isinstance(rhs, TupleType) or len(lhs.fields) != len(rhs.fields):
                return None
            return TupleType(self._unify_all(lhs.fields, rhs.fields))
        if isinstance(lhs, FuncType):
            return self._unify_funcs(lhs, rhs) if isinstance(rhs, FuncType) else None
        if isinstance(lhs, TypeCall):
            if not isinstance(rhs, TypeCall) or len(lhs.args) != len(rhs.args):
                return None
            func = self.unify(lhs.func, rhs.func)
            return TypeCall(func, self._unify_all(lhs.args, rhs.args))
        if isinstance(lhs, RefType):
            return RefType(self.unify(lhs.value, rhs.value)) if isinstance(rhs, RefType) else None
        if isinstance(lhs, TypeRelation):
            if not isinstance(rhs, TypeRelation) or len(lhs.args) != len(rhs.args):
                return None
            args = self._unify_all(lhs.args, rhs.args)
            return TypeRelation(lhs.func, args, lhs.num_inputs, lhs.attrs)
        return lhs if lhs == rhs else None

    def _unify_tensors(self, lhs: TensorType, rhs: TensorType) -> Type | None:
        if lhs.dtype != rhs.dtype:
            return None
        if len(lhs.shape) != len(rhs.shape):
            self.diagnostics.append(
                f"tensor type `{_pretty(lhs)}` has {len(lhs.shape)} dimensions, while "
                f"`{_pretty(rhs)}` has {len(rhs.shape)} dimensions"
            )
            return None
        shape, conflicts = [], []
        for i, (a, b) in enumerate(zip(lhs.shape, rhs.shape)):
            dim = unify_dim(a, b)
            if dim is None:
                conflicts.append(
                    f"  dimension {i} conflicts: {_dim_text(a)} does not match {_dim_text(b)}."
                )
                dim = a
            shape.append(dim)
        if conflicts:
            self.diagnostics.append(
                "The Relay type checker is unable to show the following types match:\n"
                f"  {_pretty(lhs)}\n  {_pretty(rhs)}\nIn particular:\n" + "\n".join(conflicts)
            )
            return None
        if all(a is b for a, b in zip(shape, lhs.shape)):
            return lhs
        out = TensorType((), lhs.dtype)
        out.shape = tuple(shape)  # the dimensions as they are (Any stays one variable)
        return out

    def _unify_funcs(self, lhs: FuncType, rhs: FuncType) -> Type | None:
        if len(lhs.arg_types) != len(rhs.arg_types) or len(lhs.type_constraints) != len(
            rhs.type_constraints
        ):
            return None
        if len(lhs.type_params) < len(rhs.type_params):
            lhs, rhs = rhs, lhs
        # lhs's type parameters become rhs's, the ones it has beyond them fresh unknowns.
        mapping: list[tuple[TypeVar, Type]] = list(zip(lhs.type_params, rhs.type_params))
        mapping += [(p, IncompleteType()) for p in lhs.type_params[len(rhs.type_params) :]]
        bound = bind_type_vars(
            FuncType(lhs.arg_types, lhs.ret_type, (), lhs.type_constraints), mapping
        )
        assert isinstance(bound, FuncType)
        ret = self.unify(bound.ret_type, rhs.ret_type)
        args = self._unify_all(bound.arg_types, rhs.arg_types)
        constraints = self._unify_all(bound.type_constraints, rhs.type_constraints)
        if not all(isinstance(c, TypeConstraint) for c in constraints):
            raise tvm.error.InternalError("two type constraints unified into a non-constraint")
        return FuncType(args, ret, rhs.type_params, constraints)

    # -- relations -------------------------------------------------------------------------------
    def add_constraint(self, constraint: Any) -> None:
        """Add a ``TypeRelation`` (queued) or unify two types of a ``TypeConstraint``."""
        if not isinstance(constraint, TypeRelation):
            raise TypeError(
                f"AddConstraint takes a relay.TypeRelation, got {type(constraint).__name__}"
            )
        args = [self.node(a) for a in constraint.args]
        rel = _Relation(constraint, args)
        self.relations.append(rel)
        # The relation runs again when any type inside its arguments is decided.
        for arg in constraint.args:
            children = _Children()
            children.visit(arg)
            for child in children.found:
                self.node(child).rels.append(rel)
        self._enqueue(rel)

    def solve(self) -> bool:
        """Run the queued relations until none is left; whether every relation was resolved."""
        while self.queue:
            rel = self.queue.popleft()
            rel.in_queue = False
            if rel.resolved:
                continue
            types = [self.resolve(node.root().resolved_type) for node in rel.args]
            func = self.relation_of(rel.rel.func)
            try:
                rel.resolved = bool(func(types, rel.rel.num_inputs, rel.rel.attrs, self.reporter))
            except (TypeError, ValueError, tvm.error.DiagnosticError) as err:
                self.diagnostics.append(str(err))
                rel.resolved = False
        return all(rel.resolved for rel in self.relations)

    def resolve(self, typ: Type) -> Type:
        """``typ`` with everything the solver decided put in (Relay's ``Resolve``)."""
        node = self.known(typ)
        if node is not None:
            typ = node.root().resolved_type
        return _Resolver(self).visit(typ)

    def render(self) -> None:
        """Raise the diagnostics recorded so far (``tvm.error.DiagnosticError``), if any."""
        if self.diagnostics:
            found, self.diagnostics = self.diagnostics, []
            raise tvm.error.DiagnosticError("\n".join(found))
