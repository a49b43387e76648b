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
    "CombineParallelBatchMatmul",
    "CombineParallelDense",
    "FastMath",
]

#: Relay pass -> "real: <the Relax pass and what differs>".
RELAX_BACKED_KINDS: dict[str, str] = {
    "FastMath": "real: relax.transform.FastMathTransform (exp, tanh, erf become TVM's fast "
    "approximations, as Relay's fast_* ops did)",
    "CombineParallelDense": "real: relax.transform.CombineParallelMatmul (parallel matmuls "
    "of one input become one)",
    "CombineParallelBatchMatmul": "real: relax.transform.CombineParallelMatmul",
}


@legacy_api("relay.transform.more_passes")
def FastMath() -> Any:
    """``relay.transform.FastMath()``: ``relax.transform.FastMathTransform`` (opt level 4)."""
    return relay_pass("FastMath", 4, relax.transform.FastMathTransform())


@legacy_api("relay.transform.more_passes")
def CombineParallelDense(min_num_branches: int = 3, to_batch: bool = True) -> Any:
    """``relay.transform.CombineParallelDense(...)``: ``relax.transform.CombineParallelMatmul``
    (opt level 4). ``min_num_branches`` and ``to_batch`` have no Relax counterpart: Relax
    combines two or more branches into one matmul."""
    return relay_pass("CombineParallelDense", 4, relax.transform.CombineParallelMatmul())


@legacy_api("relay.transform.more_passes")
def CombineParallelBatchMatmul(min_num_branches: int = 3) -> Any:
    """``relay.transform.CombineParallelBatchMatmul(...)``: Relax's ``CombineParallelMatmul``
    (opt level 4)."""
    return relay_pass("CombineParallelBatchMatmul", 4, relax.transform.CombineParallelMatmul())
