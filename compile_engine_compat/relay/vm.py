"""``relay.vm`` (``tvm.relay.vm`` under ``install()``): the Relay VM's compiler, on the Relax VM.

``relay.vm.compile(mod, target, params=params)`` compiles as ``relay.build`` does and returns an
:class:`Executable` that ``tvm.runtime.vm.VirtualMachine(exe, dev)`` (served by ``install()``,
:mod:`compile_engine_compat.tvm_legacy.runtime_vm`) runs. ``exe.save()`` returns Relay's
``(code, lib)`` pair; the bytecode lives in ``lib`` on the Relax VM, so ``code`` is a short
record and ``Executable.load_exec(code, lib)`` reads both back.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import tvm
from tvm import relax

from compile_engine_compat.deprecations import INTERNAL, legacy_api
from compile_engine_compat.facade import model_builds
from compile_engine_compat.relay._impl.interpret.program import (
    Program,
    interpreted_module_reason,
    program_of_key,
)
from compile_engine_compat.targets import as_target

from . import build_module
from .backend.interpreter import module_form

__all__ = ["Executable", "InterpretedExecutable", "VMCompiler", "compile"]

_CODE_FORMAT = "compile_engine_compat.relay.vm/1"


class Executable:
    """A compiled module for the VM (Relay's ``tvm.runtime.vm.Executable``).

    Attributes
    ----------
    lib : tvm.runtime.Executable or tvm.runtime.Module
        The Relax VM executable (or the library it was exported to, reloaded).
    input_names : list of str
        The parameters of ``main``.
    """

    def __init__(
        self, lib: Any, input_names: Sequence[str] = (), library: Path | None = None
    ) -> None:
        # Relay's ``tvm.runtime.vm.Executable(mod)`` wraps a loaded library: no input names.
        self._lib = lib
        self.mod = lib
        self.input_names = list(input_names)
        self.library = library  # the compile cache's file ``lib`` was loaded from, if so

    @property
    def lib(self) -> Any:
        """The Relax VM executable (or the library it was exported to, reloaded): Relay's
        ``Executable.lib``, the compiled kernels' module."""
        return self._lib

    # -- Relay's inspection methods, answered from the Relax VM executable ---------------------
    def _text(self) -> str:
        """The Relax VM's text of the executable (``as_text()``)."""
        as_text = getattr(self.lib, "as_text", None)
        if as_text is None:
            raise ValueError(
                "this Executable wraps a reloaded library, which keeps no VM text: inspect the "
                "executable relay.vm.compile returned, before export_library"
            )
        return str(as_text())

    @property
    def bytecode(self) -> str:
        """The VM's instructions as text: the Relax VM's (``as_text()``), not Relay's bytecode
        (``alloc_tensor``, ``reshape_tensor`` are Relay VM instructions the Relax VM lacks)."""
        return self._text()

    @property
    def stats(self) -> str:
        """The executable's statistics (the Relax VM's: constant pool and globals)."""
        stats = getattr(self.lib, "stats", None)
        if stats is None:
            self._text()  # raises, naming why
        return str(stats())  # type: ignore[misc]

    def _functions(self) -> tuple[list[str], list[str]]:
        """The VM functions and the packed functions the executable calls, in order."""
        vm_functions, packed = [], []
        for line in self._text().splitlines():
            if line.startswith("@") and line.endswith(":"):
                vm_functions.append(line[1:-1])
            elif line.startswith("@") and line.endswith(" packed_func;"):
                packed.append(line[1 : -len(" packed_func;")])
        return vm_functions, packed

    @property
    def globals(self) -> list[str]:
        """The VM functions of the executable (``main`` and the other functions of the module)."""
        return self._functions()[0]

    @property
    def primitive_ops(self) -> list[str]:
        """The compiled kernels the VM calls (Relax's names, ``add1``, ``fused_conv2d_add``,
        where Relay's were ``vm_mod_fused_add``); the VM's own builtins are left out."""
        return [name for name in self._functions()[1] if not name.startswith("vm.")]

    @property
    def primitives(self) -> str:
        """The packed functions the executable calls, one a line (builtins included)."""
        return "\n".join(self._functions()[1])

    @property
    def constants(self) -> str:
        """A description of the constant pool (the Relax VM's ``stats`` line, not Relay's
        ``VM Const[i]: ...`` lines)."""
        lines = [line.strip() for line in self.stats.splitlines()]
        return "\n".join(line for line in lines if line.startswith("Constant pool"))

    @property
    def virtual_devices(self) -> str:
        """Refused: the Relax VM executable records no virtual devices."""
        raise NotImplementedError(
            "Executable.virtual_devices is not served: a Relax VM executable records no virtual "
            "devices; the devices are the ones given to tvm.runtime.vm.VirtualMachine(exe, dev)"
        )

    @property
    def module(self) -> Any:
        """The runtime module of the executable (:attr:`lib`)."""
        return self.lib

    def get_function_arity(self, func_name: str) -> int:
        """The number of parameters of VM function ``func_name``."""
        return len(self.get_function_params(func_name))

    def get_function_params(self, func_name: str) -> list[str]:
        """The parameter names of VM function ``func_name``."""
        if func_name == "main" and self.input_names:
            return list(self.input_names)
        vm = relax.VirtualMachine(self.lib, tvm.cpu())
        arity = int(vm._get_function_arity(func_name))
        return [str(vm._get_function_param_name(func_name, i)) for i in range(arity)]

    def _no_late_bound_consts(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(
            "late-bound constants (a constants file beside the library) are a Relay VM feature: "
            "the Relax VM keeps every constant inside the executable; export it whole with "
            "exe.export_library(path), or pass large weights as parameters of main"
        )

    move_late_bound_consts = _no_late_bound_consts
    get_late_bound_consts = _no_late_bound_consts
    load_late_bound_consts = _no_late_bound_consts
    load_late_bound_consts_from_map = _no_late_bound_consts

    def save(self) -> tuple[bytearray, Any]:
        """Relay's ``(code, lib)``: export ``lib`` with ``lib.export_library(path)``.

        ``lib`` is the VM executable, or for a build loaded from the persistent compile cache
        this :class:`Executable` itself, whose ``export_library`` copies the cached library.
        """
        code = bytearray(json.dumps({"format": _CODE_FORMAT, "inputs": self.input_names}).encode())
        return code, (self if self.library is not None else self.lib)

    @staticmethod
    def load_exec(bytecode: Any, lib: Any) -> Executable:
        """The executable :meth:`save` described, from its ``code`` and (reloaded) ``lib``."""
        try:
            record = json.loads(bytes(bytecode).decode())
        except (TypeError, ValueError, UnicodeDecodeError) as exc:
            raise ValueError(
                "Executable.load_exec takes the code of Executable.save() of "
                "compile_engine_compat.relay.vm; Relay VM bytecode cannot run on the Relax VM"
            ) from exc
        if not isinstance(record, dict) or record.get("format") != _CODE_FORMAT:
            raise ValueError(f"Executable.load_exec: not the code of Executable.save(): {record!r}")
        if "program" in record:
            return _program_of(record)
        if isinstance(lib, Executable):
            return Executable(lib.lib, record.get("inputs", []), lib.library)
        return Executable(getattr(lib, "module", lib), record.get("inputs", []))

    def export_library(self, path: Any, *args: Any, **kwargs: Any) -> None:
        """Export the library (``lib.export_library``)."""
        model_builds.export_library(
            model_builds.BuiltModule(self.lib, self.library), path, *args, **kwargs
        )


class InterpretedExecutable(Executable):
    """The executable of a program Relax cannot express (ADTs, references, closures, recursion
    over module functions): the Relay module, run by the shim's interpreter behind the VM's
    interface, each op call compiled by TVM once per concrete type.

    Its ``bytecode`` is not TVM 0.19's: it names the functions and why they are interpreted.
    ``save()`` records the program by key in ``code``: ``load_exec(code, lib)`` gives it back in
    the process that saved it, while the executable lives.
    """

    def __init__(self, program: Program) -> None:
        super().__init__(
            None, program.param_names("main") if "main" in program.function_names() else []
        )
        self.program = program

    def _text(self) -> str:
        lines = [f"# interpreted: {self.program.reason}"]
        for name in self.program.function_names():
            lines.append(f"{name}({', '.join(self.program.param_names(name))})")
        return "\n".join(lines)

    @property
    def globals(self) -> list[str]:
        """The module's functions."""
        return self.program.function_names()

    @property
    def primitive_ops(self) -> list[str]:
        """None: the interpreter builds each op call when it first runs."""
        return []

    @property
    def primitives(self) -> str:
        """None (see :attr:`primitive_ops`)."""
        return ""

    @property
    def stats(self) -> str:
        """The functions of the interpreted program."""
        return f"Interpreted program: {len(self.globals)} functions ({self.program.reason})"

    def get_function_params(self, func_name: str) -> list[str]:
        """The parameter names of ``func_name``."""
        return self.program.param_names(func_name)

    def save(self) -> tuple[bytearray, Any]:
        """``(code, lib)``: ``code`` names the program (see the class docstring); ``lib`` is
        this executable."""
        record = {"format": _CODE_FORMAT, "program": self.program.key}
        return bytearray(json.dumps(record).encode()), self

    def export_library(self, path: Any, *args: Any, **kwargs: Any) -> None:
        """Refused: an interpreted program has no library."""
        raise NotImplementedError(
            "Executable.export_library: this program is run by the interpreter (it "
            f"{self.program.reason}); it has no library to export. Keep the Relay module and "
            "compile it again, or express it in Relax"
        )


def _program_of(record: Mapping[str, Any]) -> InterpretedExecutable:
    program = program_of_key(str(record["program"]))
    if program is None:
        raise ValueError(
            "Executable.load_exec: the code names an interpreted program (ADTs, references, "
            "closures) that is not alive in this process: such a program is saved by reference "
            "only, as it has no Relax form; compile the Relay module again"
        )
    return InterpretedExecutable(program)


def _compile(mod: Any, target: Any, params: Mapping[str, Any] | None) -> Executable:
    reason = interpreted_module_reason(mod)
    if reason is not None:
        if not isinstance(mod, tvm.IRModule):
            mod = tvm.IRModule({"main": module_form(mod, "main", None)})
        if target is None:
            target = tvm.target.Target.current(allow_none=True) or "llvm"
        return InterpretedExecutable(Program(mod, params, as_target(target), reason))
    built = build_module.build(mod, target=target, params=params, **INTERNAL)
    return Executable(built.executable, built.input_names, built.library)


@legacy_api("relay.vm")
def compile(
    mod: Any,
    target: Any = None,
    target_host: Any = None,
    params: Mapping[str, Any] | None = None,
) -> Executable:
    """``relay.vm.compile(mod, target, params=params)``: an :class:`Executable` for the VM.

    Parameters
    ----------
    mod : tvm.IRModule or relay.Function
        The module (``main`` is compiled).
    target : str, dict or Target
        As ``relay.build``.
    target_host : ignored
        The Relax VM needs none.
    params : dict, optional
        Values bound to parameters of ``main`` by name.
    """
    return _compile(mod, target, params)


@legacy_api("relay.vm")
class VMCompiler:
    """``relay.vm.VMCompiler``: ``lower(mod, target)`` then ``get_exec()``."""

    def __init__(self) -> None:
        self._params: dict[str, Any] = {}
        self._exec: Executable | None = None

    def set_params(self, params: Mapping[str, Any]) -> None:
        """Values to bind to parameters of ``main`` at :meth:`lower`."""
        self._params.update(params)

    def lower(self, mod: Any, target: Any = None, target_host: Any = None) -> None:
        """Compile ``mod`` for ``target``."""
        self._exec = _compile(mod, target, self._params)

    def codegen(self) -> None:
        """Nothing: :meth:`lower` generated the code."""

    def optimize(
        self, mod: Any, target: Any = None, target_host: Any = None, params: Any = None
    ) -> tuple[Any, dict[str, Any]]:
        """Relay's pre-lowering optimisation: the parameters set (and ``params``) bound to
        ``main`` as constants, by name, as Relay did; the rest of Relay's passes are the
        build's (``relay.vm.compile`` and ``tvm.compile`` run them)."""
        if params:
            self.set_params(params)
        return build_module.bind_module_params(mod, self._params), dict(self._params)

    def get_exec(self) -> Executable:
        """The executable :meth:`lower` built."""
        if self._exec is None:
            raise RuntimeError("VMCompiler.get_exec() before lower(mod, target)")
        return self._exec
