"""``relay.transform``'s pass infrastructure: user-pass decorators, ``Sequential``, build_config.

Relay re-exported TVM's pass infrastructure; the same objects serve here. A user pass written
with ``@relay.transform.function_pass`` sees the module's Relax functions (the front end's
modules hold Relax), through ``relax.transform.function_pass``, which has Relay's signature.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import tvm
from tvm import relax

from compile_engine_compat.deprecations import legacy_api

__all__ = ["PassContext", "Sequential", "build_config", "function_pass", "module_pass"]

#: ``relay.transform.Sequential`` and ``PassContext`` were TVM's own classes.
Sequential = tvm.transform.Sequential
PassContext = tvm.transform.PassContext


@legacy_api("relay.transform")
def function_pass(
    pass_func: Any = None,
    opt_level: int | None = None,
    name: str | None = None,
    required: Sequence[str] | None = None,
) -> Any:
    """``@relay.transform.function_pass(opt_level=...)``: ``relax.transform.function_pass``.

    The decorated function (or class with ``transform_function(func, mod, ctx)``) receives each
    Relax function of the module, not a Relay function: rewrite it with Relax's
    ``relax.PyExprMutator``.
    """
    return relax.transform.function_pass(pass_func, opt_level, name, required)


@legacy_api("relay.transform")
def module_pass(
    pass_func: Any = None,
    opt_level: int | None = None,
    name: str | None = None,
    required: Sequence[str] | None = None,
) -> Any:
    """``@relay.transform.module_pass(opt_level=...)``: ``tvm.transform.module_pass`` itself."""
    return tvm.transform.module_pass(pass_func, opt_level, name, required)


@legacy_api("relay.transform")
def build_config(
    opt_level: int = 2,
    required_pass: Sequence[str] | None = None,
    disabled_pass: Sequence[str] | None = None,
    trace: Any = None,
) -> Any:
    """``relay.build_config(...)`` (TVM <0.7): ``tvm.transform.PassContext(...)``.

    ``trace`` (a callback TVM 0.6 called around each pass) is refused if given: pass
    instruments replace it (``PassContext(instruments=[...])``).
    """
    if trace is not None:
        raise ValueError(
            "relay.build_config(trace=...): pass tracing is gone; give "
            "tvm.transform.PassContext(instruments=[...]) a tvm.instrument.PassInstrument"
        )
    return tvm.transform.PassContext(
        opt_level=opt_level, required_pass=required_pass, disabled_pass=disabled_pass
    )
