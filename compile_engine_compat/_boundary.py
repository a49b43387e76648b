"""Every private TVM or CPython name the package uses, in one place, each found by a probe.

A shim lives or dies by how it survives TVM's changes. The public API changes with a deprecation
cycle; these names change without one. So each is looked up here, once, by probing for the
feature (never by comparing version numbers), and :data:`PRIVATE_NAMES` says for each what it is
for and which TVM change would move it: ``tests/test_boundary.py`` resolves every entry and
fails naming that change the day a release moves one.

The process patches (a class-level hook, import machinery, attributes set on TVM's modules,
at-fork handlers) each live with the feature they serve; :data:`PROCESS_PATCHES` lists them with
their off switch and their test.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from types import FrameType
from typing import Any

__all__ = [
    "PRIVATE_NAMES",
    "PROCESS_PATCHES",
    "PrivateName",
    "ProcessPatch",
    "caller_frame",
    "env_raw",
    "resolve",
    "schedule_ffi",
    "te_ffi",
]


@dataclass(frozen=True)
class PrivateName:
    """One private name: where it lives, why the package uses it, what would move it."""

    module: str
    attribute: str
    why: str
    breaks_when: str


#: Every private name, keyed by how the package refers to it.
PRIVATE_NAMES: dict[str, PrivateName] = {
    "te_ffi": PrivateName(
        "tvm.te",
        "_ffi_api",
        "ComputeOp/TensorLoad rebuild a TE stage with its injective producers inlined "
        "(pipeline.fuse): te.compute cannot take an existing body",
        "TVM renames te's FFI namespace or its ComputeOp/TensorLoad constructors (#20225 "
        "already changed loads into TensorLoad calls)",
    ),
    "schedule_ffi": PrivateName(
        "tvm.s_tir.schedule",
        "_ffi_api",
        "ScheduleGetChildBlocks/Get/GetConsumers/ComputeInline without the Python wrapper's "
        "type checks: the s_tir inliner visits every block of a 200-op chain (pipeline.lower)",
        "s_tir's FFI functions are renamed or s_tir moves into tvm-tirx",
    ),
    "caller_frame": PrivateName(
        "sys",
        "_getframe",
        "a warning points at the first frame outside the package (surfaces.deprecation)",
        "a Python without sys._getframe (PyPy has it; warnings then point one frame up)",
    ),
    "env_raw": PrivateName(
        "os",
        "environ._data",
        "COMPILE_ENGINE_COMPAT_GENERIC_CPU read in 0.05 us on every cache-hit lower "
        "(pipeline.host_cpu); os.environ.get costs 0.8 us",
        "CPython stops keeping the bytes mapping under os.environ (the public get is used then)",
    ),
}


def resolve(key: str) -> Any:
    """The object behind :data:`PRIVATE_NAMES` ``[key]``.

    Raises
    ------
    ImportError
        Naming the private name and the TVM or Python change that moved it.
    """
    entry = PRIVATE_NAMES[key]
    try:
        value: Any = importlib.import_module(entry.module)
        for part in entry.attribute.split("."):
            value = getattr(value, part)
    except (ImportError, AttributeError) as exc:
        raise ImportError(
            f"compile-engine-compat needs {entry.module}.{entry.attribute} ({entry.why}); it is "
            f"gone: {entry.breaks_when}. Report it with your TVM version."
        ) from exc
    return value


def te_ffi() -> Any:
    """``tvm.te._ffi_api`` (see :data:`PRIVATE_NAMES`)."""
    return resolve("te_ffi")


def schedule_ffi() -> Any:
    """``tvm.s_tir.schedule._ffi_api`` (see :data:`PRIVATE_NAMES`)."""
    return resolve("schedule_ffi")


_getframe: Callable[[int], FrameType] | None = getattr(sys, "_getframe", None)


def caller_frame(depth: int) -> FrameType | None:
    """The frame ``depth`` levels above the caller of this function (None without _getframe)."""
    return _getframe(depth + 1) if _getframe is not None else None


_ENVIRON_BYTES = getattr(os.environ, "_data", None) if os.name == "posix" else None


def env_raw(name: bytes) -> bytes | None:
    """``os.environ`` 's raw value of ``name`` where CPython keeps bytes (0.05 us), else through
    ``os.environ`` itself."""
    if isinstance(_ENVIRON_BYTES, dict):
        value = _ENVIRON_BYTES.get(name)
        return value if value is None or isinstance(value, bytes) else None
    text = os.environ.get(os.fsdecode(name))
    return None if text is None else os.fsencode(text)


@dataclass(frozen=True)
class ProcessPatch:
    """One change the package makes to the process beyond its own modules."""

    what: str
    where: str
    off: str
    test: str


#: Every process patch, where it lives, how to turn it off, and the test that covers it.
PROCESS_PATCHES: tuple[ProcessPatch, ...] = (
    ProcessPatch(
        "relax.BlockBuilder.call_te: a class-level hook that captures legalizations' TE",
        "pipeline.trace",
        "inactive outside a trace (the hook calls the original when no tracer is set)",
        "tests/test_trace_errors.py, tests/test_differential.py",
    ),
    ProcessPatch(
        "sys.meta_path finder serving tvm.relay and the TVM <=0.19 modules; tvm.context, "
        "tvm.device('llvm'), Tensor.asnumpy, te.SpecializedCondition on TVM's modules",
        "surfaces.import_alias, relay.legacy",
        "opt-in: compile_engine_compat.install(); uninstall() removes all of it",
        "tests/test_import_alias.py, tests/test_relay_legacy.py",
    ),
    ProcessPatch(
        "PassContext accepts the relay.backend.* and TVM <=0.19 config keys",
        "surfaces.passconfig",
        "compile_engine_compat.uninstall_pass_config()",
        "tests/test_passconfig.py, tests/test_legacy_config_keys.py",
    ),
    ProcessPatch(
        "TVM_NUM_THREADS set to the physical cores before TVM's pool starts; 1 in a forked child",
        "_threads",
        "set TVM_NUM_THREADS (or OMP_NUM_THREADS) yourself",
        "tests/test_threads.py, tests/test_fork.py",
    ),
    ProcessPatch(
        "at-fork handlers freeing the package's locks in a child, and the ledger writer's",
        "_threads, facade.engine, surfaces.deprecation, migrate.ledger_io",
        "none needed: they only act in a forked child",
        "tests/test_fork.py, tests/test_ledger.py",
    ),
    ProcessPatch(
        "a kernel hook around jit's kernels (shadow mode)",
        "testing.shadow -> facade.engine.set_kernel_hook",
        "COMPILE_ENGINE_COMPAT_SHADOW unset (the default); shadow_mode(False)",
        "tests/test_shadow.py",
    ),
)
