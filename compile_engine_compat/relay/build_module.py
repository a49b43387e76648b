"""``relay.build`` and ``relay.create_executor``, over the shim's module build and the Relax VM.

Relay compiled to a graph-executor module (a JSON graph, a library, parameters). Modern TVM
compiles a Relax module to one VM executable, so :func:`build` returns a factory
(:class:`~compile_engine_compat.relay.backend.executor_factory.BuildResult`) that answers Relay's
questions from that executable.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import tvm
import tvm_ffi
from tvm import relax

from compile_engine_compat.deprecations import INTERNAL, legacy_api
from compile_engine_compat.facade.model_builds import bind_params, build_model
from compile_engine_compat.facade.model_builds import build as build_whole_module
from compile_engine_compat.relay._impl.external_codegen import run_external_codegens
from compile_engine_compat.relay._impl.graph_walk import bind
from compile_engine_compat.relay._impl.origin import relay_of

from .analysis import free_vars
from .backend.executor_factory import BuildResult, VMRunner
from .backend.interpreter import (
    INTERPRETED_ONLY,
    Interpreter,
    needs_interpreter,
    refuse_interpreted,
    relay_definition,
)
from .expr import Call, Constant, Expr, as_expr, const
from .function import Function
from .scope_builder import ScopeBuilder
from .transform.fast_math import FastMath as fast_math_pass

__all__ = [
    "AotExecutor",
    "BuildModule",
    "BuildResult",
    "GraphExecutor",
    "VMExecutor",
    "VMRunner",
    "bind_params_by_name",
    "build",
    "create_executor",
    "optimize",
]


def bind_module_params(mod: Any, params: Mapping[str, Any] | None = None) -> tvm.IRModule:
    """``mod`` (a module or a ``relay.Function``) as a Relax module, ``params`` bound to
    ``main``'s parameters by name (a name ``main`` lacks is skipped, as Relay's
    ``bind_params_by_name``)."""
    if isinstance(mod, Function):
        reason = needs_interpreter(mod)
        if reason is not None:
            raise NotImplementedError("the function " + INTERPRETED_ONLY.format(reason=reason))
        mod = mod.__relax_function__()
    elif isinstance(mod, Expr):
        raise TypeError("relay.build takes an IRModule or a relay.Function, not an expression")
    if isinstance(mod, relax.Function):
        # The VM exports a function under its global_symbol: a function made elsewhere (the
        # gradient's "main_adjoint") is "main" here, as Relay's from_expr made it.
        mod = tvm.IRModule({"main": mod.with_attr("global_symbol", "main")})
    if not isinstance(mod, tvm.IRModule):
        raise TypeError(f"relay.build takes an IRModule or a relay.Function, got {mod!r}")
    refuse_interpreted(mod)
    if params:
        # As Relay's bind_params_by_name: a name main has no parameter of is skipped.
        names = {var.name for var in mod["main"].params} if "main" in mod else set()
        mod = bind_params(mod, {k: v for k, v in params.items() if k in names})
    return mod


def _target(target: Any) -> Any:
    from compile_engine_compat.targets import (
        as_target,  # TVM <=0.19 target strings translated, with one warning
    )

    if isinstance(target, dict | tvm_ffi.Map) and all(str(k) != "kind" for k in target):
        # Relay's {device_type: target} form (heterogeneous builds; the keys are device type
        # names, ints or tvm.tir.IntImm): one target is supported.
        if len(target) != 1:
            raise ValueError(f"relay.build on the Relax VM takes one target, got {target!r}")
        target = next(iter(target.values()))
    return as_target(target)


@legacy_api("relay.build")
def build(
    ir_mod: Any,
    target: Any = None,
    target_host: Any = None,
    executor: Any = None,
    runtime: Any = None,
    workspace_memory_pools: Any = None,
    constant_memory_pools: Any = None,
    params: Mapping[str, Any] | None = None,
    mod_name: str = "default",
) -> BuildResult:
    """``relay.build``: compile for the Relax VM on the shim's schedules (``facade.model_builds``).

    Parameters
    ----------
    ir_mod : tvm.IRModule or relay.Function
        ``tvm.IRModule.from_expr(relay_func)``, or the function itself.
    target : str, dict or Target
        Legacy target strings are translated (``"llvm -mcpu=..."``).
    target_host, runtime, workspace_memory_pools, constant_memory_pools : ignored
        Relay's packaging options; the VM executable needs none.
    executor : Executor, optional
        Only its ``link-params`` option is read: with it, the result's ``params`` is empty, as
        TVM 0.19's was (the parameters live in the library as constants, as they always do
        here).
    params : dict, optional
        Values bound to parameters of ``main`` by name (``relax.transform.BindParams``).
    mod_name : str
        Relay's module name (``lib["default"]``); only ``"default"`` is served.

    Returns
    -------
    BuildResult
        ``lib["default"](dev)`` feeds ``graph_executor.GraphModule``.
    """
    if target is None:
        target = tvm.target.Target.current(allow_none=True) or "llvm"
    mod = bind_module_params(ir_mod, params)
    # Partitions for external compilers (PartitionGraph) go to their codegens first.
    mod = run_external_codegens(mod)
    built = build_whole_module(mod, _target(target))
    linked = bool(getattr(executor, "get", lambda _option: False)("link-params"))
    kept = {} if linked else dict(params or {})
    return BuildResult(built.executable, mod, kept, built.library, built.built)


class _Executor:
    #: The kinds whose programs Relax cannot express are evaluated by the interpreter: "debug"
    #: (as TVM 0.19) and "vm" (TVM 0.19's Relay VM ran them; the Relax VM cannot).
    kind = "vm"
    #: Whether a tuple result comes back as nested Python lists, as TVM 0.19's graph and AOT
    #: executors returned it (the VM and the interpreter gave a container).
    tuples_as_lists = False

    def __init__(self, mod: Any, device: Any, target: Any, params: Any) -> None:
        self.mod = mod
        self.device = device if device is not None else tvm.cpu()
        self.target = target
        self.params = params

    def evaluate(self, expr: Any = None, binds: Mapping[Any, Any] | None = None) -> Any:
        """Relay's ``evaluate(expr=None, binds=None)`` on the Relax VM.

        ``expr`` is None (the module's ``main``), a ``relay.Function``, or the ``GlobalVar`` of a
        function of the module: the result is a Python function of its inputs. Any other
        expression is evaluated now, in the module's context (calls to its functions included),
        and its value returned. ``binds`` maps variables to values, bound by ``let`` around
        ``expr`` as Relay did (each value a ``relay.const``).
        """
        expr = _relay_form(expr)
        if binds:
            sb = ScopeBuilder()
            for variable, value in binds.items():
                sb.let(variable, value if isinstance(value, Expr) else const(value))
            sb.ret(expr)
            expr = sb.get()
        reason = self._interpreted(expr)
        if reason is not None:
            if self.kind not in ("debug", "vm"):
                raise NotImplementedError(
                    f"create_executor({self.kind!r}): the program "
                    + INTERPRETED_ONLY.format(reason=reason)
                )
            interpreter = Interpreter(self.mod, _target(self.target), self.device)
            return interpreter.evaluate(expr if expr is not None else self._main(), self.params)
        if isinstance(expr, Expr) and not isinstance(expr, Function):
            # A value: the body of a function of no parameters, run once.
            return self._runner(Function(free_vars(expr), expr))()
        return self._runner(expr)

    def _main(self) -> Any:
        if isinstance(self.mod, Function):
            return self.mod
        if not isinstance(self.mod, tvm.IRModule) or "main" not in self.mod:
            raise ValueError("create_executor needs a module with main, or evaluate(expr)")
        return self.mod.get_global_var("main")

    def _interpreted(self, expr: Any) -> str | None:
        """Why ``expr`` (None: the module's ``main``) must be interpreted, or None."""
        mod = self.mod if isinstance(self.mod, tvm.IRModule) else None
        if expr is None:
            if isinstance(self.mod, Function):
                return needs_interpreter(self.mod)
            if mod is None or "main" not in mod:
                return None
            expr = mod.get_global_var("main")
        if isinstance(expr, tvm.ir.GlobalVar):
            if mod is None or expr.name_hint not in mod:
                return None
            func = relay_definition(mod[expr])
            return needs_interpreter(func, mod) if func is not None else None
        return needs_interpreter(expr, mod) if isinstance(expr, Expr) else None

    def _runner(self, expr: Any) -> Any:
        """A Python function running ``expr`` (see :meth:`evaluate`) on the Relax VM."""
        if expr is None and self.mod is None:
            raise ValueError("create_executor needs a module or evaluate(expr) a function")
        entry = "main"
        if isinstance(expr, tvm.ir.GlobalVar):
            entry, expr = expr.name_hint, None
        if expr is None:
            mod = bind_module_params(self.mod, self.params)
        elif isinstance(self.mod, tvm.IRModule):
            # The function runs beside the module's own functions (it may call them).
            mod = bind_module_params(_with_main(self.mod, expr), self.params)
        else:
            mod = bind_module_params(expr, self.params)
        executable = build_model(mod, _target(self.target))
        vm = relax.VirtualMachine(executable, self.device)
        names = [p.name for p in mod[entry].params]
        types = [p.ty for p in mod[entry].params]

        def run(*args: Any, **kwargs: Any) -> Any:
            if len(args) > len(names):
                raise TypeError(
                    f"{entry}({', '.join(names)}) takes {len(names)} arguments, got {len(args)}"
                )
            missing = [n for n in names[len(args) :] if n not in kwargs]
            if missing:
                raise TypeError(f"missing argument(s) {missing} of {entry}({', '.join(names)})")
            values = list(args) + [kwargs[n] for n in names[len(args) :]]
            result = vm[entry](*[relay_argument(v, t) for v, t in zip(values, types)])
            return _as_lists(result) if self.tuples_as_lists else result

        return run


def _relay_form(expr: Any) -> Any:
    """The Relay form of what a pass left in a module: ``mod["main"]`` (a Relax function the
    front end built) is its Relay function, and calling it (``mod["main"](x)``, a Relax call)
    is a Relay call of that function."""
    if isinstance(expr, relax.Function):
        found = relay_of(expr)
        return found if found is not None else expr
    if isinstance(expr, relax.Call) and isinstance(expr.op, relax.Function):
        callee = relay_of(expr.op)
        if callee is not None:
            return Call(callee, [as_expr(a) for a in expr.args])
    return expr


def _as_lists(value: Any) -> Any:
    """A tuple result (a ``tvm_ffi.Array``, nested or not) as nested Python lists."""
    if isinstance(value, tvm_ffi.Array):
        return [_as_lists(field) for field in value]
    return value


def _with_main(mod: tvm.IRModule, func: Function) -> tvm.IRModule:
    """A copy of ``mod`` whose ``main`` is ``func`` (its other functions kept)."""
    functions = {gvar: f for gvar, f in mod.functions.items() if gvar.name_hint != "main"}
    main = func.__relax_function__().with_attr("global_symbol", "main")
    return tvm.IRModule({**functions, tvm.ir.GlobalVar("main"): main})


# -- upstream Relay test files (test_vm, test_backend_interpreter): Relay's argument rule ------
#: The dtype Relay's executors gave a Python scalar argument (``_gettype``).
_SCALAR_DTYPES = ((bool, "bool"), (int, "int32"), (float, "float32"))


def relay_argument(value: Any, ty: Any = None) -> Any:
    """An argument of ``create_executor(...).evaluate()(...)`` as Relay's executors took it.

    A tensor as is (a ``relay.Constant`` as its data); a NumPy array or scalar with its dtype;
    a Python ``bool``/``int``/``float`` as a 0-d tensor of the parameter's dtype (``ty``, its
    Relax type, when it says one), else ``bool``/``int32``/``float32`` (Relay's rule, where NumPy
    would make int64 and float64); a tuple or list as a tuple of converted fields.
    """
    if isinstance(value, tvm.runtime.Tensor):
        return value
    if isinstance(value, Constant):
        return value.data
    if isinstance(value, tuple | list | tvm_ffi.Array):
        fields = list(ty.fields) if isinstance(ty, relax.TupleType) else [None] * len(value)
        if len(fields) != len(value):
            fields = [None] * len(value)
        return tuple(relay_argument(v, t) for v, t in zip(value, fields))
    for kind, dtype in _SCALAR_DTYPES:
        if type(value) is kind:
            if isinstance(ty, relax.TensorType) and ty.dtype:
                dtype = str(ty.dtype)
            return tvm.runtime.tensor(np.array(value, dtype=dtype))
    if isinstance(value, np.ndarray) and isinstance(ty, relax.TensorType) and ty.dtype:
        # Relay's graph executor copied a NumPy input into the input's tensor (its dtype).
        return tvm.runtime.tensor(np.asarray(value, dtype=str(ty.dtype)))
    return tvm.runtime.tensor(np.asarray(value))


@legacy_api("relay.create_executor")
def create_executor(
    kind: str = "debug",
    mod: Any = None,
    device: Any = None,
    target: Any = "llvm",
    params: Mapping[str, Any] | None = None,
) -> _Executor:
    """``relay.create_executor(kind, mod, device, target)``: every kind runs on the Relax VM.

    Parameters
    ----------
    kind : {"debug", "graph", "vm", "aot"}
        All build through the shim's module build and run on ``relax.VirtualMachine``;
        ``"graph"`` and ``"aot"`` return a tuple result as nested Python lists, as TVM 0.19's
        graph and AOT executors did (``"vm"`` and ``"debug"``: a container).
    mod : tvm.IRModule or relay.Function, optional
        The module whose ``main`` ``evaluate()`` runs.
    device : tvm.runtime.Device, optional
        Default ``tvm.cpu()``.
    target : str, dict or Target
        The compilation target.
    params : dict, optional
        Values bound to parameters by name.

    Returns
    -------
    object
        ``.evaluate(expr=None)`` returns a Python function of the inputs.
    """
    if kind not in ("debug", "graph", "vm", "aot"):
        raise ValueError(f"unknown executor kind {kind!r}")
    executor = _Executor(mod, device, target, params)
    executor.kind = kind
    executor.tuples_as_lists = kind in ("graph", "aot")
    return executor


@legacy_api("relay.create_executor")
class GraphExecutor(_Executor):
    """``relay.build_module.GraphExecutor(mod, device, target)``: what
    ``create_executor("graph", ...)`` gives (on the Relax VM, as every kind here)."""

    kind = "graph"
    tuples_as_lists = True

    def __init__(self, mod: Any, device: Any = None, target: Any = "llvm") -> None:
        super().__init__(mod, device, target, None)


@legacy_api("relay.create_executor")
class AotExecutor(_Executor):
    """``relay.build_module.AotExecutor(mod, device, target)``: ``create_executor("aot")``."""

    kind = "aot"
    tuples_as_lists = True

    def __init__(self, mod: Any, device: Any = None, target: Any = "llvm") -> None:
        super().__init__(mod, device, target, None)


@legacy_api("relay.create_executor")
class VMExecutor(_Executor):
    """``relay.backend.vm.VMExecutor(mod, device, target)``: ``create_executor("vm")``."""

    def __init__(self, mod: Any, device: Any = None, target: Any = "llvm") -> None:
        super().__init__(mod, device, target, None)


@legacy_api("relay.build")
class BuildModule:
    """``relay.build_module.BuildModule()``: the object behind ``relay.build``.

    ``build`` returns TVM 0.19's ``(graph_json, lib, params)`` and keeps the factory module
    ``relay.build`` returns; ``get_json``/``get_module``/``get_params``/``get_devices``/
    ``get_executor_config`` read it; ``optimize`` is :func:`optimize`.
    """

    def __init__(self) -> None:
        self._built: Any = None

    def build(
        self,
        mod: Any,
        target: Any = None,
        target_host: Any = None,
        executor: Any = None,
        runtime: Any = None,
        workspace_memory_pools: Any = None,
        constant_memory_pools: Any = None,
        params: Mapping[str, Any] | None = None,
        mod_name: str = "default",
    ) -> tuple[str, Any, dict[str, Any]]:
        """Build ``mod`` as ``relay.build`` does: ``(graph_json, lib, params)``."""
        self._built = build(
            mod,
            target=target,
            target_host=target_host,
            params=params,
            mod_name=mod_name,
            **INTERNAL,
        )
        return self.get_json(), self.get_module(), self.get_params()

    def _result(self) -> Any:
        if self._built is None:
            raise RuntimeError("BuildModule: call build(mod, target) first")
        return self._built

    def get_json(self) -> str:
        """The graph JSON of the last build."""
        return str(self._result().get_graph_json())

    def get_module(self) -> Any:
        """The library of the last build."""
        return self._result().get_lib()

    def get_params(self) -> dict[str, Any]:
        """The parameters the last build kept apart."""
        return dict(self._result().get_params())

    def get_devices(self) -> list[Any]:
        """The devices of the last build."""
        return list(self._result().get_devices())

    def get_executor_config(self) -> Any:
        """The executor configuration (the graph JSON) of the last build."""
        return self._result().get_executor_config()

    def optimize(self, mod: Any, target: Any = None, params: Any = None) -> Any:
        """:func:`optimize`: ``(mod, params)``."""
        return optimize(mod, target, params, **INTERNAL)


@legacy_api("relay.build")
def optimize(mod: Any, target: Any = None, params: Mapping[str, Any] | None = None) -> Any:
    """``relay.optimize(mod, target, params)``: ``(mod, params)``, the module with ``params``
    bound to ``main``'s parameters by name (their constants folded where the build folds them).

    Relay ran its whole optimization pipeline here; the shim's build runs it (on Relax) when it
    compiles, so the module returned is the one ``relay.build`` would compile, and ``params``
    is what remains unbound: an empty dict.
    """
    if isinstance(mod, Function):
        mod = tvm.IRModule.from_expr(mod)
    if not isinstance(mod, tvm.IRModule):
        raise TypeError(f"relay.optimize takes a tvm.IRModule or a relay.Function, got {mod!r}")
    mod = bind_module_params(mod, params)
    if "FastMath" in tvm.transform.PassContext.current().required_pass:
        mod = fast_math_pass(**INTERNAL)(mod)  # Relay's pipeline ran it when required
    return mod, {}


# -- bind_params_by_name (Relay programs: passes and params) ------------------------------------
@legacy_api("relay.build_module.bind_params_by_name")
def bind_params_by_name(func: Any, params: Mapping[str, Any]) -> relax.Function:
    """``relay.build_module.bind_params_by_name(func, params)``: bind parameters by name.

    Parameters
    ----------
    func : relax.Function or relay.Function
        ``mod["main"]`` of a front-end module (a Relax function), or a Relay function.
    params : dict of str to array
        Parameter name -> value (``tvm.nd`` arrays, tensors or numpy arrays).

    Returns
    -------
    relax.Function
        The function without the named parameters, their values bound as constants (Relay
        returned a ``relay.Function``; the front end's functions are Relax to TVM). Given a
        Relay function, or the Relax form of one, the binding is done on the Relay graph and the
        result keeps it: the Relay passes (``MergeComposite``, ...), the pattern language and
        ``relay.ext`` codegens read the bound function back as Relay, constants included.

    Raises
    ------
    TypeError
        If ``func`` is not a function.
    ValueError
        If a name matches more than one parameter (Relay's error).
    """
    relay_func = relay_of(func) if isinstance(func, relax.Function) else func
    if isinstance(relay_func, Function):
        return _bind_relay(relay_func, params).__relax_function__()
    if not isinstance(func, relax.Function):
        raise TypeError(
            f"bind_params_by_name takes a relax.Function (mod['main']) or a relay.Function, "
            f"got {type(func).__name__}"
        )
    names = _unique_names([p.name for p in func.params], params)
    known = {name: value for name, value in params.items() if name in names}
    if not known:
        return func
    return bind_params(tvm.IRModule({"main": func}), known)["main"]


def _bind_relay(func: Function, params: Mapping[str, Any]) -> Function:
    """``func`` with the parameters ``params`` names replaced by constants (Relay's binding)."""
    _unique_names([p.name_hint for p in func.params], params)
    binds = {
        p: const(_host_array(params[p.name_hint])) for p in func.params if p.name_hint in params
    }
    return bind(func, binds) if binds else func


def _unique_names(names: list[str], params: Mapping[str, Any]) -> list[str]:
    """``names`` (a function's parameter names); ValueError if ``params`` names a duplicate."""
    for name in params:
        if names.count(name) > 1:
            raise ValueError(f"Multiple args in the function have name {name}")
    return names


def _host_array(value: Any) -> np.ndarray:
    """A parameter value (``tvm.nd`` array, tensor or array-like) as a NumPy array."""
    return value.numpy() if hasattr(value, "numpy") else np.asarray(value)
