"""``relay.analysis.feature``: Relay's ``Feature`` enum and ``detect_feature``."""

from __future__ import annotations

from enum import IntEnum
from typing import Any

import tvm

from compile_engine_compat.deprecations import legacy_api

from ..adt import Constructor, Match
from ..expr import (
    BaseOp,
    Call,
    Constant,
    GlobalRef,
    If,
    Let,
    RefCreate,
    RefRead,
    RefWrite,
    Tuple,
    TupleGetItem,
    Var,
)
from ..expr_functor import relay_node
from ..function import Function
from .graph import post_order

__all__ = ["Feature", "detect_feature"]


class Feature(IntEnum):
    """The features a Relay program may contain (Relay's numbering)."""

    fVar = 0
    fGlobalVar = 1
    fConstant = 2
    fTuple = 3
    fTupleGetItem = 4
    fFunction = 5
    fOp = 6
    fCall = 7
    fLet = 8
    fIf = 9
    fRefCreate = 10
    fRefRead = 11
    fRefWrite = 12
    fConstructor = 13
    fMatch = 14
    fGraph = 15
    fLetRec = 16


#: Node class -> its feature.
_FEATURES: tuple[tuple[Any, Feature], ...] = (
    (Var, Feature.fVar),
    (tvm.ir.GlobalVar, Feature.fGlobalVar),
    (Constant, Feature.fConstant),
    (Tuple, Feature.fTuple),
    (TupleGetItem, Feature.fTupleGetItem),
    (Function, Feature.fFunction),
    (BaseOp, Feature.fOp),
    (Call, Feature.fCall),
    (Let, Feature.fLet),
    (If, Feature.fIf),
    (RefCreate, Feature.fRefCreate),
    (RefRead, Feature.fRefRead),
    (RefWrite, Feature.fRefWrite),
    (GlobalRef, Feature.fGlobalVar),
    (Constructor, Feature.fConstructor),
    (Match, Feature.fMatch),
)


@legacy_api("relay.analysis")
def detect_feature(a: Any, b: Any = None) -> set[Feature]:
    """Relay's ``detect_feature``: the features an expression, a module, or both use.

    Parameters
    ----------
    a, b : Expr or tvm.IRModule
        An expression, a module (every function the front end built), or one of each.

    Returns
    -------
    set of Feature
        ``fGraph`` when a computed value (not a variable, constant or op) has two users, as
        Relay said.
    """
    roots: list[Any] = []
    for item in (a, b):
        if isinstance(item, tvm.IRModule):
            roots += [relay_node(f) for f in item.functions.values() if _has_origin(f)]
        elif item is not None:
            roots.append(relay_node(item))
    found: set[Feature] = set()
    for root in roots:  # each function on its own, as Relay did
        users: dict[int, int] = {}
        for node in post_order(root):
            heads = [node, node.op] if isinstance(node, Call) else [node]
            for cls, feature in _FEATURES:
                if any(isinstance(n, cls) for n in heads):
                    found.add(feature)
            for child in _computed_children(node):
                users[id(child)] = users.get(id(child), 0) + 1
        if any(count > 1 for count in users.values()):
            found.add(Feature.fGraph)
    return found


def _has_origin(func: Any) -> bool:
    try:
        relay_node(func)
    except TypeError:
        return False
    return True


def _computed_children(node: Any) -> list[Any]:
    from .graph import children

    kids = children(node)
    return [c for c in kids if isinstance(c, Call | Tuple | TupleGetItem | If | Let)]
