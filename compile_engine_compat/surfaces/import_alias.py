"""Opt-in import alias: ``tvm.relay`` -> the shim's Relay front end and legacy engine modules.

After :func:`install`, untouched legacy files run::

    import compile_engine_compat
    compile_engine_compat.install()

    from tvm import relay                          # is compile_engine_compat.relay
    from tvm.relay.testing import run_infer_type   # compile_engine_compat.relay.testing
    from tvm.relay.backend import compile_engine   # is compile_engine_compat.compile_engine
    import tvm.relay.backend.te_compiler as tec    # is compile_engine_compat.te_compiler

A meta-path finder serves ``tvm.relay`` and each of its submodules as the module of the same
path under :mod:`compile_engine_compat.relay` (the Relay building API emitting Relax), and the two
engine aliases. A part of Relay the front end knows but does not serve (:data:`REFUSED_MODULES`:
``tvm.relay.loops``, ...) is refused at
the call, never at the import: importing it gives a stand-in (:class:`RefusedModule`,
:class:`RefusedName`), so a module that imports it and never uses it runs, and calling it raises
:class:`RelayRemovedCallError` saying why and naming the replacement. A name nothing knows raises
:class:`RelayRemovedError` (an ``AttributeError``) on access, a module nothing knows
:class:`RelayRemovedImportError` (a ``ModuleNotFoundError``) on import; a missing op of
``relay.op.*`` names itself (:func:`refused_op`). The TVM <=0.19 names outside ``tvm.relay``
(``tvm.autotvm``, ``tvm.nd``, ``tvm.context``, ``tvm.testing.uses_gpu``, ...) are served from one
table, :data:`.moved_names.MOVED_NAMES`, which :func:`install` reads.

Every other public name of TVM 0.19's Relay-era modules (the list of
:mod:`.v019_surface`, from TVM v0.19.0's sources) is refused at the call the same way, whichever
module it belonged to: a module TVM 0.19 had imports as a :class:`RefusedModule`
(``tvm.autotvm.graph_tuner``, ``tvm.contrib.relay_viz``), and a name a served module lacks is a
:class:`RefusedName` from a module ``__getattr__`` consulted only for names the module does not
define (a listed method a served class lacks is one too). Each refusal names the replacement and
its MIGRATION.md section.

Effect on feature detection, while installed:

* ``import tvm.relay`` and ``from tvm import relay`` succeed, so
  ``try: from tvm import relay / except ImportError`` takes the Relay branch;
* ``hasattr(tvm, "relay")`` is True, as in TVM 0.19 (its first access imports ``tvm.relay``);
* ``hasattr(tvm.relay.backend, "graph_executor_codegen")`` is True (a stand-in refused when
  called), as is ``from tvm.relay.backend import graph_executor_codegen``.

Prefer ``hasattr(tvm, "relax")`` to detect modern TVM. :func:`uninstall` removes the finder and the
aliases, restoring all of the above.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import threading
import types
from typing import Any

from compile_engine_compat.api_table import MODULE_SHIMS
from compile_engine_compat.boundary import (
    add_meta_path_finder,
    install_module_view,
    patch_attribute,
    remove_meta_path_finder,
    restore_attribute,
    uninstall_module_view,
)
from compile_engine_compat.conflicts import require_tvm
from compile_engine_compat.runtime import threads
from compile_engine_compat.surfaces import passconfig
from compile_engine_compat.surfaces.moved_names import MOVED_NAMES, MovedName
from compile_engine_compat.surfaces.v019_surface import (
    class_methods,
    legacy_modules,
    module_names,
    route,
    snapshot,
)

__all__ = [
    "LEGACY_MODULES",
    "REFUSED_MODULES",
    "VENDOR_MODULES",
    "RefusedModule",
    "RefusedName",
    "RelayRemovedCallError",
    "RelayRemovedError",
    "RelayRemovedImportError",
    "install",
    "installed",
    "is_refused",
    "refused_name",
    "refused_op",
    "removed_message",
    "uninstall",
    "uninstall_pass_config",
]

#: Legacy module -> the shim module served under its name, from the API table.
_ALIASES = MODULE_SHIMS
_FRONT_END = "compile_engine_compat.relay"
#: What ``mod[name]`` gives Relay-era code (the Relay function behind a front-end function).
_MODULE_VIEW = "compile_engine_compat.tvm_legacy.ir_module:irmodule_relay_view"
#: What ``mod[global_type_var]`` gives (Relay's ``TypeData`` of a declared ADT).
_TYPE_DATA = "compile_engine_compat.tvm_legacy.ir_module:irmodule_type_data"
#: Other TVM <=0.19 modules Relay-era code imports -> the module serving them (the module rows
#: of :data:`.moved_names.MOVED_NAMES`).
LEGACY_MODULES: dict[str, str] = {
    row.legacy: row.served_by for row in MOVED_NAMES if ":" not in row.legacy
}

#: tvm.relay submodules the front end does not provide, and why (longest prefix wins).
REFUSED_MODULES: dict[str, str] = {
    # Relay programs end to end: tvm.relay.frontend, tvm.relay.vm and tvm.relay.backend.vm are
    # served by the front end (compile_engine_compat.relay.frontend, .vm, .backend.vm).
    # -- refused at the call (issue: upstream Relay tests): more known Relay modules -----------
    "tvm.relay.backend.graph_executor_codegen": "Relay's graph-executor codegen is gone: "
    "relay.build returns a Relax VM executable",
    "tvm.topi.cuda": "TVM <=0.19's hand-written CUDA schedules (tvm.topi.cuda) are gone: "
    "schedule GPU kernels with tvm.s_tir.dlight or meta_schedule",
    **{
        f"tvm.topi.{name}": f"TVM <=0.19's hand-written {what} schedules (tvm.topi.{name}) are "
        "gone: TVM 0.27 schedules TOPI's computes with tvm.s_tir.dlight, meta_schedule, or "
        "the shim's rules (relay.build)"
        for name, what in (
            ("x86", "x86"),
            ("arm_cpu", "Arm CPU"),
            ("generic", "generic"),
            ("rocm", "ROCm"),
            ("mali", "Mali"),
            ("bifrost", "Bifrost"),
            ("intel_graphics", "Intel graphics"),
            ("hls", "HLS"),
            ("adreno", "Adreno"),
            ("hexagon", "Hexagon"),
            ("sparse", "sparse (BSR)"),
        )
    },
}

#: The refused modules that TVM 0.19 reached as attributes of a module TVM 0.27 still has
#: (``from tvm import topi; topi.x86``): set on it by :func:`install` (as an import would).
REFUSED_ATTRIBUTE_MODULES = tuple(name for name in REFUSED_MODULES if name.startswith("tvm.topi."))


#: TVM <=0.19's vendor modules of relay.op.contrib -> the library their codegen needed.
VENDOR_MODULES: dict[str, str] = {
    "arm_compute_lib": "Arm Compute Library",
    "bnns": "Apple BNNS",
    "clml": "OpenCL ML (Adreno CLML)",
    "coreml": "Apple Core ML",
    "cublas": "cuBLAS",
    "cudnn": "cuDNN",
    "cutlass": "CUTLASS",
    "dnnl": "oneDNN (DNNL)",
    "ethosn": "Arm Ethos-N",
    "ethosu": "Arm Ethos-U",
    "libtorch": "LibTorch",
    "mrvl": "Marvell ML",
    "tensorrt": "TensorRT",
    "te_target": "TE target hooks",
    "vitis_ai": "Vitis AI",
    "cmsisnn": "CMSIS-NN",
}


def _vendor_reason(name: str) -> str:
    """Why ``tvm.relay.op.contrib.<name>`` is refused, and the route."""
    return (
        f"its Relay codegen ({VENDOR_MODULES[name]}, relay.ext.{name}) is not part of TVM 0.27. "
        "Port the pattern table to Relax (relax.backend.pattern_registry.register_patterns, "
        "relax.transform.FuseOpsByPattern then RunCodegen, with relax.ext."
        f"{name} where TVM 0.27 has it), or keep the Relay table: "
        "relay.op.contrib.register_pattern_table, MergeComposite, AnnotateTarget, "
        "PartitionGraph and a codegen of your own registered with "
        f"tvm.register_func('relay.ext.{name}') (see docs/byoc.md)"
    )


REFUSED_MODULES.update(
    {f"tvm.relay.op.contrib.{name}": _vendor_reason(name) for name in VENDOR_MODULES}
)


def removed_message(name: str, reason: str | None = None) -> str:
    """The refusal of a TVM 0.19 name the shim does not serve, naming ``reason`` and its route.

    The route (the replacement and the MIGRATION.md section) comes from
    :func:`.v019_surface.route`.
    """
    found = route(name)
    instead = f" Instead: {found.replacement}." if found.replacement else ""
    if not name.startswith("tvm.relay"):
        return (
            f"{name} does not exist in TVM 0.27, and compile-engine-compat does not serve it: "
            f"{reason or found.why}.{instead} See {found.docs}."
        )
    why = reason or (
        "compile-engine-compat's Relay front end does not provide it. Port this part to Relax: "
        "build the model with tvm.relax (relax.BlockBuilder, TVMScript or tvm.relax.frontend) "
        "and compile it with tvm.compile(mod, target)"
    )
    return (
        f"{name} does not exist: Relay was removed in TVM 0.20. The compile-engine-compat import "
        "alias serves tvm.relay as its Relay front end (compile_engine_compat.relay: building, "
        "inference, the ops of its table) and tvm.relay.backend.compile_engine/te_compiler (the "
        f"shim modules compile_engine_compat.compile_engine and .te_compiler); {why}.{instead} "
        f"See {found.docs}."
    )


def _refusal(fullname: str) -> str | None:
    for prefix in sorted(REFUSED_MODULES, key=len, reverse=True):
        if fullname == prefix or fullname.startswith(prefix + "."):
            return REFUSED_MODULES[prefix]
    return None


class RelayRemovedError(AttributeError):
    """An attribute of ``tvm.relay`` that the Relay front end does not provide."""


class RelayRemovedImportError(ModuleNotFoundError):
    """A ``tvm.relay`` submodule that the Relay front end does not provide."""


class RelayRemovedCallError(NotImplementedError):
    """A legacy Relay name the front end knows but does not serve, used (called, subclassed)."""


class RefusedName:
    """A known legacy Relay name the front end does not serve: importing it works, using it not.

    ``from tvm.relay.backend.graph_executor_codegen import GraphExecutorCodegen`` succeeds (a
    module that never calls it runs); ``GraphExecutorCodegen(...)`` raises
    :class:`RelayRemovedCallError` naming the feature and its replacement. Attributes are
    refused names too (``relay.vision.multibox_prior``).
    """

    __slots__ = ("_message", "_name", "_reason")

    def __init__(self, name: str, reason: str | None, message: str | None = None) -> None:
        self._name = name
        self._reason = reason
        #: The whole refusal, where the module that knows the name wrote it.
        self._message = message

    def _refuse(self) -> RelayRemovedCallError:
        return RelayRemovedCallError(self._message or removed_message(self._name, self._reason))

    @property
    def refusal(self) -> str:
        """Why the name is refused, and what to write instead (the reason its use names)."""
        return self._reason or "compile-engine-compat's Relay front end does not provide it"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise self._refuse()

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return RefusedName(f"{self._name}.{name}", self._reason)

    def __mro_entries__(self, bases: tuple[Any, ...]) -> tuple[Any, ...]:
        # ``class MyPass(relay.ExprMutator)`` at a module's top level is not yet a use: the
        # subclass is defined, and making an instance of it raises the refusal.
        return (_refused_base(self._name, self._reason),)

    def __repr__(self) -> str:
        return f"<refused {self._name}: {self._reason or 'not provided'}>"


def _refused_base(name: str, reason: str | None) -> type:
    """A class standing for the refused class ``name``: subclassable, refused when instantiated."""

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        raise RelayRemovedCallError(removed_message(name, reason))

    doc = f"Stand-in for {name}: {removed_message(name, reason)}"
    namespace = {"__init__": __init__, "__doc__": doc, "__legacy_refused__": True}
    return type(name.rpartition(".")[2], (), namespace)


class RefusedModule(types.ModuleType):
    """A known ``tvm.relay`` module the front end does not serve: each name is a
    :class:`RefusedName` (refused when used, not when imported)."""

    def __init__(self, name: str, reason: str | None) -> None:
        super().__init__(name, f"Refused: {removed_message(name, reason)}")
        self.__path__: list[str] = []  # a package: its submodules are refused the same way
        self._reason = reason
        #: The tvm name its refusals give (the import may have used the front end's name).
        self.legacy_name = name

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name == "legacy_name":
            raise AttributeError(name)
        return RefusedName(f"{self.legacy_name}.{name}", self._reason)


def is_refused(value: Any) -> bool:
    """True when ``value`` is a refusal stand-in: a :class:`RefusedName`, a
    :class:`RefusedModule`, or an object marked ``__legacy_refused__`` (the tuning stand-ins)."""
    if isinstance(value, (RefusedName, RefusedModule)):
        return True
    try:
        return getattr(value, "__legacy_refused__", False) is True
    except Exception:
        return False


def refused_name(fullname: str, reason: str | None = None) -> RefusedName:
    """The stand-in of the known legacy name ``fullname`` (``"tvm.relay.If"``), refused at use.

    ``reason`` defaults to the refusal of its module in :data:`REFUSED_MODULES`.
    """
    return RefusedName(fullname, reason if reason is not None else _refusal(fullname))


def refused_op(module: str, name: str) -> AttributeError:
    """The error for a missing name of a front-end op module (``module`` is its ``__name__``).

    An op (``nn.nll_loss``) gets :class:`RelayRemovedError` naming it and what to write instead;
    a private or dunder name (``__wrapped__``, probed by tools) a plain ``AttributeError``.
    """
    if name.startswith("_"):
        return AttributeError(f"module {module!r} has no attribute {name!r}")
    legacy = "tvm.relay" + module.removeprefix(_FRONT_END)
    return RelayRemovedError(
        removed_message(
            f"{legacy}.{name}",
            f"the Relay op {name!r} is not in compile-engine-compat's op table: write it in Relax "
            "(relax.op, or tvm.topi through bb.emit_te) and compile with tvm.compile",
        )
    )


def _target(fullname: str) -> str | None:
    """The module serving ``fullname``, or None when nothing does."""
    if fullname in _ALIASES:
        return _ALIASES[fullname]
    if fullname in LEGACY_MODULES:
        return LEGACY_MODULES[fullname]
    if _refusal(fullname) is not None:
        return None
    if any(part.startswith("_") for part in fullname.split(".")[2:]):
        return None  # the front end's machinery (relay._impl): never a tvm.relay module
    name = _FRONT_END + fullname.removeprefix("tvm.relay")
    try:
        found = importlib.util.find_spec(name)
    except ModuleNotFoundError:
        return None
    return name if found is not None else None


class _RelayFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Serves ``tvm.relay.*`` from the front end; refuses what it lacks, saying why."""

    def __init__(self) -> None:
        self._specs: dict[str, Any] = {}
        self._targets: dict[str, str] = {}
        self._refused: dict[str, tuple[str, str | None]] = {}

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if fullname.startswith(_FRONT_END + "."):
            # ``from tvm.relay import frontend`` imports the front end's own submodule name.
            legacy = "tvm.relay" + fullname.removeprefix(_FRONT_END)
            reason = _refusal(legacy)
            if importlib.machinery.PathFinder.find_spec(fullname, path):
                return None  # a real module of the front end: the path finder loads it
            if legacy in LEGACY_MODULES:  # a private module served by another (quantize._annotate)
                self._targets[fullname] = LEGACY_MODULES[legacy]
                served = importlib.import_module(LEGACY_MODULES[legacy])
                return importlib.machinery.ModuleSpec(
                    fullname, self, is_package=hasattr(served, "__path__")
                )
            if reason is not None:
                return self._refused_spec(fullname, reason, legacy)
            if legacy in legacy_modules():  # a module TVM 0.19 had: imported, refused when used
                return self._refused_spec(fullname, route(legacy).why, legacy)
            raise RelayRemovedImportError(removed_message(legacy, reason), name=None)
        moved = None if fullname in LEGACY_MODULES else _moved_submodule(fullname)
        if fullname in LEGACY_MODULES:
            name: str | None = LEGACY_MODULES[fullname]
        elif moved is not None:
            name = moved
        elif fullname != "tvm.relay" and not fullname.startswith("tvm.relay."):
            if fullname.startswith("tvm.") and _refusal(fullname) is not None:  # TVM <=0.19
                return self._refused_spec(fullname, _refusal(fullname))
            if fullname in legacy_modules() and not _exists(fullname, path):
                return self._refused_spec(fullname, route(fullname).why)
            return None
        else:
            name = _target(fullname)
        if name is None and _refusal(fullname) is not None:
            return self._refused_spec(fullname, _refusal(fullname))
        if name is None and fullname in legacy_modules():
            return self._refused_spec(fullname, route(fullname).why)
        if name is None:
            # name=None: with the missing module's name, ``from tvm.relay import x`` would
            # swallow this error and raise a bare "cannot import name 'x'" instead.
            raise RelayRemovedImportError(removed_message(fullname, _refusal(fullname)), name=None)
        assert name is not None
        self._targets[fullname] = name
        module = importlib.import_module(name)
        return importlib.machinery.ModuleSpec(
            fullname, self, is_package=hasattr(module, "__path__")
        )

    def _refused_spec(self, fullname: str, reason: str | None, legacy: str | None = None) -> Any:
        """A known module the front end does not serve: imported, refused when used (its
        refusals name ``legacy``, the tvm name, where the import used the front end's)."""
        self._refused[fullname] = (legacy or fullname, reason)
        return importlib.machinery.ModuleSpec(fullname, self, is_package=True)

    def create_module(self, spec: Any) -> types.ModuleType:
        if spec.name in self._refused:
            legacy, reason = self._refused.pop(spec.name)
            refused = RefusedModule(spec.name, reason)
            refused.legacy_name = legacy
            return refused
        module = importlib.import_module(self._targets[spec.name])
        # The import system overwrites __spec__ next; exec_module puts the real one back.
        self._specs[spec.name] = module.__spec__
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        legacy = module.__spec__.name if module.__spec__ else ""
        saved = self._specs.pop(legacy, None)
        if saved is not None:
            module.__spec__ = saved
            _refuse_unserved_tree(legacy, module)


def _moved_submodule(fullname: str) -> str | None:
    """The module serving a submodule of a moved module (``tvm.tir.op`` is ``tvm.tirx.op``), or
    None. Served as the same module object: loading the file again under the legacy name would
    run its registrations twice (``tvm.default_trace_action is already registered``)."""
    if not fullname.startswith("tvm."):
        return None
    prefixes = [p for p in LEGACY_MODULES if fullname.startswith(p + ".")]
    if not prefixes:
        return None
    legacy = max(prefixes, key=len)
    candidate = LEGACY_MODULES[legacy] + fullname.removeprefix(legacy)
    try:
        found = importlib.util.find_spec(candidate)
    except (ImportError, ValueError):
        return None
    return candidate if found is not None else None


def _exists(fullname: str, path: Any) -> bool:
    """True when a module file of ``fullname`` exists on ``path`` (TVM's own module)."""
    try:
        return importlib.machinery.PathFinder.find_spec(fullname, path) is not None
    except (ImportError, ValueError):
        return False


_finder: _RelayFinder | None = None
_lock = threads.fork_safe(threading.Lock())


def installed() -> bool:
    """Return True while the import alias is installed."""
    return _finder is not None and _finder in sys.meta_path


def install() -> None:
    """Serve ``tvm.relay`` (the Relay front end), the legacy engine modules and the TVM <=0.19
    names around them (every row of :data:`.moved_names.MOVED_NAMES`: ``tvm.autotvm``,
    ``tvm.nd``, ``tvm.context``, ``tvm.te.SpecializedCondition``, ...) on import.

    Off by default; idempotent; undone by :func:`uninstall`. See the module docstring for the
    effect on feature detection (``hasattr(tvm, "relay")`` and friends).
    """
    global _finder
    require_tvm("compile_engine_compat.install()")
    # install() is a first use: the legacy PassContext keys are accepted from here on.
    passconfig.install_from_env()
    with _lock:
        if _finder is None:
            _finder = _RelayFinder()
        add_meta_path_finder(_finder)
    # The moved names live on TVM's own modules, so TVM is imported here.
    for row in MOVED_NAMES:
        try:
            _set_moved(row)
        except ModuleNotFoundError as err:
            # A module that needs a package the user has not installed (tvm.testing imports
            # pytest, as TVM 0.19's did) is not served: importing it raises TVM's own error.
            if (err.name or "").partition(".")[0] in ("tvm", "compile_engine_compat"):
                raise
    for name in REFUSED_ATTRIBUTE_MODULES:
        parent, _, child = name.rpartition(".")
        if not hasattr(importlib.import_module(parent), child):
            importlib.import_module(name)  # a RefusedModule, set on its parent by the import
    # TVM's own modules of the TVM 0.19 list already imported (tvm, tvm.runtime, tvm.testing):
    # their unserved names are refused at the call from here on.
    for legacy in snapshot()["modules"]:
        module = sys.modules.get(legacy)
        if module is not None and not legacy.startswith("tvm.relay"):
            _refuse_unserved(legacy, module)
    # mod["main"] reads back as Relay in Relay-era code (the package's own reads stay Relax).
    install_module_view(
        _served_value(_MODULE_VIEW, imported=False), _served_value(_TYPE_DATA, imported=False)
    )


def uninstall() -> None:
    """Remove the import alias: ``tvm.relay`` is unimportable again and ``tvm.relay`` is unset.

    Every moved name :func:`install` set is removed (TVM's own ``tvm.device`` is back). The
    shim modules and the front end stay imported under their own names.
    """
    uninstall_module_view()
    for row in reversed(MOVED_NAMES):
        _unset_moved(row)
    _restore_unserved()
    with _lock:
        if _finder is not None:
            remove_meta_path_finder(_finder)
        for name in [n for n in sys.modules if n == "tvm.relay" or n.startswith("tvm.relay.")]:
            del sys.modules[name]
        # Refused stand-ins outside tvm.relay (tvm.topi.cuda) go too, with their attribute.
        for name in [n for n, m in sys.modules.items() if isinstance(m, RefusedModule)]:
            parent = sys.modules.get(name.rpartition(".")[0])
            child = name.rpartition(".")[2]
            if parent is not None and parent.__dict__.get(child) is sys.modules[name]:
                delattr(parent, child)
            del sys.modules[name]
        tvm = sys.modules.get("tvm")
        front_end = sys.modules.get(_FRONT_END)
        if tvm is not None and front_end is not None and tvm.__dict__.get("relay") is front_end:
            delattr(tvm, "relay")


# -- the moved names ----------------------------------------------------------------------------


def _owner_and_name(path: str, imported: bool) -> tuple[Any, str]:
    """``"tvm.runtime:Tensor.asnumpy"`` -> (``tvm.runtime.Tensor``, ``"asnumpy"``).

    With ``imported``, the module is taken from ``sys.modules`` only (None when not imported):
    what was never imported cannot have been patched.
    """
    module_name, _, attribute = path.partition(":")
    owner: Any = sys.modules.get(module_name) if imported else importlib.import_module(module_name)
    *parents, name = attribute.split(".")
    for parent in parents:
        owner = getattr(owner, parent, None)
    return owner, name


def _served_value(path: str, imported: bool) -> Any:
    """What ``"module:attribute"`` names (None when ``imported`` and the module is not)."""
    owner, name = _owner_and_name(path, imported)
    return getattr(owner, name, None) if owner is not None else None


def _set_moved(row: MovedName) -> None:
    """Set one moved name on TVM's modules (never hiding TVM's own, unless the row replaces it)."""
    if ":" not in row.legacy:
        if row.legacy.startswith("tvm.relay."):
            return  # served when imported (the finder reads LEGACY_MODULES): tvm.relay stays lazy
        parent_name, _, child = row.legacy.rpartition(".")
        parent = importlib.import_module(parent_name)
        if not hasattr(parent, child):
            served = importlib.import_module(row.legacy)  # the import system sets parent.child
            if parent.__dict__.get(child) is not served:
                patch_attribute(parent, child, served)
        return
    for owner, name, value in _attributes(row, imported=False):
        if owner.__dict__.get(name) is not value and (row.replaces or not hasattr(owner, name)):
            patch_attribute(owner, name, value)


def _unset_moved(row: MovedName) -> None:
    """Remove one moved name, where it is still the one :func:`_set_moved` set."""
    if ":" not in row.legacy:
        parent_name, _, child = row.legacy.rpartition(".")
        parent = sys.modules.get(parent_name)
        served = sys.modules.get(row.served_by)
        # A served package's own submodule (tvm._ffi.base is ...ffi.base): not ours to remove.
        own = (
            served is not None
            and parent is not None
            and served.__name__ == f"{parent.__name__}.{child}"
        )
        if parent is not None and served is not None and parent.__dict__.get(child) is served:
            if not own:
                restore_attribute(parent, child)
        if served is not None and sys.modules.get(row.legacy) is served:
            sys.modules.pop(row.legacy, None)
        return
    for owner, name, value in _attributes(row, imported=True):
        if owner.__dict__.get(name) is value:
            restore_attribute(owner, name)


def _attributes(row: MovedName, imported: bool) -> list[tuple[Any, str, Any]]:
    """(owner, name, value) of each attribute an attribute row (or a ``"module:*"`` row) sets.

    With ``imported``, only what is already imported (nothing else can have been set).
    """
    if row.legacy.endswith(":*"):
        module = row.legacy.removesuffix(":*")
        owner = sys.modules.get(module) if imported else importlib.import_module(module)
        served = (
            sys.modules.get(row.served_by) if imported else importlib.import_module(row.served_by)
        )
        if owner is None or served is None:
            return []
        return [(owner, name, getattr(served, name)) for name in served.__all__]
    owner, name = _owner_and_name(row.legacy, imported)
    value = _served_value(row.served_by, imported)
    return [] if owner is None or value is None else [(owner, name, value)]


def uninstall_pass_config() -> None:
    """Stop accepting the ``relay.backend.*`` PassContext keys (see ``_passconfig``)."""
    passconfig.uninstall()


# -- the refusal of the TVM 0.19 names nothing serves ---------------------------------------------

#: (owner, attribute, value) of each refusal :func:`_refuse_unserved` set, for uninstall.
_unserved: list[tuple[Any, str, Any]] = []


def _refuse_unserved_tree(legacy: str, module: types.ModuleType) -> None:
    """:func:`_refuse_unserved` for ``legacy`` served by ``module``, and for each listed
    submodule of it already imported under ``module``'s own name (``tvm.relay.analysis`` is
    ``compile_engine_compat.relay.analysis``, reached as ``relay.analysis`` without an import)."""
    served = module.__name__
    for name in snapshot()["modules"]:
        if name == legacy:
            _refuse_unserved(legacy, module)
        elif name.startswith(legacy + "."):
            sub = sys.modules.get(served + name.removeprefix(legacy))
            if sub is not None and not isinstance(sub, RefusedModule):
                _refuse_unserved(name, sub)


def _refuse_unserved(legacy: str, module: types.ModuleType) -> None:
    """Give ``module`` (serving the TVM 0.19 module ``legacy``) a refusal for every listed name
    it lacks, and its listed classes a refusal for every listed method they lack.

    A module ``__getattr__`` (PEP 562) consulted only for names the module does not define, and
    after the module's own ``__getattr__``: what the module serves always wins, today or later.
    A listed submodule the import alias serves is imported instead of refused (``tvm.relay``).
    """
    previous = module.__dict__.get("__getattr__")
    if isinstance(module, RefusedModule) or getattr(previous, "_legacy_fallback", False):
        return
    names = module_names(legacy)
    own = module.__name__

    def __getattr__(name: str) -> Any:
        fullname = f"{legacy}.{name}"
        known = name in names or fullname in legacy_modules()  # a name or a submodule
        said = None
        if previous is not None:
            try:
                return previous(name)
            except AttributeError as error:
                if not known:
                    raise
                said = str(error) if str(error).startswith(fullname) else None
        elif not known:
            raise AttributeError(f"module {own!r} has no attribute {name!r}")
        if fullname in legacy_modules() or fullname in LEGACY_MODULES:
            try:
                return importlib.import_module(fullname)
            except ImportError:
                pass
        found = route(fullname)
        if said is not None and "MIGRATION.md#" not in said:  # the module's own reason, routed
            said = f"{said.rstrip('.')}. See {found.docs}."
        return RefusedName(fullname, found.why, said)

    __getattr__._legacy_fallback = True  # type: ignore[attr-defined]
    _set_unserved(module, "__getattr__", __getattr__)
    for cls_name, methods in class_methods(legacy).items():
        cls = module.__dict__.get(cls_name)
        if not isinstance(cls, type) or is_refused(cls):
            continue
        for method in sorted(methods):
            if not hasattr(cls, method):
                fullname = f"{legacy}.{cls_name}.{method}"
                _set_unserved(cls, method, refused_name(fullname, route(fullname).why))


def _set_unserved(owner: Any, name: str, value: Any) -> None:
    patch_attribute(owner, name, value)
    _unserved.append((owner, name, value))


def _restore_unserved() -> None:
    """Remove every refusal :func:`_refuse_unserved` set (where it is still the one set)."""
    while _unserved:
        owner, name, value = _unserved.pop()
        if owner.__dict__.get(name) is value:
            restore_attribute(owner, name)
