"""What the compile cache stores, in any tier: an *artifact*, files and metadata under a key.

An artifact is a few named files (bytes) and a small JSON-able ``meta`` mapping, stored under an
:class:`ArtifactKey`: its ``kind`` (``"kernel"`` for a ``jit`` kernel, ``"index"`` for a source
function's index record, ``"module"`` for a whole-module build, ...) and its *key material*, the
text that says everything the artifact depends on, one ``name=value`` line each (the kind, the
TVM, shim and schedule rules versions, the target, the structural hash, the PassContext). The
artifact's digest, the SHA-256 of the material, names it in every tier.

The named fields let a tier say *why* an entry is not the one asked for (another TVM, another
target: :func:`mismatch`) instead of only that it is not. This module imports nothing but the
standard library: the local tier (:mod:`.disk`), the signing (:mod:`.signing`) and the remote tier
(:mod:`.remote`) all build on it.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "Artifact",
    "ArtifactKey",
    "CompileCacheWarning",
    "RemoteCacheWarning",
    "fields",
    "mismatch",
    "valid_file_name",
]

#: An artifact's file name: one plain name (no directories, no ``..``), never ``meta.json``.
_FILE_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}")
_RESERVED = frozenset({"meta.json", "indexed"})
_KIND = re.compile(r"[a-z][a-z0-9-]{0,31}")

#: Key material fields whose difference has a reason of its own (counted, warned about).
_FIELD_REASONS = (
    ("kind", "other-kind"),
    ("tvm", "other-tvm"),
    ("shim", "other-shim"),
    ("rules", "other-rules"),
    ("target", "other-target"),
)


class CompileCacheWarning(UserWarning):
    """A cache entry was unusable (corrupt, truncated, foreign) and was recompiled."""


class RemoteCacheWarning(CompileCacheWarning):
    """The remote cache tier is off, unreachable, or refused an entry; the kernel is compiled."""


def valid_file_name(name: str) -> bool:
    """Return True when ``name`` can name an artifact's file (one plain, non-reserved name)."""
    return bool(_FILE_NAME.fullmatch(name)) and name not in _RESERVED


@dataclass(frozen=True)
class ArtifactKey:
    """Identifies one artifact in every tier.

    Attributes
    ----------
    kind : str
        What it is: ``"kernel"``, ``"index"``, ``"module"``, ... (lowercase letters, digits, ``-``).
    material : str
        The key text: ``name=value`` lines, the first ``kind=<kind>``.
    """

    kind: str
    material: str
    digest: str = field(init=False, compare=False)

    def __post_init__(self) -> None:
        if not _KIND.fullmatch(self.kind):
            raise ValueError(f"artifact kind {self.kind!r} is not a short lowercase name")
        if fields(self.material).get("kind") != self.kind:
            raise ValueError(f"key material of a {self.kind!r} must start with kind={self.kind}")
        object.__setattr__(self, "digest", hashlib.sha256(self.material.encode()).hexdigest())


@dataclass(frozen=True)
class Artifact:
    """An artifact's content: its key, its files and its metadata.

    Attributes
    ----------
    key : ArtifactKey
    files : Mapping[str, bytes]
        File name -> content; names pass :func:`valid_file_name`.
    meta : Mapping[str, Any]
        JSON-able details the loader needs (a kernel's symbol, a record's arity).
    """

    key: ArtifactKey
    files: Mapping[str, bytes]
    meta: Mapping[str, Any]

    def size(self) -> int:
        """Return the total size of the files, in bytes."""
        return sum(len(data) for data in self.files.values())


def material_text(kind: str, lines: Mapping[str, object]) -> str:
    """Return key material: ``kind=<kind>`` then one ``name=value`` line per item of ``lines``.

    Raises
    ------
    ValueError
        When a name holds ``=`` or a line break, or a value holds a line break.
    """
    out = [f"kind={kind}"]
    for name, value in lines.items():
        text = str(value)
        if "=" in name or "\n" in name or "\n" in text or name == "kind":
            raise ValueError(f"key material field {name!r}={text!r} is not one name=value line")
        out.append(f"{name}={text}")
    return "\n".join(out)


def fields(material: str) -> dict[str, str]:
    """Return the ``name -> value`` fields of key material (a value may hold ``=``)."""
    found: dict[str, str] = {}
    for line in material.splitlines():
        name, sep, value = line.partition("=")
        if sep:
            found.setdefault(name, value)
    return found


def mismatch(expected: str, actual: str, only: tuple[str, ...] | None = None) -> str | None:
    """Say why key material ``actual`` is not ``expected`` (None: it is).

    Returns ``other-kind``, ``other-tvm``, ``other-shim``, ``other-rules`` or ``other-target``
    for the first of those fields that differs, else ``other-key`` (the structural hash, the
    PassContext, ...). With ``only``, just those fields are compared.
    """
    want, got = fields(expected), fields(actual)
    if only is None:
        if expected == actual:
            return None
        differing = {name for name in {*want, *got} if want.get(name) != got.get(name)}
    else:
        differing = {name for name in only if want.get(name) != got.get(name)}
        if not differing:
            return None
    return next((reason for name, reason in _FIELD_REASONS if name in differing), "other-key")
