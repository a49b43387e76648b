"""Generate the PEP 702 stubs ``compile_engine.pyi`` and ``te_compiler.pyi`` from the API table.

Type checkers flag a call of a ``@typing_extensions.deprecated`` function only when its message is
a string literal (mypy reads the decorator's source, it does not evaluate it). So the marks cannot
be computed at import: this module writes them out as literals, one per API-table row, with the
exact text of the runtime warning, and a test keeps the committed stubs equal to
:func:`generate` (as it keeps MIGRATION.md equal to the docs generator).

The stubs only add marks: every deprecated class subclasses the real one (so its attributes come
from the source), every deprecated function is re-declared with the real signature and types,
and every other public name is re-exported. Nothing changes at run time: the runtime warnings
still come from :func:`~compile_engine_compat._deprecation.warn_legacy`, once per call.

Regenerate with ``python -m compile_engine_compat._stubs`` (``--check`` exits 1 when stale).
"""

from __future__ import annotations

import argparse
import collections.abc
import importlib
import inspect
import sys
import types
import typing
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ._api_table import API_TABLE, SHIM_MODULES
from ._deprecation import _message_text

__all__ = ["STUB_MODULES", "generate", "main"]

#: Shim module -> its stub file, next to it in the package.
STUB_MODULES = {
    module: Path(__file__).with_name(module.rsplit(".", 1)[1] + ".pyi") for module in SHIM_MODULES
}
_HEADER = (
    "# Generated from compile_engine_compat/_api_table.py by `python -m "
    "compile_engine_compat._stubs`.\n# Do not edit: PEP 702 marks for type checkers; the runtime "
    "warnings come from the shim itself.\n"
)
_CALLABLE_ORIGINS = (collections.abc.Callable, typing.Callable)
_STARS: dict[inspect._ParameterKind, str] = {
    inspect.Parameter.VAR_POSITIONAL: "*",
    inspect.Parameter.VAR_KEYWORD: "**",
}


class _Renderer:
    """Render evaluated annotations as stub text, collecting the modules they need."""

    def __init__(self, local: dict[type, str]) -> None:
        self.modules: set[str] = set()
        # Classes the stub declares or re-exports, by their own name there: ``get()`` must return
        # the stub's ``CompileEngine`` (which carries the marks), not the implementation's.
        self.local = local

    def __call__(self, annotation: Any) -> str:
        if annotation is None or annotation is type(None):
            return "None"
        if annotation is Any or isinstance(annotation, typing.TypeVar | str):
            return "Any"  # unresolvable or generic: the stub stays permissive, never wrong
        origin = typing.get_origin(annotation)
        args = typing.get_args(annotation)
        if origin in (typing.Union, types.UnionType):
            return " | ".join(self(arg) for arg in args)
        if origin is typing.Literal:
            return f"Literal[{', '.join(repr(arg) for arg in args)}]"
        if origin in _CALLABLE_ORIGINS:
            params, result = args
            inner = "..." if params is Ellipsis else f"[{', '.join(self(p) for p in params)}]"
            return f"collections.abc.Callable[{inner}, {self(result)}]"
        if origin is not None:
            rendered = [self(arg) if arg is not Ellipsis else "..." for arg in args]
            return f"{self._name(origin)}[{', '.join(rendered)}]"
        if isinstance(annotation, type):
            return self._name(annotation)
        return "Any"

    def without_local(self) -> _Renderer:
        """A renderer sharing this one's imports that names every class by its full name."""
        other = _Renderer({})
        other.modules = self.modules
        return other

    def qualified(self, cls: type) -> str:
        """The implementation class's full name (a stub class's base), never the local one."""
        self.modules.add(cls.__module__)
        return f"{cls.__module__}.{cls.__qualname__}"

    def _name(self, cls: type) -> str:
        if cls in self.local:
            return self.local[cls]
        if cls.__module__ == "builtins":
            return cls.__qualname__
        self.modules.add(cls.__module__)
        return f"{cls.__module__}.{cls.__qualname__}"


def _hints(func: Callable[..., Any]) -> dict[str, Any]:
    try:
        return typing.get_type_hints(func)
    except Exception:  # a name only importable under TYPE_CHECKING: leave that function untyped
        return {}


def _signature(func: Callable[..., Any], render: _Renderer, drop_self: bool = False) -> str:
    hints = _hints(func)
    parts: list[str] = []
    star_done = False
    params = list(inspect.signature(func).parameters.values())
    if drop_self:
        parts.append(params[0].name)
        params = params[1:]
    for param in params:
        if param.kind is param.KEYWORD_ONLY and not star_done:
            parts.append("*")
            star_done = True
        prefix = _STARS.get(param.kind, "")
        star_done = star_done or param.kind is param.VAR_POSITIONAL
        text = f"{prefix}{param.name}: {render(hints.get(param.name, Any))}"
        if param.default is not param.empty:
            text += " = ..."
        parts.append(text)
        if param.kind is param.POSITIONAL_ONLY and param is _last_positional_only(params):
            parts.append("/")
    returns = render(hints.get("return", Any))
    return f"({', '.join(parts)}) -> {returns}"


def _last_positional_only(params: Sequence[inspect.Parameter]) -> inspect.Parameter | None:
    only = [p for p in params if p.kind is p.POSITIONAL_ONLY]
    return only[-1] if only else None


def _mark(row_name: str, indent: str = "") -> str:
    return f"{indent}@deprecated({_message_text(API_TABLE[row_name])!r})\n"


def _function(name: str, func: Callable[..., Any], row: str, render: _Renderer) -> str:
    return _mark(row) + f"def {name}{_signature(func, render)}: ...\n"


def _class(name: str, cls: type, prefix: str, render: _Renderer) -> str:
    lines = [_mark(f"{prefix}.{name}") if f"{prefix}.{name}" in API_TABLE else ""]
    lines.append(f"class {name}({render.qualified(cls)}):\n")
    methods = [
        (attr, value)
        for attr, value in vars(cls).items()
        if callable(value) and f"{prefix}.{name}.{attr}" in API_TABLE
    ]
    # Methods keep the implementation's types: a local (subclass) name in an override's return
    # type would be incompatible with the base method's (list is invariant).
    qualified = render.without_local()
    for attr, value in methods:
        lines.append(_mark(f"{prefix}.{name}.{attr}", "    "))
        lines.append(f"    def {attr}{_signature(value, qualified, drop_self=True)}: ...\n")
    if not methods:
        lines.append("    ...\n")
    return "".join(lines)


def generate(module_name: str) -> str:
    """The stub text for one shim module.

    Parameters
    ----------
    module_name : str
        A key of :data:`~compile_engine_compat._api_table.SHIM_MODULES`.

    Returns
    -------
    str
        The ``.pyi`` file's text.
    """
    module = importlib.import_module(module_name)
    prefix = SHIM_MODULES[module_name]
    render = _Renderer(
        {value: name for name in module.__all__ if isinstance(value := getattr(module, name), type)}
    )
    body: list[str] = []
    exports: list[str] = []
    for name in module.__all__:
        value = getattr(module, name)
        row = f"{prefix}.{name}"
        if isinstance(value, type) and (
            row in API_TABLE or any(key.startswith(row + ".") for key in API_TABLE)
        ):
            body.append(_class(name, value, prefix, render))
        elif callable(value) and row in API_TABLE:
            body.append(_function(name, value, row, render))
        elif isinstance(value, type) or callable(value):
            exports.append(f"from {value.__module__} import {value.__name__} as {name}\n")
        else:  # module-level objects (loggers): typed as they are
            body.append(f"{name}: {render(type(value))}\n")
    imports = "".join(f"import {name}\n" for name in sorted(render.modules - {"collections.abc"}))
    return (
        _HEADER
        + "\nfrom typing import Any, Literal\n\n"
        + "import collections.abc\n"
        + imports
        + "from typing_extensions import deprecated\n\n"
        + "".join(sorted(exports))
        + "\n__all__ = ["
        + ", ".join(repr(name) for name in module.__all__)
        + "]\n\n"
        + "\n".join(body)
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Write the stubs, or with ``--check`` exit 1 when a committed stub is stale."""
    parser = argparse.ArgumentParser(prog="python -m compile_engine_compat._stubs")
    parser.add_argument("--check", action="store_true", help="exit 1 if a stub is out of date")
    args = parser.parse_args(argv)
    stale = []
    for module_name, path in STUB_MODULES.items():
        text = generate(module_name)
        if args.check:
            if not path.exists() or path.read_text(encoding="utf-8") != text:
                stale.append(path.name)
        else:
            path.write_text(text, encoding="utf-8")
    if stale:
        print(f"out of date: {', '.join(stale)}; run python -m compile_engine_compat._stubs")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
