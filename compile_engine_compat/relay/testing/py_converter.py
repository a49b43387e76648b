"""``relay.testing.py_converter``: TVM 0.19 turned a Relay program into Python source and ran
it. The shim evaluates the program with its Relay interpreter instead (the values are the
same: tensors, ``tvm.runtime.container.ADT`` tuples, ``ConstructorValue``, ``RefValue``,
closures as Python callables); no Python source is generated.
"""

from __future__ import annotations

from typing import Any

import tvm

from compile_engine_compat.deprecations import legacy_api

from ..backend.interpreter import Interpreter

__all__ = ["run_as_python", "to_python"]


@legacy_api("relay.testing.run_as_python")
def run_as_python(expr: Any, mod: Any = None, target: Any = "llvm") -> Any:
    """``relay.testing.run_as_python(expr, mod=None, target="llvm")``: the value of ``expr``.

    Parameters
    ----------
    expr : relay.Expr
        The program (it may call the functions of ``mod``).
    mod : tvm.IRModule, optional
        The module of its global functions and ADTs.
    target : str or Target
        What the op calls are built for (their device is the target's).

    Returns
    -------
    object
        Its value (a function is returned as a Python callable).
    """
    from compile_engine_compat.targets import as_target

    target = as_target(target)
    device = tvm.device(str(target.kind.name), 0)
    return Interpreter(mod if mod is not None else tvm.IRModule(), target, device).evaluate(expr)


def to_python(expr: Any, mod: Any = None, target: Any = "llvm") -> Any:
    """``relay.testing.py_converter.to_python``: refused; TVM 0.19 generated a Python AST here,
    the shim has no such generator (``run_as_python`` evaluates with the interpreter)."""
    raise NotImplementedError(
        "relay.testing.to_python: the shim generates no Python source for a Relay program; "
        "relay.testing.run_as_python(expr, mod) evaluates it with the Relay interpreter"
    )
