"""A Relay program the interpreter runs behind the Relay VM's interface.

``relay.vm.compile`` of a module Relax cannot express (ADTs and ``match``, references,
closures as values, recursion over module functions, type parameters) keeps the module, its
parameters and its target in a :class:`Program`; ``tvm.runtime.vm.VirtualMachine`` calls its
functions with :meth:`Program.run`, each op call built by TVM once per concrete type (as
``create_executor("debug")`` does). ``Executable.save()`` records the program by key: a saved
program loads back in the process that saved it, while the program lives.
"""

from __future__ import annotations

import threading
import uuid
import weakref
from collections.abc import Mapping, Sequence
from typing import Any

import tvm

from compile_engine_compat.runtime import threads

from .definitions import interpreted_reason, needs_interpreter, relay_definition
from .evaluator import Interpreter
from .values import Closure, from_python, to_python

__all__ = ["Program", "interpreted_module_reason", "program_of_key"]

#: key -> the live program it names (save()'s record).
_PROGRAMS: weakref.WeakValueDictionary[str, Program] = weakref.WeakValueDictionary()
_lock = threads.fork_safe(threading.Lock())


def interpreted_module_reason(mod: Any) -> str | None:
    """Why the module (or ``relay.Function``) ``mod`` must run on the interpreter, or None.

    A module holding an interpreted function (a stand-in, see :mod:`.definitions`) or whose
    ``main`` Relay function calls what Relax cannot express.
    """
    if not isinstance(mod, tvm.IRModule):
        return needs_interpreter(mod) if hasattr(mod, "body") else None
    for gvar, func in mod.functions.items():
        found = interpreted_reason(func)
        if found is not None:
            return f"@{gvar.name_hint} {found}"
    return None


class Program:
    """A module run by the interpreter: what the Relay VM's executable holds for it.

    Parameters
    ----------
    mod : tvm.IRModule
        The module (its interpreted functions and the Relax ones the front end made).
    params : mapping of str to tensor, optional
        Values bound to parameters of ``main`` by name (``relay.vm.compile(params=...)``).
    target : tvm.target.Target
        What the op calls are built for.
    reason : str
        Why Relax cannot run it (for the executable's text).
    """

    def __init__(
        self, mod: tvm.IRModule, params: Mapping[str, Any] | None, target: Any, reason: str
    ) -> None:
        self.mod = mod
        self.params = {name: from_python(value) for name, value in (params or {}).items()}
        self.target = target
        self.reason = reason
        self.key = uuid.uuid4().hex
        with _lock:
            _PROGRAMS[self.key] = self

    def function_names(self) -> list[str]:
        """The module's functions (``main`` first), as the VM's globals."""
        names = sorted(g.name_hint for g in self.mod.get_global_vars())
        return sorted(names, key=lambda name: name != "main")

    def _relay_function(self, name: str) -> Any:
        if name not in {g.name_hint for g in self.mod.get_global_vars()}:
            raise ValueError(f"the executable has no function {name!r}: {self.function_names()}")
        func = relay_definition(self.mod[name])
        if func is None:
            raise TypeError(f"@{name} is not a Relay function: the interpreter cannot run it")
        return func

    def param_names(self, name: str) -> list[str]:
        """The parameters of function ``name`` the caller gives (``main``'s bound ones left
        out)."""
        names = [p.name_hint for p in self._relay_function(name).params]
        return [n for n in names if not (name == "main" and n in self.params)]

    def run(self, name: str, args: Sequence[Any], device: Any) -> Any:
        """``@name(*args)`` on ``device``: the value as it leaves the interpreter."""
        func = self._relay_function(name)
        interpreter = Interpreter(self.mod, self.target, device)
        closure = interpreter.global_closure(self.mod.get_global_var(name))
        given = iter(args)
        bound = self.params if name == "main" else {}
        values = []
        for param in func.params:
            if param.name_hint in bound:
                values.append(bound[param.name_hint])
                continue
            try:
                values.append(from_python(next(given)))
            except StopIteration:
                raise TypeError(
                    f"@{name}({', '.join(self.param_names(name))}) is missing the input "
                    f"{param.name_hint!r}"
                ) from None
        extra = list(given)
        if extra:
            taken = len(values) - len(bound)
            raise TypeError(f"@{name} takes {taken} inputs, got {taken + len(extra)}")
        assert isinstance(closure, Closure)
        return to_python(interpreter.call(closure, values))


def program_of_key(key: str) -> Program | None:
    """The live program :attr:`Program.key` names, or None."""
    with _lock:
        return _PROGRAMS.get(key)
