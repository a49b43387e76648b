"""``tvm.relay.dataflow_pattern``: Relay's pattern language on the front end's Relay graph.

Patterns (:mod:`.patterns`) match Relay's op names and attributes, before the graph is lowered
to Relax (where ``nn.bias_add`` and ``nn.dense`` are other ops), with Relay's semantics
(:mod:`.matcher`); :mod:`.rewrite` holds ``rewrite``/``DFPatternCallback`` and ``partition``.
Moving to Relax: ``tvm.relax.dpl`` (``is_op("relax.add")``, ``rewrite_call``) and
``relax.transform.FuseOpsByPattern``.
"""

from __future__ import annotations

from . import patterns
from .matcher import match
from .patterns import *  # noqa: F403
from .rewrite import DFPatternCallback, partition, rewrite

patterns.ENGINE.update(match=match, partition=partition)

__all__ = [*patterns.__all__, "DFPatternCallback", "match", "partition", "rewrite"]
