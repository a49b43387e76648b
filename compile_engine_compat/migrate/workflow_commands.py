"""GitHub Actions workflow commands (``::warning file=...::message``), escaped.

A workflow command is one line that the runner parses: an unescaped newline in a file name
starts a second command (``::error::...`` injected by whoever named the file), and an unescaped
``,`` or ``:`` in a property value spoofs another property (``a,line=999``). GitHub's runner
(``actions/toolkit``, ``command.ts``) escapes ``%``, CR and LF in the message, and additionally
``:`` and ``,`` in property values; this module does the same, percent-encodes every other
control character as well, and is the one place the scanner and the pytest report write such
lines.
"""

from __future__ import annotations

import re

__all__ = ["escape_data", "escape_property", "workflow_command"]


_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def escape_data(text: str) -> str:
    """Escape a workflow command's message: ``%``, CR and LF as the runner does, and every other
    control character too (``%1B``), so that no escape sequence reaches the log raw."""
    text = text.replace("%", "%25")
    return _CONTROL.sub(lambda m: f"%{ord(m.group()):02X}", text)


def escape_property(text: str) -> str:
    """Escape a workflow command's property value: the message escapes plus ``:`` and ``,``."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def workflow_command(command: str, message: str, **properties: object) -> str:
    """One escaped workflow command line, without its trailing newline.

    Parameters
    ----------
    command : str
        The command name, e.g. ``"warning"`` or ``"error"``.
    message : str
        The annotation text.
    **properties : object
        ``file``, ``line``, ``col``, ``title``, ... in the order given; ``None`` is left out.

    Returns
    -------
    str
        ``::command prop=value,...::message`` with every part escaped.
    """
    props = ",".join(
        f"{name}={escape_property(str(value))}"
        for name, value in properties.items()
        if value is not None
    )
    return f"::{command}{' ' + props if props else ''}::{escape_data(message)}"
