"""``relay.transform.FuseOps`` and ``DefuseOps`` on the Relay graph, as TVM 0.19 fused.

``FuseOps(fuse_opt_level)`` groups the ops of each function by their ``TOpPattern`` into
functions marked ``Primitive=1``, called in place (:mod:`..._impl.fusion` holds Relay's
algorithm); ``fuse_opt_level=-1`` takes the ``PassContext``'s opt level, 0 makes each op its own
function, and ``PassContext(config={"relay.FuseOps.max_depth": n})`` caps a group's size;
with ``"relay.FuseOps.link_params": True`` the constants stay in the fused functions' bodies.
``DefuseOps`` inlines those functions back. ``relay.build`` keeps its own fusion (Relax's
``FuseOps`` after legalization); a fused module still builds, its primitive calls inlined when
it is converted. A module with no Relay graph (one a Relax pass rewrote) is handed to
``relax.transform.FuseOps``.
"""

from __future__ import annotations

from typing import Any

import tvm
from tvm import relax

from compile_engine_compat.deprecations import legacy_api
from compile_engine_compat.relay._impl.fusion import fuse, is_primitive
from compile_engine_compat.relay._impl.graph_walk import GraphMutator, bind
from compile_engine_compat.relay._impl.to_relax import infer
from compile_engine_compat.surfaces.passconfig import current_config

from ..expr import Call
from ..function import Function
from .graph_rewrites import graph_pass

__all__ = ["DefuseOps", "FuseOps", "defuse_function", "fuse_function"]

#: Relay's default ``relay.FuseOps.max_depth``.
_MAX_DEPTH = 256
#: The pass-config key keeping constants in the fused functions (TVM 0.19's, read here).
LINK_PARAMS = "relay.FuseOps.link_params"


def _max_depth() -> int:
    config = tvm.transform.PassContext.current().config
    for key in ("relax.FuseOps.max_depth", "relay.FuseOps.max_depth"):
        if key in config:
            return int(config[key])
    return _MAX_DEPTH


def fuse_function(func: Function, fuse_opt_level: int = -1) -> Function:
    """``func`` with its ops fused as Relay's ``FuseOps(fuse_opt_level)`` did.

    Parameters
    ----------
    func : relay.Function
        The function to fuse.
    fuse_opt_level : int
        Relay's level; -1 takes the current ``PassContext``'s opt level.

    Returns
    -------
    relay.Function
    """
    level = fuse_opt_level
    if level == -1:
        level = int(tvm.transform.PassContext.current().opt_level)
    infer(func)
    link_params = bool(current_config().get(LINK_PARAMS, False))
    return fuse(func, level, _max_depth(), link_params)


@legacy_api("relay.transform")
def FuseOps(fuse_opt_level: int = -1) -> Any:
    """``relay.transform.FuseOps(fuse_opt_level=-1)`` (opt level 0), on the Relay graph.

    Each function's ops become calls of ``Primitive`` functions, grouped as TVM 0.19 grouped
    them (see the module docstring).
    """
    if not isinstance(fuse_opt_level, int):
        raise TypeError(f"FuseOps takes an int fuse_opt_level, got {fuse_opt_level!r}")
    return graph_pass(
        "FuseOps",
        0,
        lambda func: fuse_function(func, fuse_opt_level),
        relax_fallback=relax.transform.FuseOps(fuse_opt_level),
    )


class _Defuse(GraphMutator):
    def visit_call(self, call: Any) -> Any:
        new = self._visit_children(call)
        if isinstance(new, Call) and is_primitive(new.op):
            return bind(new.op.body, dict(zip(new.op.params, new.args, strict=True)))
        return new


def defuse_function(func: Function) -> Function:
    """``func`` with each call of a ``Primitive`` function replaced by its body."""
    out: Function = _Defuse().visit(func)
    return out


@legacy_api("relay.transform.more_passes")
def DefuseOps() -> Any:
    """``relay.transform.DefuseOps()`` (opt level 3), on the Relay graph: each call of a
    ``Primitive`` function is replaced by the function's body, its parameters bound to the
    call's arguments."""
    return graph_pass("DefuseOps", 3, defuse_function)
