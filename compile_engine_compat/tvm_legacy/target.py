"""``tvm.target.generic_func`` and ``override_native_generic_func`` (TVM <=0.19), served by
``install()`` on ``tvm.target`` (see :mod:`compile_engine_compat.surfaces.moved_names`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import tvm

__all__ = ["GenericFunc", "generic_func", "override_native_generic_func"]


class GenericFunc:
    """``tvm.target.generic_func``: dispatches on the current target's keys."""

    def __init__(self, default: Callable[..., Any], name: str | None = None) -> None:
        self.default = default
        self.name = name or default.__name__
        self._dispatch: dict[str, Callable[..., Any]] = {}
        self.__doc__ = default.__doc__

    def register(self, key: str | list[str], override: bool = False) -> Callable[..., Any]:
        """``@f.register(["cpu"])``: the implementation for targets with those keys."""
        keys = [key] if isinstance(key, str) else list(key)

        def add(func: Callable[..., Any]) -> Callable[..., Any]:
            for k in keys:
                if k in self._dispatch and not override:
                    raise ValueError(f"key {k!r} is already registered for {self.name}")
                self._dispatch[k] = func
            return func

        return add

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        target = tvm.target.Target.current(allow_none=True)
        for key in list(target.keys) if target is not None else []:
            if str(key) in self._dispatch:
                return self._dispatch[str(key)](*args, **kwargs)
        return self.default(*args, **kwargs)


def generic_func(fdefault: Callable[..., Any]) -> GenericFunc:
    """``@tvm.target.generic_func``."""
    return GenericFunc(fdefault)


def override_native_generic_func(func_name: str) -> Callable[[Callable[..., Any]], GenericFunc]:
    """``@tvm.target.override_native_generic_func(name)`` (no native registry: a Python one)."""
    return lambda fdefault: GenericFunc(fdefault, func_name)
