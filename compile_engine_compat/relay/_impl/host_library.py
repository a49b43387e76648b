"""The ``lib`` of ``relay.build``: Relay's runtime module, over one Relax VM executable.

Relay's ``graph, lib, params = relay.build(...)`` (and ``factory.get_lib()``) gave the host
module of the compiled kernels, whose ``get_source(fmt)`` printed their code: ``"asm"`` the
assembly, ``"ll"`` (or ``""`` on LLVM) the LLVM IR. Programs checked it for the instructions
a schedule should emit (``"vpdpbusd" in lib.get_source("asm")``). The Relax VM executable holds
the same kernels in its imported LLVM module, which TVM 0.27 still prints
(``executable.mod.imports[0].inspect_source(fmt)``): :class:`HostLibrary` is that executable
with Relay's names added.
"""

from __future__ import annotations

from typing import Any

from tvm.relax import VMExecutable

__all__ = ["HostLibrary", "ImportedModule", "host_library"]


class ImportedModule:
    """One module the executable imports (the kernels), with Relay's ``get_source``.

    Parameters
    ----------
    module : tvm.runtime.Module
        The imported runtime module (``executable.mod.imports[i]``).
    """

    def __init__(self, module: Any) -> None:
        self.module = module

    @property
    def type_key(self) -> str:
        """The module's kind (``"llvm"``), Relay's ``Module.type_key``."""
        return str(self.module.kind)

    def get_source(self, fmt: str = "") -> str:
        """The module's code in ``fmt`` (``"asm"``, ``"ll"``; ``""``: the module's default).

        Raises
        ------
        ValueError
            When the module cannot print that format (a library loaded back from disk keeps
            no source), naming the module kind.
        """
        try:
            return str(self.module.inspect_source(fmt))
        except Exception as err:  # TVM raises its own error kinds for an unknown format
            raise ValueError(
                f"the {self.type_key!r} module of this build cannot print its source as "
                f"{fmt!r}: {err}. A library loaded back from disk (or from the compile cache) "
                "keeps no source; build again to read it"
            ) from None

    def __getattr__(self, name: str) -> Any:
        return getattr(self.module, name)


class HostLibrary(VMExecutable):
    """A Relax VM executable that also answers Relay's ``get_source``/``imported_modules``.

    It is the executable (a ``tvm.relax.VMExecutable`` over the same runtime module), so
    ``relax.VirtualMachine(lib, dev)`` and ``export_library`` work as before; the two Relay
    names print the kernels' code, as Relay's host module did.
    """

    @property
    def imported_modules(self) -> list[ImportedModule]:
        """The modules holding the kernels (Relay's ``lib.imported_modules``)."""
        return [ImportedModule(m) for m in self.mod.imports]

    def get_source(self, fmt: str = "") -> str:
        """The kernels' code in ``fmt`` (``"asm"``, ``"ll"``), as Relay's ``lib.get_source``.

        Relay's host module was the one LLVM module of all the kernels; here the build pool
        compiles them into several (:mod:`compile_engine_compat.pipeline.build_pool`): their
        sources are joined, in order, so that every kernel's code is in the text.

        Raises
        ------
        ValueError
            When the build holds no module that can print ``fmt``.
        """
        modules = self.imported_modules
        if not modules:
            raise ValueError(
                "this build holds no kernel module to print (an executable loaded back from "
                "disk, or one with no kernels): build again to read its source"
            )
        if len(modules) == 1:
            return modules[0].get_source(fmt)
        sources = []
        for module in modules:
            try:
                sources.append(module.get_source(fmt))
            except ValueError:  # a module of another kind (an external library's)
                continue
        return "\n".join(sources) if sources else modules[0].get_source(fmt)


def host_library(executable: Any) -> Any:
    """``executable`` as a :class:`HostLibrary` (anything else is returned as it is)."""
    if type(executable) is VMExecutable:
        return HostLibrary(executable.mod)
    return executable
