"""``relay.base``: Relay's source locations and global names, which are TVM's own, and its text.

``relay.Span``, ``relay.SequentialSpan``, ``relay.SourceName`` and ``relay.GlobalVar`` were
``tvm.ir``'s classes in TVM 0.19 and still are: ``tvm.ir.save_json`` round-trips them. Every
front-end node has a ``.span`` (None unless given, as Relay's nodes built from Python had).
``astext``/``pretty_print`` print Relay's text of a node or of a module the front end built.
"""

from __future__ import annotations

from typing import Any

import tvm

from compile_engine_compat.relay._impl.printer import astext as _node_text
from compile_engine_compat.relay._impl.printer import irmodule_text

__all__ = ["GlobalVar", "Node", "SequentialSpan", "SourceName", "Span", "astext", "pretty_print"]

Span = tvm.ir.Span
SequentialSpan = tvm.ir.SequentialSpan
SourceName = tvm.ir.SourceName
GlobalVar = tvm.ir.GlobalVar
Node = tvm.runtime.Object


def astext(obj: Any, show_meta_data: bool = True, annotate: Any = None) -> str:
    """``relay.astext(obj)``: Relay's text of an expression, a function or a module.

    Parameters
    ----------
    obj : Expr, Function, TupleWrapper or tvm.IRModule
        What to print. A module that the front end did not build prints as TVM prints it (its
        Relax TVMScript).
    show_meta_data : bool
        Append the ``#[metadata]`` section naming the tensor constants.
    annotate : ignored
        Relay's per-node comment hook.

    Returns
    -------
    str
        The text, starting with ``#[version = "0.0.5"]``.
    """
    if isinstance(obj, tvm.IRModule):
        return irmodule_text(obj, show_meta_data)
    return _node_text(obj, show_meta_data)


def pretty_print(obj: Any) -> str:
    """``relay.pretty_print(obj)``: :func:`astext` without the metadata section."""
    return astext(obj, show_meta_data=False)
