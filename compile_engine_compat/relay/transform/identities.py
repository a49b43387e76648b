"""Relay passes that are identities on the front end's modules, each with its reason.

Every one is a real ``tvm.transform.Pass`` with Relay's name and opt level (so ``Sequential``,
``disabled_pass`` and ``required_pass`` treat it as Relay did) whose body returns the module
unchanged. Each was a layout, scheduling or normal-form step whose job is done elsewhere on TVM
0.27 or has nothing to act on; results are the same without it. :data:`IDENTITY_KINDS` says why,
per pass, for the docs page and the tests.
"""

from __future__ import annotations

from typing import Any

from compile_engine_compat.deprecations import legacy_api
from compile_engine_compat.relay._impl.passes import identity_pass

__all__ = [
    "IDENTITY_KINDS",
    "CapturePostDfsIndexInSpans",
    "LazyGradientInit",
    "PlanDevices",
]

#: Relay pass -> "identity: <why>".
IDENTITY_KINDS: dict[str, str] = {
    "LazyGradientInit": "identity: Relay made gradient buffers lazily; the gradients of "
    "relay.transform.gradient are computed by relax.transform.Gradient, eagerly",
    "PlanDevices": "identity: relay.build compiles for one device; there is nothing to plan "
    "(planning across several, tvm.target.make_compilation_config, is refused at the call)",
    "CapturePostDfsIndexInSpans": "identity: Relay recorded node indices for Collage; Relax "
    "nodes keep the spans they were built with",
}


@legacy_api("relay.transform.more_passes")
def LazyGradientInit() -> Any:
    """``relay.transform.LazyGradientInit()``: an identity (opt level 1)."""
    return identity_pass("LazyGradientInit", 1)


@legacy_api("relay.transform.more_passes")
def PlanDevices(config: Any = None) -> Any:
    """``relay.transform.PlanDevices(config)``: an identity (opt level 0)."""
    return identity_pass("PlanDevices", 0)


@legacy_api("relay.transform.more_passes")
def CapturePostDfsIndexInSpans() -> Any:
    """``relay.transform.CapturePostDfsIndexInSpans()``: an identity (opt level 0)."""
    return identity_pass("CapturePostDfsIndexInSpans", 0)
