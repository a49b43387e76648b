"""The ``compile-engine-compat`` command line.

Each subcommand lives in its own module and registers itself in :data:`SUBCOMMANDS` as
``name -> "module:function"``; the function takes the parsed arguments' remainder (a list of
strings) and returns an exit code. Modules load only when their subcommand runs, so ``--help``
stays fast and never imports TVM.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence

from compile_engine_compat.version import __version__

#: subcommand -> ("module:function", one-line help)
SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "demo": (
        "compile_engine_compat.examples.legacy_demo:main",
        "run a legacy-style program through the shim and check it against the new path",
    ),
    "cache": (
        "compile_engine_compat.cache.cli:main",
        "info|clear|push|pull|verify: the persistent compile cache and its remote tier",
    ),
    "scan": (
        "compile_engine_compat.migrate.scan:main",
        "find uses of the legacy API in .py/.ipynb files (exit 1 if any)",
    ),
    "fix": (
        "compile_engine_compat.migrate.fix:main",
        "swap legacy imports to the shim (--unsafe: rewrite calls to modern TVM)",
    ),
    "op": (
        "compile_engine_compat.pipeline.op_sources:main",
        "print where an op's TE comes from (user strategy, fallback or legalization)",
    ),
    "docs": (
        "compile_engine_compat.migrate.docs:main",
        "print or check MIGRATION.md, generated from the API table",
    ),
}


def _usage() -> str:
    width = max(len(name) for name in SUBCOMMANDS)
    lines = ["usage: compile-engine-compat [--version] <command> [args...]", "", "commands:"]
    lines += [f"  {name.ljust(width)}  {text}" for name, (_, text) in SUBCOMMANDS.items()]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the console script.

    Parameters
    ----------
    argv : sequence of str, optional
        Arguments without the program name; defaults to ``sys.argv[1:]``.

    Returns
    -------
    int
        The process exit code.
    """
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] in (["--version"], ["-V"]):
        print(f"compile-engine-compat {__version__}")
        return 0
    if not args or args[0] in ("-h", "--help", "help"):
        print(_usage())
        return 0 if args else 2
    command, rest = args[0], args[1:]
    if command not in SUBCOMMANDS:
        print(f"compile-engine-compat: unknown command {command!r}\n\n{_usage()}", file=sys.stderr)
        return 2
    module_name, func_name = SUBCOMMANDS[command][0].split(":")
    func = getattr(importlib.import_module(module_name), func_name)
    return int(func(rest) or 0)


if __name__ == "__main__":
    sys.exit(main())
