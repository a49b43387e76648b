"""The per-file result cache of ``scan`` (and of ``fix``, which scans first).

An entry holds one file's findings (before rule selection, which is applied after) or the reason
it was skipped, keyed by the SHA-256 of the file's bytes, its package and module name (which
relative imports and the TVM-definition check depend on), and whether shim calls are reported.
Entries live under a namespace named after the rule table's version and the scanner's own code
(:func:`namespace`), so a new table or scanner never reads an old result; older namespaces are
removed when a new one is first written. A result that depended on whether a module exists in
the project (a relative import, see :func:`.legacy_uses.absolute`) records what it asked, and is
used only while the answers are the same.

Only files that pass the scanner's word filter are looked up: for every other file, reading it
is the whole scan, and a cache lookup would cost as much.

The folder (``.compile_engine_compat_cache/`` beside the ``pyproject.toml``, or ``cache-dir``)
gets a ``CACHEDIR.TAG`` and a ``.gitignore`` of ``*``. Writes are atomic (a temporary file renamed
into place), so concurrent runs (pre-commit and CI, forked scan workers) never read a torn entry;
a cache that cannot be written is simply not used.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from compile_engine_compat.api_table import table_version
from compile_engine_compat.migrate.sources import Source, module_exists
from compile_engine_compat.version import __version__

__all__ = ["ResultCache", "namespace"]

_TAG = (
    "Signature: 8a477f597d28d172789f06886806bc55\n"
    "# This file is a cache directory tag created by compile-engine-compat.\n"
    "# For information about cache directory tags, see https://bford.info/cachedir/\n"
)
_MIGRATE = Path(__file__).resolve().parent
_SURFACES = _MIGRATE.parent / "surfaces"


@functools.lru_cache(maxsize=1)
def namespace() -> str:
    """The cache's namespace: the package version, the rule table's version and a digest of the
    scanner's source (this folder) and of the TVM 0.19 name lists it reads (``surfaces/*.json``),
    so that any change to what a scan finds starts afresh."""
    digest = hashlib.sha256(f"{__version__}\0{table_version()}\0".encode())
    for path in [*sorted(_MIGRATE.glob("*.py")), *sorted(_SURFACES.glob("*.json"))]:
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


class ResultCache:
    """Results stored under ``folder`` (see the module docstring)."""

    def __init__(self, folder: Path) -> None:
        self.root = folder
        self.folder = folder / namespace()
        self._ready = self.folder.is_dir()

    @staticmethod
    def key(data: bytes, source: Source, include_shim: bool) -> str:
        """The entry name of a file's result."""
        digest = hashlib.sha256(data)
        digest.update(f"\0{source.package}\0{source.module}\0{include_shim}".encode())
        return digest.hexdigest()

    def _path(self, key: str) -> Path:
        return self.folder / key[:2] / f"{key}.json"

    def get(self, key: str, source: Source) -> dict[str, Any] | None:
        """The stored result, if there is one and the project still answers its questions
        alike."""
        try:
            with open(self._path(key), encoding="utf-8") as handle:
                entry = json.load(handle)
        except (OSError, ValueError):
            return None
        if not isinstance(entry, dict):
            return None
        probes = entry.get("probes") or {}
        for dotted, existed in probes.items():
            if module_exists(source.package_root, dotted) != existed:
                return None
        return entry

    def put(self, key: str, entry: dict[str, Any]) -> None:
        """Store ``entry``; a cache that cannot be written is skipped silently."""
        with contextlib.suppress(OSError):
            if not self._ready:
                self._create()
            path = self._path(key)
            path.parent.mkdir(exist_ok=True)
            fd, staging = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as handle:
                    json.dump(entry, handle)
                os.replace(staging, path)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(staging)
                raise

    def _create(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        tag = self.root / "CACHEDIR.TAG"
        if not tag.exists():
            tag.write_text(_TAG, encoding="utf-8")
        ignore = self.root / ".gitignore"
        if not ignore.exists():
            ignore.write_text("# Created by compile-engine-compat.\n*\n", encoding="utf-8")
        # Results of another version can never be read again.
        for old in self.root.iterdir():
            if old.is_dir() and old.name != self.folder.name and len(old.name) == 16:
                shutil.rmtree(old, ignore_errors=True)
        self.folder.mkdir(exist_ok=True)
        self._ready = True
