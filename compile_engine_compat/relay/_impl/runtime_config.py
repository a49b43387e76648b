"""``relay.backend.Runtime`` and ``Executor`` of TVM <=0.19: the configuration ``relay.build`` took.

``relay.build(mod, target, runtime=Runtime("cpp"), executor=Executor("graph"))`` chose the C++
or CRT runtime and the graph, AOT or VM executor. Here ``relay.build`` always builds one Relax VM
executable (``tvm.compile``), so these objects only record what was asked; ``relay.build``
accepts and ignores them, as its docstring says. Known names are checked, so a typo still fails
at the call.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["Executor", "Runtime"]


class _Config:
    """A named configuration with options (``Runtime("crt", {"system-lib": True})``)."""

    KINDS: tuple[str, ...] = ()

    def __init__(self, name: str, options: Mapping[str, Any] | None = None) -> None:
        if name not in self.KINDS:
            raise ValueError(
                f"relay.backend.{type(self).__name__}: unknown {name!r}; TVM 0.19 knew "
                f"{', '.join(self.KINDS)}"
            )
        self.name = name
        self.attrs = dict(options or {})

    def __getitem__(self, key: str) -> Any:
        return self.attrs[key]

    def get(self, key: str, default: Any = None) -> Any:
        """The option ``key``, or ``default``."""
        return self.attrs.get(key, default)

    def __contains__(self, key: object) -> bool:
        return key in self.attrs

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, _Config) or type(other) is not type(self):
            return False
        return (self.name, self.attrs) == (other.name, other.attrs)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r}, {self.attrs!r})"


class Runtime(_Config):
    """``Runtime("cpp")`` / ``Runtime("crt", options)``: recorded; the Relax VM runs the result."""

    KINDS = ("cpp", "crt")


class Executor(_Config):
    """``Executor("graph")`` / ``("aot")`` / ``("vm")``: recorded; ``relay.build`` builds for the
    Relax VM whichever is named."""

    KINDS = ("graph", "aot", "vm")
