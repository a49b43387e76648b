"""Whole-module builds: the persistent cache first, then the pipeline's module build, then a store.

The one compile path of ``relay.build``, ``relay.create_executor`` (every kind) and any other
whole-module build, as :mod:`.kernels` is ``jit``'s: a plain ``llvm`` target is the host CPU,
and the kernels are scheduled by the same rules through the same function
(:func:`compile_engine_compat.pipeline.schedule.schedule_prim_func`). With
``COMPILE_ENGINE_COMPAT_CACHE_DIR`` set, the executable is stored whole (a shared library holding
the VM bytecode, the kernels and the constants) and a later process loads it instead of building.
A build that stores runs the executable it built and stores it on the cache's writer thread
(:mod:`compile_engine_compat.cache.store_behind`): the export (the kernels printed as assembly,
the constants packed, the link) is off the build's critical path; a build of the same module in
this process meanwhile waits for that store and loads it.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import tvm
import tvm_ffi
from tvm import relax

from compile_engine_compat import new_files
from compile_engine_compat.boundary import tvm_warnings_dropped
from compile_engine_compat.cache import disk, store_behind
from compile_engine_compat.pipeline import tuned
from compile_engine_compat.pipeline.model import vm_executable
from compile_engine_compat.pipeline.schedule import RULES_VERSION
from compile_engine_compat.targets import as_target, pass_context_text, target_text

#: The cache's artifact kind for a whole-module build, and the one file its entry holds.
MODULE = "module"
LIBRARY_FILE = "module.so"

__all__ = [
    "LIBRARY_FILE",
    "MODULE",
    "BuiltModule",
    "bind_params",
    "build",
    "build_model",
    "export_library",
    "module_key",
    "resolve_target",
]


def resolve_target(target: Any = None) -> tvm.target.Target:
    """The target a module build uses: ``target`` (or the enclosing scope's, else ``"llvm"``),
    a plain ``llvm`` being this machine's CPU, as for ``jit``.

    Raises
    ------
    TypeError, ValueError
        For a target ``tvm.target.Target`` cannot take (see :func:`.targets.as_target`).
    """
    resolved = as_target(target)
    if resolved is None:
        resolved = as_target("llvm")
    assert resolved is not None
    return resolved


def bind_params(mod: tvm.IRModule, params: Mapping[str, Any] | None) -> tvm.IRModule:
    """``mod`` with ``params`` (name -> array) bound to ``main``'s parameters as constants.

    Raises
    ------
    ValueError
        For a name ``main`` has no parameter of.
    """
    if not params:
        return mod
    names = {var.name for var in mod["main"].params}
    unknown = sorted(set(params) - names)
    if unknown:
        raise ValueError(
            f"params name no parameter of main: {unknown} (main takes {sorted(names)})"
        )
    arrays = {name: _tensor(value) for name, value in params.items()}
    return relax.transform.BindParams("main", arrays)(mod)


def _tensor(value: Any) -> tvm.runtime.Tensor:
    """``value`` as a TVM tensor: a TVM tensor as it is (bound without a copy), else converted."""
    if isinstance(value, tvm.runtime.Tensor):
        return value
    return tvm.runtime.tensor(np.asarray(value.numpy() if hasattr(value, "numpy") else value))


def build_model(
    mod: tvm.IRModule, target: Any = None, params: Mapping[str, Any] | None = None
) -> Any:
    """Build ``mod`` into a VM executable on the shim's schedules, through the persistent cache.

    Parameters
    ----------
    mod : tvm.IRModule
        A Relax module; ``main`` is what executors run.
    target : tvm.target.Target, str or dict, optional
        Default: the enclosing ``with target:`` scope, else ``"llvm"`` (this machine's CPU).
    params : mapping of str to array, optional
        Bound to ``main``'s parameters by name before the build (weights become constants, packed
        once at build time).

    Returns
    -------
    tvm.relax.Executable or tvm.runtime.Module
        What ``relax.VirtualMachine(executable, device)`` runs: the built executable, or on a
        cache hit the loaded library.

    Raises
    ------
    TypeError
        When ``mod`` is not a ``tvm.IRModule`` with a Relax ``main``.
    """
    return build(mod, target, params).executable


@dataclass(frozen=True)
class BuiltModule:
    """A whole-module build: the executable, and the cached library it was loaded from (if so).

    Attributes
    ----------
    executable : tvm.runtime.Executable or tvm.runtime.Module
        What ``relax.VirtualMachine(executable, device)`` runs.
    library : pathlib.Path or None
        On a persistent-cache hit, the library file ``executable`` was loaded from: a loaded
        library cannot be exported again by TVM, so :func:`export_library` copies this file.
    built : tvm.relax.VMExecutable or None
        When this process built the module for the persistent cache (the store runs behind the
        build): the executable it built, the same as :attr:`executable`.
    """

    executable: Any
    library: Path | None = None
    built: Any = None


def build(
    mod: tvm.IRModule, target: Any = None, params: Mapping[str, Any] | None = None
) -> BuiltModule:
    """:func:`build_model`, also saying where a cache hit was loaded from (for exports)."""
    if not isinstance(mod, tvm.IRModule):
        raise TypeError(f"build_model takes a tvm.IRModule, got {type(mod).__qualname__}")
    if "main" not in [gvar.name_hint for gvar in mod.get_global_vars()]:
        raise TypeError("build_model needs a module with a Relax function 'main'")
    resolved = resolve_target(target)
    bound = bind_params(mod, params)
    if not disk.active() or _links_external_modules(bound) or tuned.active():
        return BuiltModule(vm_executable.build_executable(bound, resolved))
    key = module_key(bound, resolved)
    store_behind.wait(key.digest)  # this process is storing it: load what it stored
    stored = disk.load_artifact(key)
    if stored is not None and LIBRARY_FILE in stored.files:
        with tvm_warnings_dropped():  # TVM's C++ log of the VM's sections: not Relay's output
            loaded = stored.load_library(LIBRARY_FILE)  # None: discarded (unsafe, does not load)
        if loaded is not None:
            return BuiltModule(loaded, stored.path(LIBRARY_FILE))
    # The executable built here runs (JIT-compiled, as with the cache off); its library is
    # exported and stored on the cache's writer thread, off the build's critical path.
    executable = vm_executable.build_executable(bound, resolved)
    detached: list[disk.DetachedLibrary] = []  # its code as LLVM IR: the writer's own copy
    disk.store_quietly(lambda: detached.append(disk.detach_library(executable)), "module")
    root = disk.cache_dir()  # the store lands here even if the setting changes meanwhile
    if detached and root is not None:
        store_behind.submit(
            key.digest,
            lambda: disk.store_quietly(lambda: _store(key, detached[0], root), "module"),
        )
    return BuiltModule(executable, built=executable)


def export_library(built: BuiltModule, file_name: Any, *args: Any, **kwargs: Any) -> None:
    """Export ``built`` as ``executable.export_library(file_name, ...)`` does.

    A build loaded from the persistent cache is already a shared library: it is copied. Either
    way the library is written under a new name beside ``file_name`` and renamed over it
    (:func:`.new_files.replacing`): a program that loaded the file before keeps running the
    library it loaded, where writing over the file in place would change its code under it.

    Raises
    ------
    ValueError
        For a cache-loaded build given options (``fcompile``, ...) or a name that is not a shared
        library's (``.tar``): the library is exported as it was built. Unset
        ``COMPILE_ENGINE_COMPAT_CACHE_DIR`` to build afresh with them.
    """
    path = os.fspath(file_name)
    library = path.endswith((".so", ".dylib", ".dll"))
    if built.built is not None and (args or kwargs or not library):
        built = BuiltModule(built.built)
    if built.library is None:
        with new_files.replacing(path, 0o777 if library else 0o666) as staging:
            with tvm_warnings_dropped():  # TVM's C++ log of the VM's sections: not Relay's output
                built.executable.export_library(str(staging), *args, **kwargs)
        return
    if args or kwargs or not library:
        raise ValueError(
            f"export_library({path!r}{', options' if args or kwargs else ''}): this build was "
            "loaded from the compile cache as a shared library and is exported as it is "
            "(a .so file, no options); unset COMPILE_ENGINE_COMPAT_CACHE_DIR to build it afresh"
        )
    with new_files.replacing(path, 0o777) as staging:
        shutil.copyfile(built.library, staging)


def _links_external_modules(mod: tvm.IRModule) -> bool:
    """True for a module carrying external codegens' runtime modules (``external_mods``).

    ``relax.transform.RunCodegen`` (``relay.build`` of a ``PartitionGraph`` result) attaches
    them. No structural hash covers their code (TVM cannot hash a runtime module), so such a
    build is never stored in, nor loaded from, the persistent cache: it is built each time.
    """
    return mod.attrs is not None and "external_mods" in mod.attrs


def module_key(bound: tvm.IRModule, target: tvm.target.Target) -> disk.ArtifactKey:
    """The cache key of a whole-module build of ``bound`` (parameters bound) for ``target``.

    The module's structural hash covers the values of its constants (the bound weights); the
    rules' version, the target and the PassContext complete it, as for a ``jit`` kernel.
    """
    return disk.artifact_key(
        MODULE,
        rules=RULES_VERSION,
        target=target_text(target),
        pass_context=pass_context_text(),
        structural_hash=tvm_ffi.structural_hash(bound),
    )


def _store(key: disk.ArtifactKey, detached: disk.DetachedLibrary, root: Path) -> None:
    """Store the executable as one library (VM bytecode, kernels, constants) under ``key`` in
    the cache root ``root``."""
    with tempfile.TemporaryDirectory() as staging:
        library = disk.export_detached(detached, Path(staging))
        disk.store_artifact(key, {LIBRARY_FILE: library}, {"entry": "main"}, root=root)
