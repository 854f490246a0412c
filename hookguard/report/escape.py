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

import unicodedata

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


__all__ = ["printable", "safe_path"]
