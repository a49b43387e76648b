"""What ``scan``, ``fix`` and the pytest report print: escaped names, plurals, colour.

A file name is data from whoever named the file: printed raw, a newline in it starts a line of
its own (a GitHub ``::error`` workflow command, whatever ``--format`` was chosen) and an escape
sequence recolours or rewrites the log. :func:`visible` is the one escape every text output uses;
the JSON and SARIF formats escape through ``json.dumps``, and the GitHub format through
:mod:`.workflow_commands`.
"""

from __future__ import annotations

import os
import sys
from typing import TextIO

__all__ = ["Colour", "plural", "print_safely", "visible"]


def visible(text: str) -> str:
    """``text`` with each unprintable character escaped as Python writes it (``\\n``, ``\\x1b``).

    Undecodable bytes of a file name (lone surrogates, as ``os.fsdecode`` gives them) become
    ``\\udcff`` text too, so the result always encodes.
    """
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def plural(count: int, noun: str, plural_form: str | None = None) -> str:
    """``1 file``, ``2 files``, ``0 files``; ``plural_form`` for irregular nouns."""
    return f"{count} {noun if count == 1 else plural_form or noun + 's'}"


def print_safely(text: str, stream: TextIO | None = None) -> None:
    """Print, never failing on a character the stream cannot encode."""
    stream = stream or sys.stdout
    encoding = getattr(stream, "encoding", None) or "utf-8"
    stream.write(text.encode(encoding, "backslashreplace").decode(encoding) + "\n")


class Colour:
    """ANSI colour for a terminal: on when the stream is a tty and ``NO_COLOR`` is unset
    (https://no-color.org), or when ``FORCE_COLOR`` is set; never in a file or a pipe."""

    _CODES = {"bold": "1", "red": "31", "green": "32", "yellow": "33", "cyan": "36", "dim": "2"}

    def __init__(self, stream: TextIO | None = None, enabled: bool | None = None) -> None:
        if enabled is None:
            stream = stream or sys.stdout
            isatty = getattr(stream, "isatty", None)
            enabled = bool(os.environ.get("FORCE_COLOR")) or (
                not os.environ.get("NO_COLOR") and callable(isatty) and bool(isatty())
            )
        self.enabled = enabled

    def __call__(self, text: str, style: str) -> str:
        """``text`` in ``style`` (``bold``, ``red``, ``green``, ``yellow``, ``cyan``, ``dim``)."""
        if not self.enabled or not text:
            return text
        return f"\x1b[{self._CODES[style]}m{text}\x1b[0m"
