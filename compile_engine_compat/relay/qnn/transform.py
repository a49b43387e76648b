"""``relay.qnn.transform``: identity passes (no QNN op can appear in a front-end graph)."""

from __future__ import annotations

from typing import Any

__all__ = ["CanonicalizeOps", "Legalize"]


class _NoQNNOps:
    """A QNN lowering pass: with no QNN ops to lower, it returns the module unchanged."""

    def __call__(self, mod: Any) -> Any:
        """Return ``mod`` unchanged."""
        return mod


class CanonicalizeOps(_NoQNNOps):
    """``relay.qnn.transform.CanonicalizeOps()``."""


class Legalize(_NoQNNOps):
    """``relay.qnn.transform.Legalize()``."""
