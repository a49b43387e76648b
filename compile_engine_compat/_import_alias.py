"""Opt-in import alias: ``tvm.relay.backend.compile_engine`` / ``te_compiler`` -> the shim modules.

After :func:`install`, untouched legacy files run::

    import compile_engine_compat
    compile_engine_compat.install()

    from tvm.relay.backend import compile_engine   # is compile_engine_compat.compile_engine
    import tvm.relay.backend.te_compiler as tec    # is compile_engine_compat.te_compiler

A meta-path finder serves four names only: the two aliases and two stub packages, ``tvm.relay``
and ``tvm.relay.backend``, which hold ``backend``, ``compile_engine`` and ``te_compiler`` and
nothing else. Any other attribute (``relay.var``, ``relay.build``) raises :class:`RelayRemovedError`
(an ``AttributeError``) and any other submodule (``import tvm.relay.testing``)
:class:`RelayRemovedImportError` (a ``ModuleNotFoundError``), both saying that Relay was removed in
TVM 0.20 and naming the shim and the Relax replacement.

Effect on feature detection, while installed:

* ``import tvm.relay`` and ``from tvm import relay`` succeed (they give the stub), so
  ``try: from tvm import relay / except ImportError`` takes the Relay branch;
* ``hasattr(tvm, "relay")`` is False until something imports ``tvm.relay``, True afterwards;
* ``hasattr(tvm.relay, "build")`` is False (the error is an ``AttributeError``).

Prefer ``hasattr(tvm, "relax")`` to detect modern TVM. :func:`uninstall` removes the finder and the
stubs, restoring all of the above.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import threading
import types
from typing import Any

__all__ = [
    "RelayRemovedError",
    "RelayRemovedImportError",
    "install",
    "installed",
    "uninstall",
    "uninstall_pass_config",
]

_ALIASES = {
    "tvm.relay.backend.compile_engine": "compile_engine_compat.compile_engine",
    "tvm.relay.backend.te_compiler": "compile_engine_compat.te_compiler",
}
_STUB_CHILDREN = {
    "tvm.relay": {"backend": "tvm.relay.backend"},
    "tvm.relay.backend": {
        "compile_engine": "tvm.relay.backend.compile_engine",
        "te_compiler": "tvm.relay.backend.te_compiler",
    },
}


def _message(name: str) -> str:
    return (
        f"{name} does not exist: Relay was removed in TVM 0.20. The compile-engine-compat import "
        "alias provides only tvm.relay.backend.compile_engine and tvm.relay.backend.te_compiler "
        "(the shim modules compile_engine_compat.compile_engine and "
        "compile_engine_compat.te_compiler). Port the rest to Relax: build the model with "
        "tvm.relax (relax.BlockBuilder, TVMScript or tvm.relax.frontend) and compile it with "
        "tvm.compile(mod, target). See MIGRATION.md."
    )


class RelayRemovedError(AttributeError):
    """An attribute of the ``tvm.relay`` stub that the import alias does not provide."""


class RelayRemovedImportError(ModuleNotFoundError):
    """A ``tvm.relay`` submodule that the import alias does not provide."""


class _RelayStub(types.ModuleType):
    """``tvm.relay`` or ``tvm.relay.backend``: only the alias's children resolve."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}")
        child = _STUB_CHILDREN.get(self.__name__, {}).get(name)
        if child is None:
            raise RelayRemovedError(_message(f"{self.__name__}.{name}"))
        return importlib.import_module(child)


class _RelayFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Serves the stubs and aliases; refuses every other ``tvm.relay`` module."""

    def __init__(self) -> None:
        self._specs: dict[str, Any] = {}

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if fullname != "tvm.relay" and not fullname.startswith("tvm.relay."):
            return None
        if fullname in _STUB_CHILDREN:
            return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
        if fullname in _ALIASES:
            return importlib.machinery.ModuleSpec(fullname, self)
        # name=None: with the missing module's name, ``from tvm.relay import var`` would swallow
        # this error and raise a bare "cannot import name 'var'" instead.
        raise RelayRemovedImportError(_message(fullname), name=None)

    def create_module(self, spec: Any) -> types.ModuleType:
        if spec.name in _ALIASES:
            module = importlib.import_module(_ALIASES[spec.name])
            # The import system overwrites __spec__ next; exec_module puts the shim's back.
            self._specs[spec.name] = module.__spec__
            return module
        return _RelayStub(spec.name)

    def exec_module(self, module: types.ModuleType) -> None:
        saved = self._specs.pop(module.__spec__.name if module.__spec__ else "", None)
        if saved is not None:
            module.__spec__ = saved


_finder: _RelayFinder | None = None
_lock = threading.Lock()


def installed() -> bool:
    """Return True while the import alias is installed."""
    return _finder is not None and _finder in sys.meta_path


def install() -> None:
    """Make ``tvm.relay.backend.compile_engine`` and ``te_compiler`` import the shim modules.

    Off by default; idempotent; undone by :func:`uninstall`. See the module docstring for the
    effect on feature detection (``hasattr(tvm, "relay")`` and friends).
    """
    global _finder
    with _lock:
        if _finder is None:
            _finder = _RelayFinder()
        if _finder not in sys.meta_path:
            sys.meta_path.insert(0, _finder)


def uninstall() -> None:
    """Remove the import alias: ``tvm.relay`` is unimportable again and ``tvm.relay`` is unset.

    The shim modules stay imported under their own names.
    """
    with _lock:
        if _finder is not None and _finder in sys.meta_path:
            sys.meta_path.remove(_finder)
        for name in [n for n in sys.modules if n == "tvm.relay" or n.startswith("tvm.relay.")]:
            del sys.modules[name]
        tvm = sys.modules.get("tvm")
        if tvm is not None and isinstance(tvm.__dict__.get("relay"), _RelayStub):
            delattr(tvm, "relay")


def uninstall_pass_config() -> None:
    """Stop accepting the ``relay.backend.*`` PassContext keys (see ``_passconfig``)."""
    from . import _passconfig

    _passconfig.uninstall()
