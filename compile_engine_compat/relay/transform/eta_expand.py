"""``relay.transform.EtaExpand``: global functions and constructors used as values wrapped in a
function that calls them, on the Relay graph, as TVM 0.19's pass did.

With ``expand_global_var``, ``@f`` used as a value becomes ``fn (%x, ...) { @f(%x, ...) }`` (the
callee's parameter names, types, result type and type parameters); with ``expand_constructor``
a constructor used as a value becomes ``fn [A](%x: A, ...) -> List[A] { Cons(%x, ...) }``.
"""

from __future__ import annotations

from typing import Any

import tvm

from compile_engine_compat.deprecations import legacy_api
from compile_engine_compat.relay._impl.graph_walk import GraphMutator
from compile_engine_compat.relay._impl.interpret.definitions import declared_types

from ..adt import Constructor
from ..expr import Call, GlobalRef, Var
from ..function import Function
from ..ty import TypeCall
from .module_functions import Functions, module_graph_pass

__all__ = ["EtaExpand"]


class _Expand(GraphMutator):
    def __init__(self, functions: dict[str, Any], constructors: bool, globals_: bool) -> None:
        super().__init__()
        self.functions = functions
        self.constructors = constructors
        self.globals = globals_

    def visit_call(self, call: Call) -> Any:
        args = [self.visit(a) for a in call.args]
        op = call.op if isinstance(call.op, tvm.ir.GlobalVar | Constructor) else self.visit(call.op)
        if op is call.op and all(a is b for a, b in zip(args, call.args, strict=True)):
            return call
        return Call(op, args, call.attrs, call.type_args)

    def visit_other(self, expr: Any) -> Any:
        if self.globals and isinstance(expr, GlobalRef | tvm.ir.GlobalVar):
            gvar = expr.var if isinstance(expr, GlobalRef) else expr
            callee = self.functions.get(str(gvar.name_hint))
            if isinstance(callee, Function):
                params = [Var(p.name_hint, p.type_annotation) for p in callee.params]
                body = Call(gvar, list(params))
                return Function(params, body, callee.ret_type, callee.type_params)
        if self.constructors and isinstance(expr, Constructor):
            data = declared_types().get(expr.belong_to)
            type_vars = list(data.type_vars) if data is not None else []
            params = [Var(f"eta_expand_param{i}", t) for i, t in enumerate(expr.inputs)]
            ret = TypeCall(expr.belong_to, type_vars)
            return Function(params, Call(expr, list(params)), ret, type_vars)
        return super().visit_other(expr)


def _expand(constructors: bool, globals_: bool) -> Any:
    def run(functions: Functions) -> Functions | None:
        by_name = {str(g.name_hint): f for g, f in functions.items()}
        out: Functions = {}
        changed = False
        for gvar, func in functions.items():
            if isinstance(func, Function):
                body = _Expand(by_name, constructors, globals_).visit(func.body)
                if body is not func.body:
                    changed = True
                    func = Function(func.params, body, func.ret_type, func.type_params, func.attrs)
            out[gvar] = func
        return out if changed else None

    return run


@legacy_api("relay.transform.more_passes")
def EtaExpand(expand_constructor: bool = False, expand_global_var: bool = False) -> Any:
    """``relay.transform.EtaExpand(expand_constructor=False, expand_global_var=False)`` (opt
    level 1), on the Relay graph (see the module docstring)."""
    return module_graph_pass(
        "EtaExpand", 1, _expand(bool(expand_constructor), bool(expand_global_var))
    )
