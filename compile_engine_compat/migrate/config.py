"""Project settings: the ``[tool.compile-engine-compat]`` section of ``pyproject.toml``.

``scan``, ``fix``, the pre-commit hooks and the pytest plugin read the same section, found as
ruff finds its own: the closest ``pyproject.toml`` above a file that has the section (a
``pyproject.toml`` without it is passed over), so a monorepo's packages may each have their own.
Paths and globs in it are relative to the folder of that ``pyproject.toml``. Command-line flags
override it. Every key::

    [tool.compile-engine-compat]
    select = ["CEC1", "CEC2"]          # rule ids or prefixes; default every rule ("ALL")
    extend-select = ["CEC305"]         # added to select
    ignore = ["CEC106"]                # the longer matching selector wins (as ruff)
    exclude = ["generated/", "legacy_*.py"]   # replaces the default exclusions
    extend-exclude = ["vendored/"]     # added to them
    per-file-ignores = {"tests/**" = ["CEC1"]}
    baseline = "compile-engine-baseline.json"  # scan --baseline
    output-format = "github"           # text, json, sarif, github
    target-version = "0.19"            # the TVM the code must still run on (default 0.27)
    respect-gitignore = true           # skip what git ignores, in a git checkout
    force-exclude = false              # exclude even paths named on the command line
    include-shim = false               # also report calls through compile_engine_compat
    cache-dir = ".compile_engine_compat_cache"   # or $COMPILE_ENGINE_COMPAT_CACHE_DIR

    [tool.compile-engine-compat.pytest]
    report = "legacy-calls.json"       # --compile-engine-report
    report-format = "json"             # --compile-engine-report-format
    strict = false                     # --compile-engine-strict
    baseline = "legacy-calls-baseline.json"   # --compile-engine-baseline

``target-version`` names the oldest TVM the project must keep running on: a rule whose legacy name
TVM removed after that version is not reported yet (``"0.19"`` reports ``compile_engine``, removed
in 0.8, but not ``te_compiler``, removed in 0.20).

Globs follow ruff's (and ``.gitignore``'s) rules: a pattern without ``/`` matches a file or folder
name anywhere (``build``, ``*_pb2.py``); one with ``/`` matches the path from the project root
(``src/gen/*.py``; ``**`` spans folders); a trailing ``/`` matches folders only.
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import os
import re
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from compile_engine_compat.api_table import RULES

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

__all__ = [
    "CACHE_ENV",
    "REPORT_FORMATS",
    "SCAN_FORMATS",
    "SECTION",
    "ConfigError",
    "Configs",
    "Glob",
    "PytestSettings",
    "Settings",
    "parse_selectors",
    "parse_version",
]

SECTION = "compile-engine-compat"
#: ``scan``'s output formats, and the pytest report's.
SCAN_FORMATS = ("text", "json", "sarif", "github")
REPORT_FORMATS = ("json", "markdown", "github", "junit")
#: The TVM the tooling targets when ``target-version`` is not given: every rule applies.
DEFAULT_TARGET = "0.27"
DEFAULT_CACHE_DIR = ".compile_engine_compat_cache"
#: Environment variable naming the cache folder when the settings do not (as ``RUFF_CACHE_DIR``).
CACHE_ENV = "COMPILE_ENGINE_COMPAT_CACHE_DIR"


class ConfigError(ValueError):
    """A setting that cannot be used; ``str`` is one line naming the file, key and problem."""


def parse_selectors(values: Iterable[str], where: str = "") -> tuple[str, ...]:
    """Rule ids or id prefixes (``CEC1``, ``CEC205``; ``ALL`` is every rule), upper-cased.

    Raises
    ------
    ConfigError
        Naming the first selector that matches no rule id.
    """
    out = []
    for value in values:
        selector = str(value).strip().upper()
        if not selector:
            continue
        if selector == "ALL":
            selector = "CEC"
        if not any(code.startswith(selector) for code in RULES):
            raise ConfigError(
                f"{where}unknown rule id or prefix {value!r} (ids are CEC101-CEC905; ALL is all)"
            )
        out.append(selector)
    return tuple(out)


@functools.lru_cache(maxsize=64)
def parse_version(text: str, where: str = "") -> tuple[int, ...]:
    """``"0.19"`` -> ``(0, 19)``.

    Raises
    ------
    ConfigError
        If ``text`` is not dotted numbers.
    """
    if not re.fullmatch(r"\d+(?:\.\d+){0,2}", str(text).strip()):
        raise ConfigError(f"{where}target-version {text!r} is not a TVM version such as '0.19'")
    return tuple(int(part) for part in str(text).strip().split("."))


class Glob:
    """One exclude/per-file-ignores pattern (see the module docstring for the rules)."""

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        text = pattern[2:] if pattern.startswith("./") else pattern
        self.folders_only = text.endswith("/")
        text = text.rstrip("/")
        self.anchored = "/" in text
        self._regex = re.compile(_translate(text.lstrip("/")) + r"\Z", re.S)

    def matches(self, relative: str, is_dir: bool = False) -> bool:
        """Does the pattern match ``relative`` (POSIX, from the project root)?"""
        if self.folders_only and not is_dir:
            return False
        if self.anchored:
            return bool(self._regex.match(relative))
        return bool(self._regex.match(relative.rsplit("/", 1)[-1]))

    def __repr__(self) -> str:
        return f"Glob({self.pattern!r})"


def _translate(pattern: str) -> str:
    """A glob as a regular expression: ``**`` spans folders, ``*``/``?`` stay within one."""
    out = []
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif char == "*":
            out.append("[^/]*")
            i += 1
        elif char == "?":
            out.append("[^/]")
            i += 1
        elif char == "[" and "]" in pattern[i + 2 :]:
            end = pattern.index("]", i + 2)
            body = pattern[i + 1 : end]
            body = "^" + body[1:] if body.startswith("!") else body
            out.append(f"[{body.replace(chr(92), chr(92) * 2)}]")
            i = end + 1
        else:
            out.append(re.escape(char))
            i += 1
    return "".join(out)


@dataclass(frozen=True)
class PytestSettings:
    """``[tool.compile-engine-compat.pytest]``: defaults of the plugin's options."""

    report: Path | None = None
    report_format: str | None = None
    strict: bool = False
    baseline: Path | None = None


@dataclass(frozen=True)
class Settings:
    """The settings of one project (a ``pyproject.toml`` section, or the defaults).

    Attributes
    ----------
    root : pathlib.Path
        The folder that relative paths and globs start from: the ``pyproject.toml``'s, or the
        working directory when there is none.
    source : pathlib.Path or None
        The ``pyproject.toml`` read, if any.
    """

    root: Path
    source: Path | None = None
    select: tuple[str, ...] | None = None
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    exclude: tuple[str, ...] | None = None
    extend_exclude: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    baseline: Path | None = None
    output_format: str | None = None
    target_version: str | None = None
    respect_gitignore: bool = True
    force_exclude: bool = False
    include_shim: bool = False
    cache_dir: Path | None = None
    pytest: PytestSettings = field(default_factory=PytestSettings)

    # -- which rules apply ----------------------------------------------------------------------

    @functools.cached_property
    def _target(self) -> tuple[int, ...]:
        return parse_version(self.target_version or DEFAULT_TARGET)

    @functools.cached_property
    def _per_file(self) -> tuple[tuple[Glob, tuple[str, ...]], ...]:
        return tuple((Glob(pattern), codes) for pattern, codes in self.per_file_ignores)

    def relative(self, path: Path | str) -> str:
        """``path`` from :attr:`root`, POSIX; the absolute path when it lies outside."""
        absolute = os.path.abspath(path)
        root = str(self.root)
        if absolute == root:
            return "."
        if absolute.startswith(root.rstrip(os.sep) + os.sep):
            return Path(absolute[len(root.rstrip(os.sep)) + 1 :]).as_posix()
        return Path(absolute).as_posix()

    def ignored_for(self, path: Path | str) -> tuple[str, ...]:
        """The ``ignore`` selectors plus those ``per-file-ignores`` gives ``path``."""
        if not self._per_file:
            return self.ignore
        relative = self.relative(path)
        extra = [code for glob, codes in self._per_file if glob.matches(relative) for code in codes]
        return (*self.ignore, *extra)

    def enabled(self, code: str, ignored: tuple[str, ...] | None = None) -> bool:
        """Is rule ``code`` reported (``ignored``: :meth:`ignored_for` a file, else ``ignore``)?

        The longest selector that matches the id wins, as in ruff (``select = ["CEC1"]`` with
        ``ignore = ["CEC105"]`` keeps CEC101 and drops CEC105; ``ignore = ["CEC1"]`` with
        ``extend-select = ["CEC105"]`` keeps only CEC105 of the group). A rule whose legacy name
        TVM removed after ``target-version`` is not reported.
        """
        row = RULES.get(code)
        if row is not None and parse_version(row.since) > self._target:
            return False
        chosen = (*(self.select if self.select is not None else ("CEC",)), *self.extend_select)
        dropped = self.ignore if ignored is None else ignored
        picked = max((len(s) for s in chosen if code.startswith(s)), default=-1)
        lost = max((len(s) for s in dropped if code.startswith(s)), default=-1)
        return picked >= 0 and picked > lost

    # -- which files are read -------------------------------------------------------------------

    @functools.cached_property
    def _excludes(self) -> tuple[Glob, ...] | None:
        if self.exclude is None and not self.extend_exclude:
            return None
        return tuple(Glob(p) for p in (*(self.exclude or ()), *self.extend_exclude))

    def excluded(self, path: Path | str, is_dir: bool, defaults: tuple[Glob, ...]) -> bool:
        """Is ``path`` excluded: by ``exclude`` (or ``defaults`` when that is not set), or by
        ``extend-exclude``?"""
        relative = self.relative(path)
        patterns = defaults if self.exclude is None else ()
        patterns += self._excludes or ()
        return any(glob.matches(relative, is_dir) for glob in patterns)

    @property
    def cache_folder(self) -> Path:
        """Where the per-file result cache lives: ``cache-dir``, else ``$CACHE_ENV``, else
        :data:`DEFAULT_CACHE_DIR` beside the ``pyproject.toml`` (or in the working directory)."""
        folder = self.cache_dir or Path(os.environ.get(CACHE_ENV) or DEFAULT_CACHE_DIR)
        return folder if folder.is_absolute() else self.root / folder

    def with_overrides(self, overrides: Mapping[str, Any]) -> Settings:
        """These settings with command-line values on top (``extend_*``: added, not replaced)."""
        changes = dict(overrides)
        for name in ("extend_select", "ignore", "extend_exclude", "per_file_ignores"):
            if name in changes:
                changes[name] = (*getattr(self, name), *changes[name])
        return dataclasses.replace(self, **changes)


# -- reading pyproject.toml ---------------------------------------------------------------------

_STRING_LISTS = {"select", "extend-select", "ignore", "exclude", "extend-exclude"}
_BOOLS = {"respect-gitignore", "force-exclude", "include-shim"}
_PATHS = {"baseline", "cache-dir"}
_KEYS = (
    _STRING_LISTS
    | _BOOLS
    | _PATHS
    | {"per-file-ignores", "output-format", "target-version", "pytest"}
)
_PYTEST_KEYS = {"report", "report-format", "strict", "baseline"}


def _unknown(key: str, known: Iterable[str], where: str) -> ConfigError:
    close = difflib.get_close_matches(key, sorted(known), n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return ConfigError(f"{where}unknown key {key!r}{hint}")


def _strings(value: object, key: str, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ConfigError(f"{where}{key} must be a list of strings, not {value!r}")
    return tuple(value)


def settings_from_table(table: Mapping[str, Any], root: Path, source: Path | None) -> Settings:
    """Settings from a ``[tool.compile-engine-compat]`` table.

    Raises
    ------
    ConfigError
        On an unknown key or a value of the wrong kind, naming both.
    """
    where = f"{source}: [tool.{SECTION}] " if source else f"[tool.{SECTION}] "
    values: dict[str, Any] = {}
    for key, value in table.items():
        if key not in _KEYS:
            raise _unknown(key, _KEYS, where)
        name = key.replace("-", "_")
        if key in _STRING_LISTS:
            strings = _strings(value, key, where)
            is_rules = key in ("select", "extend-select", "ignore")
            values[name] = parse_selectors(strings, where) if is_rules else strings
        elif key in _BOOLS:
            if not isinstance(value, bool):
                raise ConfigError(f"{where}{key} must be true or false, not {value!r}")
            values[name] = value
        elif key in _PATHS:
            if not isinstance(value, str):
                raise ConfigError(f"{where}{key} must be a path (a string), not {value!r}")
            values[name] = root / value
        elif key == "per-file-ignores":
            if not isinstance(value, dict):
                raise ConfigError(f"{where}per-file-ignores must be a table of glob = [ids]")
            values[name] = tuple(
                (glob, parse_selectors(_strings(codes, f"per-file-ignores {glob!r}", where), where))
                for glob, codes in value.items()
            )
        elif key == "output-format":
            if value not in SCAN_FORMATS:
                raise ConfigError(f"{where}output-format must be one of {', '.join(SCAN_FORMATS)}")
            values[name] = value
        elif key == "target-version":
            parse_version(value, where)
            values[name] = str(value)
        else:  # pytest
            values[name] = _pytest_settings(value, root, where)
    return Settings(root=root, source=source, **values)


def _pytest_settings(table: object, root: Path, where: str) -> PytestSettings:
    where = where.replace(f"[tool.{SECTION}]", f"[tool.{SECTION}.pytest]")
    if not isinstance(table, dict):
        raise ConfigError(f"{where}must be a table")
    values: dict[str, Any] = {}
    for key, value in table.items():
        if key not in _PYTEST_KEYS:
            raise _unknown(key, _PYTEST_KEYS, where)
        if key == "strict":
            if not isinstance(value, bool):
                raise ConfigError(f"{where}strict must be true or false, not {value!r}")
            values["strict"] = value
        elif key == "report-format":
            if value not in REPORT_FORMATS:
                formats = ", ".join(REPORT_FORMATS)
                raise ConfigError(f"{where}report-format must be one of {formats}")
            values["report_format"] = value
        else:
            if not isinstance(value, str):
                raise ConfigError(f"{where}{key} must be a path (a string), not {value!r}")
            values[key] = root / value
    return PytestSettings(**values)


def read_pyproject(path: Path) -> Settings | None:
    """The settings in ``path`` (a ``pyproject.toml``), None if it has no section.

    Raises
    ------
    ConfigError
        If the file is not TOML or the section is not valid.
    """
    try:
        with open(path, "rb") as handle:
            data = tomllib.load(handle)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    tool = data.get("tool")
    table = tool.get(SECTION) if isinstance(tool, dict) else None
    if table is None:
        return None
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [tool.{SECTION}] must be a table")
    return settings_from_table(table, path.parent.absolute(), path)


class Configs:
    """The settings that apply in each folder: discovered upward, with overrides on top.

    Parameters
    ----------
    overrides : mapping, optional
        :class:`Settings` field values from the command line.
    config_file : path, optional
        Use this ``pyproject.toml`` everywhere instead of discovering one (``--config``).
    isolated : bool
        Read no configuration at all (``--isolated``).
    """

    def __init__(
        self,
        overrides: Mapping[str, Any] | None = None,
        config_file: str | os.PathLike[str] | None = None,
        isolated: bool = False,
    ) -> None:
        self.overrides = dict(overrides or {})
        self.isolated = isolated
        self._fixed: Settings | None = None
        if config_file is not None:
            path = Path(config_file)
            if not path.is_file():
                raise ConfigError(f"--config {path}: no such file")
            found = read_pyproject(path)
            if found is None:
                raise ConfigError(f"--config {path}: it has no [tool.{SECTION}] section")
            self._fixed = found.with_overrides(self.overrides)
        self._by_folder: dict[str, Settings] = {}
        self._found: dict[str, Settings | None] = {}

    def default(self) -> Settings:
        """The settings where no ``pyproject.toml`` has the section: rooted at the working
        directory."""
        return Settings(root=Path.cwd()).with_overrides(self.overrides)

    def for_folder(self, folder: str | os.PathLike[str]) -> Settings:
        """The settings of files in ``folder``.

        Raises
        ------
        ConfigError
            If the ``pyproject.toml`` found is not valid.
        """
        if self._fixed is not None:
            return self._fixed
        key = os.path.abspath(folder)
        cached = self._by_folder.get(key)
        if cached is not None:
            return cached
        settings = None
        if not self.isolated:
            current = key
            while True:
                settings = self._section_in(current)
                parent = os.path.dirname(current)
                if settings is not None or parent == current:
                    break
                current = parent
        result = settings.with_overrides(self.overrides) if settings else self.default()
        self._by_folder[key] = result
        return result

    def for_file(self, path: str | os.PathLike[str]) -> Settings:
        """The settings of the file ``path``."""
        return self.for_folder(os.path.dirname(os.path.abspath(path)))

    def _section_in(self, folder: str) -> Settings | None:
        if folder not in self._found:
            candidate = Path(folder) / "pyproject.toml"
            self._found[folder] = read_pyproject(candidate) if candidate.is_file() else None
        return self._found[folder]
