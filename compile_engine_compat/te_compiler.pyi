# Generated from compile_engine_compat/api_table.py by `python -m compile_engine_compat.migrate.stubs`.
# Do not edit: PEP 702 marks for type checkers; the runtime warnings come from the shim itself.

from typing import Any, Literal

import collections.abc
import compile_engine_compat.facade.legacy_strategy
import compile_engine_compat.facade.objects
import compile_engine_compat.facade.shared
import compile_engine_compat.facade.te_compiler_impl
import compile_engine_compat.runtime.kernel
import logging
import tvm.te.tensor
import tvm.tirx.function
from typing_extensions import deprecated

from compile_engine_compat.facade.objects import CachedFunc as CachedFunc
from compile_engine_compat.pipeline.implementations import OpImplementation as OpImplementation

__all__ = ['CCacheKey', 'CCacheValue', 'CachedFunc', 'LoweredOutput', 'OpImplementation', 'TECompiler', 'autotvm_logger', 'get', 'get_shape', 'get_valid_implementations', 'logger', 'lower_call', 'lower_to_primfunc', 'select_implementation']

@deprecated("te_compiler.CCacheKey is deprecated as of TVM 0.20 and will be removed in compile-engine-compat 1.0. Use (tvm_ffi.StructuralKey(func), str(target)) as your own cache's key. See MIGRATION.md#te-compiler-ccachekey (run `compile-engine-compat docs CEC208`)")
class CCacheKey(compile_engine_compat.facade.te_compiler_impl.CCacheKey):
    ...

@deprecated('te_compiler.CCacheValue is deprecated as of TVM 0.20 and will be removed in compile-engine-compat 1.0. Use the tvm.runtime.Executable returned by tvm.compile. See MIGRATION.md#te-compiler-ccachevalue (run `compile-engine-compat docs CEC209`)')
class CCacheValue(compile_engine_compat.facade.shared.TECCacheValue):
    ...

@deprecated('te_compiler.LoweredOutput is deprecated as of TVM 0.20 and will be removed in compile-engine-compat 1.0. Use the te.Tensor outputs of your compute function. See MIGRATION.md#te-compiler-loweredoutput (run `compile-engine-compat docs CEC210`)')
class LoweredOutput(compile_engine_compat.facade.te_compiler_impl.LoweredOutput):
    ...

@deprecated('te_compiler.TECompiler is deprecated as of TVM 0.20 and will be removed in compile-engine-compat 1.0. Use no engine object: tvm.compile + relax.VirtualMachine. See MIGRATION.md#te-compiler-tecompiler (run `compile-engine-compat docs CEC203`)')
class TECompiler(compile_engine_compat.facade.te_compiler_impl.TECompiler):
    @deprecated("te_compiler.TECompiler.lower is deprecated as of TVM 0.20 and will be removed in compile-engine-compat 1.0. Use mod = relax.transform.LegalizeOps()(IRModule({'main': func})); or trace to TE and te.create_prim_func(inputs + outputs). See MIGRATION.md#te-compiler-tecompiler-lower (run `compile-engine-compat docs CEC204`)")
    def lower(self, source_func: Any, target: Any = ..., mod_name: str = ...) -> compile_engine_compat.facade.objects.CachedFunc: ...
    @deprecated("te_compiler.TECompiler.jit is deprecated as of TVM 0.20 and will be removed in compile-engine-compat 1.0. Use ex = tvm.compile(IRModule({'main': func}), target); relax.VirtualMachine(ex, dev)['main'](*args). See MIGRATION.md#te-compiler-tecompiler-jit (run `compile-engine-compat docs CEC205`)")
    def jit(self, source_func: Any, target: Any = ...) -> compile_engine_compat.runtime.kernel.Kernel: ...
    @deprecated('te_compiler.TECompiler.clear is deprecated as of TVM 0.20 and will be removed in compile-engine-compat 1.0. Use nothing to clear: tvm.compile keeps no global cache. See MIGRATION.md#te-compiler-tecompiler-clear (run `compile-engine-compat docs CEC206`)')
    def clear(self) -> None: ...
    @deprecated('te_compiler.TECompiler.items is deprecated as of TVM 0.20 and will be removed in compile-engine-compat 1.0. Use keep your own dict of tvm_ffi.StructuralKey(func) -> tvm.compile(...) results. See MIGRATION.md#te-compiler-tecompiler-items (run `compile-engine-compat docs CEC207`)')
    def items(self) -> list[tuple[compile_engine_compat.facade.objects.CCacheKey, Any]]: ...

autotvm_logger: logging.Logger

@deprecated('te_compiler.get is deprecated as of TVM 0.20 and will be removed in compile-engine-compat 1.0. Use no global engine: call tvm.compile(mod, target) per module. See MIGRATION.md#te-compiler-get (run `compile-engine-compat docs CEC202`)')
def get() -> TECompiler: ...

@deprecated('te_compiler.get_shape is deprecated as of TVM 0.20 and will be removed in compile-engine-compat 1.0. Use shapes are already int64 PrimExprs: list(tensor_type.shape.values). See MIGRATION.md#te-compiler-get-shape (run `compile-engine-compat docs CEC212`)')
def get_shape(shape: collections.abc.Sequence[Any]) -> list[Any]: ...

@deprecated("te_compiler.get_valid_implementations is deprecated as of TVM 0.20 and will be removed in compile-engine-compat 1.0. Use tvm.ir.Op.get(name).get_attr('FLegalize') (one implementation per op). See MIGRATION.md#te-compiler-get-valid-implementations (run `compile-engine-compat docs CEC214`)")
def get_valid_implementations(op: Any, attrs: Any, inputs: collections.abc.Sequence[tvm.te.tensor.Tensor], out_type: Any, target: Any) -> list[OpImplementation]: ...

logger: logging.Logger

@deprecated("te_compiler.lower_call is deprecated as of TVM 0.20 and will be removed in compile-engine-compat 1.0. Use tvm.ir.Op.get(name).get_attr('FLegalize')(bb, call). See MIGRATION.md#te-compiler-lower-call (run `compile-engine-compat docs CEC211`)")
def lower_call(call: Any, inputs: collections.abc.Sequence[tvm.te.tensor.Tensor], target: Any, otype: Any = ...) -> compile_engine_compat.facade.legacy_strategy.LoweredOutput: ...

@deprecated('te_compiler.lower_to_primfunc is deprecated as of TVM 0.20 and will be removed in compile-engine-compat 1.0. Use relax.transform.LegalizeOps() then mod[name] (a tirx.PrimFunc), or te.create_prim_func. See MIGRATION.md#te-compiler-lower-to-primfunc (run `compile-engine-compat docs CEC215`)')
def lower_to_primfunc(func: Any, target: Any) -> tvm.tirx.function.PrimFunc: ...

@deprecated("te_compiler.select_implementation is deprecated as of TVM 0.20 and will be removed in compile-engine-compat 1.0. Use tvm.ir.Op.get(name).get_attr('FLegalize') (one implementation per op). See MIGRATION.md#te-compiler-select-implementation (run `compile-engine-compat docs CEC213`)")
def select_implementation(op: Any, attrs: Any, inputs: collections.abc.Sequence[tvm.te.tensor.Tensor], out_type: Any, target: Any, use_autotvm: bool = ...) -> tuple[OpImplementation, list[tvm.te.tensor.Tensor]]: ...
