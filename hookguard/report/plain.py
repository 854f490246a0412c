"""``path:line:col: CODE message``: for editors, logs and grep."""

from __future__ import annotations

from collections.abc import Sequence

from hookguard.findings import Finding, InputError


def render_plain(
    findings: Sequence[Finding], errors: Sequence[InputError], notes: Sequence[str] = ()
) -> str:
    lines = [
        f"{f.path}:{f.line}:{f.column}: {f.code} [{f.severity.value}] {f.message}"
        for f in findings
    ]
    lines += [f"{e.path}:{e.line}: error: {e.message}" for e in errors]
    lines += [f"note: {n}" for n in notes]
    return "\n".join(lines) + ("\n" if lines else "")
