"""The ``compile_engine_equivalence`` pytest fixture, for downstream test suites.

Registered through the package's ``pytest11`` entry point (:mod:`.pytest_plugin`), so any
project that installs compile-engine-compat can write::

    def test_my_model_lowers_the_same(compile_engine_equivalence):
        compile_engine_equivalence(my_relax_function, x, w)

Importing this module does not import TVM; the fixture imports the oracle when first used.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

__all__ = ["compile_engine_equivalence"]


@pytest.fixture
def compile_engine_equivalence() -> Callable[..., Any]:
    """Return ``check(func, *arrays, target="llvm", seed=None, reference=True)``.

    ``check`` runs :func:`.assert_matches_new_path`: the shim's
    ``jit`` kernel, ``tvm.compile`` + ``relax.VirtualMachine`` and, when every op has one, the
    NumPy reference must agree within the documented per-dtype tolerances. It returns the jit
    outputs and raises ``EquivalenceError`` (an ``AssertionError``) with a full report otherwise.
    """

    def check(func: Any, *arrays: Any, **options: Any) -> Any:
        from compile_engine_compat.testing.oracle import assert_matches_new_path

        __tracebackhide__ = True  # pytest shows the report, not the oracle's internals
        return assert_matches_new_path(func, *arrays, **options)

    return check
