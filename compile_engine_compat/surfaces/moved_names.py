"""The TVM <=0.19 names outside ``tvm.relay`` that ``install()`` serves: one table, one row each.

As six keeps its moved names, each row says where a legacy program looks for a name and what
serves it on modern TVM, both as strings:

* a module: ``MovedName("tvm.nd", "compile_engine_compat.tvm_legacy.nd")``: ``import tvm.nd``
  imports the serving module, and ``tvm.nd`` is set on ``tvm`` while installed;
* an attribute, ``"module.path:attribute"`` (dotted for a class attribute):
  ``MovedName("tvm.runtime:Tensor.asnumpy", "compile_engine_compat.tvm_legacy.nd:asnumpy")``;
* every name of a module, ``"module.path:*"`` served by a module: each name of the serving
  module's ``__all__`` is set on the legacy module (``tvm.testing``'s decorators).

A name is only set where TVM lacks it, unless its row ``replaces`` TVM's own (``tvm.device``,
which TVM 0.27 still has but without the target names it took).

This module is data only and imports nothing: ``install()``
(:mod:`compile_engine_compat.surfaces.import_alias`) resolves the strings when it runs, and
``uninstall()`` undoes exactly what it set. Adding a name is one row here plus its
implementation (under :mod:`compile_engine_compat.tvm_legacy`, or wherever it already lives).
The ``tvm.relay`` tree itself is not listed: the import alias serves it by path from
:mod:`compile_engine_compat.relay`.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["MOVED_NAMES", "MovedName"]


@dataclass(frozen=True)
class MovedName:
    """One TVM <=0.19 name, and what serves it now.

    Attributes
    ----------
    legacy : str
        Where legacy code finds it: a module path (``"tvm.autotvm"``), or ``"module:attribute"``
        (``"tvm:context"``; ``"tvm.runtime:Tensor.asnumpy"`` for an attribute of a class), or
        ``"module:*"`` for the names of a whole serving module.
    served_by : str
        A module path for a module or a ``"module:*"`` row; ``"module:attribute"`` for an
        attribute.
    replaces : bool
        For an attribute TVM still has: replace it while installed. Otherwise a name TVM has
        is left alone.
    """

    legacy: str
    served_by: str
    replaces: bool = False


_RELAY_IMPL = "compile_engine_compat.relay._impl"
_LEGACY = "compile_engine_compat.tvm_legacy"
_RELAY = "compile_engine_compat.relay"

#: Every moved name, modules first. The one source of what ``install()`` sets outside tvm.relay.
MOVED_NAMES: tuple[MovedName, ...] = (
    # -- modules ------------------------------------------------------------------------------
    MovedName("tvm.autotvm", f"{_LEGACY}.autotvm"),
    MovedName("tvm.nd", f"{_LEGACY}.nd"),
    MovedName("tvm.contrib.graph_executor", f"{_LEGACY}.graph_executor"),
    MovedName("tvm.tir", "tvm.tirx"),
    # Relay programs end to end (tuning): auto_scheduler, autotvm.tuner.
    MovedName("tvm.auto_scheduler", f"{_LEGACY}.auto_scheduler"),
    MovedName("tvm.autotvm.tuner", f"{_LEGACY}.autotvm.tuner"),
    MovedName("tvm.meta_schedule", f"{_LEGACY}.meta_schedule"),
    MovedName("tvm.meta_schedule.relay_integration", f"{_LEGACY}.meta_schedule.relay_integration"),
    # The names upstream-style Relay test suites import (tvm.testing, tvm.contrib, tvm._ffi).
    MovedName("tvm.contrib.utils", "tvm.support.utils"),
    MovedName("tvm.contrib.nvcc", f"{_LEGACY}.nvcc"),
    MovedName("tvm.contrib.relay_viz", f"{_LEGACY}.relay_viz"),
    MovedName("tvm.contrib.relay_viz.interface", f"{_LEGACY}.relay_viz.interface"),
    MovedName("tvm.contrib.relay_viz.terminal", f"{_LEGACY}.relay_viz.terminal"),
    MovedName("tvm.contrib.relay_viz.dot", f"{_LEGACY}.relay_viz.dot"),
    MovedName("tvm.runtime.container", f"{_LEGACY}.container"),
    MovedName("tvm.container", f"{_LEGACY}.container"),
    MovedName("tvm._ffi", f"{_LEGACY}.ffi"),
    MovedName("tvm._ffi.base", f"{_LEGACY}.ffi.base"),
    MovedName("tvm.script.tir", "tvm.script.tirx"),
    MovedName("tvm.testing.plugin", f"{_LEGACY}.testing_plugin"),
    # upstream Relay test files (test_any's helpers import it): the renderer hooks.
    MovedName("tvm.ir.diagnostics", f"{_LEGACY}.diagnostics"),
    # The TVM 0.19 surface (tests/upstream/census.py): modules TVM 0.27 moved, served as they are.
    MovedName("tvm.contrib.cc", "tvm.support.cc"),
    MovedName("tvm.contrib.tar", "tvm.support.tar"),
    MovedName("tvm.runtime.ndarray", f"{_LEGACY}.nd"),
    MovedName("tvm.runtime.name_transforms", f"{_LEGACY}.name_transforms"),
    MovedName("tvm.ir.supply:*", f"{_LEGACY}.supply"),
    MovedName("tvm.contrib.graph_runtime", f"{_LEGACY}.graph_executor"),
    # Feature checks and registries of removed features: kept, their use refused at the call.
    MovedName("tvm.contrib.pipeline_executor", f"{_LEGACY}.pipeline_executor"),
    MovedName("tvm.contrib.pipeline_executor_build", f"{_LEGACY}.pipeline_executor_build"),
    MovedName("tvm.target.datatype", f"{_LEGACY}.datatype"),
    MovedName("tvm.utils", f"{_LEGACY}.utils"),
    MovedName("tvm.utils.roofline", f"{_LEGACY}.utils.roofline"),
    # upstream's test_pass_convert_op_layout imports the quantizer's private annotation helpers.
    MovedName("tvm.relay.quantize._annotate", f"{_RELAY}.quantize.simulated"),
    # -- attributes ---------------------------------------------------------------------------
    MovedName("tvm:context", f"{_LEGACY}.device:context"),
    *(
        MovedName(f"{module}:{alias}", f"{_LEGACY}.device:{alias}")
        for module in ("tvm", "tvm.runtime")
        for alias in ("gpu", "cl", "mtl")
    ),
    # TVM 0.19's tvm.runtime names: the FFI's classes under their old names.
    # tvm.tir.Any(): a dimension known only at run time (relay.Any, a fresh shape variable).
    MovedName("tvm.tirx:Any", "compile_engine_compat.relay.ty:Any"),
    MovedName(
        "tvm.tirx.transform:LowerCustomDatatypes", f"{_LEGACY}.datatype:LowerCustomDatatypes"
    ),
    MovedName("tvm.support:libinfo", f"{_LEGACY}.support:libinfo", replaces=True),
    MovedName("tvm.runtime:PackedFunc", "tvm_ffi:Function"),
    MovedName("tvm.runtime:ObjectGeneric", "tvm_ffi:ObjectConvertible"),
    MovedName("tvm.runtime:String", f"{_LEGACY}.runtime:String"),
    MovedName("tvm.runtime:ObjectTypes", f"{_LEGACY}.runtime:ObjectTypes"),
    MovedName("tvm.runtime:convert_to_object", "tvm.runtime:convert"),
    MovedName("tvm.runtime.vm:convert", "tvm.runtime:convert"),
    MovedName("tvm:device", f"{_LEGACY}.device:device", replaces=True),
    MovedName("tvm.runtime:Tensor.asnumpy", f"{_LEGACY}.nd:asnumpy"),
    MovedName("tvm.runtime:NDArray", f"{_LEGACY}.nd:NDArray"),
    MovedName("tvm.target:generic_func", f"{_LEGACY}.target:generic_func"),
    MovedName("tvm.target:VirtualDevice", f"{_LEGACY}.virtual_device:VirtualDevice"),
    MovedName(
        "tvm.target:make_compilation_config", f"{_LEGACY}.virtual_device:make_compilation_config"
    ),
    MovedName("tvm.target:Target.max_function_args", f"{_LEGACY}.target:max_function_args"),
    MovedName("tvm.target:GenericFunc", f"{_LEGACY}.target:GenericFunc"),
    MovedName("tvm.target:get_native_generic_func", f"{_LEGACY}.target:get_native_generic_func"),
    MovedName(
        "tvm.target:override_native_generic_func", f"{_LEGACY}.target:override_native_generic_func"
    ),
    MovedName(
        "tvm.te:SpecializedCondition", "compile_engine_compat.relay.op.op:SpecializedCondition"
    ),
    # Relay programs end to end: DLPack on tensors; TVM <=0.19 target spellings on tvm.target.
    MovedName("tvm.runtime:Tensor.to_dlpack", f"{_LEGACY}.nd:to_dlpack"),
    MovedName("tvm.target:Target.__init__", f"{_LEGACY}.target:legacy_target_init", replaces=True),
    *(
        MovedName(f"tvm.target:{name}", f"{_LEGACY}.target:{name}")
        for name in (
            "cuda",
            "rocm",
            "mali",
            "intel_graphics",
            "arm_cpu",
            "rasp",
            "bifrost",
            "adreno",
            "riscv_cpu",
            "stm32",
            "create",
        )
    ),
    # -- Relay programs end to end: reloading relay.build's export, the Relay VM's methods ------
    MovedName("tvm.runtime:load_module", f"{_LEGACY}.runtime:load_module", replaces=True),
    MovedName(
        "tvm.runtime:Executable.time_evaluator", f"{_LEGACY}.runtime:executable_time_evaluator"
    ),
    MovedName(
        "tvm.runtime.vm:VirtualMachine", f"{_LEGACY}.runtime_vm:VirtualMachine", replaces=True
    ),
    MovedName("tvm.te:size_var", f"{_LEGACY}.te:size_var"),
    # TOPI's legalization hooks of TVM 0.19 (generic over the target): Relay graph rewrites.
    MovedName("tvm.topi.nn:conv2d_legalize", f"{_RELAY}.transform.topi_legalize:conv2d_legalize"),
    MovedName("tvm.topi.nn:dense_legalize", f"{_RELAY}.transform.topi_legalize:dense_legalize"),
    MovedName(
        "tvm.topi.nn:batch_matmul_legalize",
        f"{_RELAY}.transform.topi_legalize:batch_matmul_legalize",
    ),
    MovedName("tvm.error:TVMError", f"{_LEGACY}.ffi.base:TVMError"),
    MovedName("tvm:TVMError", f"{_LEGACY}.ffi.base:TVMError"),
    # relay.ext.<compiler> codegens are kept as Python functions too (they take Relay).
    MovedName(
        "tvm:register_func", "compile_engine_compat.relay._impl.external_codegen:register_func"
    ),
    MovedName("tvm:convert", "tvm.runtime:convert"),
    # Relay's structural equality on two Relay expressions (the pattern tests compare graphs).
    MovedName(
        "tvm.ir:structural_equal", "compile_engine_compat.relay._impl.structural:structural_equal"
    ),
    MovedName(
        "tvm.ir:assert_structural_equal",
        "compile_engine_compat.relay._impl.structural:assert_structural_equal",
        replaces=True,
    ),
    MovedName("tvm.ir:make_node", f"{_LEGACY}.ir_node:make_node", replaces=True),
    MovedName("tvm.ir:register_op_attr", f"{_LEGACY}.ir_node:register_op_attr", replaces=True),
    # Relay's type relations as EnvFuncs (test_type_solver, test_type_functor build them).
    MovedName("tvm.ir:EnvFunc.get", f"{_LEGACY}.ir_node:env_func_get", replaces=True),
    MovedName(
        "tvm.ir:structural_hash",
        "compile_engine_compat.relay._impl.structural_hash:structural_hash",
    ),
    MovedName("tvm.testing:*", f"{_LEGACY}.testing"),
    # TVM 0.19 defined them in tvm.testing.utils, which tvm.testing re-exported.
    MovedName("tvm.testing.utils:*", f"{_LEGACY}.testing"),
    # -- upstream Relay test files (test_vm, test_type_infer): mod["main"] = relay_func ----------
    MovedName("tvm.ir:IRModule._add", f"{_LEGACY}.ir_module:legacy_irmodule_add", replaces=True),
    # The kernels a front-end function carries are stored in the module beside it.
    MovedName(
        "tvm.ir:IRModule.from_expr", f"{_LEGACY}.ir_module:legacy_irmodule_from_expr", replaces=True
    ),
    MovedName(
        "tvm.ir:GlobalVar.__call__", f"{_LEGACY}.ir_module:legacy_global_call", replaces=True
    ),
    # IRModule.astext() and str(mod): Relay's text for a module the front end built.
    MovedName("tvm.ir:IRModule.astext", f"{_LEGACY}.ir_module:irmodule_astext"),
    MovedName("tvm.ir:IRModule.__str__", f"{_LEGACY}.ir_module:irmodule_str", replaces=True),
    # Relay's standard library (prelude.rly, nat.rly) and ADT declarations: evaluated by the
    # interpreter (relay.create_executor("debug")).
    MovedName("tvm.ir:IRModule.import_from_std", f"{_LEGACY}.ir_module:irmodule_import_from_std"),
    MovedName("tvm.ir:IRModule.get_type", f"{_LEGACY}.ir_module:irmodule_get_type"),
    MovedName(
        "tvm.ir:IRModule.get_global_type_var", f"{_LEGACY}.ir_module:irmodule_get_global_type_var"
    ),
    MovedName(
        "tvm.ir:IRModule.get_global_type_vars",
        f"{_LEGACY}.ir_module:irmodule_get_global_type_vars",
    ),
    MovedName("tvm.ir:IRModule.get_constructor", f"{_LEGACY}.ir_module:irmodule_get_constructor"),
    MovedName("tvm.runtime.vm:Executable", "compile_engine_compat.relay.vm:Executable"),
    MovedName("tvm.runtime:Device.device_type", f"{_LEGACY}.device:device_type"),
    MovedName(
        "tvm.relax:Function.checked_type", "compile_engine_compat.relay.ty:relax_checked_type"
    ),
    MovedName("tvm.relax:Var.checked_type", "compile_engine_compat.relay.ty:relax_checked_type"),
    # mod["main"].body of a front-end module is a SeqExpr (test_typecall reads its type).
    MovedName(
        "tvm.relax:SeqExpr.checked_type", "compile_engine_compat.relay.ty:relax_checked_type"
    ),
    # Relay-era frontend tests read Relay's names off the Relax parameters of a module.
    MovedName("tvm.relax:Var.name_hint", f"{_LEGACY}.relax_var:name_hint"),
    MovedName("tvm.relax:Var.type_annotation", "compile_engine_compat.relay.ty:relax_checked_type"),
    # TVM 0.27's save_json crashes on typed nodes: a TypeError instead (boundary's guard).
    MovedName(
        "tvm.ir:save_json", "compile_engine_compat.boundary:guarded_save_json", replaces=True
    ),
)
