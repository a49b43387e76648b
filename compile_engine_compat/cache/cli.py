"""``compile-engine-compat cache info|clear``: inspect or empty the persistent compile cache."""

from __future__ import annotations

import sys
import warnings
from collections.abc import Sequence

_USAGE = (
    "usage: compile-engine-compat cache info|clear\n\n"
    "  info   show the cache directory, its entries, size and size limit\n"
    "  clear  remove every cached kernel\n\n"
    "The cache is on when COMPILE_ENGINE_COMPAT_CACHE_DIR is set; "
    "COMPILE_ENGINE_COMPAT_CACHE_SIZE_MB bounds it (default 1024)."
)
_MIB = 1024 * 1024


def main(argv: Sequence[str]) -> int:
    """Run ``cache info`` or ``cache clear``.

    Parameters
    ----------
    argv : sequence of str
        The arguments after ``cache``.

    Returns
    -------
    int
        0 on success, 1 for an unsafe cache directory, 2 for a usage error.
    """
    args = list(argv)
    if len(args) != 1 or args[0] not in ("info", "clear"):
        print(_USAGE, file=sys.stderr if args[:1] not in (["-h"], ["--help"]) else sys.stdout)
        return 0 if args[:1] in (["-h"], ["--help"]) else 2
    from compile_engine_compat.cache import disk as _disk_cache  # late: imports TVM

    # A cache warning (a bad COMPILE_ENGINE_COMPAT_CACHE_SIZE_MB, a discarded entry) is one line
    # on stderr here, not Python's two-line warning display.
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", _disk_cache.CompileCacheWarning)
        status = _run(args[0])
    for warning in caught:
        if issubclass(warning.category, _disk_cache.CompileCacheWarning):
            message = str(warning.message).removeprefix("compile cache: ")
            print(f"compile-engine-compat cache: warning: {message}", file=sys.stderr)
        else:
            warnings.showwarning(
                warning.message, warning.category, warning.filename, warning.lineno
            )
    return status


def _run(command: str) -> int:
    from compile_engine_compat.cache import disk as _disk_cache

    try:
        if command == "info":
            details = _disk_cache.info()
            if details["directory"] is None:
                print(f"cache: off ({_disk_cache.CACHE_DIR_ENV} is not set)")
                return 0
            print(f"cache directory: {details['directory']}")
            print(f"entries: {details['entries']}")
            print(f"indexed source functions: {details['indexed_functions']}")
            if details["leftovers"]:
                minutes = _disk_cache.LEFTOVER_AGE_S // 60
                print(
                    f"staging leftovers: {details['leftovers']} (killed writers; "
                    f"reclaimed after {minutes} min)"
                )
            used, limit = details["bytes"] / _MIB, details["limit_bytes"] / _MIB
            print(f"size: {used:.1f} MiB of {limit:.0f} MiB")
            return 0
        removed = _disk_cache.clear()
        print(
            f"removed {removed.entries} cached kernel(s) and {removed.leftovers} staging "
            "leftover(s)"
        )
        return 0
    except _disk_cache.CacheDirectoryError as err:
        print(f"compile-engine-compat cache: {err}", file=sys.stderr)
        return 1
