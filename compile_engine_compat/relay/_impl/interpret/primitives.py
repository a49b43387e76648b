"""Primitive op calls in the interpreter: each built once, on concrete types, and cached.

A call to an op of the table (``relay.add``, ``nn.conv2d``, ...) with evaluated arguments is a
one-op ``relay.Function`` over variables of the arguments' concrete types; it is built through
the shim's own module build (``facade.model_builds.build_model``: the Relax pipeline, the
shim's schedules, the persistent cache when one is configured) and run on the Relax VM. The
built VM is kept under the call's structural key: the op, its attributes, the argument types and
the target, so a loop of a program builds each distinct call once.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

import tvm
import tvm_ffi
from tvm import relax

from compile_engine_compat.facade.model_builds import build_model
from compile_engine_compat.relay.expr import Call, Var
from compile_engine_compat.relay.function import Function
from compile_engine_compat.relay.ty import TensorType, TupleType, Type
from compile_engine_compat.runtime import threads

__all__ = ["LIMIT", "run_primitive"]

#: How many built calls are kept (the least recently used go first).
LIMIT = 256

_BUILT: OrderedDict[tuple[Any, ...], Any] = OrderedDict()
_lock = threads.fork_safe(threading.Lock())


def _type_of(value: Any) -> Type:
    """The Relay type of an evaluated argument (a tensor or a tuple of them)."""
    if isinstance(value, tvm.runtime.Tensor):
        return TensorType(tuple(int(d) for d in value.shape), str(value.dtype))
    if isinstance(value, tuple):
        return TupleType([_type_of(v) for v in value])
    raise TypeError(
        f"an op takes tensors and tuples of tensors, got {type(value).__name__} ({value!r}): "
        "an ADT value, reference or closure cannot be passed to a primitive op"
    )


def _signature(ty: Type) -> Any:
    if isinstance(ty, TensorType):
        return (ty.concrete_shape, ty.dtype)
    assert isinstance(ty, TupleType)
    return tuple(_signature(f) for f in ty.fields)


def _attrs_key(attrs: Any) -> str:
    return repr(attrs) if attrs is not None else ""


def _on(value: Any, device: Any) -> Any:
    if isinstance(value, tuple):
        return tuple(_on(v, device) for v in value)
    if value.device.dlpack_device_type() != device.dlpack_device_type():
        return value.copyto(device)
    return value


def _from_vm(value: Any) -> Any:
    if isinstance(value, tvm_ffi.Array):
        return tuple(_from_vm(v) for v in value)
    return value


def run_primitive(call: Call, args: Sequence[Any], target: Any, device: Any) -> Any:
    """The value of ``call`` (an op call) on the evaluated ``args``.

    Parameters
    ----------
    call : relay.Call
        A call whose ``op`` is an op of the table; its attributes are kept.
    args : sequence
        The evaluated arguments (tensors, tuples of tensors).
    target : tvm.target.Target
        What the call is built for.
    device : tvm.runtime.Device
        Where it runs.

    Returns
    -------
    tvm.runtime.Tensor or tuple
        The result (a tuple of results for a multi-output op).
    """
    if call.op.name == "debug":
        # Relay's debugger hook: the registered function sees the value, which passes through.
        name = getattr(call.attrs, "debug_func", "")
        if name:
            tvm_ffi.get_global_func(name)(args[0])
        return args[0]
    types = [_type_of(a) for a in args]
    key = (
        call.op.name,
        _attrs_key(call.attrs),
        tuple(_signature(t) for t in types),
        str(target),
        device.dlpack_device_type(),
    )
    with _lock:
        vm = _BUILT.get(key)
        if vm is not None:
            _BUILT.move_to_end(key)
    if vm is None:
        params = [Var(f"p{i}", ty) for i, ty in enumerate(types)]
        body = Call(call.op, params, call.attrs, call.type_args)
        relax_func = Function(params, body).__relax_function__()
        mod = tvm.IRModule({"main": relax_func.with_attr("global_symbol", "main")})
        vm = relax.VirtualMachine(build_model(mod, target), device)
        with _lock:
            _BUILT[key] = vm
            while len(_BUILT) > LIMIT:
                _BUILT.popitem(last=False)
    return _from_vm(vm["main"](*[_on(a, device) for a in args]))
