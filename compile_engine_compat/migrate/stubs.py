"""Generate the PEP 702 stubs ``compile_engine.pyi`` and ``te_compiler.pyi`` from the API table.

Type checkers flag a call of a ``@typing_extensions.deprecated`` function only when its message is
a string literal (mypy reads the decorator's source, it does not evaluate it). So the marks cannot
be computed at import: this module writes them out as literals, one per API-table row, with the
exact text of the runtime warning, and a test keeps the committed stubs equal to
:func:`generate` (as it keeps MIGRATION.md equal to the docs generator).

The stubs only add marks: every deprecated class subclasses the real one (so its attributes come
from the source), every deprecated function is re-declared with the real signature and types,
and every other public name is re-exported. Nothing changes at run time: the runtime warnings
still come from :func:`~compile_engine_compat.deprecations.warn_legacy`, once per call.

The same command writes ``_relay_surface.py``: the ``tvm.relay``/``tvm.autotvm``/... names that
``install()`` serves and those it refuses, read off the live front end (:func:`relay_surface`), so
that ``scan`` and ``fix`` can classify Relay-era code without importing TVM.

It also writes ``tvm-stubs/`` (:func:`tvm_stubs`): a partial stub-only package (PEP 561,
``partial`` in its ``py.typed``) for the legacy spellings ``tvm.relay.backend.compile_engine``,
``te_compiler`` and ``_backend``, shipped in the wheel. TVM 0.27 has no such modules, so without it
a type checker says only "cannot resolve import" about code that has not been through ``fix``;
with it, mypy (``--enable-error-code deprecated``) and pyright flag each legacy call with the
runtime warning's text. It holds nothing else of ``tvm``: a partial package leaves every module it
does not hold to the installed TVM, so the rest of ``tvm`` keeps its own types (``tvm.relay`` and
``tvm.relay.backend``, which TVM 0.27 lacks, are given only what leads to the legacy modules).

Regenerate with ``python -m compile_engine_compat.migrate.stubs`` (``--check`` exits 1 when stale).
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

from compile_engine_compat.api_table import API_TABLE, GLOBAL_ROWS, LEGACY_MODULES, SHIM_MODULES
from compile_engine_compat.deprecations import message_text

__all__ = [
    "RELAY_SURFACE",
    "STUB_MODULES",
    "TVM_STUBS",
    "generate",
    "main",
    "relay_surface",
    "tvm_stubs",
]

_PACKAGE_DIR = Path(__file__).resolve().parent.parent
#: Shim module -> its stub file, next to it in the package.
STUB_MODULES = {
    module: _PACKAGE_DIR / (module.rsplit(".", 1)[1] + ".pyi") for module in SHIM_MODULES
}
_HEADER = (
    "# Generated from compile_engine_compat/api_table.py by `python -m "
    "compile_engine_compat.migrate.stubs`.\n# Do not edit: PEP 702 marks for type checkers; the "
    "runtime warnings come from the shim itself.\n"
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
    return f"{indent}@deprecated({message_text(API_TABLE[row_name])!r})\n"


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
        A key of :data:`~compile_engine_compat.api_table.SHIM_MODULES`.

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


#: The generated manifest of the Relay-era names the shim serves (read by the scanner).
RELAY_SURFACE = Path(__file__).with_name("relay_surface.py")

#: What a use of a name under each root that the front end lacks needs instead.
_MISSING = {
    "tvm.relay": "compile_engine_compat.relay does not provide it: port this part to Relax "
    "(relax.BlockBuilder, relax.op, relax.transform)",
    "tvm.autotvm": "AutoTVM tuning is gone: tune with tvm.s_tir.meta_schedule, or drop it",
    "tvm.contrib.graph_executor": "the graph executor is gone: "
    "relax.VirtualMachine(tvm.compile(mod, target), dev)",
    "tvm.nd": "tvm.nd is gone: tvm.runtime.tensor / tvm.runtime.empty",
}


def _public_names(module: types.ModuleType) -> list[str]:
    names = getattr(module, "__all__", None)
    if names is None:
        names = [n for n in vars(module) if not n.startswith("_") and n != "annotations"]
    return sorted(set(names))


def _walk_served(
    tvm_name: str,
    module: types.ModuleType,
    modules: set[str],
    names: set[str],
    refused: dict[str, str],
) -> None:
    """Record ``module`` (served as ``tvm_name``), its public names and its submodules; a name
    that is a stand-in refused at the call goes to ``refused`` with its reason."""
    from compile_engine_compat.surfaces.import_alias import RefusedName

    modules.add(tvm_name)
    children: dict[str, types.ModuleType] = {}
    for name in _public_names(module):
        value = getattr(module, name)
        if isinstance(value, RefusedName):
            refused[f"{tvm_name}.{name}"] = value.refusal
        elif isinstance(value, types.ModuleType):
            if value.__name__.startswith("compile_engine_compat."):
                children[name] = value
        else:
            names.add(f"{tvm_name}.{name}")
    if hasattr(module, "__path__"):  # a package: its submodules import even when not attributes
        import pkgutil

        for info in pkgutil.iter_modules(module.__path__):
            if not info.name.startswith("_") and info.name not in children:
                try:
                    children[info.name] = importlib.import_module(f"{module.__name__}.{info.name}")
                except ImportError:  # a refusing module (qnn.op): the refusals record it
                    continue
    for name, child in sorted(children.items()):
        _walk_served(f"{tvm_name}.{name}", child, modules, names, refused)


def relay_surface() -> str:
    """The text of ``_relay_surface.py``, read off the live Relay front end.

    Roots: ``tvm.relay`` (the front end) and the TVM <=0.19 modules the import alias serves
    (``tvm.autotvm``, ``tvm.nd``, ``tvm.contrib.graph_executor``). Refusals: the alias's
    refused modules, the names ``tvm.relay`` refuses, and the ops without a Relax equivalent,
    each with its reason.
    """
    from compile_engine_compat import relay
    from compile_engine_compat.surfaces.import_alias import LEGACY_MODULES as SERVED_MODULES
    from compile_engine_compat.surfaces.import_alias import REFUSED_MODULES

    modules: set[str] = set()
    names: set[str] = set()
    stand_ins: dict[str, str] = {}
    _walk_served("tvm.relay", relay, modules, names, stand_ins)
    for tvm_name, shim_name in SERVED_MODULES.items():
        if shim_name.startswith("compile_engine_compat."):
            _walk_served(tvm_name, importlib.import_module(shim_name), modules, names, stand_ins)
    # The scanner classifies tvm.relay names; refusals outside it (tvm.topi.cuda) stay runtime.
    refused = {k: v for k, v in REFUSED_MODULES.items() if k.startswith("tvm.relay")}
    refused |= {k: v for k, v in stand_ins.items() if k.startswith("tvm.relay")}
    refused |= {f"tvm.relay.{name}": why for name, why in relay.REMOVED.items()}
    for op_name, why in relay.REFUSED_OPS.items():
        for prefix in ("tvm.relay", "tvm.relay.op"):
            refused[f"{prefix}.{op_name}"] = f"Relay op {op_name!r}: {why}"
    names -= set(refused)

    def block(title: str, items: Sequence[str]) -> str:
        return (
            f"{title} = frozenset(\n    {{\n"
            + "".join(f"        {i!r},\n" for i in items)
            + "    }\n)\n"
        )

    return (
        '"""Generated by `python -m compile_engine_compat.migrate.stubs` from the live Relay front '
        "end: do not edit.\n\n"
        "The TVM <=0.19 names that compile_engine_compat.install() serves, and those it refuses "
        'with the reason, for scan and fix (which never import TVM).\n"""\n\n'
        "#: Served modules (tvm names).\n"
        + block("MODULES", sorted(modules))
        + "#: Served non-module names (functions, classes, constants), by tvm name.\n"
        + block("NAMES", sorted(names))
        + "#: Refused names and module prefixes -> why, and what to write instead.\n"
        + "REFUSED = {\n"
        + "".join(f"    {k!r}: {v!r},\n" for k, v in sorted(refused.items()))
        + "}\n"
        + "#: Root -> what a name the front end lacks under it needs instead.\n"
        + "MISSING = {\n"
        + "".join(f"    {k!r}: {v!r},\n" for k, v in _MISSING.items())
        + "}\n"
    )


#: The stub-only package for the legacy spellings, at the repository root (in the wheel).
TVM_STUBS = _PACKAGE_DIR.parent / "tvm-stubs"
_MODULE_GETATTR = "def __getattr__(name: str) -> Any: ...  # the rest is TVM's own, or absent\n"


def tvm_stubs() -> dict[Path, str]:
    """The files of ``tvm-stubs/`` (see the module docstring), path -> text."""
    backend = TVM_STUBS / "relay" / "backend"
    files = {
        TVM_STUBS / "py.typed": "partial\n",
        TVM_STUBS / "relay" / "__init__.pyi": (
            _HEADER
            + "\nfrom typing import Any\n\nfrom . import backend as backend\n\n"
            + _MODULE_GETATTR
        ),
        backend / "__init__.pyi": (
            _HEADER
            + "\nfrom typing import Any\n\n"
            + "".join(
                f"from . import {name} as {name}\n"
                for name in sorted(path.rsplit(".", 1)[1] for path in LEGACY_MODULES)
            )
            + "\n"
            + _MODULE_GETATTR
        ),
    }
    shims = {prefix: module for module, prefix in SHIM_MODULES.items()}
    for legacy, prefix in LEGACY_MODULES.items():
        if prefix in shims:
            # The shim's stub carries the marks, one per row: the legacy module re-exports it.
            files[backend / f"{legacy.rsplit('.', 1)[1]}.pyi"] = (
                _HEADER + f"\nfrom {shims[prefix]} import *  # noqa: F403\n"
            )
    functions = "\n".join(
        _mark(row.name)
        + f"def {row.name.rsplit('.', 1)[1]}(*args: Any, **kwargs: Any) -> Any: ...\n"
        for row in GLOBAL_ROWS  # _init_api("relay.backend") made each global an attribute
    )
    files[backend / "_backend.pyi"] = (
        _HEADER
        + "\nfrom typing import Any\n\nfrom typing_extensions import deprecated\n\n"
        + functions
        + "\n"
        + _MODULE_GETATTR
    )
    return files


def main(argv: Sequence[str] | None = None) -> int:
    """Write the stubs, or with ``--check`` exit 1 when a committed stub is stale."""
    parser = argparse.ArgumentParser(prog="python -m compile_engine_compat.migrate.stubs")
    parser.add_argument("--check", action="store_true", help="exit 1 if a stub is out of date")
    args = parser.parse_args(argv)
    stale = []
    generated = {path: generate(name) for name, path in STUB_MODULES.items()}
    generated[RELAY_SURFACE] = relay_surface()
    generated |= tvm_stubs()
    for path, text in generated.items():
        if args.check:
            if not path.exists() or path.read_text(encoding="utf-8") != text:
                stale.append(path.name)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
    if stale:
        print(f"out of date: {', '.join(stale)}; run python -m compile_engine_compat.migrate.stubs")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
