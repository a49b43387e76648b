"""``relay.analysis.CallGraph``: which functions of a module call which."""

from __future__ import annotations

from typing import Any

import tvm
from tvm import relax

from compile_engine_compat.deprecations import legacy_api

__all__ = ["CallGraph"]


@legacy_api("relay.analysis")
class CallGraph:
    """Relay's call graph of a module: references and calls between its global functions.

    Built from the module's Relax functions (what a front-end module holds), so it answers for
    any module.

    Parameters
    ----------
    module : tvm.IRModule
        The module.
    """

    def __init__(self, module: Any) -> None:
        if not isinstance(module, tvm.IRModule):
            raise TypeError(f"CallGraph takes a tvm.IRModule, got {type(module).__name__}")
        self._module = module
        #: caller name -> the global functions it calls, once per call site.
        self._calls: dict[str, list[str]] = {}
        for gvar, func in module.functions.items():
            self._calls[gvar.name_hint] = _global_calls(func)

    @property
    def module(self) -> tvm.IRModule:
        """The module the graph was built from."""
        return self._module

    def _name(self, var: Any) -> str:
        if isinstance(var, str):
            self._module.get_global_var(var)  # raises for an unknown name, as Relay did
            return var
        if isinstance(var, tvm.ir.GlobalVar):
            return str(var.name_hint)
        raise TypeError("var should be either a string or GlobalVar")

    def ref_count(self, var: Any) -> int:
        """How many call sites in the module call ``var`` (a name or a ``GlobalVar``)."""
        name = self._name(var)
        return sum(callees.count(name) for callees in self._calls.values())

    def global_call_count(self, var: Any) -> int:
        """How many calls to global functions the function ``var`` makes."""
        return len(self._calls.get(self._name(var), []))

    def is_recursive(self, var: Any) -> bool:
        """Whether the function ``var`` can reach itself through calls."""
        start = self._name(var)
        stack, seen = list(self._calls.get(start, [])), set()
        while stack:
            name = stack.pop()
            if name == start:
                return True
            if name not in seen:
                seen.add(name)
                stack.extend(self._calls.get(name, []))
        return False

    def print_var(self, var: Any) -> str:
        """One function's node of the graph, as Relay printed it."""
        name = self._name(var)
        lines = [f"Call graph node: {name} at: 0x0", f"#refs = {self.ref_count(name)}"]
        lines += [f"  call site: <0x0> calls {callee}" for callee in self._calls.get(name, [])]
        return "\n".join(lines) + "\n"

    def __str__(self) -> str:
        return "".join(self.print_var(name) for name in self._topological())

    def _topological(self) -> list[str]:
        """Callers before callees (Relay printed the graph in this order)."""
        order: list[str] = []
        done: set[str] = set()

        def visit(name: str, path: set[str]) -> None:
            if name in done or name in path:
                return
            path.add(name)
            for callee in self._calls.get(name, []):
                visit(callee, path)
            done.add(name)
            order.append(name)

        for name in sorted(self._calls):
            visit(name, set())
        return order[::-1]


def _global_calls(func: Any) -> list[str]:
    """The global functions ``func`` calls, once per call site, in post-order."""
    names: list[str] = []
    if isinstance(func, relax.Function):

        def visit(node: Any) -> None:
            if isinstance(node, relax.Call) and isinstance(node.op, tvm.ir.GlobalVar):
                names.append(str(node.op.name_hint))

        relax.analysis.post_order_visit(func, visit)
    return names
