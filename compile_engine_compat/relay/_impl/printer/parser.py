"""Relay's text format read back: ``relay.fromtext`` / ``relay.parse`` / ``relay.parse_expr``.

Reads what :mod:`.printer` prints (and what Relay printed, for the ops of the front end's
table): ``def @name(...) { ... }`` functions, ``fn`` literals, ``free_var`` declarations,
``%n = ...;`` and ``let`` bindings, op calls with keyword attributes, tuples and ``%t.0``,
``Tensor[(1, ?), float32]``, ``fn (...) -> T`` and ``_`` types, scalar constants (``1f``,
``2i64``, ``True``, ``-1``), the binary operators (``* / + - < > <= >= == !=``, Relay's
precedence), ``if (c) { ... } else { ... }`` and ``a; b`` (``let %_ = a; b``); ADT declarations
and ``match`` (:mod:`.adt_syntax`); ``meta[kind][i]`` from ``relay.parse``'s
``init_meta_table`` or the text's ``#[metadata]`` section (the JSON :mod:`.printer` writes).
What it does not serve is refused with a ``RelayParseError`` (a ``SyntaxError``, and a
``tvm.error.DiagnosticError`` as Relay's parser raised) naming the construct and where it is.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import tvm
from tvm import tirx

from compile_engine_compat.relay._impl.registry import UnsupportedRelayError
from compile_engine_compat.relay.expr import (
    Call,
    Constant,
    Expr,
    If,
    Let,
    RefCreate,
    RefRead,
    RefWrite,
    Tuple,
    TupleGetItem,
    Var,
    const,
)
from compile_engine_compat.relay.function import Function
from compile_engine_compat.relay.op.op import OP_TABLE, builder
from compile_engine_compat.relay.ty import Any as AnyDim
from compile_engine_compat.relay.ty import FuncType, IncompleteType, TensorType, TupleType, Type

from .adt_syntax import AdtSyntax, adt_module, merged_module

__all__ = ["RelayParseError", "fromtext", "parse", "parse_expr"]

_TOKEN = re.compile(
    r"""
    (?P<space>\s+|//[^\n]*|\#\[[^\]]*\])
  | (?P<number>\d+(?:\.\d*)?(?:[eE][-+]?\d+)?(?:f16|f32|f64|f|i64|i32|i16|i8|u8|i)?)
  | (?P<string>"[^"]*")
  | (?P<local>%[A-Za-z_0-9][A-Za-z0-9_]*(?:/[A-Za-z_][A-Za-z0-9_]*)*)
  | (?P<global>@[A-Za-z_][A-Za-z0-9_]*)
  | (?P<name>[A-Za-z_][A-Za-z0-9_.]*)
  | (?P<arrow>->|=>)
  | (?P<operator>==|!=|<=|>=|[<>*/+-])
  | (?P<punct>[()\[\]{},;=:.?])
    """,
    re.VERBOSE | re.DOTALL,
)

#: Relay's reference expressions -> (the node, how many arguments).
_REFERENCES = {"ref": (RefCreate, 1), "ref_read": (RefRead, 1), "ref_write": (RefWrite, 2)}

#: The binary operators, loosest first (Relay's precedence; each level left-associative) -> op.
_BINARY_LEVELS: tuple[dict[str, str], ...] = (
    {"==": "equal", "!=": "not_equal"},
    {"<": "less", ">": "greater", "<=": "less_equal", ">=": "greater_equal"},
    {"+": "add", "-": "subtract"},
    {"*": "multiply", "/": "divide"},
)


#: The attribute types a function call's attributes may name (TVM 0.27 holds them as
#: ``DictAttrs``).
_CALL_ATTRS_KEYS = ("DictAttrs", "ir.DictAttrs", "attrs.TestAttrs")
#: Attributes printed under their attribute name where the op's builder takes another keyword
#: (``on_device(%x, virtual_device=...)`` is ``on_device(x, device=...)``).
_TEXT_ATTR_KEYWORDS: dict[str, dict[str, str]] = {
    "on_device": {"virtual_device": "device"},
    "device_copy": {"src_virtual_device": "src_device", "dst_virtual_device": "dst_device"},
}


class RelayParseError(SyntaxError, tvm.error.DiagnosticError):
    """Text Relay's parser would not read: a ``SyntaxError``, and the
    ``tvm.error.DiagnosticError`` Relay raised."""


#: Suffix of a scalar constant -> its dtype.
_SUFFIX_DTYPE = {
    "f": "float32",
    "f32": "float32",
    "f16": "float16",
    "f64": "float64",
    "i64": "int64",
    "i32": "int32",
    "i16": "int16",
    "i8": "int8",
    "u8": "uint8",
    "i": "int32",
}


@dataclass
class _Token:
    kind: str
    text: str
    pos: int


def _block_comment_end(source: str, pos: int) -> int:
    """Where the block comment opening at ``pos`` ends (block comments nest, as in Relay)."""
    depth = 0
    while pos < len(source):
        if source.startswith("/*", pos):
            depth, pos = depth + 1, pos + 2
        elif source.startswith("*/", pos):
            depth, pos = depth - 1, pos + 2
            if depth == 0:
                return pos
        else:
            pos += 1
    raise RelayParseError("relay text: a block comment is not closed")


def _tokens(source: str) -> list[_Token]:
    out = []
    pos = 0
    while pos < len(source):
        if source.startswith("/*", pos):
            pos = _block_comment_end(source, pos)
            continue
        m = _TOKEN.match(source, pos)
        if m is None:
            raise RelayParseError(f"relay text: unexpected {source[pos : pos + 20]!r} at {pos}")
        if m.lastgroup != "space":
            out.append(_Token(m.lastgroup or "", m.group(), pos))
        pos = m.end()
    out.append(_Token("end", "", pos))
    return out


def _number(text: str) -> tuple[Any, str]:
    """A numeric token as (Python value, dtype)."""
    m = re.fullmatch(r"(-?[\d.eE+-]+?)(f16|f32|f64|f|i64|i32|i16|i8|u8|i)?", text)
    assert m is not None
    body, suffix = m.group(1), m.group(2)
    if suffix is None:
        if any(c in body for c in ".eE"):
            return float(body), "float32"
        value = int(body)  # an int32 literal, int64 past int32's range (as Relay read it)
        return value, "int32" if value <= np.iinfo("int32").max else "int64"
    dtype = _SUFFIX_DTYPE[suffix]
    if dtype.startswith("float"):
        fvalue = float(body)
        if abs(fvalue) > float(np.finfo(dtype).max):
            raise RelayParseError(f"relay text: {text} is not representable as {dtype}")
        return fvalue, dtype
    ivalue = int(body)
    if not np.iinfo(dtype).min <= ivalue <= np.iinfo(dtype).max:
        raise RelayParseError(f"relay text: {text} is not representable as {dtype}")
    return ivalue, dtype


def _metadata(text: str) -> dict[str, list[Any]]:
    """The ``#[metadata]`` section's table (the JSON :mod:`.printer` writes) as kind -> items;
    an empty table for a section of comments only."""
    body = "\n".join(
        line for line in text.splitlines() if not line.strip().startswith(("//", "/*"))
    ).strip()
    if not body:
        return {}
    try:
        table = tvm.ir.load_json(body)
        return {str(kind): list(items) for kind, items in table.items()}
    except Exception as err:
        raise RelayParseError(
            f"relay text: the #[metadata] section is not a table this TVM reads ({err})"
        ) from None


class _Parser(AdtSyntax):
    def __init__(self, source: str, meta_table: dict[str, Any] | None = None) -> None:
        cut = source.find("#[metadata]")
        self.meta: dict[str, list[Any]] = {}
        if cut >= 0:
            self.meta = _metadata(source[cut + len("#[metadata]") :])
            source = source[:cut]
        self.meta.update({str(k): list(v) for k, v in (meta_table or {}).items()})
        self.toks = _tokens(source)
        self.i = 0
        self.scope: dict[str, Expr] = {}
        self.globals: dict[str, Function] = {}
        self.dims: dict[str, Any] = {}
        self.adts = {}
        self.ctors = {}
        self.tvars = {}
        #: Set for a module with ADT declarations: ``@f`` is then its GlobalVar.
        self.gvars: dict[str, tvm.ir.GlobalVar] | None = None
        #: ``relay.parse``'s ``init_module``: the module the text's definitions join.
        self.base: tvm.IRModule | None = None

    # -- tokens
    @property
    def tok(self) -> _Token:
        return self.toks[self.i]

    def error(self, what: str) -> SyntaxError:
        return RelayParseError(f"relay text: {what} at offset {self.tok.pos} ({self.tok.text!r})")

    def take(self, text: str | None = None, kind: str | None = None) -> _Token:
        tok = self.tok
        if (text is not None and tok.text != text) or (kind is not None and tok.kind != kind):
            raise self.error(f"expected {text or kind}")
        self.i += 1
        return tok

    def accept(self, text: str) -> bool:
        if self.tok.text == text and self.tok.kind != "string":
            self.i += 1
            return True
        return False

    # -- program
    def program(self) -> tvm.IRModule | Expr:
        if self.tok.text in ("type", "extern"):
            return self.adt_program()
        if self.tok.text == "def":  # @f is the GlobalVar of a function of the module
            return self.adt_program()
        while self.accept("free_var"):
            v = self.param()
            self.scope[v.name_hint] = v
            self.take(";")
        body = self.body()
        self.take(kind="end")
        return body

    def adt_program(self) -> tvm.IRModule:
        """A module opening with ``type`` declarations (see :mod:`.adt_syntax`)."""
        types = []
        while self.tok.text in ("type", "extern"):
            extern = self.accept("extern")
            self.take("type")
            types.append(self.type_definition(extern))
        self.gvars = dict(self.gvars or {})
        for k, tok in enumerate(self.toks[self.i + 1 :], self.i + 1):
            if self.toks[k - 1].text == "def" and tok.kind == "global":
                self.gvars[tok.text[1:]] = tvm.ir.GlobalVar(tok.text[1:])
        while self.accept("def"):
            name = self.take(kind="global").text[1:]
            self.globals[name] = self.function_rest()
        self.take(kind="end")
        return adt_module(types, self.globals, self.gvars, self.base)

    def function_rest(self) -> Function:
        saved_tvars = dict(self.tvars)
        type_params = self.type_params()
        self.take("(")
        saved = dict(self.scope)
        params = []
        attrs: dict[str, Any] = {}
        while not self.accept(")"):
            if self.tok.kind == "name" and self.toks[self.i + 1].text == "=":
                key = self.take().text
                self.take("=")
                attrs[key] = self.attr_value()  # the function's attributes (Primitive=1)
                if not self.accept(","):
                    self.take(")")
                    break
                continue
            params.append(self.param())
            self.scope[params[-1].name_hint] = params[-1]
            if not self.accept(","):
                self.take(")")
                break
        ret = self.type_() if self.accept("->") else None
        self.take("{")
        body = self.body()
        self.take("}")
        self.scope = saved
        self.tvars = saved_tvars
        return Function(params, body, ret, type_params, attrs or None)

    def param(self) -> Var:
        name = self.take(kind="local").text[1:]
        ty = self.type_() if self.accept(":") else None
        return Var(name, ty)

    def body(self) -> Expr:
        while True:
            if self.tok.kind == "local" and self.toks[self.i + 1].text == "=":
                name = self.take().text[1:]
                self.take("=")
                self.scope[name] = self.expr()
                self.take(";")
            elif self.accept("let"):
                if self.tok.kind != "local":
                    raise self.error("let binds a local variable (%name)")
                v = self.param()
                self.take("=")
                self.scope[v.name_hint] = v  # a let-bound function may call itself
                value = self.expr()
                self.take(";")
                return Let(v, value, self.body())
            else:
                value = self.expr()
                if not self.accept(";"):
                    return value
                return Let(Var("_"), value, self.body())  # `a; b` is `let %_ = a; b`

    # -- expressions
    def expr(self, level: int = 0) -> Expr:
        """An expression of binary operators from ``level`` of :data:`_BINARY_LEVELS` down."""
        if level == len(_BINARY_LEVELS):
            return self.unary()
        node = self.expr(level + 1)
        ops = _BINARY_LEVELS[level]
        while self.tok.kind == "operator" and self.tok.text in ops:
            name = ops[self.take().text]
            node = builder(name)(node, self.expr(level + 1))
        return node

    def unary(self) -> Expr:
        if self.tok.kind == "operator" and self.tok.text == "-":
            self.take()
            operand = self.unary()
            if isinstance(operand, Constant) and operand.data.numpy().ndim == 0:
                value = operand.data.numpy()
                return const(-value.item(), str(value.dtype))  # -10 is a constant, as in Relay
            return builder("negative")(operand)
        node = self.primary()
        while True:
            if self.tok.text == "." and self.toks[self.i + 1].kind == "number":
                self.take(".")
                node = TupleGetItem(node, int(self.take().text))
            elif self.tok.text == "(":  # a call of a value: (fn (%x) { %x })(0)
                node = self.call_rest(node)
            else:
                return node

    def meta_ref(self) -> Any:
        """``meta[kind][i]`` (after ``meta``): item ``i`` of the meta table's ``kind``."""
        self.take("[")
        kind = self.take(kind="name").text
        self.take("]")
        self.take("[")
        index = int(self.take(kind="number").text)
        self.take("]")
        items = self.meta.get(kind, [])
        if index >= len(items):
            raise self.error(
                f"meta[{kind}][{index}] is not in the meta table (relay.parse's init_meta_table "
                "or the text's #[metadata] section)"
            )
        item = items[index]
        return Constant(item) if kind == "relay.Constant" and not isinstance(item, Expr) else item

    def if_rest(self) -> Expr:
        self.take("(")
        cond = self.expr()
        self.take(")")
        branches = []
        for keyword in ("", "else"):
            if keyword:
                self.take(keyword)
            self.take("{")
            saved = dict(self.scope)  # each branch is a scope of its own
            branches.append(self.body())
            self.scope = saved
            self.take("}")
        return If(cond, branches[0], branches[1])

    def primary(self) -> Expr:
        tok = self.tok
        if tok.kind == "local":
            self.i += 1
            if tok.text[1:] not in self.scope:
                raise RelayParseError(f"relay text: {tok.text} is not defined (offset {tok.pos})")
            node = self.scope[tok.text[1:]]
            return self.call_rest(node) if self.tok.text == "(" else node
        if tok.kind == "global":
            self.i += 1
            if self.gvars is not None and tok.text[1:] in self.gvars:
                gvar = self.gvars[tok.text[1:]]
                return self.call_rest(gvar) if self.tok.text == "(" else gvar
            if tok.text[1:] not in self.globals:  # a global of no definition here
                return tvm.ir.GlobalVar(tok.text[1:])
            return self.call_rest(self.globals[tok.text[1:]])
        if tok.kind == "number":
            self.i += 1
            value, dtype = _number(tok.text)
            return const(value, dtype)
        if tok.text in ("True", "False"):
            self.i += 1
            return const(tok.text == "True", "bool")
        if self.accept("("):
            if self.tok.text == "let" or (
                self.tok.kind == "local" and self.toks[self.i + 1].text == "="
            ):
                saved = dict(self.scope)
                inner = self.body()
                self.scope = saved
                self.take(")")
                return inner
            fields = []
            trailing = False
            while not self.accept(")"):
                fields.append(self.expr())
                trailing = self.accept(",")
                if not trailing:
                    self.take(")")
                    break
            return fields[0] if len(fields) == 1 and not trailing else Tuple(fields)
        if tok.text == "fn":
            self.i += 1
            return self.function_rest()
        if tok.text == "if" and tok.kind == "name":
            self.i += 1
            return self.if_rest()
        if tok.kind == "name":
            self.i += 1
            if tok.text == "meta":
                return self.meta_ref()
            if tok.text in self.ctors:
                return self.constructor_use(tok.text)
            if tok.text == "match":
                return self.match_rest()
            if tok.text in _REFERENCES:
                args, attrs = self.arguments()
                if attrs or len(args) != _REFERENCES[tok.text][1]:
                    raise self.error(f"{tok.text} takes {_REFERENCES[tok.text][1]} argument(s)")
                return _REFERENCES[tok.text][0](*args)
            return self.op_call(tok.text)
        raise self.error("expected an expression")

    def call_rest(self, func: Any) -> Expr:
        args, attrs = self.arguments()
        if not attrs:
            return Call(func, args)
        # A function call's attributes: `%f(%x, name="a", attrs_type_key="attrs.TestAttrs")`.
        key = attrs.pop("attrs_type_key", None)
        if key not in _CALL_ATTRS_KEYS:
            raise self.error(
                f"a function call's attributes need attrs_type_key= one of {_CALL_ATTRS_KEYS} "
                f"(got {key!r})"
            )
        return Call(func, args, attrs=tvm.ir.make_node("ir.DictAttrs", **attrs))

    def arguments(self) -> tuple[list[Expr], dict[str, Any]]:
        self.take("(")
        args: list[Expr] = []
        attrs: dict[str, Any] = {}
        while not self.accept(")"):
            if self.tok.kind == "name" and self.toks[self.i + 1].text == "=":
                key = self.take().text
                self.take("=")
                attrs[key] = self.attr_value()
            else:
                args.append(self.expr())
            if not self.accept(","):
                self.take(")")
                break
        return args, attrs

    def op_call(self, name: str) -> Expr:
        try:
            build = builder(name)
        except KeyError:
            raise RelayParseError(
                f"relay text: op {name!r} is not in the front end's op table"
            ) from None
        args, attrs = self.arguments()
        keywords = _TEXT_ATTR_KEYWORDS.get(name, {})
        attrs = {keywords.get(key, key): value for key, value in attrs.items()}
        row = OP_TABLE[name]
        # Inputs by name; a positional argument past them is an attribute Relay took as an
        # input (nn.pad's pad_value prints as `nn.pad(%x, 0f, pad_width=...)`).
        named = dict(zip(row.inputs, args))
        free = [attr for attr, _ in row.attrs if attr not in attrs]
        for attr, value in zip(free, args[len(row.inputs) :]):
            attrs[attr] = _attribute_of(value)
        try:
            out = build(**named, **attrs)
        except (TypeError, UnsupportedRelayError) as err:
            raise RelayParseError(f"relay text: {name}: {err}") from None
        return out.astuple() if hasattr(out, "astuple") else out

    def attr_value(self) -> Any:
        tok = self.take()
        if tok.text == "-" and tok.kind == "operator" and self.tok.kind == "number":
            return -_number(self.take().text)[0]
        if tok.kind == "number":
            return _number(tok.text)[0]
        if tok.kind == "string":
            return tok.text[1:-1]
        if tok.text in ("True", "False"):
            return tok.text == "True"
        if tok.text == "None":
            return None
        if tok.text == "meta":
            return self.meta_ref()
        if tok.text == "[":
            items = []
            while not self.accept("]"):
                items.append(self.attr_value())
                if not self.accept(","):
                    self.take("]")
                    break
            return items
        if tok.kind == "name":
            return tok.text
        raise RelayParseError(f"relay text: bad attribute value {tok.text!r} at offset {tok.pos}")

    # -- types
    def type_(self) -> Type:
        if self.accept("_"):
            return IncompleteType()
        if self.accept("fn"):
            self.take("(")
            args = []
            while not self.accept(")"):
                args.append(self.type_())
                if not self.accept(","):
                    self.take(")")
                    break
            self.take(kind="arrow")
            return FuncType(args, self.type_())
        if self.accept("Tensor"):
            self.take("[")
            self.take("(")
            dims: list[Any] = []
            while not self.accept(")"):
                dims.append(self.dim())
                if not self.accept(","):
                    self.take(")")
                    break
            self.take(",")
            dtype = self.take(kind="name").text
            self.take("]")
            return TensorType(dims, dtype)
        if self.accept("("):
            fields = []
            while not self.accept(")"):
                fields.append(self.type_())
                if not self.accept(","):
                    self.take(")")
                    break
            return TupleType(fields)
        tok = self.take(kind="name")
        named = self.named_type(tok.text)
        if named is not None:
            return named
        try:
            return TensorType((), str(tvm.DataType(tok.text)))
        except (ValueError, tvm.TVMError):
            raise RelayParseError(
                f"relay text: unknown type {tok.text!r} at offset {tok.pos}"
            ) from None

    def dim(self) -> Any:
        tok = self.take()
        if tok.text == "?":
            return AnyDim()
        if tok.kind == "number":
            return int(tok.text)
        if tok.kind == "name":
            return self.dims.setdefault(tok.text, tirx.Var(tok.text, "int64"))
        raise RelayParseError(f"relay text: bad dimension {tok.text!r} at offset {tok.pos}")


def _attribute_of(value: Expr) -> Any:
    """A scalar constant given where Relay's op took an input for an attribute, as its value."""
    if isinstance(value, Constant) and value.data.numpy().ndim == 0:
        return value.data.numpy().item()
    raise RelayParseError("relay text: an attribute given as an input must be a scalar constant")


def parse(
    source: str,
    source_name: str = "from_string",
    init_module: tvm.IRModule | None = None,
    init_meta_table: Mapping[str, Any] | None = None,
) -> Any:
    """``relay.parse(source, source_name, init_module, init_meta_table)``: a module (``def
    @main``) or an expression read from Relay's text.

    Parameters
    ----------
    source : str
        Relay's text, as :func:`.printer.astext` or TVM <= 0.19 printed it.
    source_name : str
        The name of the source (Relay's spans); unused.
    init_module : tvm.IRModule, optional
        A module whose functions and types the text may use (``@f(%x)``); the result holds
        them beside the text's own.
    init_meta_table : dict of str to list, optional
        What ``meta[kind][i]`` names: ``{"relay.Constant": [relay.const(...)], ...}``, beside
        the text's own ``#[metadata]`` section.

    Returns
    -------
    tvm.IRModule
        The module whose ``main`` is the Relax form of ``@main`` (of the expression, for text
        that is one: a function, or a body over ``free_var`` declarations), as Relay's parser
        bound an expression to ``main``.

    Raises
    ------
    SyntaxError
        For text it cannot read, naming the construct and its offset.
    """
    if init_module is not None and not isinstance(init_module, tvm.IRModule):
        raise TypeError(
            f"relay.parse: init_module must be a tvm.IRModule, got {type(init_module).__name__}"
        )
    parser = _Parser(_text(source), _meta_table(init_meta_table))
    if init_module is not None:
        parser.gvars = {str(g.name_hint): g for g in init_module.get_global_vars()}
        parser.base = init_module
    out = parser.program()
    if isinstance(out, tvm.IRModule):
        return out
    if not isinstance(out, Function):
        from compile_engine_compat.relay.analysis import free_vars

        out = Function(free_vars(out), out)
    mod = tvm.IRModule.from_expr(out)
    return mod if init_module is None else merged_module(init_module, mod)


def _meta_table(table: Any) -> dict[str, Any] | None:
    if table is None:
        return None
    if not isinstance(table, Mapping) or not all(
        isinstance(v, list | tuple | tvm.ir.Array) for v in table.values()
    ):
        raise TypeError(
            "relay.parse: init_meta_table maps a kind to a list, e.g. "
            '{"relay.Constant": [relay.const(...)]}'
        )
    return dict(table)


def _text(source: Any) -> str:
    if not isinstance(source, str):
        raise TypeError(f"relay.parse takes a str, got {type(source).__name__}")
    return source


def _read(source: str) -> tvm.IRModule | Expr:
    return _Parser(_text(source)).program()


def fromtext(source: str, source_name: str = "from_string") -> Any:
    """``relay.fromtext(source)``: :func:`parse` (Relay's older name)."""
    return parse(source, source_name)


def parse_expr(source: str) -> Expr:
    """``relay.parse_expr(source)``: one expression read from Relay's text."""
    out = _read(source)
    if not isinstance(out, Expr):
        raise RelayParseError(
            "relay.parse_expr: the text is a module (def @...), not an expression"
        )
    return out
