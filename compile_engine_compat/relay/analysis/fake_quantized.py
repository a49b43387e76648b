"""``relay.analysis.list_fake_quantized_op_freqs``: the ops of the fake-quantized regions
``FakeQuantizationToInteger`` would rewrite, counted."""

from __future__ import annotations

from collections import Counter
from typing import Any

import tvm

from compile_engine_compat.deprecations import legacy_api
from compile_engine_compat.relay._impl import origin
from compile_engine_compat.relay._impl.fake_quantization import region_calls
from compile_engine_compat.relay._impl.registry import RelayOp

from ..expr import Call, Expr, Tuple, TupleGetItem
from ..function import Function

__all__ = ["list_fake_quantized_op_freqs"]


def _nodes(root: Expr) -> list[Expr]:
    """Every node reachable from ``root`` (each once)."""
    stack, seen, out = [root], set(), []
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        out.append(node)
        if isinstance(node, Call):
            stack.extend(node.args)
        elif isinstance(node, Tuple):
            stack.extend(node.fields)
        elif isinstance(node, TupleGetItem):
            stack.append(node.tuple_value)
    return out


@legacy_api("relay.analysis")
def list_fake_quantized_op_freqs(mod: Any) -> dict[str, int]:
    """Relay's ``list_fake_quantized_op_freqs(mod)``: op name -> how many calls of it lie in
    regions from ``qnn.dequantize`` to ``qnn.quantize`` that ``FakeQuantizationToInteger``
    would rewrite (the quantize and dequantize calls not counted).

    Parameters
    ----------
    mod : tvm.IRModule
        A module the Relay front end built (``tvm.IRModule.from_expr(relay_expr)``).

    Returns
    -------
    dict of str to int
    """
    # Imported here: relay.transform's package imports relay.analysis.

    if not isinstance(mod, tvm.IRModule):
        raise TypeError(f"list_fake_quantized_op_freqs takes a tvm.IRModule, got {mod!r}")
    counted: dict[int, str] = {}
    for func in mod.functions.values():
        relay_func = origin.relay_of(func)
        if not isinstance(relay_func, Function):
            continue
        for node in _nodes(relay_func.body):
            if isinstance(node, Call) and isinstance(node.op, RelayOp):
                if node.op.name == "qnn.quantize":
                    calls = region_calls(node.args[0], built_in=True) or []
                    counted.update((id(c), str(c.op.name)) for c in calls)
    return dict(Counter(counted.values()))
