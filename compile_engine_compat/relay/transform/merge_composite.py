"""``relay.transform.MergeComposite``: each match of a pattern table as a composite function.

On the Relay graph of each function of the module, every pattern of the table (in order)
partitions its matches into local functions carrying ``Composite`` (the table entry's name) and
``PartitionedFromPattern``, as Relay did. Moving to Relax:
``relax.transform.FuseOpsByPattern(patterns)``, which lifts composites to global functions.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from compile_engine_compat.deprecations import INTERNAL, legacy_api
from compile_engine_compat.relay._impl.to_relax import infer

from ..dataflow_pattern import DFPattern, partition
from ..function import Function
from .relay_module import relay_graph_pass

__all__ = ["MergeComposite", "pattern_entries"]


def pattern_entries(pattern_table: Any) -> list[tuple[str, DFPattern, Callable[[Any], Any]]]:
    """``(name, pattern, check)`` of each entry of a Relay pattern table (check: always True)."""
    if pattern_table is None:
        raise TypeError(
            "MergeComposite takes a pattern table (a list of (name, pattern[, check])); got None:"
            " was the table registered (relay.op.contrib.register_pattern_table)?"
        )
    entries = []
    for entry in pattern_table:
        if not isinstance(entry, Sequence) or len(entry) not in (2, 3):
            raise TypeError(f"a pattern table entry is (name, pattern[, check]), got {entry!r}")
        name, pattern = entry[0], entry[1]
        if not isinstance(name, str) or not isinstance(pattern, DFPattern):
            raise TypeError(
                f"a pattern table entry is (name: str, pattern: DFPattern[, check]), got {entry!r}"
            )
        check = entry[2] if len(entry) == 3 else (lambda _expr: True)
        entries.append((name, pattern, check))
    return entries


def _typed(expr: Any) -> None:
    """Infer types where the graph allows (checks read ``checked_type``)."""
    try:
        infer(expr)
    except (TypeError, ValueError, NotImplementedError):
        pass


def merge_composite(func: Function, entries: Sequence[tuple[str, DFPattern, Any]]) -> Function:
    """``func`` with the table's matches partitioned into composite functions."""
    if "Compiler" in func.attrs or "Composite" in func.attrs:
        return func
    body = func.body
    for name, pattern, check in entries:
        _typed(body)
        body = partition(pattern, body, {"Composite": name}, check, **INTERNAL)
    if body is func.body:
        return func
    return Function(func.params, body, func.ret_type, func.type_params, func.attrs)


@legacy_api("relay.transform.MergeComposite")
def MergeComposite(pattern_table: Any) -> Any:
    """Merge each match of the table's patterns into a composite function (Relay's pass).

    Parameters
    ----------
    pattern_table : list of tuple
        ``(name, pattern)`` or ``(name, pattern, check)`` entries, applied in order.

    Returns
    -------
    tvm.transform.Pass
        Over a module of front-end functions.
    """
    entries = pattern_entries(pattern_table)
    return relay_graph_pass(
        "MergeComposite",
        lambda functions: {g: merge_composite(f, entries) for g, f in functions.items()},
    )
