"""``compile-engine-compat cache info|clear|push|pull|verify``: the compile cache's two tiers."""

from __future__ import annotations

import sys
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

_USAGE = (
    "usage: compile-engine-compat cache info|clear|push|pull|verify [--delete] [PREFIX]\n\n"
    "  info    show both tiers: the local directory (entries, size, limit), the remote store,\n"
    "          and the hits, misses, rejections (by reason) and bytes counted in this directory\n"
    "  clear   remove every local entry and the counters (the remote store is left alone)\n"
    "  push    sign and write every local entry the remote store lacks\n"
    "  pull    verify and store locally every remote entry of this TVM and shim\n"
    "  verify  check the signature of every remote entry (under PREFIX); --delete removes\n"
    "          the refused ones; exit 1 if any is refused\n\n"
    "The local cache is on when COMPILE_ENGINE_COMPAT_CACHE_DIR is set; "
    "COMPILE_ENGINE_COMPAT_CACHE_SIZE_MB bounds it (default 1024).\n"
    "The remote tier: COMPILE_ENGINE_COMPAT_REMOTE_CACHE (redis://host:port/db, s3://bucket/prefix,\n"
    "file:///path, ...) and a key in COMPILE_ENGINE_COMPAT_CACHE_KEY (see docs/remote-cache.md)."
)
_MIB = 1024 * 1024
_COMMANDS = ("info", "clear", "push", "pull", "verify")


def main(argv: Sequence[str]) -> int:
    """Run a ``cache`` subcommand.

    Parameters
    ----------
    argv : sequence of str
        The arguments after ``cache``.

    Returns
    -------
    int
        0 on success; 1 for an unsafe cache directory, a failed remote job or refused entries;
        2 for a usage error.
    """
    args = list(argv)
    if args[:1] in (["-h"], ["--help"]):
        print(_USAGE)
        return 0
    if not args or args[0] not in _COMMANDS or not _valid_options(args):
        print(_USAGE, file=sys.stderr)
        return 2
    from compile_engine_compat.cache import disk as _disk_cache  # late: imports TVM

    # A cache warning (a bad COMPILE_ENGINE_COMPAT_CACHE_SIZE_MB, a discarded entry, a refused
    # remote entry) is one line on stderr here, not Python's two-line warning display.
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", _disk_cache.CompileCacheWarning)
        status = _run(args[0], args[1:])
    for warning in caught:
        if issubclass(warning.category, _disk_cache.CompileCacheWarning):
            message = str(warning.message).removeprefix("compile cache: ")
            print(f"compile-engine-compat cache: warning: {message}", file=sys.stderr)
        else:
            warnings.showwarning(
                warning.message, warning.category, warning.filename, warning.lineno
            )
    return status


def _valid_options(args: list[str]) -> bool:
    rest = args[1:]
    if args[0] != "verify":
        return not rest
    rest = [a for a in rest if a != "--delete"]
    return len(rest) <= 1 and not any(a.startswith("-") for a in rest)


def _run(command: str, options: list[str]) -> int:
    from compile_engine_compat.cache import disk as _disk_cache
    from compile_engine_compat.cache import sync

    commands: dict[str, Callable[[list[str]], int]] = {
        "info": _info,
        "clear": _clear,
        "push": _push,
        "pull": _pull,
        "verify": _verify,
    }
    try:
        return commands[command](options)
    except _disk_cache.CacheDirectoryError as err:
        print(f"compile-engine-compat cache: {err}", file=sys.stderr)
        return 1
    except sync.SyncError as err:
        print(f"compile-engine-compat cache {command}: {err}", file=sys.stderr)
        return 1


def _info(_: list[str]) -> int:
    from compile_engine_compat.cache import disk as _disk_cache
    from compile_engine_compat.cache import remote, stats

    details = _disk_cache.info()
    if details["directory"] is None:
        print(f"cache: off ({_disk_cache.CACHE_DIR_ENV} is not set)")
        return 0
    print(f"cache directory: {details['directory']}")
    kinds = ", ".join(f"{kind} {count}" for kind, count in details["kinds"].items())
    print(f"entries: {details['entries']}" + (f" ({kinds})" if kinds else ""))
    print(f"indexed source functions: {details['indexed_functions']}")
    if details["leftovers"]:
        minutes = _disk_cache.LEFTOVER_AGE_S // 60
        print(
            f"staging leftovers: {details['leftovers']} (killed writers; "
            f"reclaimed after {minutes} min)"
        )
    used, limit = details["bytes"] / _MIB, details["limit_bytes"] / _MIB
    print(f"size: {used:.1f} MiB of {limit:.0f} MiB")
    tier = remote.tier()
    if tier is None:
        print(f"remote cache: {remote.off_reason()}")
    else:
        print(f"remote cache: {tier.url} ({tier.status()})")
        print(
            f"  key id {tier.key.key_id}, timeout {tier.settings.timeout_s:g} s, entries up "
            f"to {tier.settings.max_entry_bytes / _MIB:.0f} MiB, namespace {tier.namespace}"
        )
        print(f"  store: {_described(tier)}")
    local, remote_line = stats.describe(stats.totals(Path(details["directory"])))
    print(f"counted here (since the last clear): {local}; {remote_line}")
    return 0


def _described(tier: Any) -> str:
    try:
        facts = tier.call(tier.backend.describe, tier.settings.timeout_s * 5)
    except Exception as err:  # info never fails because of the remote
        return f"unreachable ({type(err).__name__}: {str(err).strip()[:120]})"
    return ", ".join(f"{name} {value}" for name, value in facts.items())


def _clear(_: list[str]) -> int:
    from compile_engine_compat.cache import disk as _disk_cache

    removed = _disk_cache.clear()
    print(
        f"removed {removed.entries} cached kernel(s) and {removed.leftovers} staging "
        "leftover(s); the remote store is left alone"
    )
    return 0


def _push(_: list[str]) -> int:
    from compile_engine_compat.cache import sync

    return _transferred(sync.push(), "pushed", "MiB", "already there")


def _pull(_: list[str]) -> int:
    from compile_engine_compat.cache import sync

    return _transferred(sync.pull(), "pulled", "MiB read", "already here")


def _transferred(outcome: Any, verb: str, unit: str, skipped: str) -> int:
    print(
        f"{verb} {outcome.done} entries ({outcome.bytes / _MIB:.1f} {unit}), "
        f"{outcome.skipped} {skipped}" + _refused(outcome)
    )
    return 0


def _verify(options: list[str]) -> int:
    from compile_engine_compat.cache import sync

    prefixes = [o for o in options if o != "--delete"]
    outcome = sync.verify(prefixes[0] if prefixes else "", delete="--delete" in options)
    refused = sum(outcome.refused.values())
    print(
        f"{outcome.done} entries verified, {refused} refused"
        + _reasons(outcome)
        + (" and deleted" if refused and "--delete" in options else "")
    )
    return 1 if refused else 0


def _refused(outcome: Any) -> str:
    refused = sum(outcome.refused.values())
    return f", {refused} refused{_reasons(outcome)}" if refused else ""


def _reasons(outcome: Any) -> str:
    if not outcome.refused:
        return ""
    return " (" + ", ".join(f"{k} {v}" for k, v in sorted(outcome.refused.items())) + ")"
