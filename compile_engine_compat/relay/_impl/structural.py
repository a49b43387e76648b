"""Relay's structural equality on the front end's graph (``tvm.ir.structural_equal`` of two
Relay expressions, under ``install()``).

TVM 0.27 compares the Relax form of a Relay expression, which has no untyped variables, inlines
every called function and drops function attributes. Relay compared the Relay graph itself:
function parameters and ``let`` variables by position, free variables by identity (or mapped,
with ``map_free_vars``), constants by value, calls by op, arguments and attributes, functions
with their attributes (``Composite``, ``PartitionedFromPattern``). A node shared in one graph
must be shared the same way in the other. That comparison is served here; anything that is not
a Relay expression goes to TVM's own.

When only one side is Relay (a module after a Relax-backed pass against the Relay function a
test expects), the two are compared in their Relax forms, both first brought to one binding
form (:func:`canonical`): Relay's graph has no bindings, so two Relax forms of one Relay graph
may bind its nodes differently (a folded constant returned directly, or bound in a dataflow
block) and still be the same graph.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import tvm
import tvm_ffi
from tvm import relax
from tvm.ir.base import assert_structural_equal as tvm_assert_structural_equal

from compile_engine_compat.relay._impl.origin import relay_origin
from compile_engine_compat.relay.adt import Pattern, TypeData
from compile_engine_compat.relay.expr import (
    Attrs,
    Call,
    Constant,
    Expr,
    If,
    Let,
    Tuple,
    TupleGetItem,
    Var,
)
from compile_engine_compat.relay.function import Function
from compile_engine_compat.relay.ty import Type

from .type_equal import types_equal

__all__ = [
    "assert_structural_equal",
    "attr_value",
    "canonical",
    "relay_equal",
    "structural_equal",
]


def attr_value(value: Any) -> Any:
    """An attribute value as plain Python: numbers, ``str``, lists for sequences."""
    if isinstance(value, tvm.tirx.IntImm | tvm.tirx.FloatImm):
        return value.value
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, str | tvm.DataType):
        return str(value)
    if isinstance(value, list | tuple | tvm.ir.Array):
        return [attr_value(v) for v in value]
    return value


def _same_attrs(a: Any, b: Any) -> bool:
    """Call or function attributes, compared by value (None and empty are the same)."""

    def fields(attrs: Any) -> dict[str, Any]:
        if attrs is None:
            return {}
        if isinstance(attrs, Attrs):
            return {k: attrs[k] for k in attrs.keys()}
        if isinstance(attrs, dict):
            return attrs
        return {str(k): attrs[k] for k in attrs.keys()} if hasattr(attrs, "keys") else {}

    fa, fb = fields(a), fields(b)
    if fa.keys() != fb.keys():
        return False
    for key in fa:
        va, vb = attr_value(fa[key]), attr_value(fb[key])
        if isinstance(va, tvm.runtime.Object) or isinstance(vb, tvm.runtime.Object):
            if not tvm_ffi.structural_equal(va, vb):
                return False
        elif not _same_plain(va, vb):
            return False
    return True


def _same_plain(a: Any, b: Any) -> bool:
    """Plain attribute values; floats within 1e-9 of each other are equal (TVM's rule)."""
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same_plain(x, y) for x, y in zip(a, b))
    if isinstance(a, float) or isinstance(b, float):
        try:
            return abs(float(a) - float(b)) < 1e-9
        except (TypeError, ValueError):
            return False
    return bool(a == b)


def _same_constant(a: Constant, b: Constant) -> bool:
    x, y = a.data.numpy(), b.data.numpy()
    return x.dtype == y.dtype and x.shape == y.shape and bool(np.array_equal(x, y))


def _same_op(a: Any, b: Any) -> bool:
    if isinstance(a, tvm.ir.GlobalVar) and isinstance(b, tvm.ir.GlobalVar):
        return a.name_hint == b.name_hint
    return a is b or (type(a) is type(b) and getattr(a, "name", None) == getattr(b, "name", 0))


def is_leaf(node: Any) -> bool:
    """A node compared by value wherever it is used: a constant, the empty tuple."""
    return isinstance(node, Constant) or (isinstance(node, Tuple) and not node.fields)


class _Equal:
    """One comparison: a node of ``lhs`` stands for one node of ``rhs``, and back."""

    def __init__(self, map_free_vars: bool) -> None:
        self.map_free_vars = map_free_vars
        self.forward: dict[int, Any] = {}
        self.backward: dict[int, Any] = {}
        self.keep: list[Any] = []

    def pair(self, a: Any, b: Any, define: bool = False) -> bool | None:
        """True/False when decided by the pairing; None: compare the two nodes."""
        if is_leaf(a) or is_leaf(b):
            return None  # a constant or () is compared by value, shared or not (as in Relay)
        known_a, known_b = self.forward.get(id(a)), self.backward.get(id(b))
        if known_a is not None or known_b is not None:
            return known_a is b and known_b is a
        if isinstance(a, Var) or isinstance(b, Var):
            if not (isinstance(a, Var) and isinstance(b, Var)):
                return False
            if not (define or self.map_free_vars or a is b):
                return False
            ta, tb = a.type_annotation, b.type_annotation
            if (ta is None) != (tb is None):
                return False  # one annotated, one not: different, as in Relay
            if ta is not None and not types_equal(ta, tb, self.map_free_vars):
                return False
        self.forward[id(a)], self.backward[id(b)] = b, a
        self.keep += [a, b]
        return True if isinstance(a, Var) else None

    def run(self, lhs: Any, rhs: Any) -> bool:
        stack: list[tuple[Any, Any]] = [(lhs, rhs)]
        while stack:
            a, b = stack.pop()
            decided = self.pair(a, b)
            if decided is False:
                return False
            if decided is True:
                continue
            pairs = self.shallow(a, b)
            if pairs is None:
                return False
            stack.extend(reversed(pairs))
        return True

    def shallow(self, a: Any, b: Any) -> list[tuple[Any, Any]] | None:
        """The child pairs to compare, or None when ``a`` and ``b`` differ at the top."""
        if type(a) is not type(b):
            return None
        if isinstance(a, Constant):
            return [] if _same_constant(a, b) else None
        if isinstance(a, Call):
            if isinstance(a.op, Expr) != isinstance(b.op, Expr) or len(a.args) != len(b.args):
                return None
            if not isinstance(a.op, Expr) and not _same_op(a.op, b.op):
                return None
            if not _same_attrs(a.attrs, b.attrs):
                return None
            a_types, b_types = a.given_type_args, b.given_type_args
            if len(a_types) != len(b_types) or not all(
                types_equal(x, y, self.map_free_vars) for x, y in zip(a_types, b_types)
            ):
                return None
            head = [(a.op, b.op)] if isinstance(a.op, Expr) else []
            return head + list(zip(a.args, b.args))
        if isinstance(a, Tuple):
            return list(zip(a.fields, b.fields)) if len(a.fields) == len(b.fields) else None
        if isinstance(a, TupleGetItem):
            return [(a.tuple_value, b.tuple_value)] if a.index == b.index else None
        if isinstance(a, Function):
            if len(a.params) != len(b.params) or not _same_attrs(a.attrs, b.attrs):
                return None
            if not all(self.pair(p, q, define=True) for p, q in zip(a.params, b.params)):
                return None
            return [(a.body, b.body)]
        if isinstance(a, Let):
            if not self.pair(a.var, b.var, define=True):
                return None
            return [(a.value, b.value), (a.body, b.body)]
        if isinstance(a, If):
            return [
                (a.cond, b.cond),
                (a.true_branch, b.true_branch),
                (a.false_branch, b.false_branch),
            ]
        return [] if a is b else None


def relay_equal(lhs: Expr, rhs: Expr, map_free_vars: bool = False) -> bool:
    """Relay's structural equality of two front-end expressions (see the module docstring)."""
    return _Equal(map_free_vars).run(lhs, rhs)


def _text(expr: Expr) -> str:
    try:
        return expr.astext()
    except Exception:  # the printer needs types some graphs lack: the node's repr then
        return repr(expr)


def is_relay_type(value: Any) -> bool:
    """Whether ``value`` is a Relay type (or an ADT declaration)."""
    return isinstance(value, Type | TypeData)


def _relay(value: Any) -> bool:
    return isinstance(value, Expr)


def _from_front_end(value: Any) -> bool:
    """A Relay expression, or a Relax function (or a module holding one) the front end made."""
    if _relay(value):
        return True
    if isinstance(value, relax.Function):
        return relay_origin(value) is not None
    if isinstance(value, tvm.IRModule):
        return any(relay_origin(f) is not None for f in value.functions.values())
    return False


def _without_unused_aliases(func: relax.Function) -> relax.Function:
    """``func`` without the bindings of a constant or a variable that nothing reads (what
    ``CanonicalizeBindings`` leaves behind once it inlined them). Other unused bindings stay:
    an unused value in Relay's graph is a ``let`` that a comparison must see."""
    seq = func.body
    if not isinstance(seq, relax.SeqExpr):
        return func
    used = {v for b in seq.blocks for x in b.bindings for v in relax.analysis.free_vars(x.value)}
    used.update(relax.analysis.free_vars(seq.body))
    blocks = []
    for block in seq.blocks:
        kept = [
            b
            for b in block.bindings
            if b.var in used
            or not isinstance(b, relax.VarBinding)
            or not isinstance(b.value, tvm.ir.expr.Constant | relax.Var)
        ]
        if kept:
            blocks.append(relax.BindingBlock(kept))
    body = relax.SeqExpr(blocks, seq.body)
    return relax.Function(func.params, body, func.ret_ty, func.is_pure, func.attrs)


def canonical(value: Any) -> Any:
    """A Relay function, Relax function or module in one binding form: no dataflow blocks,
    trivial bindings inlined and their aliases dropped (``relax.transform.ToNonDataflow``,
    ``CanonicalizeBindings``, :func:`_without_unused_aliases`).

    Anything else, and a form those passes cannot take, comes back as it is.
    """
    if isinstance(value, Function):
        value = value.__relax_function__()
    elif _relay(value):  # the TVM node the FFI sees for it (what save_json stores)
        value = value.__tvm_ffi_object__()
    if not isinstance(value, relax.Function | tvm.IRModule):
        return value
    mod = value if isinstance(value, tvm.IRModule) else tvm.IRModule({"main": value})
    passes = [relax.transform.ToNonDataflow(), relax.transform.CanonicalizeBindings()]
    try:
        out = tvm.transform.Sequential(passes)(mod)
        for gvar, func in list(out.functions.items()):
            if isinstance(func, relax.Function):
                out[gvar] = _without_unused_aliases(func)
        out = relax.transform.Normalize()(out)
    except Exception:  # a form the passes refuse (calls to functions outside it)
        return value
    return out if isinstance(value, tvm.IRModule) else out["main"]


def _mixed(lhs: Any, rhs: Any) -> bool:
    """Exactly one side is a Relay expression, or neither is and one came from the front end:
    compare the canonical Relax forms."""
    if _relay(lhs) and _relay(rhs):
        return False
    return _from_front_end(lhs) or _from_front_end(rhs)


def _closed_by_name(lhs: Any, rhs: Any) -> tuple[Any, Any]:
    """Two Relax bodies (``mod["main"].body`` of two modules) as functions of their free
    variables, by name, when both sides have the same uniquely named free variables.

    The front end makes each module's parameters anew, so the bodies of two modules built from
    one Relay variable name different Relax variables where Relay's named the same one; a
    free variable of one side stands for the same-named one of the other. Anything else comes
    back as it is.
    """
    if not (isinstance(lhs, relax.Expr) and isinstance(rhs, relax.Expr)) or isinstance(
        lhs, relax.Function
    ):
        return lhs, rhs
    try:
        free = [relax.analysis.free_vars(side) for side in (lhs, rhs)]
    except Exception:  # not a well-formed expression for the analysis
        return lhs, rhs
    names = [sorted(str(v.name) for v in vs) for vs in free]
    if not names[0] or names[0] != names[1] or len(set(names[0])) != len(names[0]):
        return lhs, rhs
    left, right = (
        relax.Function(sorted(vs, key=lambda v: str(v.name)), side)
        for vs, side in zip(free, (lhs, rhs))
    )
    return left, right


def structural_equal(lhs: Any, rhs: Any, map_free_vars: bool = False) -> bool:
    """``tvm.ir.structural_equal``: Relay's comparison for two Relay expressions, TVM's own
    (``tvm_ffi.structural_equal``) otherwise.

    Parameters
    ----------
    lhs, rhs : object
        Relay expressions, or TVM objects.
    map_free_vars : bool
        Free variables of the two sides may stand for each other.

    Returns
    -------
    bool
    """
    if _relay(lhs) and _relay(rhs):
        return relay_equal(lhs, rhs, map_free_vars)
    if is_relay_type(lhs) or is_relay_type(rhs):
        return types_equal(lhs, rhs, map_free_vars)
    if _relay(lhs) != _relay(rhs) and isinstance(lhs, Pattern) != isinstance(rhs, Pattern):
        return False  # a Relay expression and a pattern (relay.PatternVar): never equal
    lhs, rhs = _closed_by_name(lhs, rhs)
    if tvm_ffi.structural_equal(lhs, rhs, map_free_vars):
        return True
    if _same_relay_origins(lhs, rhs, map_free_vars):
        return True
    # Unequal as they are: a Relax pass's result may still be the expected Relay function in
    # another binding form.
    if _mixed(lhs, rhs):
        return bool(tvm_ffi.structural_equal(canonical(lhs), canonical(rhs), map_free_vars))
    return False


def assert_structural_equal(lhs: Any, rhs: Any, map_free_vars: bool = False) -> None:
    """``tvm.ir.assert_structural_equal``: :func:`structural_equal`, raising when unequal.

    Raises
    ------
    ValueError
        When the two differ; the message shows both (Relay's text).
    """
    if _relay(lhs) and _relay(rhs):
        if not relay_equal(lhs, rhs, map_free_vars):
            raise ValueError(
                f"StructuralEqual check failed:\nlhs:\n{_text(lhs)}\nrhs:\n{_text(rhs)}"
            )
        return
    if is_relay_type(lhs) or is_relay_type(rhs):
        if not types_equal(lhs, rhs, map_free_vars):
            raise ValueError(f"StructuralEqual check failed:\nlhs:\n{lhs!r}\nrhs:\n{rhs!r}")
        return
    lhs, rhs = _closed_by_name(lhs, rhs)
    if _same_relay_origins(lhs, rhs, map_free_vars):
        return
    if _mixed(lhs, rhs) and not tvm_ffi.structural_equal(lhs, rhs, map_free_vars):
        lhs, rhs = canonical(lhs), canonical(rhs)
    tvm_assert_structural_equal(lhs, rhs, map_free_vars)


def _same_relay_origins(lhs: Any, rhs: Any, map_free_vars: bool) -> bool:
    """Whether two functions the front end made from Relay functions (a Relax function with a
    Relay origin, or a Relay function itself) were made from equal ones.

    Their Relax forms may differ in what Relay did not compare: ``global_symbol``, and the
    GlobalVar of each kernel a called ``Primitive`` function became (made anew each time a
    function is converted).
    """
    lo, ro = _relay_function_of(lhs), _relay_function_of(rhs)
    return lo is not None and ro is not None and relay_equal(lo, ro, map_free_vars)


def _relay_function_of(value: Any) -> Any:
    """The Relay function behind a Relax function, a Relay function itself, or None."""
    if isinstance(value, relax.Function):
        return relay_origin(value)
    return value if isinstance(value, Function) else None
