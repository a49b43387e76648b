"""Accept the two legacy ``relay.backend.*`` keys in ``tvm.transform.PassContext(config=...)``.

Modern TVM rejects unknown config keys in C++ and offers no Python API to register new ones. So
the shim wraps three methods of the one ``PassContext`` class (every import spelling of it sees
the change):

* ``__init__`` removes ``relay.backend.use_auto_scheduler`` and
  ``relay.backend.disable_compile_engine_cache`` from ``config`` (warning once per use), hands the
  rest to TVM unchanged, and remembers the two values for that context;
* ``__enter__``/``__exit__`` push and pop those values on a per-thread stack.

The same ``__init__`` translates the pass-config keys of TVM <=0.19 that TVM 0.27 lacks
(:data:`~compile_engine_compat.api_table.LEGACY_CONFIG_KEYS`): a renamed key
(``tir.disable_vectorize`` -> ``tirx.disable_vectorize``) is passed on under its new name with a
warning naming it; a key whose pass or machinery is gone (``relay.*``, ``te.*``,
``tir.detect_global_barrier``, ``tir.usmp.*``, ``cuda.kernels_output_dir``, ...) is accepted and
dropped with one warning saying what it no longer does, as TVM 0.19 accepted every key it
registered. A key the installed TVM still registers is left alone.

A config without these keys goes to TVM exactly as written, so every other behaviour (errors for
other unknown keys, type checks, ``PassContext.current().config``) is TVM's own. The two keys never
reach C++: read them with :func:`current_config`, not ``PassContext.current().config``.

Off switch: set ``COMPILE_ENGINE_COMPAT_PASSCONFIG=off`` before importing the shim, or call
:func:`uninstall` (``compile_engine_compat.uninstall_pass_config()``); the keys are then rejected
by TVM as usual.
"""

from __future__ import annotations

import collections
import functools
import os
import threading
from typing import Any

from tvm.ir import transform

from compile_engine_compat.api_table import CONFIG_KEYS, LEGACY_CONFIG_KEYS
from compile_engine_compat.boundary import (
    handle_of,
    pass_context_params,
    patch_attribute,
    restore_attribute,
)
from compile_engine_compat.deprecations import warn_legacy
from compile_engine_compat.runtime import threads

__all__ = [
    "DISABLE_COMPILE_ENGINE_CACHE",
    "KEYS",
    "OFF_ENV",
    "READ_LEGACY_KEYS",
    "USE_AUTO_SCHEDULER",
    "caching_enabled",
    "current_config",
    "install",
    "installed",
    "uninstall",
]

#: The keys the engine reads, from the API table's pass-config rows.
KEYS = CONFIG_KEYS
USE_AUTO_SCHEDULER, DISABLE_COMPILE_ENGINE_CACHE = KEYS
_ALL_LEGACY_KEYS = frozenset((*KEYS, *LEGACY_CONFIG_KEYS))
#: Dropped TVM <=0.19 keys whose value a served pass still reads (through current_config).
READ_LEGACY_KEYS = frozenset(
    {"relay.ToMixedPrecision.keep_orig_output_dtype", "relay.FuseOps.link_params"}
)
OFF_ENV = "COMPILE_ENGINE_COMPAT_PASSCONFIG"

_PassContext = transform.PassContext
_INIT_PARAMS = pass_context_params()
# TVM's own methods, which the wrappers call (read before any patch).
_ORIGINALS = {name: _PassContext.__dict__[name] for name in ("__init__", "__enter__", "__exit__")}

# Context handle -> (context, legacy values). The context is held so that its handle stays unique.
# PassContext objects take no attributes and no weak references, hence this side table; it is
# bounded because a context built but never entered would otherwise stay forever.
_MAX_REMEMBERED = 1024
_remembered: collections.OrderedDict[int, tuple[Any, dict[str, bool]]] = collections.OrderedDict()
_remembered_lock = threads.fork_safe(threading.Lock())
_tls = threading.local()


def _as_bool(key: str, value: Any) -> bool:
    if isinstance(value, bool) or (isinstance(value, int) and value in (0, 1)):
        return bool(value)
    # TVM's own wording for a mistyped Bool option.
    raise AttributeError(
        f"Expect config {key} to have type bool, but instead get {type(value).__qualname__}"
    )


@functools.cache
def _registered_configs() -> frozenset[str]:
    # Probed once: the keys this TVM registers (a feature probe, not a version test).
    return frozenset(str(key) for key in _PassContext.list_configs())


def _translate_legacy_key(key: str, rest: dict[str, Any]) -> None:
    """Rename or drop one TVM <=0.19 key in ``rest``, with one warning saying which.

    A key the installed TVM still registers is left as it is.
    """
    if key in _registered_configs():
        return
    new = LEGACY_CONFIG_KEYS[key][0]
    warn_legacy(key)
    value = rest.pop(key)
    if new is not None:
        rest[new] = value


def _split_config(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, ...] | None:
    """Return (args, kwargs, legacy values) with the legacy keys handled, or None if absent.

    The two ``relay.backend`` keys of the engine are removed and their values kept; TVM <=0.19
    keys of :data:`LEGACY_CONFIG_KEYS` are renamed or dropped.
    """
    index = _INIT_PARAMS.index("config")
    in_kwargs = "config" in kwargs
    config = kwargs["config"] if in_kwargs else (args[index] if len(args) > index else None)
    if not config or not any(key in _ALL_LEGACY_KEYS for key in config):
        return None
    rest = dict(config)
    legacy = {}
    for key in KEYS:
        if key in rest:
            warn_legacy(key)
            legacy[key] = _as_bool(key, rest.pop(key))
    for key in [key for key in rest if key in LEGACY_CONFIG_KEYS]:
        if key in READ_LEGACY_KEYS:
            legacy[key] = _as_bool(key, rest[key])
        _translate_legacy_key(key, rest)
    if in_kwargs:
        kwargs = {**kwargs, "config": rest}
    else:
        args = (*args[:index], rest, *args[index + 1 :])
    return args, kwargs, legacy


def _init(self: Any, *args: Any, **kwargs: Any) -> None:
    split = _split_config(args, kwargs)
    if split is None:
        _ORIGINALS["__init__"](self, *args, **kwargs)
        return
    args, kwargs, legacy = split
    _ORIGINALS["__init__"](self, *args, **kwargs)
    if not legacy:  # only renamed or dropped TVM <=0.19 keys: nothing to remember
        return
    with _remembered_lock:
        _remembered[handle_of(self)] = (self, legacy)
        while len(_remembered) > _MAX_REMEMBERED:
            _remembered.popitem(last=False)


def _stack() -> list[tuple[int, dict[str, bool]]]:
    stack = getattr(_tls, "stack", None)
    if stack is None:
        stack = _tls.stack = []
    return stack


def _enter(self: Any) -> Any:
    result = _ORIGINALS["__enter__"](self)
    if _remembered:
        handle = handle_of(self)
        with _remembered_lock:
            entry = _remembered.get(handle)
        if entry is not None:
            _stack().append((handle, entry[1]))
    return result


def _exit(self: Any, ptype: Any, value: Any, trace: Any) -> Any:
    result = _ORIGINALS["__exit__"](self, ptype, value, trace)
    stack = getattr(_tls, "stack", None)
    if stack and stack[-1][0] == handle_of(self):
        stack.pop()
    return result


def current_config() -> dict[str, bool]:
    """Return the legacy ``relay.backend.*`` values of the current PassContext ({} if none),
    and those of :data:`READ_LEGACY_KEYS`.

    Like any PassContext config, it is the innermost context's own: an inner context without the
    keys hides an outer one's values.
    """
    stack = getattr(_tls, "stack", None)
    if not stack:
        return {}
    handle, legacy = stack[-1]
    return legacy if handle_of(_PassContext.current()) == handle else {}


def caching_enabled() -> bool:
    """False inside a PassContext with ``relay.backend.disable_compile_engine_cache=True``."""
    if not getattr(_tls, "stack", None):
        return True
    return not current_config().get(DISABLE_COMPILE_ENGINE_CACHE, False)


def installed() -> bool:
    """Return True when PassContext accepts the legacy keys."""
    return _PassContext.__dict__["__init__"] is _init


def install() -> None:
    """Make PassContext accept the legacy keys (done on import unless ``OFF_ENV=off``)."""
    for name, method in (("__init__", _init), ("__enter__", _enter), ("__exit__", _exit)):
        patch_attribute(_PassContext, name, method)


def uninstall() -> None:
    """Restore TVM's own PassContext methods: the legacy keys are rejected again."""
    for name in ("__init__", "__enter__", "__exit__"):
        restore_attribute(_PassContext, name)
    with _remembered_lock:
        _remembered.clear()


def install_from_env() -> None:
    """Install unless ``COMPILE_ENGINE_COMPAT_PASSCONFIG=off``."""
    if os.environ.get(OFF_ENV, "").strip().lower() != "off":
        install()
