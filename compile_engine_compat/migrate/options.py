"""The command-line options ``scan`` and ``fix`` share: paths, settings overrides, the cache.

Each settings flag overrides its ``[tool.compile-engine-compat]`` key (:mod:`.config`); a flag
left out leaves the key's value. ``--extend-select``, ``--ignore`` and ``--extend-exclude`` add to
the key's list, as in ruff; ``--select`` and ``--exclude`` replace it.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from compile_engine_compat.migrate.config import Configs, parse_selectors, parse_version
from compile_engine_compat.version import __version__

__all__ = ["add_options", "configs_from", "overrides_from"]


def _list(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def add_options(parser: argparse.ArgumentParser) -> None:
    """Add the shared options to ``parser``."""
    parser.add_argument(
        "paths",
        nargs="*",
        default=["."],
        metavar="PATH",
        help=".py/.ipynb files or folders (default: the current folder)",
    )
    parser.add_argument(
        "--version", action="version", version=f"compile-engine-compat {__version__}"
    )
    settings = parser.add_argument_group(
        "settings", "each overrides its key of [tool.compile-engine-compat] in pyproject.toml"
    )
    settings.add_argument("--config", metavar="FILE", help="read settings from this pyproject.toml")
    settings.add_argument(
        "--isolated", action="store_true", help="read no pyproject.toml (defaults and flags only)"
    )
    settings.add_argument("--select", metavar="IDS", help="only these rule ids or prefixes (CEC1)")
    settings.add_argument("--extend-select", metavar="IDS", help="also these rule ids or prefixes")
    settings.add_argument("--ignore", metavar="IDS", help="never these rule ids or prefixes")
    settings.add_argument("--exclude", metavar="GLOBS", help="skip these (replaces the defaults)")
    settings.add_argument("--extend-exclude", metavar="GLOBS", help="also skip these")
    settings.add_argument(
        "--target-version", metavar="TVM", help="the oldest TVM the code must run on (0.19)"
    )
    settings.add_argument(
        "--force-exclude",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="apply the exclusions to paths named on the command line too (pre-commit)",
    )
    settings.add_argument(
        "--respect-gitignore",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="skip what git ignores, in a git checkout (default: yes)",
    )
    settings.add_argument("--cache-dir", metavar="DIR", help="where to keep per-file results")
    settings.add_argument(
        "--no-cache", action="store_true", help="neither read nor write the cache"
    )


def overrides_from(args: argparse.Namespace) -> dict[str, Any]:
    """The settings the flags in ``args`` override.

    Raises
    ------
    ConfigError
        On an unknown rule id or a bad version.
    """
    out: dict[str, Any] = {}
    for flag in ("select", "extend_select", "ignore"):
        value = getattr(args, flag)
        if value is not None:
            out[flag] = parse_selectors(_list(value), f"--{flag.replace('_', '-')}: ")
    for flag in ("exclude", "extend_exclude"):
        value = getattr(args, flag)
        if value is not None:
            out[flag] = tuple(_list(value))
    if args.target_version is not None:
        parse_version(args.target_version, "--target-version: ")
        out["target_version"] = args.target_version
    for flag in ("force_exclude", "respect_gitignore"):
        if getattr(args, flag) is not None:
            out[flag] = getattr(args, flag)
    if args.cache_dir is not None:
        out["cache_dir"] = Path(args.cache_dir).absolute()
    if getattr(args, "include_shim", False):
        out["include_shim"] = True
    return out


def configs_from(args: argparse.Namespace) -> Configs:
    """The :class:`Configs` the flags describe.

    Raises
    ------
    ConfigError
        On a bad flag value or a bad ``--config`` file.
    """
    return Configs(overrides_from(args), config_file=args.config, isolated=args.isolated)
