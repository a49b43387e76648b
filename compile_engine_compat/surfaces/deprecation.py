"""Deprecation machinery and the call-site ledger, in one place.

Every public legacy entry point calls :func:`warn_legacy` first thing. It

1. walks the stack out of this package to the user's frame,
2. counts the call in the in-process ledger under ``(api, file, line)``,
3. issues a :class:`CompileEngineDeprecationWarning` attributed to the user's line.

Display policy (``COMPILE_ENGINE_COMPAT_WARN``):

``once`` (default)
    Shown once per call site, like Python's ``default`` action. User filters (``-W``,
    ``PYTHONWARNINGS``, pytest's ``filterwarnings``) still take precedence.
``all``
    Shown on every call.
``off``
    Not shown. Calls are still counted.

Counting never depends on display: :func:`silenced` and ``off`` hide warnings, the ledger still
records every call.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import os
import threading
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from types import FrameType
from typing import Any, Literal, TypeVar, cast

import deprecation

from compile_engine_compat._boundary import caller_frame
from compile_engine_compat.migrate.api_table import LegacyApi, lookup

__all__ = [
    "CompileEngineDeprecationWarning",
    "LedgerEntry",
    "ledger",
    "legacy_api",
    "reset_ledger",
    "silenced",
    "warn_legacy",
]

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
# The bundled legacy programs are user code as far as warnings and the ledger are concerned.
_EXAMPLES_DIR = os.path.join(_PACKAGE_DIR, "examples") + os.sep
WARN_ENV = "COMPILE_ENGINE_COMPAT_WARN"


class CompileEngineDeprecationWarning(deprecation.DeprecatedWarning):
    """Raised (as a warning) by every call into the legacy compile_engine / te_compiler API.

    A :class:`DeprecationWarning` subclass (through :class:`deprecation.DeprecatedWarning`), so
    ``-W error::DeprecationWarning`` and ``filterwarnings("ignore", category=...)`` both work.

    Attributes
    ----------
    api : str
        The legacy name called, e.g. ``"compile_engine.CompileEngine.lower"``.
    replacement : str
        The modern code to use instead.
    docs : str
        Link to the migration guide's section for this name.
    """

    def __init__(self, row: LegacyApi) -> None:
        self.api = row.name
        self.replacement = row.replacement
        self.docs = row.docs
        super().__init__(
            row.name,
            f"TVM {row.since}",
            f"compile-engine-compat {row.removed_in}",
            f"Use {row.replacement}. See {row.docs}",
        )
        self._text = _message_text(row)

    def __str__(self) -> str:
        # The warnings registry formats the message on every call; keep that a lookup.
        return self._text

    def __reduce__(self) -> tuple[Any, ...]:
        # Warnings cross process boundaries in pytest-xdist; rebuild from the table.
        return (_warning_for, (self.api, self.replacement))


def _warning_for(api: str, replacement: str | None = None) -> CompileEngineDeprecationWarning:
    row = lookup(api)
    if replacement is not None and replacement != row.replacement:
        row = dataclasses.replace(row, replacement=replacement)
    return CompileEngineDeprecationWarning(row)


@functools.cache
def _message_text(row: LegacyApi) -> str:
    return deprecation.DeprecatedWarning.__str__(
        deprecation.DeprecatedWarning(
            row.name,
            f"TVM {row.since}",
            f"compile-engine-compat {row.removed_in}",
            f"Use {row.replacement}. See {row.docs}",
        )
    )


# -- the ledger ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class LedgerEntry:
    """One call site of the legacy API and how often it was called."""

    api: str
    filename: str
    lineno: int
    count: int


_ledger_lock = threading.Lock()
_ledger: dict[tuple[str, str, int], int] = {}
# A fork while another thread holds the lock would leave the child's copy locked forever.
os.register_at_fork(
    before=_ledger_lock.acquire,
    after_in_parent=_ledger_lock.release,
    after_in_child=_ledger_lock.release,
)


def ledger() -> list[LedgerEntry]:
    """Return a snapshot of every legacy call counted so far in this process.

    Returns
    -------
    list of LedgerEntry
        One entry per ``(api, filename, lineno)``, most-called first.
    """
    with _ledger_lock:
        items = list(_ledger.items())
    entries = [LedgerEntry(api, fn, ln, count) for (api, fn, ln), count in items]
    entries.sort(key=lambda e: (-e.count, e.filename, e.lineno, e.api))
    return entries


def reset_ledger() -> None:
    """Forget every counted call (tests and long-running services use this)."""
    with _ledger_lock:
        _ledger.clear()


# -- display policy -----------------------------------------------------------------------------

_local = threading.local()


@contextlib.contextmanager
def silenced() -> Iterator[None]:
    """Hide legacy-API warnings in this thread inside the block; calls are still counted.

    Exception-safe and re-entrant.

    Examples
    --------
    >>> with compile_engine_compat.silenced():
    ...     engine.jit(func, "llvm")
    """
    _local.silenced = getattr(_local, "silenced", 0) + 1
    try:
        yield
    finally:
        _local.silenced -= 1


def _install_display_filter() -> None:
    """Make the category visible by default without overriding any filter the user set.

    Python ignores DeprecationWarning outside ``__main__`` by default. We insert our own
    entry just before Python's built-in DeprecationWarning entries, so ``-W``,
    ``PYTHONWARNINGS`` and pytest filters, which sit in front of them, still win.
    """
    mode = os.environ.get(WARN_ENV, "once").strip().lower()
    if mode == "off":
        return
    action: Literal["always", "default"] = "always" if mode == "all" else "default"
    entry = (action, None, CompileEngineDeprecationWarning, None, 0)
    filters = cast(list[Any], warnings.filters)
    position = len(filters)
    for index, (kind, message, category, module, _) in enumerate(filters):
        # Python's built-in entries: "default::DeprecationWarning:__main__", "ignore::Deprec...".
        builtin_main = kind == "default" and getattr(module, "pattern", module) == "__main__"
        builtin_ignore = kind == "ignore" and module is None
        if category is DeprecationWarning and message is None and (builtin_main or builtin_ignore):
            position = index
            break
    filters.insert(position, entry)
    warnings._filters_mutated()  # type: ignore[attr-defined]


def _display_enabled() -> bool:
    return os.environ.get(WARN_ENV, "once").strip().lower() != "off"


_install_display_filter()


# -- issuing ------------------------------------------------------------------------------------


def _user_frame() -> tuple[FrameType | None, int]:
    """Return the first frame outside this package and its ``stacklevel`` for ``warnings.warn``.

    Level 1 is the caller of ``warnings.warn`` (i.e. :func:`warn_legacy`).
    """
    frame: FrameType | None = caller_frame(2)  # warn_legacy's caller
    level = 2
    while frame is not None:
        filename = frame.f_code.co_filename
        if not filename.startswith(_PACKAGE_DIR) or filename.startswith(_EXAMPLES_DIR):
            break
        frame = frame.f_back
        level += 1
    return frame, level


def _filtered_out(api: str, frame: FrameType) -> bool:
    """Would ``warnings.warn`` of ``api``'s warning at ``frame`` hit an ``ignore`` filter?

    The first matching entry of ``warnings.filters`` decides, as in ``warnings.warn`` itself
    (message, category, module and line). Building the warning costs ~2 us of a ~45 us cache
    hit, and code that silences the category pays it on every call otherwise.
    """
    module = frame.f_globals.get("__name__", "<string>")
    lineno = frame.f_lineno
    text = _message_text(lookup(api))
    for action, message, category, module_re, line in warnings.filters:
        if (
            (message is None or message.match(text))
            and issubclass(CompileEngineDeprecationWarning, category)
            and (module_re is None or module_re.match(module))
            and (line == 0 or line == lineno)
        ):
            return bool(action == "ignore")
    return bool(getattr(warnings, "defaultaction", "default") == "ignore")


def warn_legacy(api: str, replacement: str | None = None) -> None:
    """Count one call of ``api`` and warn at the user's line.

    Call this before any ``try`` that converts errors, so that ``-W error`` is never swallowed.

    Parameters
    ----------
    api : str
        A row name of the API table.
    replacement : str, optional
        The modern spelling of this very use, where it depends on the arguments (a target
        string's dict form); the row's generic replacement otherwise.
    """
    frame, level = _user_frame()
    if frame is None:
        key = (api, "<unknown>", 0)
    else:
        key = (api, frame.f_code.co_filename, frame.f_lineno)
    with _ledger_lock:
        _ledger[key] = _ledger.get(key, 0) + 1
    if getattr(_local, "silenced", 0) or not _DISPLAY:
        return
    if replacement is None and frame is not None and _filtered_out(api, frame):
        return  # an "ignore" filter would drop it: skip building the warning (the hot path)
    # A fresh instance per call: with an "error" filter it is raised, and a shared instance
    # would accumulate tracebacks.
    row = lookup(api)
    if replacement is not None:
        row = dataclasses.replace(row, replacement=replacement)
    warnings.warn(CompileEngineDeprecationWarning(row), stacklevel=level)


_DISPLAY = _display_enabled()


F = TypeVar("F", bound=Callable[..., Any])


def legacy_api(api: str) -> Callable[[F], F]:
    """Decorate a legacy entry point: warn on every call and note the deprecation in its docstring.

    The docstring gains a ``.. deprecated::`` block, as :func:`deprecation.deprecated` writes it.

    Parameters
    ----------
    api : str
        A row name of the API table.
    """
    row = lookup(api)

    def decorate(func: F) -> F:
        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            warn_legacy(api)
            return func(*args, **kwargs)

        doc = func.__doc__ or ""
        wrapper.__doc__ = (
            f"{doc.rstrip()}\n\n    .. deprecated:: TVM {row.since}\n"
            f"       Removed upstream; will be removed from compile-engine-compat "
            f"{row.removed_in}.\n       Use {row.replacement}.\n"
        )
        wrapper.__legacy_api__ = api  # type: ignore[attr-defined]
        return wrapper  # type: ignore[return-value]

    return decorate
