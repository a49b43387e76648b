"""``relay.loops`` (``tvm.relay.loops`` under ``install()``): TVM 0.19's ``while_loop``.

The loop is a recursive function bound by ``let`` and returned as a value (a closure): Relax
cannot express it, so a program calling one runs on the shim's interpreter
(``create_executor("debug"/"vm")``, ``relay.vm.compile``), each op call compiled by TVM.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .expr import Expr, If, Let, Tuple, Var
from .function import Function

__all__ = ["while_loop"]


def while_loop(
    cond: Callable[..., Expr], loop_vars: Sequence[Expr], loop_bodies: Callable[..., Any]
) -> Expr:
    """A loop: a function of the loop variables that, while ``cond(*vars)`` holds, goes on with
    ``loop_bodies(*vars)`` and otherwise returns the variables as a tuple.

    Parameters
    ----------
    cond : callable
        The loop variables -> a boolean scalar expression.
    loop_vars : sequence of relay.Expr
        The loop variables (their annotations type the loop function's parameters).
    loop_bodies : callable
        The loop variables -> their next values (a sequence, one per variable).

    Returns
    -------
    relay.Expr
        ``let %while_loop = fn (...) {...}; %while_loop``: call it on the initial values.
    """
    loop = Var("while_loop")
    params = []
    for index, value in enumerate(loop_vars):
        if isinstance(value, Var):
            params.append(Var(value.name_hint, value.type_annotation))
        else:
            params.append(Var(f"arg{index}"))
    again = loop(*list(loop_bodies(*params)))
    body = If(cond(*params), again, Tuple(params))
    return Let(loop, Function(params, body), loop)
