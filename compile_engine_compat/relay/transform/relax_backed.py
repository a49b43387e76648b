"""Relay passes served by the Relax pass that does the same job on the module's Relax form.

Each is a real transform with Relay's name and opt level; :data:`RELAX_BACKED_KINDS` names the
Relax pass and what differs, per pass, for the docs page and the tests.
"""

from __future__ import annotations

from typing import Any

from tvm import relax

from compile_engine_compat.deprecations import legacy_api
from compile_engine_compat.relay._impl.passes import relay_pass

__all__ = [
    "RELAX_BACKED_KINDS",
    "Inline",
    "LambdaLift",
    "PartialEvaluate",
]

#: Relay pass -> "real: <the Relax pass and what differs>".
RELAX_BACKED_KINDS: dict[str, str] = {
    "Inline": "real: relax.transform.InlinePrivateFunctions (Relay inlined functions marked "
    "Inline; Relax inlines the module's private functions)",
    "LambdaLift": "real: relax.transform.LambdaLift (local functions become global ones)",
    "PartialEvaluate": "real: relax.transform.FoldConstant (what partial evaluation computes "
    "on the front end's graphs, which have no recursion or references: constant subgraphs)",
}


@legacy_api("relay.transform.more_passes")
def Inline() -> Any:
    """``relay.transform.Inline()``: ``relax.transform.InlinePrivateFunctions`` (opt level 1)."""
    return relay_pass("Inline", 1, relax.transform.InlinePrivateFunctions())


@legacy_api("relay.transform.more_passes")
def LambdaLift() -> Any:
    """``relay.transform.LambdaLift()``: ``relax.transform.LambdaLift`` (opt level 1)."""
    return relay_pass("LambdaLift", 1, relax.transform.LambdaLift())


@legacy_api("relay.transform.more_passes")
def PartialEvaluate() -> Any:
    """``relay.transform.PartialEvaluate()``: ``relax.transform.FoldConstant`` (opt level 1)."""
    return relay_pass("PartialEvaluate", 1, relax.transform.FoldConstant())
