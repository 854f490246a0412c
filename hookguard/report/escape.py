"""Text from a checkout, made safe to print.

File names, class names and messages come from the audited checkout, which is hostile input.
:func:`printable` turns every character a terminal or a CI log would act on into a visible
escape: C0/C1 control characters (``ESC`` starts a terminal control sequence, ``\\n`` starts a
new log line), Unicode format characters (bidirectional overrides reorder what a reader sees),
line and paragraph separators, and the lone surrogates that stand for the undecodable bytes of a
non-UTF-8 file name (shown as the byte, ``\\xff``, never a crash). :func:`safe_path` also keeps
a path from beginning a line with ``::``, which GitHub Actions reads as a workflow command.
"""

from __future__ import annotations

import re
import unicodedata

_NOT_PLAIN = re.compile(r"[^\x20-\x7e\n]")  # (candidates: the category decides)
_ESCAPE_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})


def _escape_char(char: str) -> str:
    code = ord(char)
    if 0xDC80 <= code <= 0xDCFF:  # surrogateescape: the undecodable byte itself
        return f"\\x{code - 0xDC00:02x}"
    if code <= 0xFF:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def printable(text: str) -> str:
    """``text`` with every control, format and undecodable character escaped (``\\x1b``)."""
    if text.isprintable() and text.isascii():
        return text
    return "".join(
        _escape_char(c)
        if c != " " and unicodedata.category(c) in _ESCAPE_CATEGORIES
        else c
        for c in text
    )


def safe_path(path: str) -> str:
    """A path for the start of an output line: :func:`printable`, and never ``::...``."""
    text = printable(path)
    return "./" + text if text.startswith(":") else text


def json_text(text: str) -> str:
    """JSON text (``json.dumps(..., ensure_ascii=False)``) with each character that
    :func:`printable` escapes written as JSON's ``\\uXXXX``: the same JSON value, so a reader
    gets the exact name back, but nothing a terminal, a log or a diff view would act on. (JSON
    escapes C0 controls itself; outside strings JSON text is plain ASCII.)"""

    def escape(match: re.Match[str]) -> str:
        char = match.group()
        if unicodedata.category(char) not in _ESCAPE_CATEGORIES:
            return char
        code = ord(char)
        if code <= 0xFFFF:
            return f"\\u{code:04x}"
        code -= 0x10000  # (a UTF-16 surrogate pair, as JSON writes such a character)
        return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"

    return _NOT_PLAIN.sub(escape, text)


__all__ = ["json_text", "printable", "safe_path"]
