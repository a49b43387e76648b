"""``relay.backend.interpreter``: TVM 0.19's Relay interpreter, what ``create_executor("debug")``
ran, and the values it returns (``ConstructorValue``, ``RefValue``).

The interpreter itself lives in the wing's machinery (``relay/_impl/interpret/``); this module
is its Relay path and what the module side of TVM (``mod[gv] = func``, ``mod[List] = TypeData``)
asks of it.
"""

from __future__ import annotations

from typing import Any

from compile_engine_compat.relay._impl.interpret.definitions import (
    INTERPRETED_ONLY,
    declare_type,
    interpreted_function,
    module_types,
    needs_interpreter,
    refuse_interpreted,
    relay_definition,
)
from compile_engine_compat.relay._impl.interpret.evaluator import Interpreter, MatchError
from compile_engine_compat.relay._impl.interpret.values import (
    Closure,
    ConstructorValue,
    RecClosure,
    RefValue,
)
from compile_engine_compat.relay._impl.registry import UnsupportedRelayError
from compile_engine_compat.relay.function import named_relax_function

__all__ = [
    "INTERPRETED_ONLY",
    "Closure",
    "ConstructorValue",
    "Interpreter",
    "MatchError",
    "RecClosure",
    "RefValue",
    "declare_type",
    "module_form",
    "module_types",
    "needs_interpreter",
    "refuse_interpreted",
    "relay_definition",
]


def module_form(func: Any, name: str, mod: Any) -> Any:
    """What ``mod[name] = func`` stores for a front-end ``relay.Function``.

    Its Relax function when Relax can express it; otherwise a stand-in the interpreter
    evaluates (``create_executor("debug")``) and ``relay.build`` refuses by name.
    """
    reason = needs_interpreter(func, mod)
    if reason is None:
        try:
            return named_relax_function(func, name)
        except UnsupportedRelayError as err:  # a let-bound fused function, a normal form's
            reason = str(err).split(":")[0]
    return interpreted_function(func, name, reason)
