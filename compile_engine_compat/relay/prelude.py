"""``relay.prelude``: TVM 0.19's Relay standard library (``prelude.rly``, ``nat.rly``),
evaluated by the interpreter (``create_executor("debug")``).

``Prelude(mod)`` declares in ``mod`` the ADTs ``List`` (``Cons``, ``Nil``), ``Option``
(``Some``, ``None``) and ``Tree`` (``Rose``) and the functions of ``prelude.rly`` (``id``,
``compose``, ``flip``, ``hd``, ``tl``, ``nth``, ``update``, ``length``, ``map``, ``foldl``,
``foldr``, ``foldr1``, ``sum``, ``concat``, ``filter``, ``zip``, ``rev``, ``map_accuml``,
``map_accumr``, ``unfoldl``, ``unfoldr``, ``tmap``, ``size``, ``iterate``), each built here with
the Python API with the meaning its Relay text gave it; ``mod.import_from_std("nat.rly")`` adds
``nat`` (``zero``, ``succ``) and ``nat_double``, ``nat_add``, ``nat_nth``, ``nat_update``,
``nat_iterate``. Relax has no ADTs: ``relay.build`` refuses a module calling them, and the
interpreter runs them. TVM 0.19's tensor arrays are declared too, for the same dtypes
(``relay/_impl/tensor_arrays.py``; the static ones, ``StaticTensorArrayOps``, when registered:
``relay/_impl/static_tensor_arrays.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import tvm

from compile_engine_compat.deprecations import legacy_api
from compile_engine_compat.relay._impl.static_tensor_arrays import (
    StaticTensorArrayOps,
    get_tensor_array_shape,
    static_name,
)
from compile_engine_compat.relay._impl.tensor_arrays import TensorArrayOps

from .adt import (
    Clause,
    Constructor,
    Match,
    PatternConstructor,
    PatternTuple,
    PatternVar,
    PatternWildcard,
    TypeData,
)
from .backend.interpreter import declare_type, module_form, module_types
from .expr import UPPER, Call, Expr, Let, Tuple, TupleGetItem, Var, bind, const
from .function import Function
from .ty import FuncType, GlobalTypeVar, TensorType, TupleType, Type, TypeCall, TypeVar

__all__ = [
    "Prelude",
    "StaticTensorArrayOps",
    "TensorArrayOps",
    "get_tensor_array_shape",
    "import_std",
]

#: The dtypes whose tensor arrays ``Prelude(mod)`` declares, as TVM 0.19's did.
TENSOR_ARRAY_DTYPES = (
    "float32", "float16", "float64", "int32", "uint8", "int8", "int16", "uint16", "int64",
)  # fmt: skip

_WILD = PatternWildcard()
_INT = TensorType((), "int32")


def _if(cond: Expr, then: Expr, other: Expr) -> Expr:
    from .expr import If

    return If(cond, then, other)


class _Std:
    """Declares definitions in one module: its GlobalVars, types and functions."""

    def __init__(self, mod: tvm.IRModule) -> None:
        self.mod = mod
        self._made: dict[str, Any] = {}
        #: name -> (parameter types, return type, type parameters), as the ``.rly`` file says.
        self.signatures: dict[str, tuple[list[Type], Type, list[TypeVar]]] = {}

    def gv(self, name: str) -> Any:
        """The module's GlobalVar ``name`` (made once when the module has none yet)."""
        if name not in self._made:
            names = {g.name_hint: g for g in self.mod.get_global_vars()}
            self._made[name] = names.get(name) or tvm.ir.GlobalVar(name)
        return self._made[name]

    def adt(self, name: str, ctors: Sequence[tuple[str, Callable[..., list[Type]]]], arity: int):
        """Declare ``type name[A...] { ctor(fields), ... }``; the header and constructors."""
        header = GlobalTypeVar(name)
        tvars = [TypeVar(chr(ord("A") + i)) for i in range(arity)]
        made = [Constructor(c, fields(header, *tvars), header) for c, fields in ctors]
        declare_type(self.mod, header, TypeData(header, tvars, made))
        return (header, *made)

    def define(self, name: str, build: Callable[..., Function]) -> None:
        """``def @name`` from ``build(gv)`` (the function may call ``gv``: recursion)."""
        gvar = self.gv(name)
        func = build(gvar)
        if name in self.signatures:
            func = _typed(func, *self.signatures[name])
        self.mod[gvar] = module_form(func, name, self.mod)


def _typed(func: Function, arg_types: list[Type], ret: Type, tparams: list[TypeVar]) -> Function:
    """``func`` with its parameters annotated (fresh variables) and its return type."""
    params = [Var(p.name_hint, t) for p, t in zip(func.params, arg_types)]
    body = bind(func.body, dict(zip(func.params, params)))
    return Function(params, body, ret, tparams)


def _signatures(lst: Any, option: Any, tree: Any) -> dict[str, Any]:
    """The declared type of each function of ``prelude.rly``."""
    a, b, c = TypeVar("A"), TypeVar("B"), TypeVar("C")
    i32, fn = _INT, FuncType

    def sig(args: list[Type], ret: Type, *tps: TypeVar) -> tuple[list[Type], Type, list[TypeVar]]:
        return (args, ret, list(tps))

    accum = sig([fn([a, b], TupleType([a, c])), a, lst(b)], TupleType([a, lst(c)]), a, b, c)
    return {
        "id": sig([a], a, a),
        "compose": sig([fn([b], c), fn([a], b)], fn([a], c), a, b, c),
        "flip": sig([fn([a, b], c)], fn([b, a], c), a, b, c),
        "hd": sig([lst(a)], a, a),
        "tl": sig([lst(a)], lst(a), a),
        "nth": sig([lst(a), i32], a, a),
        "length": sig([lst(a)], i32, a),
        "update": sig([lst(a), i32, a], lst(a), a),
        "map": sig([fn([a], b), lst(a)], lst(b), a, b),
        "foldl": sig([fn([a, b], a), a, lst(b)], a, a, b),
        "foldr": sig([fn([a, b], b), b, lst(a)], b, a, b),
        "foldr1": sig([fn([a, a], a), lst(a)], a, a),
        "sum": sig([lst(i32)], i32),
        "concat": sig([lst(a), lst(a)], lst(a), a),
        "filter": sig([fn([a], TensorType((), "bool")), lst(a)], lst(a), a),
        "zip": sig([lst(a), lst(b)], lst(TupleType([a, b])), a, b),
        "rev": sig([lst(a)], lst(a), a),
        "map_accumr": accum,
        "map_accuml": accum,
        "unfoldr": sig([fn([a], option(TupleType([a, b]))), a], lst(b), a, b),
        "unfoldl": sig([fn([a], option(TupleType([a, b]))), a], lst(b), a, b),
        "tmap": sig([fn([a], b), tree(a)], tree(b), a, b),
        "size": sig([tree(a)], i32, a),
        "iterate": sig([fn([a], a), i32], fn([a], a), a),
    }


def _fn(params: Sequence[Var], body: Expr, *type_params: TypeVar) -> Function:
    return Function(list(params), body, None, list(type_params))


def _match(data: Expr, clauses: Sequence[tuple[Any, Expr]], complete: bool = True) -> Match:
    return Match(data, [Clause(p, rhs) for p, rhs in clauses], complete)


def _pc(ctor: Constructor, *subs: Any) -> PatternConstructor:
    return PatternConstructor(ctor, list(subs))


def _pv(var: Var) -> PatternVar:
    return PatternVar(var)


def _load_prelude(std: _Std) -> None:
    """``prelude.rly``."""
    a, b, c = TypeVar("A"), TypeVar("B"), TypeVar("C")
    lst, cons, nil = std.adt(
        "List", [("Cons", lambda h, t: [t, TypeCall(h, [t])]), ("Nil", lambda h, t: [])], 1
    )
    option, some, none = std.adt(
        "Option", [("Some", lambda h, t: [t]), ("None", lambda h, t: [])], 1
    )
    tree, rose = std.adt("Tree", [("Rose", lambda h, t: [t, lst(TypeCall(h, [t]))])], 1)
    std.signatures.update(_signatures(lst, option, tree))
    g = {n: std.gv(n) for n in _PRELUDE_FUNCTIONS}
    x, f, xs, n, v = Var("x", a), Var("f"), Var("xs", lst(a)), Var("n", _INT), Var("v")
    rest, acc = Var("rest"), Var("acc")
    std.define("id", lambda gv: _fn([x], x, a))
    gg = Var("g")
    std.define("compose", lambda gv: _fn([f, gg], _fn([x], Call(f, [Call(gg, [x])])), a, b, c))
    ba, bb = Var("b"), Var("a")
    std.define("flip", lambda gv: _fn([f], _fn([ba, bb], Call(f, [bb, ba])), a, b, c))
    std.define("hd", lambda gv: _fn([xs], _match(xs, [(_pc(cons, _pv(x), _WILD), x)], False), a))
    std.define(
        "tl", lambda gv: _fn([xs], _match(xs, [(_pc(cons, _WILD, _pv(rest)), rest)], False), a)
    )
    equal = UPPER.builder("equal")
    one, zero = const(1), const(0)
    std.define(
        "nth",
        lambda gv: _fn(
            [xs, n],
            _if(equal(n, zero), Call(g["hd"], [xs]), Call(gv, [Call(g["tl"], [xs]), n - one])),
            a,
        ),
    )
    std.define(
        "length",
        lambda gv: _fn(
            [xs],
            _match(xs, [(_pc(cons, _WILD, _pv(rest)), one + Call(gv, [rest])), (_pc(nil), zero)]),
            a,
        ),
    )
    hd_xs = Call(g["hd"], [xs])
    std.define(
        "update",
        lambda gv: _fn(
            [xs, n, v],
            _if(
                equal(n, zero),
                cons(v, Call(g["tl"], [xs])),  # two calls, as prelude.rly wrote them
                cons(hd_xs, Call(gv, [Call(g["tl"], [xs]), n - one, v])),
            ),
            a,
        ),
    )
    cons_x_rest = _pc(cons, _pv(x), _pv(rest))
    std.define(
        "map",
        lambda gv: _fn(
            [f, xs],
            _match(xs, [(cons_x_rest, cons(Call(f, [x]), Call(gv, [f, rest]))), (_pc(nil), nil())]),
            a,
            b,
        ),
    )
    std.define(
        "foldl",
        lambda gv: _fn(
            [f, acc, xs],
            _match(xs, [(cons_x_rest, Call(gv, [f, Call(f, [acc, x]), rest])), (_pc(nil), acc)]),
            a,
            b,
        ),
    )
    std.define(
        "foldr",
        lambda gv: _fn(
            [f, acc, xs],
            _match(xs, [(cons_x_rest, Call(f, [x, Call(gv, [f, acc, rest])])), (_pc(nil), acc)]),
            a,
            b,
        ),
    )
    std.define(
        "foldr1",
        lambda gv: _fn(
            [f, xs],
            _match(
                xs,
                [
                    (_pc(cons, _pv(x), _pc(nil)), x),
                    (cons_x_rest, Call(f, [x, Call(gv, [f, rest])])),
                ],
                False,
            ),
            a,
        ),
    )
    sx, sy = Var("x", _INT), Var("y", _INT)
    add_f = Var("add_f")
    int_xs = Var("xs", lst(_INT))
    std.define(
        "sum",
        lambda gv: Function(
            [int_xs],
            Let(
                add_f,
                Function([sx, sy], sx + sy, _INT),
                Call(g["foldl"], [add_f, zero, int_xs]),
            ),
            _INT,
        ),
    )
    ys = Var("ys")
    std.define("concat", lambda gv: _fn([xs, ys], Call(g["foldr"], [cons, ys, xs]), a))
    std.define(
        "filter",
        lambda gv: _fn(
            [f, xs],
            _match(
                xs,
                [
                    (
                        cons_x_rest,
                        _if(Call(f, [x]), cons(x, Call(gv, [f, rest])), Call(gv, [f, rest])),
                    ),
                    (_pc(nil), nil()),
                ],
            ),
            a,
        ),
    )
    y_, xr, yr = Var("y"), Var("x_rest"), Var("y_rest")
    std.define(
        "zip",
        lambda gv: _fn(
            [xs, ys],
            _match(
                Tuple([xs, ys]),
                [
                    (
                        PatternTuple([_pc(cons, _pv(x), _pv(xr)), _pc(cons, _pv(y_), _pv(yr))]),
                        cons(Tuple([x, y_]), Call(gv, [xr, yr])),
                    ),
                    (_WILD, nil()),
                ],
            ),
            a,
            b,
        ),
    )
    h, t = Var("h"), Var("t")
    std.define(
        "rev",
        lambda gv: _fn(
            [xs], Call(g["foldl"], [Call(g["flip"], [_fn([h, t], cons(h, t))]), nil(), xs]), a
        ),
    )
    _map_accum(std, g, cons, nil, right=True)
    _map_accum(std, g, cons, nil, right=False)
    seed, val = Var("seed"), Var("val")
    std.define(
        "unfoldr",
        lambda gv: _fn(
            [f, seed],
            _match(
                Call(f, [seed]),
                [
                    (
                        _pc(some, _pv(val)),
                        cons(TupleGetItem(val, 1), Call(gv, [f, TupleGetItem(val, 0)])),
                    ),
                    (_pc(none), nil()),
                ],
            ),
            a,
            b,
        ),
    )
    std.define(
        "unfoldl",
        lambda gv: _fn([f, seed], Call(g["rev"], [Call(g["unfoldr"], [f, seed])]), a, b),
    )
    sub, tt, list_f = Var("sub_trees"), Var("tt"), Var("list_f")
    std.define("tmap", lambda gv: _tree_map(gv, g, rose, f, sub, tt, list_f, v))
    std.define(
        "size",
        lambda gv: _fn(
            [t],
            _match(
                t,
                [
                    (
                        _pc(rose, _WILD, _pv(sub)),
                        one + Call(g["sum"], [Call(g["map"], [gv, sub])]),
                    )
                ],
            ),
            a,
        ),
    )
    std.define(
        "iterate",
        lambda gv: _fn(
            [f, n],
            _if(
                equal(n, zero),
                g["id"],
                Call(g["compose"], [f, Call(gv, [f, n - one])]),
            ),
            a,
        ),
    )


def _tree_map(
    gv: Any, g: dict[str, Any], rose: Constructor, f: Var, sub: Var, tt: Var, list_f: Var, v: Var
) -> Function:
    t = Var("t")
    body = _match(
        t,
        [
            (
                _pc(rose, _pv(v), _pv(sub)),
                Let(
                    list_f,
                    Function([tt], Call(gv, [f, tt])),
                    rose(Call(f, [v]), Call(g["map"], [list_f, sub])),
                ),
            )
        ],
    )
    return Function([f, t], body)


def _map_accum(std: _Std, g: dict[str, Any], cons: Constructor, nil: Constructor, right: bool):
    """``map_accumr`` (``right``, over ``foldr``) or ``map_accuml`` (over ``foldl``)."""
    f, init, xs, x, acc, f_out, updater = (
        Var(n) for n in ("f", "init", "xs", "x", "acc", "f_out", "updater")
    )
    step = Let(
        f_out,
        Call(f, [TupleGetItem(acc, 0), x]),
        Tuple([TupleGetItem(f_out, 0), cons(TupleGetItem(f_out, 1), TupleGetItem(acc, 1))]),
    )
    params = [x, acc] if right else [acc, x]
    fold = g["foldr"] if right else g["foldl"]
    name = "map_accumr" if right else "map_accuml"
    std.define(
        name,
        lambda gv: Function(
            [f, init, xs],
            Let(updater, Function(params, step), Call(fold, [updater, Tuple([init, nil()]), xs])),
        ),
    )


def _load_nat(std: _Std) -> None:
    """``nat.rly`` (it uses the prelude's ``hd``/``tl``: the prelude is loaded first)."""
    nat, zero, succ = std.adt("nat", [("zero", lambda h: []), ("succ", lambda h: [h()])], 0)
    x, y, z, f, lst, idx, value = (Var(n) for n in ("x", "y", "z", "f", "l", "n", "value"))
    hd, tl = std.gv("hd"), std.gv("tl")
    std.define(
        "nat_double",
        lambda gv: Function(
            [nx := Var("x", nat())],
            _match(nx, [(_pc(zero), zero()), (_pc(succ, _pv(y)), succ(succ(Call(gv, [y]))))]),
            nat(),
        ),
    )
    std.define(
        "nat_add",
        lambda gv: Function(
            [ax := Var("x", nat()), ay := Var("y", nat())],
            _match(ax, [(_pc(zero), ay), (_pc(succ, _pv(z)), succ(Call(gv, [z, ay])))]),
            nat(),
        ),
    )
    std.define(
        "nat_nth",
        lambda gv: _fn(
            [lst, idx],
            _match(
                idx,
                [
                    (_pc(zero), Call(hd, [lst])),
                    (_pc(succ, _pv(y)), Call(gv, [Call(tl, [lst]), y])),
                ],
            ),
            TypeVar("A"),
        ),
    )
    std.define(
        "nat_update",
        lambda gv: _fn(
            [lst, idx, value],
            _match(
                idx,
                [
                    (_pc(zero), _cons(std)(value, Call(tl, [lst]))),
                    (_pc(succ, _pv(y)), Call(gv, [Call(tl, [lst]), y, value])),
                ],
            ),
            TypeVar("A"),
        ),
    )
    i = Var("i")
    std.define(
        "nat_iterate",
        lambda gv: _fn(
            [f, idx],
            _match(
                idx,
                [
                    (_pc(zero), Function([x], x)),
                    (_pc(succ, _pv(y)), Function([i], Call(f, [Call(Call(gv, [f, y]), [i])]))),
                ],
            ),
            TypeVar("A"),
        ),
    )


def _cons(std: _Std) -> Constructor:
    return _constructors(std.mod, "List")[1]


def _constructors(mod: Any, name: str) -> tuple[Any, ...]:
    """``(header, *constructors)`` of the ADT ``name`` of ``mod``."""
    for header, data in module_types(mod).items():
        if header.name_hint == name:
            return (header, *data.constructors)
    raise ValueError(f"the module declares no type {name!r}")


#: The functions of ``prelude.rly``, as ``Prelude`` attributes.
_PRELUDE_FUNCTIONS = (
    "id", "compose", "flip", "hd", "tl", "nth", "update", "map", "foldl", "foldr", "foldr1",
    "concat", "filter", "zip", "rev", "map_accuml", "map_accumr", "unfoldl", "unfoldr", "sum",
    "length", "tmap", "size", "iterate",
)  # fmt: skip

_STD_FILES: dict[str, Callable[[_Std], None]] = {
    "prelude.rly": _load_prelude,
    "nat.rly": _load_nat,
    "core.rly": lambda std: None,  # `extern type Storage`: nothing the interpreter needs
}


def import_std(mod: Any, file_to_import: str) -> None:
    """``mod.import_from_std(file)``: declare a file of Relay's standard library in ``mod``.

    Parameters
    ----------
    mod : tvm.IRModule
        Where the types and functions go.
    file_to_import : str
        ``"prelude.rly"``, ``"nat.rly"`` (which needs the prelude: it is loaded first when
        missing) or ``"core.rly"``.

    Raises
    ------
    ValueError
        For another file (``gradient.rly`` is not served).
    """
    if file_to_import not in _STD_FILES:
        raise ValueError(
            f"IRModule.import_from_std: {file_to_import!r} is not served; the shim serves "
            f"{sorted(_STD_FILES)} (Relay's standard library, evaluated by the interpreter)"
        )
    std = _Std(mod)
    if file_to_import == "nat.rly" and "hd" not in {g.name_hint for g in mod.get_global_vars()}:
        _load_prelude(std)
    if file_to_import == "prelude.rly" and "hd" in {g.name_hint for g in mod.get_global_vars()}:
        return  # loaded once per module, as Relay's import_from_std did
    _STD_FILES[file_to_import](std)


@legacy_api("relay.prelude")
class Prelude:
    """``relay.prelude.Prelude(mod=None)``: the standard library declared in ``mod``.

    Each function of ``prelude.rly`` is an attribute holding its ``GlobalVar`` (``p.map``,
    ``p.foldl``, ...); ``p.mod.get_type("List")`` gives ``(List, Cons, Nil)``.
    """

    # The GlobalVars of prelude.rly's functions (set by load_prelude).
    id: Any
    compose: Any
    flip: Any
    hd: Any
    tl: Any
    nth: Any
    update: Any
    map: Any
    foldl: Any
    foldr: Any
    foldr1: Any
    concat: Any
    filter: Any
    zip: Any
    rev: Any
    map_accuml: Any
    map_accumr: Any
    unfoldl: Any
    unfoldr: Any
    sum: Any
    length: Any
    tmap: Any
    size: Any
    iterate: Any

    def __init__(self, mod: Any = None) -> None:
        self.mod = tvm.IRModule() if mod is None else mod
        self.load_prelude()

    def load_prelude(self) -> None:
        """Declare ``prelude.rly`` in the module and set the attributes."""
        import_std(self.mod, "prelude.rly")
        names = {g.name_hint: g for g in self.mod.get_global_vars()}
        vars(self).update({name: names[name] for name in _PRELUDE_FUNCTIONS})
        for dtype in TENSOR_ARRAY_DTYPES:
            TensorArrayOps(self, dtype).register()

    def get_name(self, canonical: str, dtype: str) -> str:
        """The name of a tensor-array definition for ``dtype`` (``tensor_float32_t``)."""
        if canonical == "tensor_t":
            return f"tensor_{dtype}_t"
        return f"{canonical}_{dtype}"

    def _ops(self, dtype: str) -> TensorArrayOps:
        ops = TensorArrayOps(self, dtype)
        ops.register()  # declared once per module (the prelude's dtypes at load_prelude)
        return ops

    def get_global_var(self, canonical: str, dtype: str) -> Any:
        """The tensor-array function ``canonical`` for ``dtype`` (``tensor_take``)."""
        return self._ops(dtype).get_global_var(canonical)

    def get_type(self, canonical: str, dtype: str) -> Any:
        """The tensor-array type ``canonical`` (``tensor_t``) for ``dtype``."""
        return self._ops(dtype).get_type(canonical)

    def get_ctor(self, ty_name: str, canonical: str, dtype: str) -> Any:
        """The constructor ``canonical`` of the type ``ty_name`` (``tensor_float32_t``)."""
        name = self.get_name(canonical, dtype)
        self._ops(dtype)
        for ctor in _constructors(self.mod, ty_name)[1:]:
            if ctor.name_hint == name:
                return ctor
        raise ValueError(f"the type {ty_name!r} has no constructor {name!r}")

    def get_tensor_ctor(self, canonical: str, dtype: str) -> Any:
        """The constructor ``canonical`` (``tensor1``) of ``tensor_t`` for ``dtype``."""
        return self._ops(dtype).get_ctor(canonical)

    def get_name_static(self, canonical: str, dtype: str, shape: Any, batch_dim: Any = None) -> str:
        """The name of a static tensor-array definition (``static_tensor_float32_2_3_t``)."""
        return static_name(canonical, dtype, shape, batch_dim)

    def get_global_var_static(
        self, canonical: str, dtype: str, shape: Any, batch_dim: Any = None
    ) -> Any:
        """The static tensor-array function ``canonical`` (registered by
        ``StaticTensorArrayOps(prelude, dtype, shape).register()``)."""
        return _global_var(self.mod, static_name(canonical, dtype, shape, batch_dim))

    def get_type_static(self, canonical: str, dtype: str, shape: Any) -> Any:
        """The static tensor-array type ``canonical`` (``tensor_t``)."""
        return _constructors(self.mod, static_name(canonical, dtype, shape))[0]

    def get_ctor_static(self, ty_name: str, name: str, dtype: str, shape: Any) -> Any:
        """The constructor ``name`` of the static type ``ty_name``."""
        wanted = static_name(name, dtype, shape)
        for ctor in _constructors(self.mod, static_name(ty_name, dtype, shape))[1:]:
            if ctor.name_hint == wanted:
                return ctor
        raise ValueError(f"the static tensor array has no constructor {wanted!r}")

    def get_tensor_ctor_static(self, name: str, dtype: str, shape: Any) -> Any:
        """The constructor ``name`` of the static ``tensor_t``."""
        return self.get_ctor_static("tensor_t", name, dtype, shape)


def _global_var(mod: Any, name: str) -> Any:
    for gvar in mod.get_global_vars():
        if gvar.name_hint == name:
            return gvar
    raise ValueError(f"the module defines no function {name!r}")
