"""What a rule reports. Rules build findings; reporters render them; nothing here prints."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from enum import Enum
from typing import Any


class Severity(str, Enum):
    ERROR = "error"
    WARNING = "warning"


@dataclass(frozen=True, slots=True)
class Location:
    path: str
    line: int
    column: int = 1
    message: str = ""


@dataclass(slots=True)
class Finding:
    rule: str  # readable symbol: ``stale-override``
    code: str  # stable code: ``HG001``
    severity: Severity
    path: str  # posix, relative to the repository root
    line: int
    column: int
    symbol: str  # ``package.module.Class.method``
    hook: str  # the hook this is about (its current name where known)
    message: str
    evidence: dict[str, Any] = field(default_factory=dict)
    related: list[Location] = field(default_factory=list)
    end_line: int | None = None
    end_column: int | None = None

    @property
    def fingerprint(self) -> str:
        """Line-independent identity: moving code does not make a finding new."""
        text = f"{self.rule}\0{self.symbol}\0{self.hook}"
        return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()[:32]

    def sort_key(self) -> tuple[str, int, int, str]:
        return (self.path, self.line, self.column, self.code)

    def to_json(self) -> dict[str, Any]:
        return {
            "rule": self.rule,
            "code": self.code,
            "severity": self.severity.value,
            "path": self.path,
            "line": self.line,
            "column": self.column,
            "end_line": self.end_line or self.line,
            "end_column": self.end_column or self.column,
            "symbol": self.symbol,
            "hook": self.hook,
            "message": self.message,
            "fingerprint": self.fingerprint,
            "evidence": self.evidence,
            "related": [
                {"path": r.path, "line": r.line, "column": r.column, "message": r.message}
                for r in self.related
            ],
        }


@dataclass(frozen=True, slots=True)
class InputError:
    """Bad input that was skipped: a file that does not parse, a base that does not resolve."""

    path: str
    line: int
    message: str

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "line": self.line, "message": self.message}
