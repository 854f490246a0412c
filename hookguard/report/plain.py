"""``path:line:col: CODE message``: for editors, logs and grep.

Every line starts with a path, ``note:`` or ``hookguard:``; text from the checkout goes through
:mod:`hookguard.report.escape`, so no file name or message can start a line of its own, move the
cursor, or be read by a CI runner as a workflow command.
"""

from __future__ import annotations

from collections.abc import Sequence

from hookguard.findings import Finding, InputError
from hookguard.report.escape import printable, safe_path


def render_plain(
    findings: Sequence[Finding], errors: Sequence[InputError], notes: Sequence[str] = ()
) -> str:
    lines = [
        f"{safe_path(f.path)}:{f.line}:{f.column}: {f.code} [{f.severity.value}] "
        f"{printable(f.message)}"
        for f in findings
    ]
    lines += [f"{safe_path(e.path)}:{e.line}: error: {printable(e.message)}" for e in errors]
    lines += [f"note: {printable(n)}" for n in notes]
    return "\n".join(lines) + ("\n" if lines else "")
