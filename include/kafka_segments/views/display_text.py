"""Text from the lake shown on a page: a consumer group id, a run report's outcome or error. Any may be
hostile (Kafka bounds a group id by nothing but the request size; a report can be edited): the page shows
at most ``MAX_SHOWN`` characters of one, and every character that would not show as itself (control
characters, bidirectional overrides, zero-width and other format characters, line and paragraph separators,
lone surrogates) as its ``\\uXXXX`` escape, so two ids that differ differ on the page. HTML escaping is the
renderer's (``html.escape``), after this."""

from __future__ import annotations

import unicodedata

MAX_SHOWN = 200
"""The most characters of one lake text the page shows; a longer one ends with ``…`` and its length."""
_HIDDEN = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})
"""Unicode categories that do not show as themselves: control, format, surrogate, private use, unassigned,
line and paragraph separators."""


def shown_text(text: str, *, limit: int = MAX_SHOWN) -> str:
    """``text`` as the page shows it: its first ``limit`` characters (then ``… (N characters)``), each
    character of a ``_HIDDEN`` category as ``\\uXXXX`` (``\\UXXXXXXXX`` beyond the BMP)."""
    head = "".join(_shown_char(char) for char in text[:limit])
    return head if len(text) <= limit else f"{head}… ({len(text)} characters)"


def _shown_char(char: str) -> str:
    if unicodedata.category(char) not in _HIDDEN:
        return char
    code = ord(char)
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"
