"""``relay.backend``: the legacy engine modules (the shim's ``compile_engine``/``te_compiler``)."""

from __future__ import annotations

from ... import compile_engine, te_compiler

__all__ = ["compile_engine", "te_compiler"]
