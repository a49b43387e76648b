"""Build: compile a lowered module with ``tvm.compile`` into a destination-passing kernel."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import tvm
from tvm import tirx

from compile_engine_compat.pipeline.prefetch import tir_pipeline
from compile_engine_compat.runtime.kernel import Kernel

logger = logging.getLogger("compile_engine")

__all__ = ["build_kernel", "compile_kernels", "device_for"]


def device_for(target: tvm.target.Target) -> Any:
    """Return the device a kernel built for ``target`` runs on."""
    kind = target.kind.name
    return tvm.cpu(0) if kind in ("llvm", "c") else tvm.device(kind, 0)


def build_kernel(
    funcs: tvm.IRModule,
    name: str,
    target: tvm.target.Target,
    num_inputs: int,
    num_outputs: int,
    constants: Sequence[Any] = (),
    module: Any = None,
    plain: Callable[[], tirx.PrimFunc] | None = None,
    plain_target: tvm.target.Target | None = None,
) -> Kernel:
    """Build ``funcs`` with ``tvm.compile`` and return its ``name`` function as a :class:`Kernel`.

    Parameters
    ----------
    funcs : tvm.IRModule
        Holds the PrimFunc ``name``; its parameters are inputs, then constants, then outputs.
    name : str
        The PrimFunc to call.
    target : tvm.target.Target
        The compilation target.
    num_inputs, num_outputs : int
        The caller-visible arity (constants excluded).
    constants : sequence of tvm.runtime.Tensor
        Values bound after the inputs.
    module : tvm.runtime.Module, optional
        An already built module holding ``name`` (loaded from the persistent cache, or built for
        many functions at once): no compile then.
    plain : callable, optional
        Returns the same function before inlining and scheduling (``CachedFunc.prim_func``),
        built instead when TVM fails to build ``funcs``; its failure re-raises the first one.
    plain_target : tvm.target.Target, optional
        The target to build ``plain`` for (default ``target``): without the LLVM ``opt-level``
        chosen for the scheduled kernel, since the unscheduled function is not vectorized.

    Returns
    -------
    Kernel
    """
    if module is None:
        module = _compile(funcs, name, target, plain, plain_target or target)
    return Kernel(module, name, num_inputs, num_outputs, constants, device_for(target))


def compile_kernels(
    funcs: tvm.IRModule | Mapping[str, tirx.PrimFunc], target: tvm.target.Target
) -> Any:
    """``tvm.compile`` of kernels, with the shim's ``tir_pipeline``: the one build every kernel,
    built alone (:func:`build_kernel`) or many at once (``jit_many``), goes through, so that one
    cache key always means one code.

    Parameters
    ----------
    funcs : tvm.IRModule or mapping of str to tirx.PrimFunc
        The PrimFuncs, by symbol.
    target : tvm.target.Target
        The compilation target.

    Returns
    -------
    tvm.runtime.Module
        The compiled library, holding every function of ``funcs``.
    """
    module = funcs if isinstance(funcs, tvm.IRModule) else tvm.IRModule(dict(funcs))
    return tvm.compile(module, target=target, tir_pipeline=tir_pipeline(target))


def _compile(
    funcs: tvm.IRModule,
    name: str,
    target: tvm.target.Target,
    plain: Callable[[], tirx.PrimFunc] | None,
    plain_target: tvm.target.Target,
) -> Any:
    # LLVM's optimizer can emit invalid IR for some inlined index arithmetic (adaptive pooling
    # with uneven windows: "Instruction does not dominate all uses") where the same function
    # with its stages apart builds; the new path then builds too, so the shim must not fail.
    try:
        return compile_kernels(funcs, target)
    except Exception as err:
        if plain is None:
            raise
        fallback = _compile_or_none(plain, name, plain_target)
        if fallback is None:
            raise
        reason = (str(err).strip().splitlines() or [type(err).__name__])[0]
        logger.warning(
            "%s: TVM failed to build the scheduled kernel (%s); built the PrimFunc before "
            "inlining and scheduling instead: same results, unscheduled speed",
            name,
            reason,
        )
        return fallback


def _compile_or_none(
    plain: Callable[[], tirx.PrimFunc], name: str, target: tvm.target.Target
) -> Any | None:
    try:
        func = plain().with_attr("global_symbol", name)
        return compile_kernels({name: func}, target)
    except Exception:  # the caller re-raises the scheduled kernel's error, the one to report
        return None
