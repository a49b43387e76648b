"""Deprecation machinery and the call-site ledger, in one place.

Every legacy entry point is made by :func:`legacy_api` from its row of the API table (directly, or
through :func:`legacy_surface` for the rows that name an un-warned core). Each call runs
:func:`warn_legacy` first thing, unless the package itself calls with ``**INTERNAL``. It

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
import importlib
import os
import threading
import warnings
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from types import FrameType, MappingProxyType
from typing import Any, Literal, TypeVar, cast

import deprecation

from compile_engine_compat.api_table import API_TABLE, LegacyApi, lookup
from compile_engine_compat.boundary import at_fork_in_child, caller_frame, insert_warnings_filter

__all__ = [
    "INTERNAL",
    "CompileEngineDeprecationWarning",
    "LedgerEntry",
    "LegacyObject",
    "ledger",
    "legacy_api",
    "legacy_surface",
    "reset_ledger",
    "silenced",
    "warn_legacy",
]

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep
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
        self._text = message_text(row)

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
def message_text(row: LegacyApi) -> str:
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
at_fork_in_child(
    _ledger_lock.release, before=_ledger_lock.acquire, after_in_parent=_ledger_lock.release
)


def ledger_counts() -> dict[tuple[str, str, int], int]:
    """Return a plain copy of the ledger's counts, keyed by ``(api, filename, lineno)``.

    A few microseconds: what a pytest worker takes after every test phase, where :func:`ledger`
    builds and sorts an entry per site.
    """
    with _ledger_lock:
        return dict(_ledger)


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


class _ThreadState(threading.local):
    """Per-thread display state. The class default makes a thread that never silenced read 0
    without a failed lookup (``getattr`` with a default on a ``threading.local`` costs ~0.4 us,
    a tenth of a cache hit's overhead)."""

    silenced = 0


_local = _ThreadState()


@contextlib.contextmanager
def silenced() -> Iterator[None]:
    """Hide legacy-API warnings in this thread inside the block; calls are still counted.

    Exception-safe and re-entrant.

    Examples
    --------
    >>> with compile_engine_compat.silenced():
    ...     engine.jit(func, "llvm")
    """
    _local.silenced += 1
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
    insert_warnings_filter(position, entry)


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


@functools.cache
def _api_message_text(api: str) -> str:
    """:func:`message_text` of ``api``'s row, made once per row (rows never change)."""
    return message_text(lookup(api))


def _filtered_out(api: str, frame: FrameType, lineno: int) -> bool:
    """Would ``warnings.warn`` of ``api``'s warning at ``frame`` hit an ``ignore`` filter?

    The first matching entry of ``warnings.filters`` decides, as in ``warnings.warn`` itself
    (message, category, module and line). Building the warning costs ~2 us of a ~45 us cache
    hit, and code that silences the category pays it on every call otherwise.
    """
    module = frame.f_globals.get("__name__", "<string>")
    for action, message, category, module_re, line in warnings.filters:
        if (
            (message is None or message.match(_api_message_text(api)))
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
    lineno = 0 if frame is None else frame.f_lineno
    key = (api, "<unknown>" if frame is None else frame.f_code.co_filename, lineno)
    with _ledger_lock:
        _ledger[key] = _ledger.get(key, 0) + 1
    if _local.silenced or not _DISPLAY:
        return
    if replacement is None and frame is not None and _filtered_out(api, frame, lineno):
        return  # an "ignore" filter would drop it: skip building the warning (the hot path)
    # A fresh instance per call: with an "error" filter it is raised, and a shared instance
    # would accumulate tracebacks.
    row = lookup(api)
    if replacement is not None:
        row = dataclasses.replace(row, replacement=replacement)
    warnings.warn(CompileEngineDeprecationWarning(row), stacklevel=level)


_DISPLAY = _display_enabled()


F = TypeVar("F", bound=Callable[..., Any])

#: The one flag by which the package's own code calls a legacy function or method without a
#: warning and without counting a call (SQLAlchemy's ``_sa_skip_warning``): spread it into the call,
#: ``engine.lower(func, target, **INTERNAL)``. A ``**`` mapping, so that type checkers keep
#: checking the other arguments against the legacy signature.
SKIP_WARNING = "_skip_warning"
INTERNAL: Mapping[str, Any] = MappingProxyType({SKIP_WARNING: True})


def _deprecation_note(row: LegacyApi, doc: str | None) -> str:
    """``doc`` with the ``.. deprecated::`` note as :func:`deprecation.deprecated` writes it."""

    def stand_in() -> None:
        pass

    stand_in.__doc__ = doc
    noted = deprecation.deprecated(
        deprecated_in=f"TVM {row.since}",
        removed_in=f"compile-engine-compat {row.removed_in}",
        details=f"Use {row.replacement}. See {row.docs}",
    )(stand_in)
    return noted.__doc__ or ""


def legacy_api(api: str) -> Callable[[F], F]:
    """Make ``func`` the legacy entry point ``api``, from its row of the API table.

    The one decorator of the legacy surface: every call warns (:func:`warn_legacy`) and counts in
    the ledger, the docstring gains the row's ``.. deprecated::`` note as the ``deprecation``
    package writes it, and ``__legacy_api__`` names the row. Applied to a class, it does this for
    the class's construction. Callers inside the package pass ``**INTERNAL`` to run the
    un-warned core, uncounted.

    Parameters
    ----------
    api : str
        A row name of the API table.

    Returns
    -------
    callable
        The decorator. ``legacy_api(api)(core)`` makes a legacy function of an un-warned core
        (what :func:`legacy_surface` does for the rows that name one).
    """
    row = lookup(api)

    def decorate(func: F) -> F:
        if isinstance(func, type):
            return cast(F, _legacy_class(func))

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            if not (kwargs and kwargs.pop(SKIP_WARNING, False)):
                warn_legacy(api)
            return func(*args, **kwargs)

        wrapper.__doc__ = _deprecation_note(row, func.__doc__)
        wrapper.__legacy_api__ = api  # type: ignore[attr-defined]
        return wrapper  # type: ignore[return-value]

    def _legacy_class(cls: type) -> type:
        init: Callable[..., None] | None = cls.__dict__.get("__init__")
        if init is None:  # inherited: construct through the parent's core, counted as this row
            inherited: Callable[..., None] = getattr(cls, "__init__")  # noqa: B009
            flag = INTERNAL if hasattr(inherited, "__legacy_api__") else {}

            @functools.wraps(inherited)
            def through_parent(self: Any, *args: Any, **kwargs: Any) -> None:
                inherited(self, *args, **flag, **kwargs)

            init = through_parent

        setattr(cls, "__init__", decorate(init))  # noqa: B010
        cls.__doc__ = _deprecation_note(row, cls.__doc__)
        cls.__legacy_api__ = api  # type: ignore[attr-defined]
        return cls

    return decorate


class LegacyObject:
    """What the legacy ``tvm.runtime.Object`` gave the shim's records: ``same_as`` is identity."""

    __slots__ = ()

    def same_as(self, other: object) -> bool:
        """Return True when ``other`` is this very object (legacy ``Object.same_as``)."""
        return self is other


def legacy_surface(prefix: str) -> dict[str, Callable[..., Any]]:
    """The legacy functions under ``prefix``, made from the table rows that name their core.

    Like ``six``'s table of moved names, the rows are the surface: a row ``<prefix>.<name>`` whose
    ``core`` is ``"module:attribute"`` becomes ``legacy_api(row)(core)``. The shim modules and the
    registered ``relay.backend.*`` globals are these functions.

    Parameters
    ----------
    prefix : str
        A row-name prefix: ``"compile_engine"``, ``"te_compiler"`` or ``"relay.backend"``.

    Returns
    -------
    dict of str to callable
        Last name component -> the legacy function, in table order.
    """
    surface: dict[str, Callable[..., Any]] = {}
    for row in API_TABLE.values():
        parent, _, name = row.name.rpartition(".")
        if parent == prefix and row.core:
            module, _, attribute = row.core.partition(":")
            core: Any = importlib.import_module(module)
            for part in attribute.split("."):
                core = getattr(core, part)
            function = legacy_api(row.name)(core)
            # Named as the legacy function, in the shim module that serves it.
            function.__name__ = function.__qualname__ = name
            if row.shim.startswith("compile_engine_compat."):
                function.__module__ = row.shim.rpartition(".")[0]
            surface[name] = function
    return surface
