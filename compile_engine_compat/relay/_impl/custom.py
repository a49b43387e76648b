"""Relay's op registration (``relay.op.op.register``): ops a program defines itself.

A registered op gets Relay's ``tvm.ir.Op`` methods (``set_num_inputs``, ``add_argument``,
``add_type_rel``, ``set_support_level``, ``set_attrs_type_key``) and is called with
``relay.Call(relay.op.get(name), args)``. Its type comes from its type relation: Relay's
``"Identity"``, ``"Broadcast"`` or ``"BroadcastComp"``, or a Python function
``rel(arg_types, attrs) -> relay.Type``, whose own exceptions reach the caller unchanged. In
Relax the call is ``relax.call_dps_packed(name, args, out)`` of that type: it types and builds,
and it runs where a packed function of the op's name exists in destination-passing style
(``tvm.register_global_func(name)`` taking the inputs and the output tensor), or, once
``register_compute`` gave it a compute (``FTVMCompute``), that TE compute (``call_te``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import numpy as np
from tvm import relax

from compile_engine_compat.relay._impl.registry import OpRow, RelayOp, UnsupportedRelayError
from compile_engine_compat.relay.expr import Attrs
from compile_engine_compat.relay.ty import RelayTypeError, TensorType, Type, from_struct_info

__all__ = [
    "CustomOp",
    "OpPattern",
    "custom_op",
    "register",
    "register_compute",
    "register_pattern",
    "register_stateful",
]


class OpPattern:
    """Relay's fusion patterns (``relay.op.OpPattern``), recorded on a custom op."""

    ELEMWISE = 0
    BROADCAST = 1
    INJECTIVE = 2
    COMM_REDUCE = 3
    OUT_ELEMWISE_FUSABLE = 4
    TUPLE = 7
    OPAQUE = 8


def _broadcast(types: list[Type], attrs: Any, dtype: str | None = None) -> Type:
    """Relay's ``Broadcast`` relation: NumPy's rule on two tensors of static shape."""
    if len(types) != 2:
        raise RelayTypeError(f"the Broadcast relation takes two tensors, got {types!r}")
    a, b = types
    if not (isinstance(a, TensorType) and isinstance(b, TensorType)):
        raise RelayTypeError(f"the Broadcast relation takes two tensors, got {types!r}")
    try:
        shape = np.broadcast_shapes(a.concrete_shape, b.concrete_shape)
    except (TypeError, ValueError) as err:
        raise RelayTypeError(f"the Broadcast relation: {a!r} and {b!r}: {err}") from err
    return TensorType(shape, dtype or a.dtype)


#: Relay's built-in type relations by name.
_RELATIONS: dict[str, Callable[..., Any]] = {
    "Identity": lambda types, attrs: types[0],
    "Broadcast": _broadcast,
    "BroadcastComp": lambda types, attrs: _broadcast(types, attrs, "bool"),
}


class CustomOp(RelayOp):
    """An op made by :func:`register`, with Relay's ``tvm.ir.Op`` registration methods."""

    #: The emitter runs its type relation unwrapped: the relation's errors are the program's.
    custom = True

    def __init__(self, name: str, describe: str = "") -> None:
        super().__init__(OpRow(name, (), (), "relax.call_dps_packed", self._emit, "DictAttrs"))
        self.description = describe
        self.num_inputs = -1
        self.arguments = []
        self.type_relation: Callable[..., Any] | None = None
        self.support_level = 10
        self.attrs_type_key = "DictAttrs"
        self.pattern = OpPattern.OPAQUE
        self.stateful = False
        #: ``FTVMCompute``: ``compute(attrs, inputs, out_type) -> [te.Tensor]``, or None.
        self.compute: Callable[..., Any] | None = None

    def default_attrs(self) -> Any:
        """None: a call of a custom op without attributes has none (Relay's ``call.attrs``)."""
        return None

    def set_num_inputs(self, n: int) -> None:
        """How many inputs a call takes."""
        self.num_inputs = int(n)

    def add_argument(self, name: str, type: str, description: str) -> None:
        """Document one input (Relay's ``add_argument``)."""
        self.arguments.append((name, type, description))

    def add_type_rel(self, rel_name: str, type_rel_func: Callable[..., Any] | None = None) -> None:
        """The type relation: a built-in by name, or ``type_rel_func(arg_types, attrs)``."""
        if type_rel_func is None:
            if rel_name not in _RELATIONS:
                raise ValueError(
                    f"no built-in type relation {rel_name!r} (known: {sorted(_RELATIONS)}); "
                    "pass type_rel_func(arg_types, attrs) -> relay.Type"
                )
            type_rel_func = _RELATIONS[rel_name]
        self.type_relation = type_rel_func

    def set_support_level(self, level: int) -> None:
        """Relay's support level (documentation only)."""
        self.support_level = int(level)

    def set_attrs_type_key(self, key: str) -> None:
        """The attributes' type key (``DictAttrs``)."""
        self.attrs_type_key = key

    def _emit(self, bb: relax.BlockBuilder, args: list[Any], attrs: Attrs) -> Any:
        if self.type_relation is None:
            raise UnsupportedRelayError(
                f"op {self.name!r} has no type relation: call add_type_rel first"
            )
        if self.num_inputs >= 0 and len(args) != self.num_inputs:
            raise RelayTypeError(
                f"op {self.name!r} takes {self.num_inputs} inputs, got {len(args)}"
            )
        out = self.type_relation([from_struct_info(a.ty) for a in args], attrs)
        if not isinstance(out, TensorType):
            raise RelayTypeError(
                f"the type relation of op {self.name!r} returned {out!r}, not a relay.TensorType"
            )
        if self.compute is not None:  # register_compute: its TE, as Relay's FTVMCompute ran
            compute = self.compute

            def te_compute(*tensors: Any) -> Any:
                results = compute(attrs, list(tensors), out)
                return results[0] if isinstance(results, list | tuple) else results

            return bb.call_te(te_compute, *args, primfunc_name_hint=self.name.replace(".", "_"))
        return relax.op.call_dps_packed(self.name, relax.Tuple(args), out.struct_info())


_custom: dict[str, CustomOp] = {}
_lock = threading.Lock()


def custom_op(op_name: str) -> CustomOp | None:
    """The op :func:`register` made under ``op_name``, if any."""
    return _custom.get(op_name)


def register(op_name: str, describe: str = "") -> CustomOp:
    """A new custom op of that name (``relay.op.op.register`` checks the table's names first).

    Raises
    ------
    RuntimeError
        (``tvm.error.TVMError`` under ``install()``) if the name is taken, as Relay's did.
    """
    with _lock:
        if op_name in _custom:
            raise RuntimeError(f"Operator {op_name} is registered before")
        op = _custom[op_name] = CustomOp(op_name, describe)
    return op


def register_pattern(op_name: str, pattern: int, level: int = 10) -> None:
    """Record a custom op's fusion pattern (Relax fuses by its own analysis)."""
    op = _registered(op_name)
    op.pattern = int(pattern)
    op.set_attr("TOpPattern", op.pattern, level)


def register_compute(op_name: str, compute: Callable[..., Any], level: int = 10) -> None:
    """A custom op's ``FTVMCompute``: its calls become that TE compute (``call_te``)."""
    _registered(op_name).compute = compute


def register_stateful(op_name: str, stateful: bool, level: int = 10) -> None:
    """Record whether a custom op is stateful."""
    op = _registered(op_name)
    op.stateful = bool(stateful)
    op.set_attr("TOpIsStateful", op.stateful, level)


def _registered(op_name: str) -> CustomOp:
    op = _custom.get(op_name)
    if op is None:
        raise ValueError(f"op {op_name!r} is not registered: relay.op.op.register it first")
    return op
