"""``tvm.ir.make_node`` and ``tvm.ir.register_op_attr`` as TVM <=0.19 had them (served by
``install()``).

TVM 0.27 renamed some node types (``"DictAttrs"`` is ``"ir.DictAttrs"``); Relay-era code and
tests build call attributes with the old keys (``tvm.ir.make_node("DictAttrs", **attrs)``).
Relay's op names (``"nn.conv2d"``) are not TVM 0.27 ops: an attribute registered on one
(``tvm.ir.register_op_attr("add", "target.dnnl", checker)``, an external compiler's checker) is
set on the front end's op, where ``relay.transform.AnnotateTarget`` reads it.
"""

from __future__ import annotations

from typing import Any

import tvm

__all__ = ["LEGACY_TYPE_KEYS", "TVM_MAKE_NODE", "TVM_REGISTER_OP_ATTR", "make_node"]
__all__ += ["TVM_ENV_FUNC_GET", "env_func_get", "register_op_attr"]

#: TVM's own ``make_node`` and ``register_op_attr`` (taken before install() patches them).
TVM_MAKE_NODE = tvm.ir.make_node
TVM_REGISTER_OP_ATTR = tvm.ir.register_op_attr
#: TVM's own ``EnvFunc.get``.
TVM_ENV_FUNC_GET = tvm.ir.EnvFunc.get

#: TVM <=0.19 type key -> TVM 0.27's.
#: ``attrs.TestAttrs`` was TVM 0.19's attribute node for its own tests (Relay's and TIR's tests
#: build it); 0.27 has none, so it is a ``DictAttrs`` holding the fields given.
LEGACY_TYPE_KEYS: dict[str, str] = {"DictAttrs": "ir.DictAttrs", "attrs.TestAttrs": "ir.DictAttrs"}


def make_node(type_key: str, **kwargs: Any) -> Any:
    """``tvm.ir.make_node(type_key, **kwargs)``, with the TVM <=0.19 type keys translated.

    Parameters
    ----------
    type_key : str
        The node type (``"DictAttrs"`` or ``"ir.DictAttrs"``).
    **kwargs
        Its fields.

    Returns
    -------
    tvm.runtime.Object
    """
    return TVM_MAKE_NODE(LEGACY_TYPE_KEYS.get(type_key, type_key), **kwargs)


def register_op_attr(op_name: str, attr_key: str, value: Any = None, level: int = 10) -> Any:
    """``tvm.ir.register_op_attr``: on a Relay op of the front end, its attribute; else TVM's.

    Parameters
    ----------
    op_name : str
        A Relay op name (``"nn.relu"``), or a TVM 0.27 op (``"relax.nn.relu"``).
    attr_key : str
        The attribute (``"target.<compiler>"``: a checker ``fn(expr) -> bool``).
    value : object, optional
        The value; without it, a decorator is returned.
    level : int
        TVM's priority level (a TVM op's registration only).

    Returns
    -------
    callable or None
        The decorator when ``value`` is None.
    """
    from compile_engine_compat.relay.op.op import OP_TABLE
    from compile_engine_compat.relay.op.op import get as get_op

    if op_name not in OP_TABLE:
        return TVM_REGISTER_OP_ATTR(op_name, attr_key, value, level)

    def register(v: Any) -> Any:
        get_op(op_name).set_attr(attr_key, v, level)
        return v

    return register(value) if value is not None else register


def env_func_get(name: str) -> Any:
    """``tvm.ir.EnvFunc.get(name)``; Relay's type relations (``"tvm.relay.type_relation.
    Broadcast"``, ``BroadcastComp``, ``Identity``) are registered on the first such call.

    Parameters
    ----------
    name : str
        A global function's name.

    Returns
    -------
    tvm.ir.EnvFunc
    """
    from compile_engine_compat.relay._impl.relation_functions import (
        GLOBAL_PREFIX,
        register_globals,
    )

    if isinstance(name, str) and name.startswith(GLOBAL_PREFIX):
        register_globals()
    return TVM_ENV_FUNC_GET(name)
