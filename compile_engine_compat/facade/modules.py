"""Whole-module builds: the persistent cache first, then the pipeline's module build, then a store.

The one compile path of ``relay.build``, ``relay.create_executor`` (every kind) and any other
whole-module build, as :mod:`.kernels` is ``jit``'s: a plain ``llvm`` target is the host CPU,
and the kernels are scheduled by the same rules through the same function
(:func:`compile_engine_compat.pipeline.schedule.schedule_prim_func`). With
``COMPILE_ENGINE_COMPAT_CACHE_DIR`` set, the executable is stored whole (a shared library holding
the VM bytecode, the kernels and the constants) and a later process loads it instead of building.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import tvm
from tvm import relax

from compile_engine_compat.cache import disk
from compile_engine_compat.pipeline import module_build
from compile_engine_compat.pipeline.schedule import RULES_VERSION
from compile_engine_compat.targets import as_target

__all__ = ["bind_params", "build_module", "resolve_target"]


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
    arrays = {
        name: value if isinstance(value, tvm.runtime.Tensor) else tvm.runtime.tensor(
            np.asarray(value.numpy() if hasattr(value, "numpy") else value))
        for name, value in params.items()
    }  # fmt: skip
    return relax.transform.BindParams("main", arrays)(mod)


def build_module(
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
    if not isinstance(mod, tvm.IRModule):
        raise TypeError(f"build_module takes a tvm.IRModule, got {type(mod).__qualname__}")
    if "main" not in [gvar.name_hint for gvar in mod.get_global_vars()]:
        raise TypeError("build_module needs a module with a Relax function 'main'")
    resolved = resolve_target(target)
    bound = bind_params(mod, params)
    if not disk.active():
        return module_build.build_module(bound, resolved)
    key = disk.module_key(bound, resolved, RULES_VERSION)
    hit = disk.load(key)
    if hit is not None:
        return hit[0]
    executable = module_build.build_module(bound, resolved)
    disk.store_quietly(lambda: disk.store(key, executable), "module")
    return executable
