"""``tvm.ir.make_node`` taking TVM <=0.19's type keys (served by ``install()``).

TVM 0.27 renamed some node types (``"DictAttrs"`` is ``"ir.DictAttrs"``); Relay-era code and
tests build call attributes with the old keys (``tvm.ir.make_node("DictAttrs", **attrs)``).
"""

from __future__ import annotations

from typing import Any

import tvm

__all__ = ["LEGACY_TYPE_KEYS", "TVM_MAKE_NODE", "make_node"]

#: TVM's own ``make_node`` (taken before install() patches it).
TVM_MAKE_NODE = tvm.ir.make_node

#: TVM <=0.19 type key -> TVM 0.27's.
LEGACY_TYPE_KEYS: dict[str, str] = {"DictAttrs": "ir.DictAttrs"}


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
