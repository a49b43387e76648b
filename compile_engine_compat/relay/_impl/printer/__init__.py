"""Relay's text format: :func:`astext` prints the front end's nodes, :func:`fromtext` reads them.

``expr.astext()`` / ``str(expr)`` print Relay's text (``#[version = "0.0.5"]``); the Relax
function that runs prints with ``expr.script()``. ``relay.fromtext`` / ``relay.parse`` /
``relay.parse_expr`` read that text back for the ops of the front end's table.
"""

from __future__ import annotations

from compile_engine_compat.relay._impl.printer.parser import fromtext, parse, parse_expr
from compile_engine_compat.relay._impl.printer.printer import (
    VERSION_HEADER,
    astext,
    irmodule_text,
    module_astext,
)

__all__ = [
    "VERSION_HEADER",
    "astext",
    "fromtext",
    "irmodule_text",
    "module_astext",
    "parse",
    "parse_expr",
]
