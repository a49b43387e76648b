"""libcst, made lean for ``scan`` and ``fix``: a metadata wrapper that skips empty walks.

libcst resolves metadata with walks over every node and looks its providers' visitor methods up
with ``inspect.getmembers`` at every traversal. :class:`LeanMetadataWrapper` skips the walks that
would call nothing, and the providers' method names are cached per class: a class patch of
libcst's providers, which :mod:`compile_engine_compat.boundary` applies (``patch_attribute``,
listed in ``PROCESS_PATCHES``) when the first wrapper is made, never at import.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterable
from typing import Any

import libcst as cst
import libcst.metadata as md

from compile_engine_compat.boundary import patch_attribute

__all__ = ["LeanMetadataWrapper", "parsed"]

_VISITOR_NAMES: dict[type, tuple[str, ...]] = {}


def _cached_get_visitors(self: cst.BatchableCSTVisitor) -> dict[str, Any]:
    """``BatchableCSTVisitor.get_visitors`` with the method names cached per class.

    libcst calls ``inspect.getmembers`` on each metadata provider at every traversal: ~3 ms a
    provider, about a third of scanning a small file. The names depend only on the class, so
    they are looked up once; the bound methods are still this instance's, and the result is the
    same mapping.
    """
    names = _VISITOR_NAMES.get(type(self))
    if names is None:
        names = tuple(cst.BatchableCSTVisitor.get_visitors(self))
        _VISITOR_NAMES[type(self)] = names
    return {name: getattr(self, name) for name in names}


@functools.cache
def _cache_visitor_names() -> None:
    """Give libcst's providers :func:`_cached_get_visitors`, once, on the first wrapper made.

    Only the providers scan and fix use (ScopeProvider's own dependency,
    ExpressionContextProvider, included), and only where they do not define their own.
    """
    for provider in (
        md.ScopeProvider,
        md.ExpressionContextProvider,
        md.QualifiedNameProvider,
        md.PositionProvider,
        md.ParentNodeProvider,
    ):
        if "get_visitors" not in vars(provider):
            patch_attribute(provider, "get_visitors", _cached_get_visitors)


class LeanMetadataWrapper(md.MetadataWrapper):
    """A ``MetadataWrapper`` that skips the empty walks of providers that work in ``visit_Module``.

    libcst resolves its batchable providers (``ExpressionContextProvider``, ``ScopeProvider``)
    with a batched walk over every node, calling each provider's ``visit_<Node>`` methods. Those
    two define ``visit_Module`` only, which walks the module with a visitor of its own: the
    batched walk then visits every other node for nothing (a fifth of a file's libcst time). For a
    batch whose providers define no other method, this calls ``visit_Module`` alone, with the
    same metadata resolved; any other batch is walked as libcst walks it.
    """

    def __init__(self, module: cst.Module, unsafe_skip_copy: bool = False, **kwargs: Any) -> None:
        _cache_visitor_names()
        super().__init__(module, unsafe_skip_copy, **kwargs)

    def visit_batched(
        self,
        visitors: Iterable[cst.BatchableCSTVisitor],
        before_visit: Callable[[cst.CSTNode], None] | None = None,
        after_leave: Callable[[cst.CSTNode], None] | None = None,
    ) -> cst.CSTNode:
        """``MetadataWrapper.visit_batched``, without the walk when it would call nothing but
        ``visit_Module``."""
        visitors = list(visitors)
        if (
            before_visit is not None
            or after_leave is not None
            or any(set(visitor.get_visitors()) - {"visit_Module"} for visitor in visitors)
        ):
            return super().visit_batched(visitors, before_visit, after_leave)
        with contextlib.ExitStack() as stack:
            for visitor in visitors:
                stack.enter_context(visitor.resolve(self))
            for visitor in visitors:
                visit_module = visitor.get_visitors().get("visit_Module")
                if visit_module is not None:
                    visit_module(self.module)
        return self.module


def parsed(code: str) -> LeanMetadataWrapper:
    """``code`` parsed by libcst and wrapped for metadata; the module is the wrapper's own, not a
    deep copy (which cost a tenth of a scan)."""
    return LeanMetadataWrapper(cst.parse_module(code), unsafe_skip_copy=True)
