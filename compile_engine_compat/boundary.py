"""Every private TVM or CPython name the package uses, in one place, each found by a probe.

A shim lives or dies by how it survives TVM's changes. The public API changes with a deprecation
cycle; these names change without one. So each is looked up here, once, by probing for the
feature (never by comparing version numbers), and :data:`PRIVATE_NAMES` says for each what it is
for and which TVM change would move it: ``tests/test_boundary.py`` resolves every entry and
fails naming that change the day a release moves one.

Every change the package makes to the process beyond its own modules goes through this module
too: attributes set on TVM's classes and modules (:func:`patch_attribute`, :func:`patched`),
the import finder (:func:`add_meta_path_finder`), the warnings filter
(:func:`insert_warnings_filter`), environment variables (:func:`set_environ`) and at-fork
handlers (:func:`at_fork_in_child`) and the functions TVM's libraries call back into
(:func:`register_context_symbol`). :func:`active_patches` says what is patched right now, and
:data:`PROCESS_PATCHES` lists each patch with its off switch and its test.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import importlib
import inspect
import os
import re
import subprocess
import sys
import tempfile
import threading
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from types import FrameType
from typing import Any

__all__ = [
    "NATIVE_LOG_ENV",
    "PRIVATE_NAMES",
    "PROCESS_PATCHES",
    "SAVE_JSON_BUG",
    "SET_BY_PACKAGE_ENV",
    "TVM_WARNING_LINE",
    "WORKING_FFI_RANGE",
    "PrivateName",
    "ProcessPatch",
    "active_patches",
    "add_meta_path_finder",
    "at_fork_in_child",
    "binding_block",
    "caller_frame",
    "connection_socket",
    "cpu_tensor_intrinsics",
    "dataflow_block",
    "env_raw",
    "ffi_function_address",
    "ffi_release",
    "give_type",
    "guarded_save_json",
    "handle_of",
    "insert_warnings_filter",
    "install_module_view",
    "onnx_export_symbolics",
    "onnx_float_converter",
    "onnx_import_with",
    "packed_imports_symbol",
    "pass_context_params",
    "patch_attribute",
    "patched",
    "register_context_symbol",
    "register_op_attr_if_absent",
    "register_tir_pipeline",
    "remove_meta_path_finder",
    "resolve",
    "restore_attribute",
    "save_json_crashes",
    "schedule_ffi",
    "set_by_user",
    "set_environ",
    "te_ffi",
    "tvm_warnings_dropped",
    "uninstall_module_view",
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
        "a warning points at the first frame outside the package (deprecations); "
        "mod[name] reads back as Relay for Relay-era callers only (install_module_view)",
        "a Python without sys._getframe (PyPy has it; warnings then point one frame up)",
    ),
    "env_raw": PrivateName(
        "os",
        "environ._data",
        "COMPILE_ENGINE_COMPAT_GENERIC_CPU read in 0.05 us on every cache-hit lower "
        "(pipeline.host_cpu); os.environ.get costs 0.8 us",
        "CPython stops keeping the bytes mapping under os.environ (the public get is used then)",
    ),
    "handle": PrivateName(
        "tvm_ffi",
        "Object.__chandle__",
        "a TVM object's address: an identity key for objects whose == builds an expression (TIR) "
        "or that take no attributes and no weak references (PassContext)",
        "tvm-ffi renames the handle accessor of its Object",
    ),
    "dataflow_block": PrivateName(
        "tvm.relax",
        "BlockBuilder._begin_dataflow_block",
        "the tracer opens a dataflow block in a scope it began itself (pipeline.trace); the public "
        "bb.dataflow() needs a bb.function() around it",
        "Relax renames BlockBuilder's block helpers (_begin_dataflow_block, _end_block)",
    ),
    "binding_block": PrivateName(
        "tvm.relax",
        "BlockBuilder._begin_binding_block",
        "each branch of a relay.If is built in a binding block of its own, inside the function's "
        "scope (relay.to_relax); the public API opens blocks only with a function around them",
        "Relax renames BlockBuilder's block helpers (_begin_binding_block, _end_block)",
    ),
    # -- upstream Relay test files (test_vm): calls between a module's front-end functions ----
    "update_type": PrivateName(
        "tvm.relax.expr",
        "_update_type",
        "a GlobalVar that relay code assigns a function to (mod[gv] = func) gets that "
        "function's type, so calls to it from other front-end functions type (relax.UpdateType)",
        "Relax renames its type-update helper (relax.expr._update_type, relax.UpdateType)",
    ),
    "filters_mutated": PrivateName(
        "warnings",
        "_filters_mutated",
        "after inserting the warning category's display filter, the per-module 'once' registries "
        "must be invalidated as warnings.filterwarnings does (deprecations)",
        "CPython renames it (3.14 keeps it; warnings.filterwarnings is the fallback then)",
    ),
    # -- relay.frontend.from_onnx: quantized ONNX ops the Relax importer has no converter for --
    "onnx_graph_importer": PrivateName(
        "tvm.relax.frontend.onnx.onnx_frontend",
        "ONNXGraphImporter._convert_operator",
        "from_onnx converts QLinear*/QGemm/ConvInteger nodes and folded QDQ groups with the "
        "shim's converters (relay.frontend.onnx_quantized) in a subclass of the importer, "
        "nothing patched: the public from_onnx takes no converter map",
        "Relax renames its ONNX importer class or its per-node _convert_operator hook",
    ),
    "onnx_convert_map": PrivateName(
        "tvm.relax.frontend.onnx.onnx_frontend",
        "_get_convert_map",
        "the importer's own float converters (AveragePool, Softmax, LeakyRelu...) run between "
        "the dequantize and quantize of a QLinear op, and its unsupported-op check counts the "
        "shim's converters",
        "Relax renames the ONNX importer's converter table function",
    ),
    "pass_context_params": PrivateName(
        "tvm.ir.transform",
        "PassContext.__init__",
        "the legacy-key wrapper finds config= among positional arguments by the parameter order "
        "(surfaces.passconfig)",
        "TVM reorders or renames PassContext.__init__'s parameters",
    ),
}


#: A converter of the shim's: ``(bb, inputs, attrs, params, opset) -> relax.Expr``.
OnnxConverter = Callable[[Any, Any, dict[str, Any], Any, int], Any]


def onnx_float_converter(op_type: str, opset: int) -> Callable[..., Any]:
    """The Relax ONNX importer's converter of ``op_type`` at ``opset``:
    ``(bb, inputs, attrs, params) -> relax.Expr`` (see :data:`PRIVATE_NAMES`)."""
    return resolve("onnx_convert_map")()[op_type].get_converter(opset)


@functools.cache
def _importer_class() -> type:
    resolve("onnx_graph_importer")  # the probe: fails naming the TVM change
    module = importlib.import_module("tvm.relax.frontend.onnx.onnx_frontend")
    base: type = module.ONNXGraphImporter
    convert_map = resolve("onnx_convert_map")
    not_mapped = {"If", "Constant"}  # the importer converts these itself

    class _Importer(base):
        converters: dict[str, OnnxConverter] = {}

        def _check_for_unsupported_ops(self, graph: Any) -> None:
            known = set(convert_map()) | set(self.converters) | not_mapped
            missing = sorted({node.op_type for node in graph.node} - known)
            if missing:
                import tvm

                raise tvm.error.OpNotImplemented(
                    "The following operators are not supported for frontend ONNX: "
                    + ", ".join(missing)
                )

        def _convert_operator(self, op_name: str, inputs: Any, attrs: Any, opset: int) -> Any:
            converter = self.converters.get(op_name)
            if converter is None:
                return super()._convert_operator(op_name, inputs, attrs, opset)
            expr = converter(self.bb, inputs, attrs, [self._nodes, self._params], opset)
            return self.bb.normalize(expr)

    return _Importer


def onnx_import_with(
    converters: dict[str, OnnxConverter],
    graph: Any,
    opset: int,
    shape_dict: dict[str, Any] | None,
    dtype_dict: Any,
    keep_params_in_input: bool,
    sanitize: bool,
) -> Any:
    """``graph`` (an ONNX ``GraphProto``) as a Relax ``IRModule`` by TVM's ONNX importer, the
    ops of ``converters`` converted by them instead (an instance's table: nothing patched)."""
    importer = _importer_class()(
        shape_dict, dtype_dict, keep_params_in_input=keep_params_in_input, sanitize=sanitize
    )
    importer.converters = converters
    return importer.from_onnx(graph, opset)


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


def handle_of(obj: Any) -> int:
    """The address of TVM object ``obj`` (see :data:`PRIVATE_NAMES` ``["handle"]``)."""
    return int(obj.__chandle__())


@contextlib.contextmanager
def dataflow_block(bb: Any) -> Iterator[Any]:
    """Keep a dataflow block of ``bb`` open inside the block (its scope is the caller's)."""
    bb._begin_dataflow_block()
    try:
        yield bb
    finally:
        bb._end_block()


class BlockResult:
    """What :func:`binding_block` collected: ``.result`` is the ``BindingBlock`` once closed."""

    result: Any = None


@contextlib.contextmanager
def binding_block(bb: Any) -> Iterator[BlockResult]:
    """A plain binding block of ``bb`` in the caller's scope (a branch of ``relax.If``); the
    closed block is ``.result`` of the yielded object. Same private names as
    :func:`dataflow_block` (``BlockBuilder._begin_binding_block``/``_end_block``)."""
    collected = BlockResult()
    bb._begin_binding_block()
    try:
        yield collected
    finally:
        collected.result = bb._end_block()


def give_type(expr: Any, ty: Any) -> None:
    """Set the Relax type of ``expr`` (a ``GlobalVar``) where it has none (see
    :data:`PRIVATE_NAMES` ``["update_type"]``)."""
    resolve("update_type")(expr, ty)


_PASS_CONTEXT_PARAMS = ("opt_level", "required_pass", "disabled_pass", "instruments", "config")


def pass_context_params() -> tuple[str, ...]:
    """PassContext.__init__'s parameter names in order, checked against the installed TVM.

    Raises
    ------
    ImportError
        When TVM reordered or renamed them (see :data:`PRIVATE_NAMES`).
    """
    entry = PRIVATE_NAMES["pass_context_params"]
    init = resolve("pass_context_params")
    owner = importlib.import_module(entry.module).PassContext
    patched_entry = _applied.get((id(owner), "__init__"))
    if patched_entry is not None:  # ours (surfaces.passconfig): probe TVM's own
        init = patched_entry[2]
    names = tuple(inspect.signature(init).parameters)[1:]
    if names[: len(_PASS_CONTEXT_PARAMS)] != _PASS_CONTEXT_PARAMS:
        raise ImportError(
            f"compile-engine-compat needs PassContext({', '.join(_PASS_CONTEXT_PARAMS)}), got "
            f"PassContext({', '.join(names)}): {entry.breaks_when}."
        )
    return _PASS_CONTEXT_PARAMS


# -- tvm.ir.save_json: guarded where the apache-tvm-ffi release in use crashes -------------------

#: What the guard stands in for, named in its refusal with the apache-tvm-ffi release at fault.
SAVE_JSON_BUG = (
    "its JSON serializer (tvm::ffi::ToJSONGraph) kills the interpreter (SIGSEGV) on a node with "
    "a plain DataType field (ir.PrimType, relax.TensorType, tirx.IntImm, every typed Relax or "
    "TIR expression and the functions and modules holding them); reproduce with "
    "`import tvm; tvm.ir.save_json(tvm.tirx.IntImm('int32', 3))`"
)
#: The apache-tvm-ffi releases whose serializer works with the apache-tvm 0.27 wheels: the range
#: pyproject.toml declares (tests/test_boundary_save_json.py checks that the two agree).
WORKING_FFI_RANGE = ">=0.1.14.post0,<0.1.15"
_PROBE = (
    "import tvm; tvm.ir.save_json(tvm.ir.PrimType('int32')); "
    "tvm.ir.save_json(tvm.tirx.IntImm('int32', 3)); print('survived')"
)


def ffi_release() -> str:
    """The apache-tvm-ffi release this process runs, as ``"<ffi> (with apache-tvm <tvm>)"``."""
    import tvm
    import tvm_ffi

    return f"{tvm_ffi.__version__} (with apache-tvm {tvm.__version__})"


def save_json_crashes() -> bool:
    """Whether the FFI release in use crashes in ``save_json`` on a DataType field.

    Probed in a child Python (the probe would kill this one) that imports the same TVM (this
    process's ``sys.path``), once per FFI release: a release that works is never guarded.
    """
    return _serializer_crashes(ffi_release())


@functools.cache
def _serializer_crashes(release: str) -> bool:
    """Run the probe; ``release`` (:func:`ffi_release`) is the cache key."""
    path = os.pathsep.join(entry or os.getcwd() for entry in sys.path)
    env = {**os.environ, "PYTHONFAULTHANDLER": "", "PYTHONPATH": path}
    probe = subprocess.run(
        [sys.executable, "-c", _PROBE], capture_output=True, text=True, timeout=300, env=env
    )
    return "survived" not in probe.stdout


@functools.cache
def _datatype_field(type_cls: type) -> str | None:
    """The first plain (non-optional) DataType field of an FFI class, or None."""
    info = getattr(type_cls, "__tvm_ffi_type_info__", None)
    while info is not None:
        for field in info.fields:
            if field.metadata.get("type_schema") == '{"type":"DataType"}':
                return f"{info.type_key}.{field.name}"
        info = info.parent_type_info
    return None


@functools.cache
def _field_names(type_cls: type) -> tuple[str, ...]:
    """Every reflected field of an FFI class, its ancestors' included."""
    names: list[str] = []
    info = getattr(type_cls, "__tvm_ffi_type_info__", None)
    while info is not None:
        names += [field.name for field in info.fields]
        info = info.parent_type_info
    return tuple(names)


def _crashing_field(node: Any) -> str | None:
    """A node of ``node``'s graph with a field TVM's serializer crashes on, as ``type.field``.

    Walks every reflected field (``tvm_ffi.structural_walk`` skips some, such as the ``ty`` of
    a TIR expression, which the serializer does write).
    """
    import tvm_ffi

    stack = [node]
    seen: set[int] = set()
    while stack:
        value = stack.pop()
        if not isinstance(value, tvm_ffi.Object):
            continue  # plain values (str, int, float, None) and tensors serialize
        key = handle_of(value)
        if key in seen:
            continue
        seen.add(key)
        if isinstance(value, tvm_ffi.Array | tvm_ffi.List):
            stack.extend(value)
            continue
        if isinstance(value, tvm_ffi.Map | tvm_ffi.Dict):
            stack.extend(value.keys())
            stack.extend(value.values())
            continue
        cls: Any = type(value)  # classes hash by identity (mypy reads FFI's __hash__ as not)
        field = _datatype_field(cls)
        if field is not None:
            return field
        for name in _field_names(cls):
            try:
                stack.append(getattr(value, name))
            except Exception:  # a field without a Python getter: its kind cannot crash here
                continue
    return None


def guarded_save_json(node: Any) -> str:
    """``tvm.ir.save_json`` that raises ``TypeError`` where TVM's serializer would crash.

    Served as ``tvm.ir.save_json`` by ``install()`` (a row of
    :data:`compile_engine_compat.surfaces.moved_names.MOVED_NAMES`). A front-end node is
    converted as TVM would convert it (its Relax form) and saved by TVM's own ``save_json``; it
    round-trips through ``tvm.ir.load_json``. Only where :func:`save_json_crashes` finds that the
    apache-tvm-ffi release in use crashes (:data:`SAVE_JSON_BUG`: 0.1.15.post1 and 0.1.15.post2,
    outside the declared range) is a graph holding a plain DataType field refused, naming the
    field, the release and the releases that work.
    """
    import tvm

    save = _tvm_save_json(tvm)
    converter = getattr(node, "__tvm_ffi_object__", None)
    value = converter() if callable(converter) else node
    if save_json_crashes():
        field = _crashing_field(value)
        if field is not None:
            raise TypeError(
                f"tvm.ir.save_json refuses {type(node).__qualname__}: its {field} field would "
                f"crash the process. apache-tvm-ffi {ffi_release()} is at fault: "
                f"{SAVE_JSON_BUG}. Install a release that works, pip install "
                f"'apache-tvm-ffi{WORKING_FFI_RANGE}' (the range compile-engine-compat declares), "
                "or serialize the module with tvm.compile(mod).export_library or TVMScript "
                "(mod.script())."
            )
    return str(save(value))


def _tvm_save_json(tvm: Any) -> Any:
    """TVM's own ``save_json`` (``tvm.ir.base``), which the guard may replace on ``tvm.ir``."""
    return importlib.import_module("tvm.ir.base").save_json if tvm else None


# -- op attributes the package adds to TVM's registry (relay.transform.gradient) -----------------
def register_op_attr_if_absent(op_name: str, attr_name: str, value: Any) -> bool:
    """Set TVM op ``op_name``'s attribute ``attr_name`` to ``value`` unless it has one already.

    TVM's op registry is process-wide and an attribute cannot be removed once set, so this
    only fills gaps: an attribute TVM (or the user) registered wins.

    Returns
    -------
    bool
        True when this call set it.
    """
    import tvm

    if tvm.ir.Op.get(op_name).get_attr(attr_name) is not None:
        return False
    tvm.ir.register_op_attr(op_name, attr_name, value)
    return True


# -- the process patches --------------------------------------------------------------------------

_patch_lock = threading.RLock()
#: (owner id, name) -> (owner, name, original value or _MISSING, nesting count of patched()).
_applied: dict[tuple[int, str], list[Any]] = {}
_MISSING = object()


def patch_attribute(owner: Any, name: str, value: Any) -> None:
    """Set ``owner.name = value``, remembering what was there for :func:`restore_attribute`."""
    with _patch_lock:
        key = (id(owner), name)
        if key not in _applied:
            _applied[key] = [owner, name, owner.__dict__.get(name, _MISSING), 0]
        setattr(owner, name, value)


def restore_attribute(owner: Any, name: str) -> None:
    """Put back what :func:`patch_attribute` replaced (remove it if nothing was there).

    An attribute the package set otherwise is removed: the submodule attribute the import system
    sets on a TVM module when the package's finder serves a legacy module (``tvm.nd``). Callers
    check that the attribute is the package's before they call this.
    """
    with _patch_lock:
        entry = _applied.pop((id(owner), name), None)
        if entry is None:
            if name in owner.__dict__:
                delattr(owner, name)
            return
        original = entry[2]
        if original is _MISSING:
            delattr(owner, name)
        else:
            setattr(owner, name, original)


@contextlib.contextmanager
def patched(owner: Any, name: str, value: Any) -> Iterator[None]:
    """``owner.name = value`` inside the block only; nested and concurrent uses share one patch."""
    key = (id(owner), name)
    with _patch_lock:
        if key not in _applied:
            patch_attribute(owner, name, value)
        _applied[key][3] += 1
    try:
        yield
    finally:
        with _patch_lock:
            entry = _applied[key]
            entry[3] -= 1
            if entry[3] == 0:
                restore_attribute(owner, name)


_symbolic_lock = threading.RLock()


def _custom_symbolic(registration: Any, name: str, opset: int) -> bool:
    """Whether a custom symbolic (the user's) is registered for ``name`` at ``opset``."""
    group = registration.registry.get_function_group(name)
    return group is not None and bool(group._functions.overridden(opset))


@contextlib.contextmanager
def onnx_export_symbolics(symbolics: dict[str, Callable[..., Any]], opset: int) -> Iterator[None]:
    """``symbolics`` registered as custom symbolics of torch's TorchScript ONNX exporter for the
    block only (over torch's own where torch refuses, as for ``bitwise_not`` of integers), but
    never over a custom one the user registered; unregistered after, which leaves torch's own
    (the registry's entry of an op torch has none for is removed, as before the block).
    One export at a time holds them (the registry is the process's)."""
    import torch
    from torch.onnx._internal.torchscript_exporter import registration

    with _symbolic_lock:
        known = set(registration.registry._registry)
        added = [name for name in symbolics if not _custom_symbolic(registration, name, opset)]
        for name in added:
            torch.onnx.register_custom_op_symbolic(name, symbolics[name], opset)
        try:
            yield
        finally:
            for name in added:
                torch.onnx.unregister_custom_op_symbolic(name, opset)
                if name not in known:  # an empty group would fail torch's later lookups
                    registration.registry._registry.pop(name, None)


#: Module names whose reads of ``mod[name]`` keep TVM's own result (the package, TVM's Python).
_OWN_READERS = ("compile_engine_compat", "tvm", "tvm_ffi")


def _own_reader(module_name: str | None) -> bool:
    if not module_name:
        return True
    return module_name.partition(".")[0] in _OWN_READERS


def install_module_view(
    view: Callable[[Any], Any], other_key: Callable[[Any, Any], Any] | None = None
) -> None:
    """``tvm.IRModule.__getitem__`` returning ``view(function)`` to Relay-era callers.

    The caller is the module of the frame reading ``mod[name]`` (:data:`PRIVATE_NAMES`
    ``["caller_frame"]``): the package's own reads and TVM's own Python get TVM's result
    unchanged; any other code gets what ``view`` makes of it (the Relay function behind a
    front-end Relax function). A key that is neither a name nor a ``GlobalVar`` (TVM's own
    ``__getitem__`` asserts on it) goes to ``other_key(mod, key)`` when given (Relay's
    ``mod[global_type_var]``). Undone by :func:`uninstall_module_view`.
    """
    import tvm

    owner = tvm.ir.IRModule
    current = owner.__dict__.get("__getitem__")
    if getattr(current, "_module_view", None) is view:
        return
    original = getattr(current, "__wrapped__", current)
    frame = _getframe
    if frame is None:  # no caller to tell apart: everyone gets TVM's own result
        return

    def __getitem__(self: Any, var: Any) -> Any:
        if other_key is not None and not isinstance(var, (str, tvm.ir.GlobalVar)):
            return other_key(self, var)
        found = original(self, var)
        if _own_reader(frame(1).f_globals.get("__name__")):
            return found
        return view(found)

    __getitem__.__wrapped__ = original  # type: ignore[attr-defined]
    __getitem__._module_view = view  # type: ignore[attr-defined]
    __getitem__.__doc__ = original.__doc__
    patch_attribute(owner, "__getitem__", __getitem__)


def uninstall_module_view() -> None:
    """Put TVM's own ``IRModule.__getitem__`` back (where :func:`install_module_view` set it)."""
    tvm = sys.modules.get("tvm")
    if tvm is None:
        return
    owner = tvm.ir.IRModule
    if getattr(owner.__dict__.get("__getitem__"), "_module_view", None) is not None:
        restore_attribute(owner, "__getitem__")


def active_patches() -> list[str]:
    """What the package has patched in this process right now, as ``"owner.name"`` texts."""
    with _patch_lock:
        entries = list(_applied.values())
    texts = [f"{_owner_name(owner)}.{name}" for owner, name, *_ in entries]
    texts += [f"sys.meta_path: {type(f).__qualname__}" for f in sys.meta_path if f in _finders]
    return sorted(texts)


def _owner_name(owner: Any) -> str:
    if isinstance(owner, type):
        return f"{owner.__module__}.{owner.__qualname__}"
    return str(getattr(owner, "__name__", type(owner).__qualname__))


_finders: list[Any] = []


def add_meta_path_finder(finder: Any) -> None:
    """Put ``finder`` first on ``sys.meta_path`` (once)."""
    with _patch_lock:
        if finder not in sys.meta_path:
            sys.meta_path.insert(0, finder)
        if finder not in _finders:
            _finders.append(finder)


def remove_meta_path_finder(finder: Any) -> None:
    """Take ``finder`` off ``sys.meta_path``."""
    with _patch_lock:
        if finder in sys.meta_path:
            sys.meta_path.remove(finder)
        if finder in _finders:
            _finders.remove(finder)


def insert_warnings_filter(position: int, entry: tuple[Any, ...]) -> None:
    """Insert ``entry`` into ``warnings.filters`` at ``position``, as ``filterwarnings`` would."""
    filters: Any = warnings.filters
    filters.insert(position, entry)
    mutated = getattr(warnings, "_filters_mutated", None)
    if mutated is not None:
        mutated()  # invalidates the 'once' registries (filterwarnings does the same)


#: The variables :func:`set_environ` set, as ``name=value;...``: child processes inherit both, so
#: a value the package set in a parent is not taken for the user's choice (:func:`set_by_user`).
SET_BY_PACKAGE_ENV = "COMPILE_ENGINE_COMPAT_SET_ENV"


def _set_by_package() -> dict[str, str]:
    pairs = os.environ.get(SET_BY_PACKAGE_ENV, "").split(";")
    return dict(pair.split("=", 1) for pair in pairs if "=" in pair)


def set_environ(name: str, value: str) -> None:
    """Set an environment variable the package decides (``TVM_NUM_THREADS``,
    ``TVM_THREAD_POOL_SPIN_COUNT``), recording that the package set it."""
    os.environ[name] = value
    recorded = {**_set_by_package(), name: value}
    os.environ[SET_BY_PACKAGE_ENV] = ";".join(f"{key}={val}" for key, val in recorded.items())


def set_by_user(name: str) -> bool:
    """Whether ``name`` is set to a value of the user's: set, and not to what :func:`set_environ`
    set it to, in this process or in a parent that passed its environment on."""
    value = os.environ.get(name)
    return value is not None and _set_by_package().get(name) != value


@functools.cache
def _ffi_library() -> ctypes.CDLL:
    import tvm_ffi.libinfo  # the library tvm_ffi itself loaded: dlopen returns the same handle

    return ctypes.CDLL(tvm_ffi.libinfo.find_libtvm_ffi())


def ffi_function_address(name: str) -> int:
    """The address of TVM-FFI's C function ``name`` (``TVMFFIErrorSetRaised``, ...).

    Raises
    ------
    ImportError
        When the loaded TVM-FFI library has no such function.
    """
    function = getattr(_ffi_library(), name, None)
    if function is None:
        raise ImportError(f"the TVM-FFI library has no C function {name}")
    return ctypes.cast(function, ctypes.c_void_p).value or 0


def register_context_symbol(name: str, address: int) -> None:
    """Make ``address`` the value of context symbol ``name`` in every TVM library loaded or
    JIT-compiled from now on (``__TVMBackendParallelLaunch``: the function its parallel loops call).

    TVM-FFI's public ``TVMFFIEnvModRegisterContextSymbol``: a library's context pointers are set
    from its registry, in registration order, when the library is loaded or its JIT starts, so
    this registration overrides TVM's own. Libraries already loaded keep what they had.

    Raises
    ------
    ImportError
        When TVM-FFI has no such registry (``TVMFFIEnvModRegisterContextSymbol``).
    RuntimeError
        When the registration fails.
    """
    register = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_char_p, ctypes.c_void_p)(
        ffi_function_address("TVMFFIEnvModRegisterContextSymbol")
    )
    if register(name.encode(), address) != 0:
        raise RuntimeError(f"TVMFFIEnvModRegisterContextSymbol({name!r}) failed")


@functools.cache
def packed_imports_symbol() -> str:
    """The symbol under which a shared library holds its packed imported modules.

    TVM's loader reads a library's imported modules (device code, a VM's bytecode and constants)
    from one byte array, packed by ``runtime.ModulePackImportsToTensor``. The cache writes those
    bytes itself (``cache/disk.py``); the array's name is read from what TVM's own C packer
    declares for a tiny module, once per process.

    Raises
    ------
    ImportError
        When TVM's C packer declares no such array any more (TVM changed how it packs imports).
    """
    import tvm
    from tvm import te

    x = te.placeholder((1,), name="x")
    func = te.create_prim_func([x, te.compute((1,), lambda i: x[i], name="y")])
    module = tvm.tirx.build(func.with_attr("global_symbol", "probe"), "llvm")
    text = tvm.get_global_func("runtime.ModulePackImportsToC")(module, False, "")
    found = re.search(r"const unsigned char (\w+)\[\d*\]\s*=", str(text))
    if found is None:
        raise ImportError(
            "compile-engine-compat reads the name of the packed-imports array from "
            "runtime.ModulePackImportsToC's output; TVM's C packer declares none any more. "
            "Report it with your TVM version."
        )
    return found.group(1)


def register_tir_pipeline(name: str, factory: Callable[..., Any]) -> None:
    """Register ``factory`` as TVM's TIR pipeline ``name`` (``tvm.compile(tir_pipeline=name)``),
    once: a name already registered is left as it is."""
    from tvm.tirx import compilation_pipeline

    if name not in compilation_pipeline.PIPELINE_MAP:
        compilation_pipeline.register_tir_pipeline(name, factory)


def at_fork_in_child(
    handler: Callable[[], object],
    before: Callable[[], object] | None = None,
    after_in_parent: Callable[[], object] | None = None,
) -> None:
    """Run ``handler`` in a forked child (and the optional lock pair around the fork)."""
    if before is not None and after_in_parent is not None:
        os.register_at_fork(before=before, after_in_parent=after_in_parent, after_in_child=handler)
    else:
        os.register_at_fork(after_in_child=handler)


def connection_socket(connection: Any) -> Any:
    """The socket of a connected redis-py connection (``Connection._sock``).

    The remote cache tier reads its one big reply (``GETRANGE``) off this socket itself, with a
    size cap checked as the length is announced and a deadline (``cache.resp``): redis-py would
    read whatever length a server announces. Not in :data:`PRIVATE_NAMES`, whose entries are
    resolved without a server: ``tests/cache/test_resp.py`` probes it on a real one.

    Raises
    ------
    ImportError
        When redis-py no longer keeps the socket there (redis-py renamed ``_sock``).
    """
    sock = getattr(connection, "_sock", None)
    if sock is None or not hasattr(sock, "recv_into"):
        raise ImportError(
            "compile-engine-compat reads remote cache replies off redis-py's Connection._sock; "
            f"{type(connection).__name__} has none: redis-py renamed it. Report it with your "
            "redis-py version."
        )
    return sock


# -- TVM's C++ log during the package's own steps ----------------------------------------------

#: A warning line of TVM's C++ log, as its runtime writes it to file descriptor 2:
#: ``[12:00:00] /project/src/runtime/vm/executable.cc:276: Warning: Scope Saving: global``.
TVM_WARNING_LINE = re.compile(rb"^\[\d\d:\d\d:\d\d\] \S+:\d+: Warning: ")
#: ``show`` lets TVM's C++ warnings through during the package's own steps too.
NATIVE_LOG_ENV = "COMPILE_ENGINE_COMPAT_NATIVE_LOG"
_stderr_lock = threading.RLock()


@contextlib.contextmanager
def tvm_warnings_dropped() -> Iterator[None]:
    """Drop the warning lines of TVM's C++ log written during the block; pass the rest on.

    For the package's own steps only (exporting and loading the libraries it builds): file
    descriptor 2 goes to a temporary file for the block, then every line that is not a TVM
    warning line (:data:`TVM_WARNING_LINE`) is written to the real stderr, in order; all of it if
    the block raised. Nothing written meanwhile is lost, only delayed to the block's end.
    ``COMPILE_ENGINE_COMPAT_NATIVE_LOG=show`` turns it off.
    """
    if os.environ.get(NATIVE_LOG_ENV, "").lower() == "show":
        yield
        return
    with _stderr_lock, tempfile.TemporaryFile() as capture:
        sys.stderr.flush()
        saved = os.dup(2)
        os.dup2(capture.fileno(), 2)
        failed = True
        try:
            yield
            failed = False
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            capture.seek(0)
            lines = capture.read().splitlines(keepends=True)
            kept = b"".join(line for line in lines if failed or not TVM_WARNING_LINE.match(line))
            if kept:
                os.write(2, kept)


# -- tvm.s_tir.tensor_intrin: the CPU intrinsics only, for tuning ---------------------------------
def cpu_tensor_intrinsics() -> None:
    """Import ``tvm.s_tir.tensor_intrin`` with its x86 intrinsics only, once per process.

    MetaSchedule imports the package whenever a tuning task is made; its ``__init__`` registers
    every family (CUDA's MMA, Arm, Hexagon, RISC-V...), each parsed from TVMScript, which took
    over 100 s on a loaded 2-core machine. The shim tunes ``llvm`` kernels, so the package is
    put in ``sys.modules`` without running its ``__init__`` and only ``x86`` (about 1 s) is
    imported; any other family still imports on demand (``tensor_intrin.cuda``). Nothing
    happens where the package was imported already.
    """
    name = "tvm.s_tir.tensor_intrin"
    if name in sys.modules:
        return
    import importlib.util

    import tvm.s_tir

    spec = importlib.util.find_spec(name)
    if spec is None or spec.submodule_search_locations is None:
        return
    package = importlib.util.module_from_spec(spec)
    sys.modules[name] = package
    tvm.s_tir.tensor_intrin = package
    try:
        importlib.import_module(f"{name}.x86")
    except BaseException:
        del sys.modules[name]
        del tvm.s_tir.tensor_intrin
        raise


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
        "off outside the shim's own traces: set by patched() while one runs, restored after (other "
        "threads meanwhile reach the original through it)",
        "tests/test_boundary.py, tests/pipeline/test_trace.py, "
        "tests/pipeline/test_trace_differential.py",
    ),
    ProcessPatch(
        "a warnings filter that shows CompileEngineDeprecationWarning, behind the user's filters",
        "deprecations",
        "COMPILE_ENGINE_COMPAT_WARN=off (calls are still counted)",
        "tests/test_deprecations_warnings.py",
    ),
    ProcessPatch(
        "sys.meta_path finder serving tvm.relay; the TVM <=0.19 names of surfaces.moved_names "
        "(tvm.autotvm, tvm.nd, tvm.context, tvm.device('llvm'), Tensor.asnumpy, "
        "te.SpecializedCondition, tvm.runtime.load_module (relay.build's exports reload as a "
        "factory), tvm.runtime.vm.VirtualMachine (a subclass with Relay's VM methods), "
        "Executable.time_evaluator, ...) set on TVM's modules",
        "surfaces.import_alias, reading surfaces.moved_names; served by tvm_legacy and relay "
        "(through add_meta_path_finder, patch_attribute)",
        "opt-in: compile_engine_compat.install(); uninstall() removes all of it",
        "tests/test_boundary.py, tests/surfaces/test_import_alias.py, "
        "tests/surfaces/test_moved_names.py, tests/relay/backend/test_export_reload.py",
    ),
    ProcessPatch(
        "tvm.target.Target.__init__ takes TVM <=0.19 command-line strings ('llvm -mcpu=...'), "
        "translated by targets.legacy_target_value (Relay programs end to end)",
        "surfaces.moved_names row tvm.target:Target.__init__, served by tvm_legacy.target "
        "(through patch_attribute)",
        "opt-in: compile_engine_compat.install(); uninstall() restores TVM's __init__; "
        "COMPILE_ENGINE_COMPAT_LEGACY_TARGETS=off passes strings to TVM untouched",
        "tests/test_targets_constructors.py, tests/surfaces/test_moved_names.py",
    ),
    ProcessPatch(
        "file descriptor 2 redirected while the package exports or loads a library it built (the "
        "compile cache, relay.build's export_library and its reload): TVM's C++ warning lines "
        "dropped, everything else written after the step",
        "boundary.tvm_warnings_dropped, used by cache.disk, facade.modules, tvm_legacy.runtime",
        "COMPILE_ENGINE_COMPAT_NATIVE_LOG=show",
        "tests/test_boundary_native_log.py",
    ),
    ProcessPatch(
        "tvm.ir.save_json replaced by guarded_save_json: a TypeError where the apache-tvm-ffi "
        "release in use would crash (a DataType field, probed once per release); TVM's own "
        "otherwise",
        "boundary (a row of surfaces.moved_names, set by install())",
        "opt-in: compile_engine_compat.install(); uninstall() puts TVM's own back",
        "tests/test_boundary_save_json.py",
    ),
    ProcessPatch(
        "tvm.s_tir.tensor_intrin imported without its __init__, with the x86 intrinsics only "
        "(the other families import on demand), when the package first tunes",
        "boundary.cpu_tensor_intrinsics, called by tvm_legacy.tune",
        "import tvm.s_tir.tensor_intrin before tuning (the package is then left as it is)",
        "tests/tvm_legacy/tune/test_tutorials.py",
    ),
    ProcessPatch(
        "torch's TorchScript ONNX exporter given the symbolics of relay.frontend."
        "pytorch_symbolics (aten ops it lacks or exports unlike torch: concat, cosh, "
        "bitwise_xor, addcdiv, l1_loss, threshold, softplus, ...), only those with no custom "
        "symbolic registered, for the length of one from_pytorch export",
        "boundary.onnx_export_symbolics, used by relay.frontend.pytorch with "
        "relay.frontend.pytorch_symbolics",
        "off outside from_pytorch's export: unregistered when it ends",
        "tests/relay/frontend/test_pytorch_symbolics.py",
    ),
    # -- upstream Relay test files (test_vm, test_type_infer, test_any) ------------------------
    ProcessPatch(
        "tvm.ir.IRModule.__getitem__ (mod[name]) gives Relay-era callers (neither the package "
        "nor TVM's Python) the typed Relay function behind a front-end Relax function",
        "boundary.install_module_view, wired by surfaces.import_alias with "
        "tvm_legacy.ir_module.irmodule_relay_view",
        "opt-in: compile_engine_compat.install(); uninstall() restores TVM's own",
        "tests/surfaces/test_module_view.py",
    ),
    ProcessPatch(
        "tvm.ir.IRModule._add (mod[name] = f) stores a front-end relay.Function as its Relax "
        "function, types its GlobalVar, and refuses what TVM 0.27 would drop silently; "
        "IRModule._add and IRModule.from_expr store the kernels a front-end function carries "
        "in the module beside it; "
        "GlobalVar.__call__ of Relay expressions builds a relay.Call; checked_type on Relax "
        "functions and vars; Device.device_type",
        "surfaces.moved_names rows, served by tvm_legacy.ir_module, tvm_legacy.device and "
        "relay.ty (through patch_attribute)",
        "opt-in: compile_engine_compat.install(); uninstall() restores TVM's own",
        "tests/relay/test_vm.py, tests/relay/test_ty.py, tests/tvm_legacy/test_upstream_names.py",
    ),
    ProcessPatch(
        "PassContext accepts the relay.backend.* and TVM <=0.19 config keys",
        "surfaces.passconfig (through patch_attribute)",
        "compile_engine_compat.uninstall_pass_config(); COMPILE_ENGINE_COMPAT_PASSCONFIG=off",
        "tests/test_boundary.py, tests/surfaces/test_passconfig.py, "
        "tests/surfaces/test_passconfig_legacy_keys.py",
    ),
    ProcessPatch(
        "TVM_NUM_THREADS set to the physical cores before TVM's pool starts; 1 in a forked child",
        "threads",
        "set TVM_NUM_THREADS (or OMP_NUM_THREADS) yourself",
        "tests/runtime/test_threads.py, tests/runtime/test_threads_fork.py",
    ),
    ProcessPatch(
        "__TVMBackendParallelLaunch registered as thread_pool.c's launcher (TVM-FFI's "
        "TVMFFIEnvModRegisterContextSymbol): the parallel loops of every library TVM loads or "
        "JIT-compiles afterwards run on the shim's pool",
        "thread_pool (through register_context_symbol), started by threads.configure",
        "COMPILE_ENGINE_COMPAT_THREAD_POOL=tvm, or set TVM_THREAD_POOL_SPIN_COUNT or "
        "TVM_BIND_THREADS (settings of TVM's pool)",
        "tests/runtime/test_thread_pool.py",
    ),
    ProcessPatch(
        "a TIR pipeline named 'compile_engine_compat' in TVM's registry (TVM's s_tir pipeline, "
        "then pipeline.prefetch.WeightPrefetch), used by the shim's own CPU builds only",
        "pipeline.prefetch (through register_tir_pipeline), on the first CPU build",
        "none needed: only builds that name it use it (the shim's kernels and relay.build)",
        "tests/pipeline/test_prefetch.py",
    ),
    ProcessPatch(
        "TVM_THREAD_POOL_SPIN_COUNT set to 0 before TVM's pool starts: its workers sleep between "
        "kernels instead of spinning (~50 ms of a core each time) against other libraries' "
        "spinning threads (NumPy's OpenBLAS)",
        "threads",
        "set TVM_THREAD_POOL_SPIN_COUNT yourself (TVM's default is 300000)",
        "tests/runtime/test_threads_spin.py",
    ),
    ProcessPatch(
        "at-fork handlers freeing the package's locks in a child, and the ledger writer's; the "
        "compile cache's counters and remote tier start afresh in a child",
        "threads, facade.engine, deprecations, migrate.ledger_io, cache.stats, cache.remote",
        "none needed: they only act in a forked child",
        "tests/runtime/test_threads_fork.py, tests/test_deprecations_ledger.py, "
        "tests/cache/test_remote.py",
    ),
    # -- relay.transform.gradient: Relax gradients of elementwise ops TVM 0.27 leaves out -----
    ProcessPatch(
        "FPrimalGradient registered on relax.erf, tan, atan, sinh, cosh, asin, acos, asinh, "
        "acosh, atanh (their derivatives), only where TVM has none",
        "relay._impl.gradient (through register_op_attr_if_absent)",
        "registered on the first relay.transform.gradient / check_grad call; never replaces "
        "an attribute TVM (or the user) set",
        "tests/relay/_impl/test_gradient_ops.py",
    ),
    ProcessPatch(
        "get_visitors of libcst's ScopeProvider, ExpressionContextProvider, "
        "QualifiedNameProvider, PositionProvider and ParentNodeProvider: the same visitor "
        "methods, their names looked up once per class instead of at every traversal",
        "migrate.lean_libcst (through patch_attribute), when scan or fix makes its first wrapper",
        "none needed: the same methods; restore_attribute(provider, 'get_visitors') puts "
        "libcst's back",
        "tests/migrate/test_lean_metadata.py",
    ),
    ProcessPatch(
        "a kernel hook around jit's kernels (shadow mode)",
        "testing.shadow -> facade.engine.set_kernel_hook",
        "COMPILE_ENGINE_COMPAT_SHADOW unset (the default); shadow_mode(False)",
        "tests/testing/test_shadow.py",
    ),
)
