"""The site's own Sphinx glue: the migration guide's anchors, and the legacy API's notes.

Two jobs, both so that the generated text (MIGRATION.md, the ``.. deprecated::`` notes the API
table puts in every legacy docstring) renders as it is, without editing it for the site:

- :func:`slug` gives each heading of the Markdown pages its anchor. A row heading of
  MIGRATION.md (``### `compile_engine.CompileEngine.jit```) gets the row's own anchor
  (``compile-engine-compileengine-jit``, as :attr:`LegacyApi.anchor` spells it), so the guide's
  index links, and the links below, land on their sections.
- :func:`link_deprecation_notes` reads a legacy object's note ("Use <modern code>. See
  MIGRATION.md#<anchor> (run `compile-engine-compat docs <id>`)") as the site shows it: the
  modern code literal (``*args`` in it is no emphasis), and the anchor a link into the
  migration guide page.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

#: The page that includes MIGRATION.md (docs/migration-guide.md), from an API page (api/*.html).
GUIDE_FROM_API = "../migration-guide.html"

#: The note's sentence as ``legacy_api`` writes it: "Use <modern code>. See <where> ...".
_NOTE = re.compile(r"^(?P<head>(?:.*?\. )?)Use (?P<modern>.*?)\. See (?P<rest>.*)$")
#: A reference to a row's section of the guide, wherever the note says the guide is.
_GUIDE_REF = re.compile(r"(?P<where>\S*MIGRATION\.md)#(?P<anchor>[a-z0-9-]+)")
#: Inline code in Markdown spelling (`x`), which reST reads as a reference.
_MARKDOWN_CODE = re.compile(r"(?<!`)`(?P<code>[^`]+)`(?!`)")


def slug(heading: str) -> str:
    """The anchor of a Markdown heading: a row's own anchor, else GitHub's spelling.

    Parameters
    ----------
    heading : str
        The heading's text, as MyST passes it (inline code without its backticks).

    Returns
    -------
    str
        For a heading that is one dotted name (a row of the API table), the name with ``.`` and
        ``_`` as ``-``, lower case; otherwise GitHub's slug (lower case, punctuation dropped,
        spaces as ``-``).
    """
    text = heading.strip().strip("`")
    if re.fullmatch(r"[A-Za-z_][\w.]*", text):
        return text.replace(".", "-").replace("_", "-").lower()
    text = unicodedata.normalize("NFKC", heading).lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.strip().replace(" ", "-")


def link_deprecation_notes(
    app: Any, what: str, name: str, obj: Any, options: Any, lines: list[str]
) -> None:
    """``autodoc-process-docstring``: show a legacy object's note first, its code literal.

    The ``deprecation`` package appends ``.. deprecated:: TVM 0.8`` and the note to the
    docstring; Sphinx would read "TVM" as the version, and numpydoc would file the note under
    the last section. So the note becomes a "Deprecated since TVM 0.8" admonition right after
    the summary, its modern code literal and its guide reference a link. Runs before numpydoc.
    A note this does not recognise keeps its text (and a build with ``-W`` says so if it does
    not parse).
    """
    start = next((i for i, line in enumerate(lines) if line.startswith(".. deprecated::")), None)
    if start is None:
        return
    end = start + 1
    while end < len(lines) and (not lines[end].strip() or lines[end][:1].isspace()):
        end += 1
    since = lines[start].removeprefix(".. deprecated::").strip()
    body = [_render_note(line.strip()) for line in lines[start + 1 : end] if line.strip()]
    del lines[start:end]
    while lines and not lines[-1].strip():
        lines.pop()
    note = [f".. admonition:: Deprecated since {since}", "   :class: deprecated", ""]
    note += [f"   {line}" for line in body] + [""]
    # After the summary paragraph: numpydoc keeps it in the extended summary, above Parameters.
    summary_end = next((i for i, line in enumerate(lines) if not line.strip()), len(lines))
    if summary_end == len(lines):
        lines.append("")
    lines[summary_end + 1 : summary_end + 1] = note


def _render_note(line: str) -> str:
    match = _NOTE.match(line)
    if match is None:
        return line
    rest = _MARKDOWN_CODE.sub(r"``\g<code>``", match["rest"])
    rest = _GUIDE_REF.sub(
        lambda ref: f"`MIGRATION.md#{ref['anchor']} <{GUIDE_FROM_API}#{ref['anchor']}>`__", rest
    )
    return f"{match['head']}Use ``{match['modern']}``. See {rest}"


def setup(app: Any) -> dict[str, Any]:
    """Register the docstring hook (the slug is configured in conf.py)."""
    # Before numpydoc (priority 500), which would file the note under the last section.
    app.connect("autodoc-process-docstring", link_deprecation_notes, priority=400)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
