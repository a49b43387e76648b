"""``relay.analysis.operations_distribution``: refused at the call (BYOC partitioning)."""

from __future__ import annotations

from .refused import analyze_operations_distribution

__all__ = ["analyze_operations_distribution"]
