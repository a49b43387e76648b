"""Which files ``scan`` and ``fix`` read: folders walked, ``.gitignore`` honoured, settings found.

In a git checkout, git decides what is source: what it ignores (``.gitignore`` files at every
level, ``.git/info/exclude``, the global excludes file) is skipped, as ``git status`` shows it,
and a tracked package named ``build/`` is scanned like any other. Outside a git checkout (or with
``respect-gitignore = false``), the folders ruff skips by default are skipped instead
(:data:`DEFAULT_EXCLUDE`: ``build``, ``dist``, ``venv``, ``.tox``, ...). Either way, a folder that
holds a ``pyvenv.cfg`` is a virtual environment and never walked, and ``exclude`` /
``extend-exclude`` apply (:mod:`.config`).

A file named on the command line is read whatever the exclusions say, as in ruff, unless
``force-exclude`` is set: pre-commit passes every staged file by name, and the hook sets it so
that excluded files stay excluded.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from compile_engine_compat.migrate.config import DEFAULT_CACHE_DIR, Configs, Glob, Settings
from compile_engine_compat.migrate.sources import SourceFile

__all__ = ["DEFAULT_EXCLUDE", "Discovery", "GitIgnored", "git_ignored"]

#: ruff's default exclusions, less those git-only, plus caches: used outside a git checkout.
DEFAULT_EXCLUDE = (
    ".*",  # hidden folders and files: VCS metadata, tool caches, editor settings
    "__pycache__",
    "__pypackages__",
    "_build",
    "buck-out",
    "build",
    "dist",
    "node_modules",
    "site-packages",
    "venv",
)
#: In a git checkout, git's ignore rules decide; only its own folder and our cache are skipped.
GIT_EXCLUDE = (".git", DEFAULT_CACHE_DIR)
SUFFIXES = (".py", ".ipynb")
_DEFAULT_GLOBS = tuple(Glob(pattern) for pattern in DEFAULT_EXCLUDE)
_GIT_GLOBS = tuple(Glob(pattern) for pattern in GIT_EXCLUDE)


@dataclass(frozen=True)
class GitIgnored:
    """What git ignores in one work tree: absolute paths of ignored files and folders."""

    top: str
    files: frozenset[str]
    folders: frozenset[str]

    def folder(self, path: str) -> bool:
        """Is the folder ``path`` (absolute) ignored?"""
        return path in self.folders

    def file(self, path: str) -> bool:
        """Is the file ``path`` (absolute) ignored, itself or through a folder above it?"""
        if path in self.files:
            return True
        parent = os.path.dirname(path)
        while parent.startswith(self.top) and parent != self.top:
            if parent in self.folders:
                return True
            parent = os.path.dirname(parent)
        return False


def _work_tree(folder: str) -> str | None:
    """The top of the git work tree holding ``folder`` (absolute), if any."""
    current = folder
    while True:
        if os.path.exists(os.path.join(current, ".git")):
            return current
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent


def git_ignored(top: str) -> GitIgnored:
    """Ask git what it ignores under ``top``.

    Raises
    ------
    OSError
        If git cannot be run or fails (not installed, a repository it refuses to read): the
        message says why.
    """
    try:
        proc = subprocess.run(
            ["git", "ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--directory"],
            cwd=top,
            capture_output=True,
            timeout=120,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise OSError(f"git could not be run: {exc}") from None
    if proc.returncode != 0:
        first = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise OSError(f"git failed: {first[0] if first else f'exit {proc.returncode}'}")
    files: set[str] = set()
    folders: set[str] = set()
    for entry in proc.stdout.split(b"\0"):
        if not entry:
            continue
        name = os.path.join(top, os.fsdecode(entry))
        if name.endswith("/"):
            folders.add(name.rstrip("/"))
        else:
            files.add(name)
    return GitIgnored(top, frozenset(files), frozenset(folders))


class Discovery:
    """Files to read under the command line's paths, each with the settings that apply to it.

    Parameters
    ----------
    configs : Configs, optional
        Where settings come from; the defaults (no configuration read) when not given.

    Attributes
    ----------
    notes : list of str
        Things a person should know (git could not be asked, so ``.gitignore`` was not read).
    """

    def __init__(self, configs: Configs | None = None) -> None:
        self.configs = configs or Configs(isolated=True)
        self.notes: list[str] = []
        self._trees: dict[str, str | None] = {}
        self._git: dict[str, GitIgnored | None] = {}

    def _ignored(self, folder: str, settings: Settings) -> GitIgnored | None:
        """What git ignores around ``folder`` (absolute); None outside git or when not asked."""
        if not settings.respect_gitignore:
            return None
        if folder not in self._trees:
            self._trees[folder] = _work_tree(folder)
        top = self._trees[folder]
        if top is None:
            return None
        if top not in self._git:
            try:
                self._git[top] = git_ignored(top)
            except OSError as exc:
                self.notes.append(
                    f"{top}: {exc}; .gitignore not read, the default exclusions apply instead"
                )
                self._git[top] = None
        return self._git[top]

    def _excluded(self, path: str, is_dir: bool, settings: Settings) -> bool:
        """Is ``path`` (absolute) excluded by the settings or git, itself or a folder above?"""
        folder = path if is_dir else os.path.dirname(path)
        git = self._ignored(folder, settings)
        defaults = _GIT_GLOBS if git else _DEFAULT_GLOBS
        if git is not None and (git.folder(path) if is_dir else git.file(path)):
            return True
        if settings.excluded(path, is_dir, defaults):
            return True
        # A folder above it, up to the project root (exclusions are relative to it).
        parent = os.path.dirname(path)
        root = str(settings.root)
        while parent.startswith(root) and parent != root and len(parent) > len(root):
            if settings.excluded(parent, True, defaults) or (
                git is not None and git.folder(parent)
            ):
                return True
            parent = os.path.dirname(parent)
        return False

    def files(self, paths: Sequence[str]) -> Iterator[tuple[SourceFile, Settings]]:
        """Every ``.py``/``.ipynb`` file under ``paths``, with its settings.

        A folder's files display relative to that folder; a file argument displays as given. A
        file argument that exists but is not a regular file is still yielded, so that reading it
        reports why it is skipped.

        Raises
        ------
        FileNotFoundError
            If a path does not exist.
        ConfigError
            If a ``pyproject.toml`` on the way has a bad section.
        """
        for arg in paths:
            path = Path(arg)
            absolute = os.path.abspath(arg)
            if path.is_dir():
                settings = self.configs.for_folder(absolute)
                if settings.force_exclude and self._excluded(absolute, True, settings):
                    continue
                yield from self._walk(path)
            elif os.path.lexists(path):
                settings = self.configs.for_file(absolute)
                if settings.force_exclude and self._excluded(absolute, False, settings):
                    continue
                yield SourceFile(path, path.as_posix(), path.parent), settings
            else:
                raise FileNotFoundError(f"no such file or folder: {arg}")

    def _walk(self, folder: Path) -> Iterator[tuple[SourceFile, Settings]]:
        # os.walk does not descend into symlinked folders (followlinks=False): a link cannot pull
        # a tree from elsewhere into the scan, nor make it loop.
        for root, dirs, names in os.walk(folder):
            absolute = os.path.abspath(root)
            settings = self.configs.for_folder(absolute)
            git = self._ignored(absolute, settings)
            defaults = _GIT_GLOBS if git else _DEFAULT_GLOBS
            kept = []
            for name in sorted(dirs):
                full = os.path.join(absolute, name)
                if (
                    name == ".git"
                    or os.path.isfile(os.path.join(full, "pyvenv.cfg"))  # a virtual environment
                    or (git is not None and git.folder(full))
                    or settings.excluded(full, True, defaults)
                ):
                    continue
                kept.append(name)
            dirs[:] = kept
            for name in sorted(names):
                if not name.endswith(SUFFIXES):
                    continue
                full = os.path.join(absolute, name)
                if (git is not None and full in git.files) or settings.excluded(
                    full, False, defaults
                ):
                    continue
                file = Path(root) / name
                yield SourceFile(file, file.relative_to(folder).as_posix(), folder), settings
