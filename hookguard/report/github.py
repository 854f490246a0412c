"""GitHub Actions workflow commands, plus a job summary.

``render_github`` returns the text for stdout: one ``::error``/``::warning`` annotation per
finding, escaped exactly as ``@actions/core`` escapes them. Input problems are annotations titled
``hookguard input problem``: an ``::error`` for a file not analysed (it fails the run), a
``::warning`` for one analysed all the same (a base class that does not resolve). GitHub shows
at most 10 annotations of each kind per step, so at most :data:`MAX_ANNOTATIONS` of each kind are
written (findings first, then input problems, then notes as ``::notice``) and one plain line
counts the rest.

Side effect: when ``GITHUB_STEP_SUMMARY`` names a file (GitHub sets it in every step), a markdown
section with the counts and a table of *every* finding is appended to it; what was already in
the file is kept. Nothing else is written.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path

from hookguard.commands.common import file_analysed
from hookguard.findings import Finding, InputError, Severity
from hookguard.report.escape import printable

MAX_ANNOTATIONS = 10
STEP_SUMMARY_ENV = "GITHUB_STEP_SUMMARY"


def render_github(
    findings: Sequence[Finding],
    errors: Sequence[InputError],
    notes: Sequence[str],
    summary: str,
) -> str:
    """Workflow commands for stdout; appends the job summary when ``GITHUB_STEP_SUMMARY`` is set."""
    kinds: dict[str, list[str]] = {"error": [], "warning": [], "notice": []}
    for finding in findings:
        kinds[finding.severity.value].append(annotation(finding))
    for error in errors:
        kinds["warning" if file_analysed(error) else "error"].append(_input_error(error))
    for note in notes:
        kinds["notice"].append(command("notice", note, title="hookguard"))

    summary_file = os.environ.get(STEP_SUMMARY_ENV) or None
    problem = None
    if summary_file is not None:
        try:
            append_step_summary(Path(summary_file), findings, errors, notes, summary)
        except OSError as exc:
            problem = f"hookguard: could not write the job summary to {summary_file}: {exc}"
            summary_file = None

    lines: list[str] = []
    overflow: list[str] = []
    for kind, commands in kinds.items():
        lines += commands[:MAX_ANNOTATIONS]
        hidden = len(commands) - MAX_ANNOTATIONS
        if hidden > 0:
            noun = {"error": "error", "warning": "warning", "notice": "note"}[kind]
            overflow.append(f"{hidden} more {noun}{'s' * (hidden != 1)}")
    if overflow:
        where = (
            "see the job summary"
            if summary_file
            else "run `hookguard audit --format plain` for the full list"
        )
        lines.append(f"hookguard: {_join(overflow)} not annotated; {where}")
    if problem:
        lines.append(_plain_line(problem))
    lines.append(_plain_line(summary))
    return "\n".join(lines) + "\n"


def annotation(finding: Finding) -> str:
    """``::error file=..,line=..,col=..,endLine=..,endColumn=..,title=..::message``."""
    properties: dict[str, object] = {"file": finding.path, "line": finding.line}
    end_line = finding.end_line or finding.line
    if end_line == finding.line:
        # The runner rejects col/endColumn on a multi-line annotation, and endColumn < col.
        # endColumn is passed on as the finding has it: the column after the last character.
        properties["col"] = finding.column
        properties["endLine"] = end_line
        properties["endColumn"] = max(finding.end_column or finding.column, finding.column)
    else:
        properties["endLine"] = max(end_line, finding.line)
    properties["title"] = f"{finding.code} {finding.rule}"
    return command(finding.severity.value, finding.message, **properties)


def _input_error(error: InputError) -> str:
    properties: dict[str, object] = {"file": error.path}
    if error.line >= 1:
        properties["line"] = error.line
    if file_analysed(error):
        properties["title"] = "hookguard input problem"
        return command("warning", error.message, **properties)
    properties["title"] = "hookguard input problem: file not analysed"
    return command("error", error.message, **properties)


def command(name: str, message: str, **properties: object) -> str:
    """One workflow command, escaped as ``@actions/core``'s ``toCommandValue`` callers do."""
    text = "::" + name
    if properties:
        text += " " + ",".join(
            f"{key}={escape_property(str(value))}" for key, value in properties.items()
        )
    return f"{text}::{escape_data(message)}"


def escape_data(value: str) -> str:
    """As ``@actions/core`` escapes; then control characters (``ESC``) and undecodable bytes
    become visible escapes (:func:`~hookguard.report.escape.printable`)."""
    value = value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return printable(value)


def _plain_line(text: str) -> str:
    """A line that is not a workflow command: one line, no control characters, no ``::``."""
    text = printable(text)
    return "hookguard: " + text if text.startswith(":") else text


def escape_property(value: str) -> str:
    return escape_data(value).replace(":", "%3A").replace(",", "%2C")


# -- job summary -------------------------------------------------------------------------------
def append_step_summary(
    path: Path,
    findings: Sequence[Finding],
    errors: Sequence[InputError],
    notes: Sequence[str],
    summary: str,
) -> None:
    """Append a markdown section to ``path``, keeping what is already there."""
    section = step_summary_markdown(findings, errors, notes, summary)
    with path.open("ab+") as stream:  # bytes: the last character may be several bytes long
        size = stream.seek(0, os.SEEK_END)
        if size:
            stream.seek(size - 1)
            section = ("\n" if stream.read(1) == b"\n" else "\n\n") + section
        stream.write(section.encode("utf-8"))


def step_summary_markdown(
    findings: Sequence[Finding],
    errors: Sequence[InputError],
    notes: Sequence[str],
    summary: str,
) -> str:
    n_err = sum(f.severity is Severity.ERROR for f in findings)
    n_warn = len(findings) - n_err
    n_skipped = sum(not file_analysed(e) for e in errors)
    lines = [
        "## hookguard",
        "",
        _text(summary),
        "",
        "| errors | warnings | files not analysed | other input problems |",
        "|---:|---:|---:|---:|",
        f"| {n_err} | {n_warn} | {n_skipped} | {len(errors) - n_skipped} |",
    ]
    if findings:
        lines += [
            "",
            "### Findings",
            "",
            "| code | severity | location | symbol | message |",
            "|---|---|---|---|---|",
        ]
        lines += [
            _row(
                f"{f.code} {_text(f.rule)}",
                f.severity.value,
                _code(f"{f.path}:{f.line}"),
                _code(f.symbol),
                _text(f.message),
            )
            for f in findings
        ]
    if errors:
        lines += ["", "### Input problems", "", "| location | file | problem |", "|---|---|---|"]
        lines += [_row(_code(f"{e.path}:{e.line}"),
                       "analysed" if file_analysed(e) else "**not analysed**", _text(e.message))
                  for e in errors]
    if notes:
        lines += ["", "### Notes", ""]
        lines += [f"- {_text(note)}" for note in notes]
    return "\n".join(lines) + "\n"


def _row(*cells: str) -> str:
    return "| " + " | ".join(cells) + " |"


# Backslash-escaping every markdown-significant character keeps text literal: no emphasis from
# ``_private_names``, no HTML from ``<locals>``, no cell break from ``|``.
_MARKDOWN_SPECIAL = frozenset("\\`*_[]<>|~&#!")


def _text(value: str) -> str:
    lines = value.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    return "<br>".join(
        "".join("\\" + c if c in _MARKDOWN_SPECIAL else c for c in printable(line))
        for line in lines
    )


def _code(value: str) -> str:
    """A code span (literal text) in a table cell: GFM still needs ``|`` escaped inside it.
    A line break is shown as its escape (``\\x0a``), as every other format shows a name,
    never joined into a space: ``a\\nb.py`` must not read as another file, ``a b.py``."""
    value = printable(value).replace("|", "\\|")
    fence = "`"
    while fence in value:
        fence += "`"
    pad = " " if value.startswith("`") or value.endswith("`") else ""
    return f"{fence}{pad}{value}{pad}{fence}"


def _join(parts: Iterable[str]) -> str:
    items = list(parts)
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]
