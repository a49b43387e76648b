"""Relay passes served by the Relax pass that does the same job on the module's Relax form.

Each would be a real transform with Relay's name and opt level; :data:`RELAX_BACKED_KINDS` names
the Relax pass and what differs, per pass, for the docs page and the tests. Every pass that was
here (FastMath, Inline, LambdaLift, PartialEvaluate, CombineParallelDense/BatchMatmul) now
rewrites the Relay graph as TVM 0.19 did, so the table is empty.
"""

from __future__ import annotations

__all__ = [
    "RELAX_BACKED_KINDS",
]

#: Relay pass -> "real: <the Relax pass and what differs>".
RELAX_BACKED_KINDS: dict[str, str] = {}
