"""compile-engine-compat: the removed ``tvm.relay.backend.compile_engine`` API on modern TVM.

Swap one import line::

    from compile_engine_compat import compile_engine

Names resolve lazily (PEP 562) and once: ``import compile_engine_compat`` alone does not import
TVM, so the pytest plugin costs nothing in projects that never call the legacy API.

It does check, first thing, that ``apache-tvm-tirx`` is not installed next to ``apache-tvm``:
the two abort the interpreter when both are imported, and an ``ImportError`` naming the fix is
better than that (:mod:`compile_engine_compat.conflicts`).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# Before anything that could import tvm: once both runtimes load, it is too late to raise.
from .conflicts import TvmTirxConflictError, check_tvm_tirx_conflict, require_tvm

check_tvm_tirx_conflict()

from .deprecations import (  # noqa: E402
    CompileEngineDeprecationWarning,
    LedgerEntry,
    ledger,
    reset_ledger,
    silenced,
)
from .migrate.ledger_io import install_from_env as _install_ledger  # noqa: E402
from .version import __version__  # noqa: E402

# COMPILE_ENGINE_COMPAT_LEDGER=path.jsonl: append this process's ledger at exit. Wired here, once,
# after the ledger (deprecations) exists: its at-fork handler, which frees the ledger's
# lock in a child, must run before the writer's (migrate.ledger_io), which reads the ledger.
_install_ledger()

if TYPE_CHECKING:
    # Re-exported lazily through _LAZY; these imports only inform type checkers.
    from . import compile_engine as compile_engine
    from . import relay as relay
    from . import te_compiler as te_compiler
    from . import testing as testing
    from .compile_engine import (  # noqa: F401
        CachedFunc,
        CCacheKey,
        CCacheValue,
        CompileEngine,
        LoweredOutput,
        LoweringError,
        OpImplementation,
        get,
        get_shape,
        get_valid_implementations,
        lower_call,
        register_implementation,
        select_implementation,
        temp_strategy,
        unregister_implementation,
    )
    from .surfaces.import_alias import (  # noqa: F401
        install,
        uninstall,
        uninstall_pass_config,
    )
    from .testing.oracle import EquivalenceError, assert_matches_new_path  # noqa: F401
    from .testing.shadow import ShadowMismatchError, shadow_mode  # noqa: F401

# name -> module that defines it (relative). One table drives the lazy forwarding.
_LAZY: dict[str, str] = {
    "compile_engine": ".compile_engine",
    # The legacy names resolve through the legacy module, whose import registers the
    # relay.backend.* globals and connects the engine to the strategy registry.
    "get": ".compile_engine",
    "CompileEngine": ".compile_engine",
    "LoweringError": ".compile_engine",
    "CCacheKey": ".compile_engine",
    "CCacheValue": ".compile_engine",
    "CachedFunc": ".compile_engine",
    "LoweredOutput": ".compile_engine",
    "lower_call": ".compile_engine",
    "get_shape": ".compile_engine",
    "select_implementation": ".compile_engine",
    "get_valid_implementations": ".compile_engine",
    "te_compiler": ".te_compiler",
    # The Relay front end (tvm.relay under install()).
    "relay": ".relay",
    "OpImplementation": ".compile_engine",
    "register_implementation": ".compile_engine",
    "unregister_implementation": ".compile_engine",
    "temp_strategy": ".compile_engine",
    "install": ".surfaces.import_alias",
    "uninstall": ".surfaces.import_alias",
    "uninstall_pass_config": ".surfaces.import_alias",
    # Equivalence checking (needs hypothesis for ``testing``).
    "testing": ".testing",
    "ShadowMismatchError": ".testing.shadow",
    "shadow_mode": ".testing.shadow",
    "EquivalenceError": ".testing.oracle",
    "assert_matches_new_path": ".testing.oracle",
}

__all__ = [
    "CompileEngineDeprecationWarning",
    "LedgerEntry",
    "TvmTirxConflictError",
    "__version__",
    "ledger",
    "reset_ledger",
    "silenced",
    *_LAZY,
]


def __getattr__(name: str) -> Any:
    module_name = _LAZY.get(name)
    if module_name is None:
        raise AttributeError(f"module 'compile_engine_compat' has no attribute {name!r}")
    # Every lazy name imports tvm. tvm_tirx imported since the package was (the import-time
    # check saw it installed only if it was on the path then) would make that an abort.
    check_tvm_tirx_conflict(installed=False)
    require_tvm(f"compile_engine_compat.{name}")
    module = importlib.import_module(module_name, __name__)
    value = module if module_name == f".{name}" else getattr(module, name)
    globals()[name] = value  # resolve once: later lookups never reach __getattr__
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
