# Generated from compile_engine_compat/api_table.py by `python -m compile_engine_compat.migrate.stubs`.
# Do not edit: PEP 702 marks for type checkers; the runtime warnings come from the shim itself.

from typing import Any

from typing_extensions import deprecated

@deprecated('relay.backend._make_LoweredOutput is deprecated as of TVM 0.8 and will be removed in compile-engine-compat 1.0. Use tvm.compile(mod, target) from Python, or tvm.get_global_func on your own registered function. See MIGRATION.md#relay-backend--make-loweredoutput (run `compile-engine-compat docs CEC301`)')
def _make_LoweredOutput(*args: Any, **kwargs: Any) -> Any: ...

@deprecated('relay.backend._make_CCacheKey is deprecated as of TVM 0.8 and will be removed in compile-engine-compat 1.0. Use tvm.compile(mod, target) from Python, or tvm.get_global_func on your own registered function. See MIGRATION.md#relay-backend--make-ccachekey (run `compile-engine-compat docs CEC302`)')
def _make_CCacheKey(*args: Any, **kwargs: Any) -> Any: ...

@deprecated('relay.backend._CompileEngineGlobal is deprecated as of TVM 0.8 and will be removed in compile-engine-compat 1.0. Use tvm.compile(mod, target) from Python, or tvm.get_global_func on your own registered function. See MIGRATION.md#relay-backend--compileengineglobal (run `compile-engine-compat docs CEC303`)')
def _CompileEngineGlobal(*args: Any, **kwargs: Any) -> Any: ...

@deprecated('relay.backend._CompileEngineClear is deprecated as of TVM 0.8 and will be removed in compile-engine-compat 1.0. Use tvm.compile(mod, target) from Python, or tvm.get_global_func on your own registered function. See MIGRATION.md#relay-backend--compileengineclear (run `compile-engine-compat docs CEC304`)')
def _CompileEngineClear(*args: Any, **kwargs: Any) -> Any: ...

@deprecated('relay.backend._CompileEngineLower is deprecated as of TVM 0.8 and will be removed in compile-engine-compat 1.0. Use tvm.compile(mod, target) from Python, or tvm.get_global_func on your own registered function. See MIGRATION.md#relay-backend--compileenginelower (run `compile-engine-compat docs CEC305`)')
def _CompileEngineLower(*args: Any, **kwargs: Any) -> Any: ...

@deprecated('relay.backend._CompileEngineLowerShapeFunc is deprecated as of TVM 0.8 and will be removed in compile-engine-compat 1.0. Use tvm.compile(mod, target) from Python, or tvm.get_global_func on your own registered function. See MIGRATION.md#relay-backend--compileenginelowershapefunc (run `compile-engine-compat docs CEC306`)')
def _CompileEngineLowerShapeFunc(*args: Any, **kwargs: Any) -> Any: ...

@deprecated('relay.backend._CompileLowerExternalFunctions is deprecated as of TVM 0.8 and will be removed in compile-engine-compat 1.0. Use tvm.compile(mod, target) from Python, or tvm.get_global_func on your own registered function. See MIGRATION.md#relay-backend--compilelowerexternalfunctions (run `compile-engine-compat docs CEC307`)')
def _CompileLowerExternalFunctions(*args: Any, **kwargs: Any) -> Any: ...

@deprecated('relay.backend._CompileEngineJIT is deprecated as of TVM 0.8 and will be removed in compile-engine-compat 1.0. Use tvm.compile(mod, target) from Python, or tvm.get_global_func on your own registered function. See MIGRATION.md#relay-backend--compileenginejit (run `compile-engine-compat docs CEC308`)')
def _CompileEngineJIT(*args: Any, **kwargs: Any) -> Any: ...

@deprecated('relay.backend._CompileEngineListItems is deprecated as of TVM 0.8 and will be removed in compile-engine-compat 1.0. Use tvm.compile(mod, target) from Python, or tvm.get_global_func on your own registered function. See MIGRATION.md#relay-backend--compileenginelistitems (run `compile-engine-compat docs CEC309`)')
def _CompileEngineListItems(*args: Any, **kwargs: Any) -> Any: ...

@deprecated('relay.backend._CompileEngineListShapeFuncItems is deprecated as of TVM 0.8 and will be removed in compile-engine-compat 1.0. Use tvm.compile(mod, target) from Python, or tvm.get_global_func on your own registered function. See MIGRATION.md#relay-backend--compileenginelistshapefuncitems (run `compile-engine-compat docs CEC310`)')
def _CompileEngineListShapeFuncItems(*args: Any, **kwargs: Any) -> Any: ...

@deprecated('relay.backend._CompileEngineGetCurrentCCacheKey is deprecated as of TVM 0.8 and will be removed in compile-engine-compat 1.0. Use tvm.compile(mod, target) from Python, or tvm.get_global_func on your own registered function. See MIGRATION.md#relay-backend--compileenginegetcurrentccachekey (run `compile-engine-compat docs CEC311`)')
def _CompileEngineGetCurrentCCacheKey(*args: Any, **kwargs: Any) -> Any: ...

@deprecated('relay.backend._TECompilerGlobal is deprecated as of TVM 0.20 and will be removed in compile-engine-compat 1.0. Use tvm.compile(mod, target) from Python, or tvm.get_global_func on your own registered function. See MIGRATION.md#relay-backend--tecompilerglobal (run `compile-engine-compat docs CEC312`)')
def _TECompilerGlobal(*args: Any, **kwargs: Any) -> Any: ...

@deprecated('relay.backend._TECompilerClear is deprecated as of TVM 0.20 and will be removed in compile-engine-compat 1.0. Use tvm.compile(mod, target) from Python, or tvm.get_global_func on your own registered function. See MIGRATION.md#relay-backend--tecompilerclear (run `compile-engine-compat docs CEC313`)')
def _TECompilerClear(*args: Any, **kwargs: Any) -> Any: ...

@deprecated('relay.backend._TECompilerLower is deprecated as of TVM 0.20 and will be removed in compile-engine-compat 1.0. Use tvm.compile(mod, target) from Python, or tvm.get_global_func on your own registered function. See MIGRATION.md#relay-backend--tecompilerlower (run `compile-engine-compat docs CEC314`)')
def _TECompilerLower(*args: Any, **kwargs: Any) -> Any: ...

@deprecated('relay.backend._TECompilerJIT is deprecated as of TVM 0.20 and will be removed in compile-engine-compat 1.0. Use tvm.compile(mod, target) from Python, or tvm.get_global_func on your own registered function. See MIGRATION.md#relay-backend--tecompilerjit (run `compile-engine-compat docs CEC315`)')
def _TECompilerJIT(*args: Any, **kwargs: Any) -> Any: ...

@deprecated('relay.backend._TECompilerListItems is deprecated as of TVM 0.20 and will be removed in compile-engine-compat 1.0. Use tvm.compile(mod, target) from Python, or tvm.get_global_func on your own registered function. See MIGRATION.md#relay-backend--tecompilerlistitems (run `compile-engine-compat docs CEC316`)')
def _TECompilerListItems(*args: Any, **kwargs: Any) -> Any: ...

@deprecated('relay.backend.lower_call is deprecated as of TVM 0.8 and will be removed in compile-engine-compat 1.0. Use tvm.compile(mod, target) from Python, or tvm.get_global_func on your own registered function. See MIGRATION.md#relay-backend-lower-call (run `compile-engine-compat docs CEC317`)')
def lower_call(*args: Any, **kwargs: Any) -> Any: ...

def __getattr__(name: str) -> Any: ...  # the rest is TVM's own, or absent
