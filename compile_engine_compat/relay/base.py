"""``relay.base``: Relay's source locations and global names, which are TVM's own.

``relay.Span``, ``relay.SourceName`` and ``relay.GlobalVar`` were ``tvm.ir``'s classes in TVM
0.19 and still are: ``tvm.ir.save_json`` round-trips them. Every front-end node has a ``.span``
(None unless given, as Relay's nodes built from Python had).
"""

from __future__ import annotations

import tvm

__all__ = ["GlobalVar", "Node", "SourceName", "Span"]

Span = tvm.ir.Span
SourceName = tvm.ir.SourceName
GlobalVar = tvm.ir.GlobalVar
Node = tvm.runtime.Object
