"""Relay's text format (``#[version = "0.0.5"]``), printed from the front end's nodes.

``astext()`` and ``str()`` of a Relay expression or function print what Relay's ``TextPrinter``
printed: ``%x`` for variables, ``%0 = ...;`` for every intermediate value, the call's attributes
that differ from the op's defaults (``nn.conv2d(%x, %w, padding=[1, 1, 1, 1], channels=64,
kernel_size=[3, 3])``), parameter types as ``Tensor[(1, 3), float32]``, scalar constants inline
(``1f``, ``2i64``) and tensor constants as ``meta[relay.Constant][i]``. ``.script()`` of the
Relax form stays the way to see what runs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import tvm
from tvm import tirx

from compile_engine_compat.relay._impl.registry import REQUIRED, RelayOp
from compile_engine_compat.relay.adt import (
    Constructor,
    Match,
    Pattern,
    PatternConstructor,
    PatternTuple,
    PatternVar,
    TypeData,
)
from compile_engine_compat.relay.expr import (
    Call,
    Constant,
    Expr,
    GlobalRef,
    If,
    Let,
    RefCreate,
    RefRead,
    RefWrite,
    Tuple,
    TupleGetItem,
    TupleWrapper,
    Var,
)
from compile_engine_compat.relay.function import Function
from compile_engine_compat.relay.ty import FuncType, TensorType, TupleType, Type

__all__ = ["VERSION_HEADER", "astext", "format_attr", "format_type", "module_astext"]

#: The first line of Relay's text format.
VERSION_HEADER = '#[version = "0.0.5"]'

#: NumPy dtype -> the suffix of a scalar constant in Relay's text ("" for int32).
_SUFFIX = {
    "int32": "",
    "int64": "i64",
    "int8": "i8",
    "int16": "i16",
    "uint8": "u8",
    "float32": "f",
    "float16": "f16",
    "float64": "f64",
}


def var_name(v: Var) -> str:
    """``%name``; ``%v1`` for a name that is a number (Relay's printer kept those apart from
    its ``%0`` bindings so)."""
    name = str(v.name_hint)
    return f"%v{name}" if not name or name[0].isdigit() else f"%{name}"


def format_dim(dim: Any) -> str:
    """A shape dimension: an int, a named variable, or ``?`` for ``relay.Any()``."""
    if isinstance(dim, tirx.IntImm | int):
        return str(int(dim))
    name = str(getattr(dim, "name", dim))
    return "?" if name.startswith("any_dim") else name


def format_type(ty: Type | None) -> str:
    """A Relay type as Relay printed it (``Tensor[(1, 3), float32]``, ``(T1, T2)``)."""
    if isinstance(ty, TensorType) and len(ty.shape) == 0:
        return str(ty.dtype)  # a scalar's type is its dtype (`%cond: bool`)
    if isinstance(ty, TensorType):
        dims = ", ".join(format_dim(d) for d in ty.shape)
        if len(ty.shape) == 1:
            dims += ","
        return f"Tensor[({dims}), {ty.dtype}]"
    if isinstance(ty, TupleType):
        inner = ", ".join(format_type(f) for f in ty.fields)
        return f"({inner}{',' if len(ty.fields) == 1 else ''})"
    if isinstance(ty, FuncType):
        args = ", ".join(format_type(a) for a in ty.arg_types)
        return f"fn ({args}) -> {format_type(ty.ret_type)}"
    return repr(ty)


def format_scalar(value: Any, dtype: str) -> str:
    """A scalar in Relay's text (``1f``, ``2``, ``3i64``, ``True``)."""
    if dtype == "bool":
        return "True" if bool(value) else "False"
    if dtype.startswith("float"):
        text = repr(float(value))
        text = text[:-2] if text.endswith(".0") else text
        return f"{text}{_SUFFIX.get(dtype, 'f')}"
    return f"{int(value)}{_SUFFIX.get(dtype, '')}"


def format_attr(value: Any) -> str:
    """An attribute value as Relay printed it (lists in brackets, strings quoted, ``0.1f``)."""
    if isinstance(value, bool | np.bool_):
        return "True" if value else "False"
    if isinstance(value, int | np.integer | tirx.IntImm):
        return str(int(value))
    if isinstance(value, float | np.floating | tirx.FloatImm):
        return format_scalar(float(value), "float32")
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, list | tuple):
        inner = ", ".join(format_attr(v) for v in value)
        return f"[{inner}]"
    if isinstance(value, Constant):
        return _constant_inline(value) or "meta[relay.Constant][0]"
    return str(value)


def _constant_inline(const: Constant) -> str | None:
    array = const.data.numpy()
    if array.ndim != 0:
        return None
    return format_scalar(array.item(), str(array.dtype))


def _attrs_text(call: Call) -> list[str]:
    """The call's attributes that differ from the op's defaults (what Relay printed); a
    function call's attributes with their ``attrs_type_key``."""
    if isinstance(call.attrs, tvm.ir.DictAttrs) and len(call.attrs.keys()):
        items = [f"{key}={format_attr(call.attrs[key])}" for key in call.attrs.keys()]
        return [*items, 'attrs_type_key="DictAttrs"']
    if not isinstance(call.op, RelayOp) or call.attrs is None:
        return []
    out = []
    row = call.op.row
    for name, default in row.attrs:
        value = call.attrs[name]
        shown = default is REQUIRED or name in row.printed
        if value is None or (not shown and _same(value, default)):
            continue
        out.append(f"{name}={format_attr(value)}")
    return out


def _same(value: Any, default: Any) -> bool:
    """Whether an attribute value is the op's default (lists compared item by item)."""
    if isinstance(value, list | tuple) or isinstance(default, list | tuple):
        if not (isinstance(value, list | tuple) and isinstance(default, list | tuple)):
            return False
        return len(value) == len(default) and all(_same(a, b) for a, b in zip(value, default))
    try:
        return type(value) is type(default) and bool(value == default)
    except (TypeError, ValueError):
        return False


def _pattern_text(pattern: Pattern, name: Callable[[Var], str]) -> str:
    """A match clause's left side, as Relay printed it (``Cons(%y, _)``, ``(%a, %b)``), each
    variable named by ``name``."""
    if isinstance(pattern, PatternVar):
        return name(pattern.var)
    if isinstance(pattern, PatternConstructor):
        subs = ", ".join(_pattern_text(p, name) for p in pattern.patterns)
        return pattern.constructor.name_hint + (f"({subs})" if pattern.patterns else "")
    if isinstance(pattern, PatternTuple):
        return f"({', '.join(_pattern_text(p, name) for p in pattern.patterns)})"
    return "_"


class _Printer:
    """One printing: names (``%0``...), meta constants, and the lines of a scope."""

    def __init__(self, annotate_types: bool = False) -> None:
        self.names: dict[int, str] = {}
        self.counter = 0
        self.meta: list[Constant] = []
        #: Each variable's name, unique in the printing (a second ``%v`` prints ``%v1``).
        self.var_names: dict[int, str] = {}
        #: The variables named (kept alive so that no other object takes one's ``id``).
        self.named_vars: list[Var] = []
        #: How many times each node is used (see :meth:`count_uses`).
        self.uses: dict[int, int] = {}
        #: Print ``/* ty=... */`` after each typed value, as Relay printed a typed module.
        self.annotate_types = annotate_types

    def count_uses(self, root: Any) -> None:
        """Count the uses of each node under ``root``: a let's value used elsewhere too is bound
        to ``%n`` first (``%0 = (0, 0); let %x = %0; %0``), as Relay's printer did."""
        from compile_engine_compat.relay._impl.graph_walk import children

        stack, seen = [root], set()
        while stack:
            node = stack.pop()
            if id(node) in seen:
                continue
            seen.add(id(node))
            for child in children(node):
                self.uses[id(child)] = self.uses.get(id(child), 0) + 1
                stack.append(child)

    def type_comment(self, node: Expr) -> str:
        """`` /* ty=float32 */`` for a typed value when printing a module's types, else ``""``."""
        ty = node._checked_type if self.annotate_types else None
        if self.annotate_types and isinstance(node, Constant):
            ty = TensorType(node.data.shape, str(node.data.dtype))
        if ty is None or isinstance(node, Var | Function):
            return ""
        if isinstance(ty, TensorType) and len(ty.shape) == 0:
            return f" /* ty={ty.dtype} */"
        return f" /* ty={format_type(ty)} */"

    def atom(self, node: Expr, lines: list[str], indent: str) -> str:
        """The text of ``node`` as an argument, binding it to ``%n`` first when it is a value."""
        if isinstance(node, Var):
            return self.var_name(node)
        if isinstance(node, Constant):
            inline = _constant_inline(node)
            if inline is not None:
                return inline + self.type_comment(node)
            if id(node) not in self.names:
                self.names[id(node)] = f"meta[relay.Constant][{len(self.meta)}]"
                self.meta.append(node)
            return self.names[id(node)]
        if isinstance(node, tvm.ir.GlobalVar | GlobalRef):  # a function of the module
            return f"@{node.name_hint}"
        if isinstance(node, Constructor):
            return node.name_hint
        if id(node) in self.names:
            return self.names[id(node)]
        if isinstance(node, Let):  # a let as an operand: `%0 = (let %v = %y; %v);`
            inner = self.scope(node, indent + "  ")
            text = "\n".join(["(", *inner, f"{indent})"])
        else:
            text = self.value(node, lines, indent)
        name = f"%{self.counter}"
        self.counter += 1
        lines.append(f"{indent}{name} = {text}{self.type_comment(node)};")
        self.names[id(node)] = name
        return name

    def value(self, node: Expr, lines: list[str], indent: str) -> str:
        """The text of ``node`` itself (its operands bound first)."""
        if id(node) in self.names:
            return self.names[id(node)]
        if isinstance(node, Call):
            args = [self.atom(a, lines, indent) for a in node.args]
            if isinstance(node.op, RelayOp):
                head = node.op.name
            else:
                head = self.atom(node.op, lines, indent)
            return f"{head}({', '.join(args + _attrs_text(node))})"
        if isinstance(node, Tuple):
            fields = [self.atom(f, lines, indent) for f in node.fields]
            return f"({', '.join(fields)}{',' if len(fields) == 1 else ''})"
        if isinstance(node, TupleGetItem):
            return f"{self.atom(node.tuple_value, lines, indent)}.{node.index}"
        if isinstance(node, Let):
            shared = self.uses.get(id(node.value), 0) > 1 and not isinstance(node.value, Function)
            value = (self.atom if shared else self.value)(node.value, lines, indent)
            lines.append(f"{indent}let {self.param(node.var)} = {value};")
            return self.value(node.body, lines, indent)
        if isinstance(node, If):
            return self.if_text(node, lines, indent)
        if isinstance(node, Function):  # inline as a let's value or a result, else bound
            return self.function(node, indent)
        if isinstance(node, Var | Constant | Constructor | GlobalRef):
            return self.atom(node, lines, indent)
        if isinstance(node, RefCreate):
            return f"ref({self.atom(node.value, lines, indent)})"
        if isinstance(node, RefRead):
            return f"{self.atom(node.ref, lines, indent)}^"
        if isinstance(node, RefWrite):
            ref, value = self.atom(node.ref, lines, indent), self.atom(node.value, lines, indent)
            return f"({ref} := {value})"
        if isinstance(node, Match):
            return self.match_text(node, lines, indent)
        raise TypeError(f"Relay's text has no form for {type(node).__name__} {node!r}")

    def scope(self, node: Expr, indent: str) -> list[str]:
        """The lines of a nested scope (a branch): its names stay inside it."""
        saved = dict(self.names)
        try:
            return self.body(node, indent)
        finally:
            self.names = saved

    def if_text(self, node: If, lines: list[str], indent: str) -> str:
        """``if (%c) { ... } else { ... }``, each branch a scope of its own, as Relay printed."""
        cond = self.atom(node.cond, lines, indent)
        inner = indent + "  "
        then_lines = self.scope(node.true_branch, inner)
        else_lines = self.scope(node.false_branch, inner)
        return "\n".join(
            [f"if ({cond}) {{", *then_lines, f"{indent}}} else {{", *else_lines, f"{indent}}}"]
        )

    def match_text(self, node: Match, lines: list[str], indent: str) -> str:
        """``match (%x) { Cons(%y, _) => { ... }, ... }``: each clause a scope of its own."""
        data = self.atom(node.data, lines, indent)
        inner = indent + "  "
        out = [f"match{'' if node.complete else '?'} ({data}) {{"]
        for clause in node.clauses:
            out.append(f"{inner}{_pattern_text(clause.lhs, self.var_name)} => {{")
            out.extend(self.scope(clause.rhs, inner + "  "))
            out.append(f"{inner}}},")
        return "\n".join([*out, f"{indent}}}"])

    def param(self, v: Var) -> str:
        ty = v.type_annotation
        return self.var_name(v) + (f": {format_type(ty)}" if ty is not None else "")

    def var_name(self, v: Var) -> str:
        """``v``'s name in this printing: :func:`var_name`, numbered apart from another variable
        of the same name (``%v``, ``%v1``), as Relay's printer named them."""
        if id(v) not in self.var_names:
            base = name = var_name(v)
            taken = set(self.var_names.values())
            k = 0
            while name in taken:
                k += 1
                name = f"{base}{k}"
            self.var_names[id(v)] = name
            self.named_vars.append(v)
        return self.var_names[id(v)]

    def body(self, node: Expr, indent: str) -> list[str]:
        """The lines of a scope whose result is ``node``."""
        lines: list[str] = []
        result = self.value(node, lines, indent)
        comment = "" if isinstance(node, Constant) else self.type_comment(node)  # printed
        lines.append(f"{indent}{result}{comment}")
        return lines

    def function(self, func: Function, indent: str, head: str = "fn ") -> str:
        attrs = [f"{key}={format_attr(value)}" for key, value in (func.attrs or {}).items()]
        params = ", ".join([self.param(p) for p in func.params] + attrs)
        ret = f" -> {format_type(func.ret_type)}" if func.ret_type is not None else ""
        tparams = ", ".join(str(t.name_hint) for t in func.type_params or [])
        inner = self.scope(func.body, indent + "  ")
        head += f"[{tparams}]" if tparams else ""
        return "\n".join([f"{head}({params}){ret} {{", *inner, f"{indent}}}"])


def astext(node: Any, show_meta_data: bool = True) -> str:
    """Relay's text of an expression, a function or a multi-output call.

    Parameters
    ----------
    node : Expr, Function or TupleWrapper
        What to print. An expression that is not a function prints its free variables as
        ``free_var`` lines first, as Relay did.
    show_meta_data : bool
        Append the ``#[metadata]`` section naming the tensor constants.

    Returns
    -------
    str
        The text, starting with ``#[version = "0.0.5"]``.
    """
    from compile_engine_compat.relay.analysis import free_vars

    if isinstance(node, TupleWrapper):
        node = node.astuple()
    printer = _Printer()
    printer.count_uses(node)
    lines = [VERSION_HEADER]
    lines += [f"free_var {printer.param(v)};" for v in free_vars(node)]
    if isinstance(node, Function):
        lines.append(printer.function(node, ""))
    else:
        lines += printer.body(node, "")
    text = _with_meta(printer, lines, show_meta_data)
    return text if printer.meta else text[:-1]  # an expression's text ends on it, as Relay's


def module_astext(functions: Sequence[tuple[str, Function]], show_meta_data: bool = True) -> str:
    """Relay's text of a module: ``def @name(...) -> type { ... }`` per function, each typed
    value followed by ``/* ty=... */`` (the module is typed), as Relay printed it.

    Parameters
    ----------
    functions : sequence of (str, Function)
        Each function's global name and its Relay function, in printing order.
    show_meta_data : bool
        Append the ``#[metadata]`` section naming the tensor constants.

    Returns
    -------
    str
        The text, starting with ``#[version = "0.0.5"]``.
    """
    printer = _Printer(annotate_types=True)
    lines = [VERSION_HEADER]
    for name, func in functions:
        ret = func.ret_type
        checked = func._checked_type
        if ret is None and isinstance(checked, FuncType):
            ret = checked.ret_type  # typed (the module holds its typed Relax form)
        typed = Function(func.params, func.body, ret, func.type_params, func.attrs)
        printer.count_uses(func)
        lines.append(printer.function(typed, "", head=f"def @{name}"))
        lines.append("")
    return _with_meta(printer, lines[:-1] if len(lines) > 1 else lines, show_meta_data)


def _with_meta(printer: _Printer, lines: list[str], show_meta_data: bool) -> str:
    """The text of ``lines``, with the metadata section when the printing used constants."""
    if printer.meta:
        lines.append("/* meta data */")
        if show_meta_data:
            lines.append("#[metadata]")
            for i, c in enumerate(printer.meta):
                ty = TensorType(c.data.shape, str(c.data.dtype))
                lines.append(f"// meta[relay.Constant][{i}]: {format_type(ty)}")
            # The table itself, which relay.parse reads back (TVM's JSON, as Relay wrote it).
            lines.append(tvm.ir.save_json({"relay.Constant": [c.data for c in printer.meta]}))
    return "\n".join(lines) + "\n"


def type_definition_text(data: TypeData) -> str:
    """``type List[A] {\n  Cons(A, List[A]),\n  Nil,\n}``: an ADT declaration as Relay printed
    it (each constructor with its fields)."""
    tparams = ", ".join(str(t.name_hint) for t in data.type_vars)
    lines = [f"type {data.header.name_hint}{f'[{tparams}]' if tparams else ''} {{"]
    for ctor in data.constructors:
        fields = ", ".join(format_type(t) for t in ctor.inputs)
        lines.append(f"  {ctor.name_hint}{f'({fields})' if fields else ''},")
    return "\n".join([*lines, "}"])


def irmodule_text(mod: tvm.IRModule, show_meta_data: bool = True) -> str:
    """Relay's text of a module whose every function the front end built (``main`` last), its
    ADT declarations first; TVM's own print (the Relax TVMScript, as ``mod.script()``) for any
    other module."""
    from compile_engine_compat.relay._impl import origin
    from compile_engine_compat.relay._impl.interpret.definitions import module_types

    functions = []
    for gvar, func in mod.functions.items():
        relay_func = origin.relay_of(func)
        if relay_func is None:
            return str(mod.script())
        functions.append((str(gvar.name_hint), relay_func))
    types = [type_definition_text(data) for data in module_types(mod).values()]
    if not functions and not types:
        return str(mod.script())
    functions.sort(key=lambda item: (item[0] == "main", item[0]))
    text = module_astext(functions, show_meta_data)
    if not types:
        return text
    head, _, rest = text.partition("\n")
    return "\n".join([head, *types, rest] if functions else [head, *types, ""])
