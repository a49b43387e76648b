"""``relay.backend.Runtime`` and ``Executor`` of TVM <=0.19: the configuration ``relay.build`` took.

``relay.build(mod, target, runtime=Runtime("cpp"), executor=Executor("graph"))`` chose the C++
or CRT runtime and the graph, AOT or VM executor. Here ``relay.build`` always builds one Relax VM
executable (``tvm.compile``), so these objects only record what was asked; ``relay.build``
accepts and ignores them, as its docstring says. Known names and options are checked against
TVM 0.19's registry (with its messages and option types), so a typo still fails at the call.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["ConfigError", "Executor", "Runtime"]


class ConfigError(RuntimeError, ValueError):
    """An unknown executor or runtime, or an option it lacks or of the wrong type: TVM 0.19's
    ``TVMError`` (a ``RuntimeError``), and a ``ValueError``."""


#: TVM 0.19's option types -> the Python types that satisfy them, and each type's name for a
#: value of the wrong one.
_TYPES: dict[str, tuple[type, ...]] = {
    "runtime.BoxBool": (bool, int),
    "runtime.String": (str,),
    "IntImm": (int,),
}
_VALUE_TYPES = {bool: "runtime.BoxBool", int: "runtime.BoxInt", str: "runtime.String"}


class _Config:
    """A named configuration with options (``Runtime("crt", {"system-lib": True})``)."""

    #: Kind -> option -> (TVM 0.19's type name, default or None).
    KINDS: dict[str, dict[str, tuple[str, Any]]] = {}

    def __init__(self, name: str, options: Mapping[str, Any] | None = None) -> None:
        kind = type(self).__name__
        if name not in self.KINDS:
            raise ConfigError(
                f'{kind} "{name}" is not defined (relay.backend.{kind}: unknown {name!r}; '
                f"TVM 0.19 knew {', '.join(self.KINDS)})"
            )
        known = self.KINDS[name]
        for key, value in (options or {}).items():
            if key not in known:
                raise ConfigError(f'Attribute "{key}" is not available on this {kind}')
            type_name = known[key][0]
            if not isinstance(value, _TYPES[type_name]) or (
                type_name != "runtime.BoxBool" and isinstance(value, bool)
            ):
                found = _VALUE_TYPES.get(type(value), type(value).__name__)
                raise ConfigError(
                    f'Attribute "{key}" should have type "{type_name}" but instead found "{found}"'
                )
        self.name = name
        self.attrs = {k: d for k, (_, d) in known.items() if d is not None}
        self.attrs.update(options or {})

    @classmethod
    def list_registered(cls) -> list[str]:
        """The kinds TVM 0.19 registered."""
        return list(cls.KINDS)

    @classmethod
    def list_registered_options(cls, name: Any) -> dict[str, str]:
        """Option name -> TVM 0.19's type name, for the kind ``name``."""
        kind = str(getattr(name, "name", name))
        if kind not in cls.KINDS:
            raise ConfigError(f'{cls.__name__} "{kind}" is not defined')
        return {key: type_name for key, (type_name, _) in cls.KINDS[kind].items()}

    def __str__(self) -> str:
        return self.name

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

    KINDS = {
        "cpp": {"system-lib": ("runtime.BoxBool", None)},
        "crt": {"system-lib": ("runtime.BoxBool", None)},
    }


class Executor(_Config):
    """``Executor("graph")`` / ``("aot")`` / ``("vm")``: recorded; ``relay.build`` builds for the
    Relax VM whichever is named."""

    KINDS = {
        "graph": {"link-params": ("runtime.BoxBool", False)},
        "aot": {
            "link-params": ("runtime.BoxBool", False),
            "unpacked-api": ("runtime.BoxBool", None),
            "interface-api": ("runtime.String", None),
            "workspace-byte-alignment": ("IntImm", None),
            "constant-byte-alignment": ("IntImm", None),
        },
        "vm": {},
    }
