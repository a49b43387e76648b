"""The FFI functions of ``relay.analysis`` that Relay's own tests call (its ``_ffi_api``
module), served in Python.

TVM 0.19 filled this module with the C++ globals ``relay.analysis.*``; the public ones are the
functions of :mod:`..analysis`. What is left is the test hook ``_test_type_solver``, Relay's
type solver on its own (:mod:`compile_engine_compat.relay._impl.type_solver`). Any other name
is refused at the call, naming where its public function lives.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from compile_engine_compat.deprecations import legacy_api
from compile_engine_compat.relay._impl.ffi_globals import unserved_globals
from compile_engine_compat.relay._impl.relation_functions import relation_of
from compile_engine_compat.relay._impl.type_solver import TypeSolver

from ..ty import Type

__all__ = ["_test_type_solver"]


class _SolverHandle:
    """``solver(name)`` -> the solver's method of Relay's name (``Solve``, ``Unify``,
    ``Resolve``, ``AddConstraint``); attributes may be set on it, as on TVM's PackedFunc."""

    def __init__(self) -> None:
        self.solver = TypeSolver(relation_of)

    def __call__(self, name: str) -> Callable[..., Any]:
        solver = self.solver

        def unify(lhs: Type, rhs: Type) -> Type:
            try:
                return solver.unify(lhs, rhs)
            finally:
                solver.render()

        methods: dict[str, Callable[..., Any]] = {
            "Solve": solver.solve,
            "Unify": unify,
            "Resolve": solver.resolve,
            "AddConstraint": solver.add_constraint,
        }
        if name not in methods:
            raise AttributeError(
                f"the type solver has no method {name!r}: it has {', '.join(sorted(methods))}"
            )
        return methods[name]


@legacy_api("relay.analysis")
def _test_type_solver() -> Any:
    """``_test_type_solver()``, a hook of ``relay.analysis``'s ``_ffi_api``: a fresh type solver.

    Returns
    -------
    callable
        ``solver(name)`` gives its method ``name``: ``Solve() -> bool``,
        ``Unify(lhs, rhs) -> Type`` (a mismatch raises ``tvm.error.DiagnosticError``),
        ``Resolve(type) -> Type`` and ``AddConstraint(relation)``.
    """
    return _SolverHandle()


__getattr__ = unserved_globals("analysis", "function", "relax.analysis")
