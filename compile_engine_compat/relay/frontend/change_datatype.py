"""``relay.frontend.change_datatype``: ``ChangeDatatype(src, dst)``, the pass that retypes a
Relay program from one dtype to another (TVM 0.19's Bring-Your-Own-Datatypes helper).

Each function's parameters of dtype ``src`` become parameters of dtype ``dst`` and each tensor
constant of ``src`` is cast to ``dst``; the ops then follow their inputs' dtype. TVM 0.27 has no
custom datatypes, so ``dst`` is a dtype TVM knows (``"float16"``, ``"float64"``...): a
``custom[...]`` dtype is refused by the variable it would type.
"""

from __future__ import annotations

from typing import Any

import tvm

from compile_engine_compat.deprecations import INTERNAL
from compile_engine_compat.relay._impl.pass_infra import function_pass

from ..expr import Constant, Var, bind, var
from ..expr_functor import ExprMutator
from ..function import Function
from ..ty import TensorType

__all__ = ["ChangeDatatype"]


class _Retype(ExprMutator):
    """The rewrite: ``src`` parameters become ``dst`` ones, ``src`` constants are cast."""

    def __init__(self, src: str, dst: str) -> None:
        super().__init__(**INTERNAL)
        self.src, self.dst = src, dst

    def visit_constant(self, const: Constant) -> Any:
        return const.astype(self.dst) if str(const.data.dtype) == self.src else const

    def visit_function(self, fn: Function) -> Function:
        binds: dict[Var, Var] = {}
        for param in fn.params:
            ty = param.type_annotation
            if isinstance(ty, TensorType) and ty.dtype == self.src:
                binds[param] = var(param.name_hint, shape=ty.shape, dtype=self.dst)
        body = self.visit(fn.body)
        params = [binds.get(p, p) for p in fn.params]
        return Function(params, bind(body, binds), None, fn.type_params, fn.attrs)


def ChangeDatatype(src: str, dst: str) -> tvm.transform.Pass:
    """The function pass retyping every function of a module from ``src`` to ``dst``.

    Parameters
    ----------
    src, dst : str
        The dtypes, e.g. ``"float32"`` and ``"float16"``.

    Returns
    -------
    tvm.transform.Pass
        ``ChangeDatatype(src, dst)(mod)`` is the retyped module; convert the params with
        ``params[name].numpy().astype(dst)``, as TVM 0.19's docstring showed.
    """
    if not isinstance(src, str) or not isinstance(dst, str):
        raise TypeError(f"ChangeDatatype takes two dtype names, got {src!r} and {dst!r}")

    def transform(func: Any, mod: Any, ctx: Any) -> Any:
        return _Retype(src, dst).visit(func)

    return function_pass(transform, opt_level=0, name="ChangeDatatype", **INTERNAL)
