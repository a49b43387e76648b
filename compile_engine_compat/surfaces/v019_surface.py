"""TVM 0.19's public Relay-era names, and the route of each one the shim does not serve.

The name list is data: ``v019_public_names.json`` beside this module, written by
``python tests/upstream/census.py --snapshot`` from TVM v0.19.0's Python sources (the public
names of ``tvm.relay`` and its modules, ``tvm.contrib.graph_executor``, ``tvm.runtime.vm``,
``tvm.autotvm``, ``tvm.testing``, ``tvm._ffi``, ..., the methods of ``GraphModule``,
``VirtualMachine``, ``Executable``, ``GraphExecutorFactoryModule``, ``ExprVisitor`` and
``ExprMutator``, and every module file of those packages). ``install()``
(:mod:`.import_alias`) reads it to refuse, at the call, each listed name that nothing serves:
the module's own definitions always win, so a name someone implements stops being refused
without an edit here.

:func:`route` says, for a TVM 0.19 name, what replaces it and which MIGRATION.md section
explains it (one row of the API table per family); ``scan`` reads :func:`absent_in_tvm` to
report every listed name that TVM 0.27 no longer has.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from compile_engine_compat.api_table import lookup

__all__ = [
    "SNAPSHOT_FILE",
    "Route",
    "absent_in_tvm",
    "absent_names",
    "class_methods",
    "legacy_modules",
    "module_names",
    "route",
    "served_names",
    "snapshot",
]

#: The committed name list (package data).
SNAPSHOT_FILE = Path(__file__).with_name("v019_public_names.json")


_CATCH_ALL_ROW = "relay.unsupported"


@dataclass(frozen=True)
class Route:
    """What replaces a TVM 0.19 name on TVM 0.27, and where the guide explains it."""

    why: str
    replacement: str
    docs: str
    #: The API table row naming the replacement and the section.
    row: str = _CATCH_ALL_ROW


_CATCH_ALL = _CATCH_ALL_ROW

#: Legacy module prefix -> (API table row naming the replacement and section, why it is gone).
#: The longest prefix wins.
_ROUTES: dict[str, tuple[str, str]] = {
    "tvm": ("relay.unsupported", "TVM 0.27 no longer has it and the shim does not serve it"),
    "tvm.relay": (
        "relay.unsupported",
        "compile-engine-compat's Relay front end does not provide it; port this part to Relax",
    ),
    "tvm.relay.transform": ("relay.transform", "this Relay pass has no counterpart in the shim"),
    "tvm.relay.analysis": ("relay.analysis", "this Relay analysis has no counterpart in the shim"),
    "tvm.relay.testing": ("relay.testing.workloads", "this relay.testing helper is not served"),
    "tvm.relay.frontend": ("relay.frontend.unserved", "this Relay frontend part is not served"),
    "tvm.relay.backend.vm": ("relay.vm", "this part of the Relay VM is not served"),
    "tvm.runtime.vm": ("relay.vm", "this part of the Relay VM is not served"),
    "tvm.relay.build_module": ("relay.build", "this part of relay.build is not served"),
    "tvm.relay.backend.executor_factory": (
        "relay.build",
        "relay.build returns a Relax VM executable, not an executor factory",
    ),
    "tvm.contrib.graph_executor": (
        "tvm.contrib.graph_executor.GraphModule",
        "the graph executor is gone; the shim's GraphModule runs the Relax VM",
    ),
    "tvm.contrib.graph_runtime": (
        "tvm.contrib.graph_executor.GraphModule",
        "graph_runtime was renamed graph_executor, then removed",
    ),
    "tvm.contrib.debugger": (
        "tvm.contrib.graph_executor.GraphModule",
        "the debug graph executor is gone: profile with relax.VirtualMachine(..., profile=True)",
    ),
    "tvm.autotvm": ("tvm.autotvm.tuning", "AutoTVM was removed in TVM 0.20"),
    "tvm.auto_scheduler": ("tvm.auto_scheduler", "auto_scheduler was removed in TVM 0.20"),
    "tvm.runtime.ndarray": ("tvm.nd", "tvm.runtime.ndarray became tvm.runtime.Tensor"),
    "tvm.contrib.relay_viz": (
        "relay.unsupported",
        "Relay's visualizer is gone: print the Relax module (mod.show(), mod.script())",
    ),
    "tvm._ffi": (
        "relay.unsupported",
        "tvm._ffi became the tvm_ffi package: tvm_ffi.register_global_func, "
        "tvm.get_global_func, tvm.runtime.convert",
    ),
    "tvm.testing": (
        "relay.unsupported",
        "TVM 0.27's tvm.testing lacks it: write the check with numpy.testing and pytest",
    ),
    # TVM 0.19's deprecated device aliases, wherever it kept them.
    **{
        f"{module}.{alias}": (
            f"tvm.{alias}",
            f"{alias} was TVM 0.19's deprecated alias of tvm.{modern}: call tvm.{modern}(index)",
        )
        for module in ("tvm", "tvm.runtime", "tvm.runtime.ndarray")
        for alias, modern in (("gpu", "cuda"), ("cl", "opencl"), ("mtl", "metal"))
    },
}


@functools.cache
def snapshot() -> dict[str, Any]:
    """The committed name list (``{"modules": {...}, "classes": {...}, ...}``)."""
    data: dict[str, Any] = json.loads(SNAPSHOT_FILE.read_text(encoding="utf-8"))
    return data


def module_names(module: str) -> frozenset[str]:
    """The public names TVM 0.19's ``module`` had (empty when the list does not cover it)."""
    return frozenset(snapshot()["modules"].get(module, ()))


def class_methods(module: str) -> dict[str, frozenset[str]]:
    """``{class name: its public methods}`` for the listed classes of ``module``."""
    out = {}
    for spec, names in snapshot()["classes"].items():
        owner, _, cls = spec.partition(":")
        if owner == module:
            out[cls] = frozenset(names)
    return out


@functools.cache
def legacy_modules() -> frozenset[str]:
    """Every module TVM 0.19 had in the packages the list covers (``tvm.relay.loops``, ...)."""
    return frozenset((*snapshot()["modules"], *snapshot().get("submodules", ())))


def absent_in_tvm() -> dict[str, list[str]]:
    """``{module or module:Class: names}`` TVM 0.27 lacks without the shim (``["*"]``: all)."""
    return dict(snapshot()["absent_in_tvm"])


@functools.cache
def served_names() -> frozenset[str]:
    """The listed names ``install()`` serves, as the last ``census.py --docs`` found them
    (``v019_served.json``; a test keeps it current)."""
    path = SNAPSHOT_FILE.with_name("v019_served.json")
    if not path.is_file():
        return frozenset()
    return frozenset(json.loads(path.read_text(encoding="utf-8"))["served"])


@functools.cache
def absent_names() -> frozenset[str]:
    """Every dotted TVM 0.19 name of the list (modules and their names, not class methods)
    that TVM 0.27 no longer has: ``tvm.gpu``, ``tvm._ffi``, ``tvm.contrib.graph_runtime.create``."""
    out: set[str] = set()
    for owner, names in absent_in_tvm().items():
        if ":" in owner:
            continue
        if names == ["*"]:
            out.add(owner)
            out.update(f"{owner}.{name}" for name in module_names(owner))
        else:
            out.update(f"{owner}.{name}" for name in names)
    return frozenset(out)


def route(fullname: str) -> Route:
    """What replaces the TVM 0.19 name ``fullname`` (``"tvm.relay.analysis.CallGraph"``)."""
    prefix = max(
        (p for p in _ROUTES if fullname == p or fullname.startswith(p + ".")),
        key=len,
        default="tvm",
    )
    row_name, why = _ROUTES[prefix]
    row = lookup(row_name)
    # The catch-all row's replacement is "the one each finding names": the reason says it.
    replacement = "" if row_name == _CATCH_ALL else row.replacement
    return Route(why=why, replacement=replacement, docs=row.docs, row=row_name)
