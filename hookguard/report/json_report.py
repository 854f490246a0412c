"""The stable JSON schema (documented in docs/output.md)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from hookguard import __version__
from hookguard.findings import Finding, InputError


def render_json(
    findings: Sequence[Finding],
    errors: Sequence[InputError],
    notes: Sequence[str] = (),
    extra: dict[str, Any] | None = None,
) -> str:
    document: dict[str, Any] = {
        "version": __version__,
        "findings": [f.to_json() for f in findings],
        "errors": [e.to_json() for e in errors],
        "notes": list(notes),
    }
    if extra:
        document.update(extra)
    return json.dumps(document, indent=2, sort_keys=False) + "\n"
