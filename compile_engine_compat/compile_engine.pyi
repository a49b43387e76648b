# Generated from compile_engine_compat/api_table.py by `python -m compile_engine_compat.migrate.stubs`.
# Do not edit: PEP 702 marks for type checkers; the runtime warnings come from the shim itself.

from typing import Any, Literal

import collections.abc
import compile_engine_compat.facade.engine
import compile_engine_compat.facade.legacy_strategy
import compile_engine_compat.facade.objects
import compile_engine_compat.runtime.kernel
import logging
import tvm.te.tensor
from typing_extensions import deprecated

from compile_engine_compat.facade.engine import LoweringError as LoweringError
from compile_engine_compat.facade.objects import CachedFunc as CachedFunc
from compile_engine_compat.pipeline.implementations import OpImplementation as OpImplementation
from compile_engine_compat.pipeline.implementations import register_implementation as register_implementation
from compile_engine_compat.pipeline.implementations import temp_strategy as temp_strategy
from compile_engine_compat.pipeline.implementations import unregister_implementation as unregister_implementation

__all__ = ['CCacheKey', 'CCacheValue', 'CachedFunc', 'CompileEngine', 'LoweredOutput', 'LoweringError', 'OpImplementation', 'autotvm_logger', 'get', 'get_shape', 'get_valid_implementations', 'logger', 'lower_call', 'register_implementation', 'select_implementation', 'temp_strategy', 'unregister_implementation']

@deprecated("compile_engine.CCacheKey is deprecated as of TVM 0.8 and will be removed in compile-engine-compat 1.0. Use (tvm_ffi.StructuralKey(func), str(target)) as your own cache's key. See MIGRATION.md#compile-engine-ccachekey (run `compile-engine-compat docs CEC112`)")
class CCacheKey(compile_engine_compat.facade.objects.CCacheKey):
    ...

@deprecated('compile_engine.CCacheValue is deprecated as of TVM 0.8 and will be removed in compile-engine-compat 1.0. Use the tvm.runtime.Executable returned by tvm.compile. See MIGRATION.md#compile-engine-ccachevalue (run `compile-engine-compat docs CEC113`)')
class CCacheValue(compile_engine_compat.facade.objects.CCacheValue):
    ...

@deprecated('compile_engine.CompileEngine is deprecated as of TVM 0.8 and will be removed in compile-engine-compat 1.0. Use no engine object: tvm.compile + relax.VirtualMachine. See MIGRATION.md#compile-engine-compileengine (run `compile-engine-compat docs CEC103`)')
class CompileEngine(compile_engine_compat.facade.engine.CompileEngine):
    @deprecated("compile_engine.CompileEngine.lower is deprecated as of TVM 0.8 and will be removed in compile-engine-compat 1.0. Use mod = relax.transform.LegalizeOps()(IRModule({'main': func})); or trace to TE and te.create_prim_func(inputs + outputs). See MIGRATION.md#compile-engine-compileengine-lower (run `compile-engine-compat docs CEC104`)")
    def lower(self, source_func: Any, target: Any = ..., mod_name: str = ...) -> compile_engine_compat.facade.objects.CachedFunc: ...
    @deprecated('compile_engine.CompileEngine.lower_shape_func is deprecated as of TVM 0.8 and will be removed in compile-engine-compat 1.0. Use relax.transform.VMShapeLower computes shapes inside the VM. See MIGRATION.md#compile-engine-compileengine-lower-shape-func (run `compile-engine-compat docs CEC108`)')
    def lower_shape_func(self, source_func: Any, target: Any = ...) -> compile_engine_compat.facade.objects.CachedFunc: ...
    @deprecated("compile_engine.CompileEngine.jit is deprecated as of TVM 0.8 and will be removed in compile-engine-compat 1.0. Use ex = tvm.compile(IRModule({'main': func}), target); relax.VirtualMachine(ex, dev)['main'](*args). See MIGRATION.md#compile-engine-compileengine-jit (run `compile-engine-compat docs CEC105`)")
    def jit(self, source_func: Any, target: Any = ...) -> compile_engine_compat.runtime.kernel.Kernel: ...
    @deprecated('compile_engine.CompileEngine.lower_many is deprecated as of TVM 0.8 and will be removed in compile-engine-compat 1.0. Use put the functions in one IRModule and call tvm.compile(mod, target) once. See MIGRATION.md#compile-engine-compileengine-lower-many (run `compile-engine-compat docs CEC501`)')
    def lower_many(self, funcs: collections.abc.Sequence[Any], target: Any = ..., mod_name: str = ...) -> list[compile_engine_compat.facade.objects.CachedFunc]: ...
    @deprecated('compile_engine.CompileEngine.jit_many is deprecated as of TVM 0.8 and will be removed in compile-engine-compat 1.0. Use put the functions in one IRModule and call tvm.compile(mod, target) once. See MIGRATION.md#compile-engine-compileengine-jit-many (run `compile-engine-compat docs CEC502`)')
    def jit_many(self, funcs: collections.abc.Sequence[Any], target: Any = ...) -> list[compile_engine_compat.runtime.kernel.Kernel]: ...
    @deprecated('compile_engine.CompileEngine.clear is deprecated as of TVM 0.8 and will be removed in compile-engine-compat 1.0. Use nothing to clear: tvm.compile keeps no global cache. See MIGRATION.md#compile-engine-compileengine-clear (run `compile-engine-compat docs CEC106`)')
    def clear(self) -> None: ...
    @deprecated('compile_engine.CompileEngine.items is deprecated as of TVM 0.8 and will be removed in compile-engine-compat 1.0. Use keep your own dict of tvm_ffi.StructuralKey(func) -> tvm.compile(...) results. See MIGRATION.md#compile-engine-compileengine-items (run `compile-engine-compat docs CEC107`)')
    def items(self) -> list[tuple[compile_engine_compat.facade.objects.CCacheKey, compile_engine_compat.facade.objects.CCacheValue]]: ...
    @deprecated('compile_engine.CompileEngine.shape_func_items is deprecated as of TVM 0.8 and will be removed in compile-engine-compat 1.0. Use relax.transform.VMShapeLower computes shapes inside the VM. See MIGRATION.md#compile-engine-compileengine-shape-func-items (run `compile-engine-compat docs CEC109`)')
    def shape_func_items(self) -> list[tuple[compile_engine_compat.facade.objects.CCacheKey, compile_engine_compat.facade.objects.CCacheValue]]: ...
    @deprecated('compile_engine.CompileEngine.get_current_ccache_key is deprecated as of TVM 0.8 and will be removed in compile-engine-compat 1.0. Use keep the tvm_ffi.StructuralKey(func) you compiled last. See MIGRATION.md#compile-engine-compileengine-get-current-ccache-key (run `compile-engine-compat docs CEC110`)')
    def get_current_ccache_key(self) -> compile_engine_compat.facade.objects.CCacheKey | None: ...
    @deprecated('compile_engine.CompileEngine.dump is deprecated as of TVM 0.8 and will be removed in compile-engine-compat 1.0. Use print(mod.script()) for the Relax IRModule and its lowered PrimFuncs. See MIGRATION.md#compile-engine-compileengine-dump (run `compile-engine-compat docs CEC111`)')
    def dump(self) -> str: ...

@deprecated('compile_engine.LoweredOutput is deprecated as of TVM 0.8 and will be removed in compile-engine-compat 1.0. Use the te.Tensor outputs of your compute function. See MIGRATION.md#compile-engine-loweredoutput (run `compile-engine-compat docs CEC114`)')
class LoweredOutput(compile_engine_compat.facade.legacy_strategy.LoweredOutput):
    ...

autotvm_logger: logging.Logger

@deprecated('compile_engine.get is deprecated as of TVM 0.8 and will be removed in compile-engine-compat 1.0. Use no global engine: call tvm.compile(mod, target) per module. See MIGRATION.md#compile-engine-get (run `compile-engine-compat docs CEC102`)')
def get() -> CompileEngine: ...

@deprecated('compile_engine.get_shape is deprecated as of TVM 0.8 and will be removed in compile-engine-compat 1.0. Use shapes are already int64 PrimExprs: list(tensor_type.shape.values). See MIGRATION.md#compile-engine-get-shape (run `compile-engine-compat docs CEC116`)')
def get_shape(shape: collections.abc.Sequence[Any]) -> list[Any]: ...

@deprecated("compile_engine.get_valid_implementations is deprecated as of TVM 0.8 and will be removed in compile-engine-compat 1.0. Use tvm.ir.Op.get(name).get_attr('FLegalize') (one implementation per op). See MIGRATION.md#compile-engine-get-valid-implementations (run `compile-engine-compat docs CEC118`)")
def get_valid_implementations(op: Any, attrs: Any, inputs: collections.abc.Sequence[tvm.te.tensor.Tensor], out_type: Any, target: Any) -> list[OpImplementation]: ...

logger: logging.Logger

@deprecated("compile_engine.lower_call is deprecated as of TVM 0.8 and will be removed in compile-engine-compat 1.0. Use tvm.ir.Op.get(name).get_attr('FLegalize')(bb, call). See MIGRATION.md#compile-engine-lower-call (run `compile-engine-compat docs CEC115`)")
def lower_call(call: Any, inputs: collections.abc.Sequence[tvm.te.tensor.Tensor], target: Any, otype: Any = ...) -> LoweredOutput: ...

@deprecated("compile_engine.select_implementation is deprecated as of TVM 0.8 and will be removed in compile-engine-compat 1.0. Use tvm.ir.Op.get(name).get_attr('FLegalize') (one implementation per op). See MIGRATION.md#compile-engine-select-implementation (run `compile-engine-compat docs CEC117`)")
def select_implementation(op: Any, attrs: Any, inputs: collections.abc.Sequence[tvm.te.tensor.Tensor], out_type: Any, target: Any, use_autotvm: bool = ...) -> tuple[OpImplementation, list[tvm.te.tensor.Tensor]]: ...
