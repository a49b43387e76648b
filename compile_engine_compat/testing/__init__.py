"""Testing tooling beside the engine: strategies, op plans, oracle, interpreter, shadow mode.

``from compile_engine_compat.testing import relax_functions, input_arrays,
assert_matches_new_path`` keeps working: the names resolve lazily (PEP 562), so the oracle and
shadow mode (``testing.oracle``, ``testing.shadow``) never import hypothesis, which only the
strategies (``testing.strategies``) need. The engine itself never imports this package.

Modules: :mod:`.strategies` (hypothesis strategies of Relax functions and inputs),
:mod:`.op_plans` (the op specs: one per op, with everything the tooling knows about it: how to
draw and build it, its NumPy reference, input domains and discontinuity), :mod:`.op_references`
(the NumPy reference functions the specs name), :mod:`.oracle` (``tvm.compile`` + VM and NumPy,
with the tolerances), :mod:`.interpret` (the op-by-op reference run), :mod:`.shadow` (shadow
mode), :mod:`.pytest_equivalence` (the pytest fixture).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from compile_engine_compat.conflicts import require_tvm

if TYPE_CHECKING:
    from .oracle import EquivalenceError, assert_matches_new_path
    from .strategies import (
        ALL_DTYPES,
        OP_NAMES,
        Inputs,
        arrays_for,
        build_function,
        input_arrays,
        numpy_reference,
        relax_functions,
        relax_plans,
    )

_ORACLE = ("EquivalenceError", "assert_matches_new_path")

__all__ = [
    "ALL_DTYPES",
    "OP_NAMES",
    "EquivalenceError",
    "Inputs",
    "arrays_for",
    "assert_matches_new_path",
    "build_function",
    "input_arrays",
    "numpy_reference",
    "relax_functions",
    "relax_plans",
]


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    require_tvm(f"{__name__}.{name}")
    module = importlib.import_module(".oracle" if name in _ORACLE else ".strategies", __name__)
    value = getattr(module, name)
    globals()[name] = value
    return value
