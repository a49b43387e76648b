"""``relay.testing.nat``: Peano numbers (``nat.rly``'s ``zero``/``succ``) between Python and
Relay, as TVM 0.19's helpers (the prelude's module must have imported ``nat.rly``)."""

from __future__ import annotations

from typing import Any

from ..backend.interpreter import ConstructorValue
from ..expr import Call

__all__ = ["count", "get_type", "make_nat_expr", "make_nat_value"]


def get_type(prelude: Any, name: str) -> tuple[Any, ...]:
    """``(GlobalTypeVar, *constructors)`` of the type ``name`` of ``prelude.mod``."""
    return tuple(prelude.mod.get_type(name))


def count(prelude: Any, n: Any) -> int:
    """The Python int a ``nat`` value (a ``ConstructorValue``) stands for."""
    if not isinstance(n, ConstructorValue):
        raise TypeError(f"count takes a nat ConstructorValue, got {n!r}")
    _, z, s = get_type(prelude, "nat")
    total = 0
    while n.tag == s.tag:
        total, n = total + 1, n.fields[0]
    if n.tag != z.tag:
        raise ValueError(f"{n!r} is not a nat value")
    return total


def make_nat_value(prelude: Any, n: int) -> ConstructorValue:
    """The ``nat`` value of ``n`` (``succ`` applied ``n`` times to ``zero``)."""
    _, z, s = get_type(prelude, "nat")
    value = ConstructorValue(z.tag, [], z)
    for _ in range(n):
        value = ConstructorValue(s.tag, [value], s)
    return value


def make_nat_expr(prelude: Any, n: int) -> Call:
    """The Relay expression ``succ(...succ(zero()))`` of ``n``."""
    _, z, s = get_type(prelude, "nat")
    expr = z()
    for _ in range(n):
        expr = s(expr)
    return expr
