"""QNN calls lowered to plain Relay ops, as TVM 0.19's ``qnn.transform.CanonicalizeOps`` did:
:mod:`.common` (helpers, the fixed-point multiplier), :mod:`.config` (``requantize_config``),
:mod:`.requantize`, :mod:`.binary`, :mod:`.linear`, :mod:`.unary` (the lowerings by family) and
:mod:`.emit` (a lowering as the emit function of a QNN row)."""

from __future__ import annotations

from . import binary, common, config, emit, linear, requantize, unary

__all__ = ["binary", "common", "config", "emit", "linear", "requantize", "unary"]
