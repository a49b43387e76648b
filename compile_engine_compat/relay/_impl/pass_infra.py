"""``relay.transform``'s pass infrastructure: user-pass decorators, ``Sequential``, build_config.

Relay re-exported TVM's pass infrastructure; the same objects serve here. A user pass written
with ``@relay.transform.function_pass`` runs as ``relax.transform.function_pass`` (which has
Relay's signature) and sees each function the front end built as its Relay function
(:mod:`..origin`), so a ``relay.ExprMutator`` rewrites it; other functions arrive as Relax.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Sequence
from typing import Any

import tvm
from tvm import relax

from compile_engine_compat.deprecations import legacy_api
from compile_engine_compat.pipeline.model.vm_executable import PRIM_FUNCS_ATTR
from compile_engine_compat.relay._impl import origin

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

    The decorated function (or class with ``transform_function(func, mod, ctx)``) receives
    each function of the module as Relay code wrote it: a function the front end built arrives
    as its Relay function (walk it with ``relay.ExprMutator``), and the Relay function returned
    replaces it (as its Relax form). A Relax function with no Relay origin (one a Relax pass
    rewrote) arrives as it is: rewrite it with ``relax.PyExprMutator``.
    """

    def create(arg: Any) -> Any:
        if inspect.isclass(arg):
            return relax.transform.function_pass(
                through_relay_class(arg), opt_level, name or arg.__name__, required
            )
        if not callable(arg):
            raise TypeError("relay.transform.function_pass decorates a function or a class")
        wrapped = functools.wraps(arg)(lambda func, mod, ctx: through_relay(arg, func, mod, ctx))
        return relax.transform.function_pass(wrapped, opt_level, name or arg.__name__, required)

    return create(pass_func) if pass_func is not None else create


def through_relay(transform: Callable[..., Any], func: Any, mod: Any, ctx: Any) -> Any:
    """Run a user's ``transform(func, mod, ctx)`` on the Relay function behind ``func``.

    Parameters
    ----------
    transform : callable
        The user's transform function.
    func : relax.Function
        The function of the module the pass is at.
    mod, ctx
        The module and the pass context, passed on.

    Returns
    -------
    relax.Function
        What ``transform`` returned, as a Relax function with ``func``'s attributes.
    """
    relay_func = origin.relay_of(func)
    out = transform(func if relay_func is None else relay_func, mod, ctx)
    to_relax = getattr(out, "__relax_function__", None)
    if to_relax is None:
        return out
    if out is relay_func:
        return func
    new = to_relax()
    if func.attrs is not None:
        # The new function's own attributes win: its kernels (the PrimFuncs its call_tir calls
        # name) are its own, the old ones may have other dtypes or be called no more. Its
        # name (global_symbol) is the old one's: the function stays where it was in the module.
        kept = {PRIM_FUNCS_ATTR, *(new.attrs.keys() if new.attrs is not None else ())}
        kept.discard("global_symbol")
        for key, value in func.attrs.items():
            if key not in kept:
                new = new.with_attr(key, value)
    origin.record(new, out)
    return new


def through_relay_class(pass_cls: type) -> type:
    """A subclass of a user's pass class whose ``transform_function`` sees Relay functions."""

    user_transform = pass_cls.transform_function  # type: ignore[attr-defined]

    def transform_function(self: Any, func: Any, mod: Any, ctx: Any) -> Any:
        return through_relay(lambda f, m, c: user_transform(self, f, m, c), func, mod, ctx)

    relay_cls = type(pass_cls.__name__, (pass_cls,), {"transform_function": transform_function})
    relay_cls.__module__ = pass_cls.__module__
    relay_cls.__qualname__ = pass_cls.__qualname__
    relay_cls.__doc__ = pass_cls.__doc__
    return relay_cls


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
