"""SARIF 2.1.0: for GitHub code scanning and every other SARIF viewer.

One run. The driver lists every registered rule with its documentation; each finding becomes a
result whose ``partialFingerprints["hookguard/v1"]`` is the finding's line-independent
fingerprint, so moving code does not open a new alert. Files that failed to parse become tool
execution notifications: the run itself still succeeded.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

from hookguard import __version__
from hookguard.findings import Finding, InputError, Location
from hookguard.report.escape import json_text
from hookguard.rules import ALL_RULES, Rule

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
SARIF_VERSION = "2.1.0"
INFORMATION_URI = "https://github.com/hookguard/hookguard"
SRCROOT = "%SRCROOT%"
FINGERPRINT_KEY = "hookguard/v1"

# RFC 3986 path characters left as they are; ":" is encoded so that a first segment such as
# ``a:b.py`` cannot read as a URI scheme.
_URI_SAFE = "/!$&'()*+,;=@-._~"


def render_sarif(
    findings: Sequence[Finding],
    errors: Sequence[InputError],
    root: Path,
    notes: Sequence[str] = (),
) -> str:
    """The SARIF log for one audit of the checkout at ``root``, as JSON text."""
    rules = [_rule(rule) for rule in ALL_RULES]
    index = {rule.code: i for i, rule in enumerate(ALL_RULES)}
    notifications = [_input_error(e) for e in errors]
    notifications += [{"level": "note", "message": {"text": note}} for note in notes]
    run: dict[str, Any] = {
        "tool": {
            "driver": {
                "name": "hookguard",
                "version": __version__,
                "semanticVersion": __version__,
                "informationUri": INFORMATION_URI,
                "rules": rules,
            }
        },
        "originalUriBaseIds": {SRCROOT: {"uri": _root_uri(root)}},
        "invocations": [
            {"executionSuccessful": True, "toolExecutionNotifications": notifications}
        ],
        "results": [_result(f, index.get(f.code)) for f in findings],
    }
    log = {"$schema": SARIF_SCHEMA, "version": SARIF_VERSION, "runs": [run]}
    # Names stay readable, but every control, format or undecodable character (a non-UTF-8
    # file name's \udcff) is a \uXXXX escape: the same JSON value, nothing raw.
    return json_text(json.dumps(log, indent=2, ensure_ascii=False, default=str)) + "\n"


def _rule(rule: type[Rule]) -> dict[str, Any]:
    documentation = rule.documentation()
    return {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": what_it_does(documentation) or rule.summary},
        "help": {"text": documentation, "markdown": documentation},
        "defaultConfiguration": {"level": rule.severity.value},
    }


def what_it_does(documentation: str) -> str:
    """The first paragraph of the ``## What it does`` section, on one line ("" if none)."""
    lines = documentation.splitlines()
    try:
        start = next(i for i, line in enumerate(lines) if line.strip() == "## What it does")
    except StopIteration:
        return ""
    paragraph: list[str] = []
    for line in lines[start + 1 :]:
        text = line.strip()
        if text.startswith("#") or (not text and paragraph):
            break
        if text:
            paragraph.append(text)
    return " ".join(paragraph)


def _result(finding: Finding, rule_index: int | None) -> dict[str, Any]:
    end_line = finding.end_line or finding.line
    end_column = finding.end_column or finding.column
    result: dict[str, Any] = {"ruleId": finding.code}
    if rule_index is not None:
        result["ruleIndex"] = rule_index
    result.update(
        {
            "level": finding.severity.value,
            "message": {"text": finding.message},
            "locations": [
                {
                    "physicalLocation": _physical(
                        finding.path, finding.line, finding.column, end_line, end_column
                    )
                }
            ],
            "partialFingerprints": {FINGERPRINT_KEY: finding.fingerprint},
            "properties": {
                "symbol": finding.symbol,
                "hook": finding.hook,
                "evidence": finding.evidence,
            },
        }
    )
    if finding.related:
        result["relatedLocations"] = [
            _related(i, location) for i, location in enumerate(finding.related, start=1)
        ]
    return result


def _related(ident: int, location: Location) -> dict[str, Any]:
    return {
        "id": ident,
        "physicalLocation": _physical(
            location.path, location.line, location.column, location.line, location.column
        ),
        "message": {"text": location.message or f"{location.path}:{location.line}"},
    }


def _input_error(error: InputError) -> dict[str, Any]:
    physical: dict[str, Any] = {"artifactLocation": _artifact(error.path)}
    if error.line >= 1:
        physical["region"] = {"startLine": error.line}
    return {
        "level": "error",
        "message": {"text": f"{error.path}:{error.line}: {error.message}"},
        "locations": [{"physicalLocation": physical}],
    }


def _physical(
    path: str, line: int, column: int, end_line: int, end_column: int
) -> dict[str, Any]:
    """A location; SARIF lines and columns are 1-based and ``endColumn`` is exclusive."""
    start_line, start_column = max(line, 1), max(column, 1)
    end_line = max(end_line, start_line)
    end_column = max(end_column, 1) if end_line > start_line else max(end_column, start_column)
    return {
        "artifactLocation": _artifact(path),
        "region": {
            "startLine": start_line,
            "startColumn": start_column,
            "endLine": end_line,
            "endColumn": end_column,
        },
    }


def _artifact(path: str) -> dict[str, str]:
    uri = quote(Path(path).as_posix(), safe=_URI_SAFE, errors="surrogateescape")
    return {"uri": uri, "uriBaseId": SRCROOT}


def _root_uri(root: Path) -> str:
    uri = root.resolve().as_uri()
    return uri if uri.endswith("/") else uri + "/"
