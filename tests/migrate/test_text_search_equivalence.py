"""The fast text searches ``scan`` runs on every file give what their plain forms give.

``code_only``/``strings_and_comments``, ``imports`` and the legacy-word test were rewritten for
speed (patterns that let the regular-expression engine skip ahead in C, one search per word
group); each is checked here against the plain pattern or loop it replaced, on generated text
built from the pieces that matter (quotes, prefixes, comments, line ends, ``import``, ``;``).
"""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from compile_engine_compat.api_table import legacy_words
from compile_engine_compat.migrate.code_text import code_only, imports, strings_and_comments
from compile_engine_compat.migrate.word_filter import present_words, spells_word

#: The string-or-comment pattern as first written: a lookahead, then a match tried everywhere.
PLAIN_STRING_OR_COMMENT = re.compile(
    r"(?=[#'\"rRbBuUfF])(?:"
    r"#[^\r\n]*+"
    r"|(?<![\w])[rRbBuUfF]{0,2}(?:"
    r"'''(?:[^'\\]++|\\.|'(?!''))*+(?:'''|\Z)"
    r'|"""(?:[^"\\]++|\\.|"(?!""))*+(?:"""|\Z)'
    r"|'(?:[^'\\\r\n]++|\\.)*+'?"
    r'|"(?:[^"\\\r\n]++|\\.)*+"?'
    r"))",
    re.S,
)
#: One import statement, at a line's start or after ``;``, searched for at every position.
PLAIN_IMPORT = re.compile(
    r"(?:^|;)[ \t]*(?:"
    r"from[ \t]+(?P<module>\.*[\w.]*)[ \t]+import[ \t]+(?P<names>\([^)]*\)|[^\r\n;]*)"
    r"|import[ \t]+(?P<modules>[^\r\n;]*))",
    re.M,
)

SOURCE_PIECES = [
    *["'", '"', "'''", '"""', "#", "\\", "\n", "\r", "\r\n", " ", "\t", ";", "(", ")", ","],
    *["r", "b", "R", "f", "u", "B", "rb", "x", "_", ".", "é", "0", "\x0c"],
    *["from", "import", " import ", "from x import (a,\nb)", " as ", "*", "..", "a.b"],
    *["importlib", "tvm", "relay", "from tvm import relay\n", "import tvm.relay as r\n"],
    *["; import os", ";from . import a", "x = 1; import y\n", "rb'''", "f'{x}'", 'u"s"'],
]
sources = st.lists(st.sampled_from(SOURCE_PIECES), max_size=16).map("".join)


def _blank(match: re.Match[str]) -> str:
    return re.sub(r"[^\r\n]", " ", match.group())


@settings(max_examples=400, deadline=None)
@given(sources)
def test_strings_and_comments_are_found_and_blanked_as_the_plain_pattern_does(code: str) -> None:
    assert [m.span() for m in strings_and_comments(code)] == [
        m.span() for m in PLAIN_STRING_OR_COMMENT.finditer(code)
    ]
    assert code_only(code) == PLAIN_STRING_OR_COMMENT.sub(_blank, code)


@settings(max_examples=400, deadline=None)
@given(sources)
def test_import_statements_are_read_as_the_plain_pattern_reads_them(code: str) -> None:
    blanked = code_only(code)
    expected = []
    for match in PLAIN_IMPORT.finditer(blanked):
        start = match.start() + len(match.group()) - len(match.group().lstrip(";\t "))
        expected.append((start, match.end()))
    found = imports(blanked, lambda module: module.lstrip(".") or "pkg")
    # A relative module that resolves to nothing is dropped by both; here every one resolves.
    assert [(statement.start, statement.end) for statement in found] == expected


WORDS = legacy_words()
word_pieces = st.sampled_from(
    [*WORDS, *(word[:cut] for word in WORDS for cut in (3, 4, 5, -1)), "x", ".", "_", " "]
)


@settings(max_examples=400, deadline=None)
@given(st.lists(word_pieces, max_size=8).map("".join))
def test_the_words_a_text_spells_are_those_a_substring_test_finds(text: str) -> None:
    expected = tuple(word for word in WORDS if word in text)
    assert sorted(present_words(text)) == sorted(expected)
    assert spells_word(text) == bool(expected)
