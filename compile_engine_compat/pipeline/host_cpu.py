"""A plain ``llvm`` target means this machine's CPU: host-speed kernels by default.

With ``"llvm"`` alone TVM 0.27 generates generic x86-64 (SSE2) code: a 512x512 matmul ran 2.8x
slower than with AVX2, and ``{"mcpu": "native"}`` is ignored. A kernel the shim jits runs in the
process that built it, so the host's instruction set is known and safe to use:
:func:`host_target` adds the host CPU (``llvm_get_system_cpu``) as ``mcpu``, plus ``mattr``
entries that switch off any feature that CPU name implies but this host lacks (a hypervisor may
hide AVX-512 from a CPU whose model has it), so the code never uses an instruction the machine
cannot run. On AVX-512 CPUs that LLVM tunes for 256-bit vectors, the preference is cleared: the
shim's compute-bound kernels ran 1.2-1.6x faster with 512-bit vectors.

Only a *plain* ``llvm`` target changes: one naming ``mcpu``, ``mattr``, ``mabi`` or a
``mtriple`` other than the host's (a cross-compilation, or a choice the user made) is kept as
given. The substituted target is what ``CachedFunc.target`` and ``CCacheKey.target`` show, and it
is part of every cache key, the persistent cache's included, so a cache shared between machines
never hands one machine's kernel to another.

``COMPILE_ENGINE_COMPAT_GENERIC_CPU=1`` restores TVM's generic code (read on every call, so a
test or a process can switch it).
"""

from __future__ import annotations

import functools
import os

import tvm

from compile_engine_compat._boundary import env_raw

__all__ = ["GENERIC_CPU_ENV", "host_cpu", "host_target"]

#: Set to 1 (or true/yes/on) for TVM's generic code on a plain ``llvm`` target.
GENERIC_CPU_ENV = "COMPILE_ENGINE_COMPAT_GENERIC_CPU"
# Attributes that make an llvm target someone's deliberate choice (or another machine's).
_CHOSEN = ("mcpu", "mtriple", "mattr", "mabi")


_ON = ("1", "true", "yes", "on")


def _generic_requested() -> bool:
    # Read on every call (a test or a process may switch it), on the hot path of every cache-hit
    # lower: os.environ.get costs ~0.8 us (key encoding, a KeyError when unset), the raw read
    # ~0.05 us (see _boundary.env_raw).
    value = env_raw(_ENV_KEY)
    return value is not None and value.decode(errors="replace").strip().lower() in _ON


_ENV_KEY = os.fsencode(GENERIC_CPU_ENV)


@functools.cache
def host_cpu() -> tuple[str, tuple[str, ...]] | None:
    """(LLVM CPU name, ``mattr`` switching off what the name implies but the host lacks).

    None when LLVM does not know this CPU (``"generic"``) or cannot say.
    """
    codegen = tvm.target.codegen
    try:
        name = str(codegen.llvm_get_system_cpu())
        if not name or name == "generic":
            return None
        implied = {str(f) for f in codegen.llvm_get_cpu_features(_plain({"mcpu": name}))}
        present = tvm.get_global_func("tvm.codegen.llvm.GetHostCPUFeatures")()
    except Exception:  # no LLVM in this build, or a TVM without these queries: stay generic
        return None
    # A feature the host reports as absent; features it does not report are left to the name.
    missing = sorted(f for f in implied if f in present and not bool(present[f]))
    mattr = [f"-{f}" for f in missing]
    if "prefer-256-bit" in implied and bool(present.get("avx512f", False)):
        # LLVM splits vectors to 256 bits on AVX-512 CPUs that "prefer" it (Ice/Rocket Lake,
        # Skylake-SP). The shim's kernels are compute-bound loops, and 512-bit vectors ran them
        # 1.2-1.6x faster on all nine matmul/conv2d benchmark shapes (bench/RESULTS.md).
        mattr.append("-prefer-256-bit")
    return name, tuple(mattr)


@functools.cache
def _system_triple() -> str:
    try:
        return str(tvm.target.codegen.llvm_get_system_triple())
    except Exception:  # no LLVM: no triple is the host's
        return ""


def _plain(extra: dict[str, object]) -> tvm.target.Target:
    return tvm.target.Target({"kind": "llvm", **extra})


_substituted: dict[tvm.target.Target, tvm.target.Target] = {}


def host_target(target: tvm.target.Target) -> tvm.target.Target:
    """``target`` with the host CPU filled in when it is a plain ``llvm`` target.

    Parameters
    ----------
    target : tvm.target.Target
        Any target; only ``llvm`` without ``mcpu``/``mtriple``/``mattr``/``mabi`` changes, and
        not when ``COMPILE_ENGINE_COMPAT_GENERIC_CPU`` is set.

    Returns
    -------
    tvm.target.Target
        The target the shim builds for.
    """
    done = _substituted.get(target)
    if done is not None:  # seen before (only llvm targets are recorded)
        return target if _generic_requested() else done
    if target.kind.name != "llvm" or _generic_requested():
        return target
    attrs = target.attrs
    chosen = [key for key in _CHOSEN if key in attrs]
    # TVM fills in the host's own triple on a bare "llvm": that is not a choice.
    if chosen == ["mtriple"] and str(attrs["mtriple"]) == _system_triple():
        chosen = []
    cpu = None if chosen else host_cpu()
    if cpu is None:
        result = target
    else:
        config = dict(target.export())
        config["mcpu"], mattr = cpu
        if mattr:
            config["mattr"] = list(mattr)
        result = tvm.target.Target(config)
    if len(_substituted) > 256:  # targets are few and long-lived; bounded anyway
        _substituted.clear()
    _substituted[target] = result
    return result
