"""What every command shares: exit codes, the engine options of the shared flags, the summary
line and report output. :mod:`hookguard.cli` and every command module import this; it imports
neither."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING

if TYPE_CHECKING:
    from hookguard.engine import Options
    from hookguard.findings import Finding, InputError

EXIT_CLEAN, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2
FORMATS = ("auto", "rich", "plain", "json", "sarif", "github")


def options_from(args: argparse.Namespace) -> Options:
    """The engine options of the shared flags (see :func:`hookguard.cli.add_common`)."""
    from hookguard.engine import Options

    return Options(
        use_cache=not args.no_cache,
        history=not args.no_history,
        contracts=tuple(args.contracts),
        workers=args.jobs,
        select=tuple(args.select),
    )


def summarise(
    findings: Sequence[Finding], errors: Sequence[InputError], files: int, seconds: float
) -> str:
    from hookguard.findings import Severity

    n_err = sum(f.severity is Severity.ERROR for f in findings)
    n_warn = len(findings) - n_err
    parts = [f"{n_err} error{'s' * (n_err != 1)}", f"{n_warn} warning{'s' * (n_warn != 1)}"]
    if errors:
        parts.append(f"{len(errors)} file problem{'s' * (len(errors) != 1)}")
    return f"hookguard: {', '.join(parts)} in {files} files ({seconds:.2f}s)"


def exit_code(findings: Sequence[Finding], exit_zero: bool) -> int:
    from hookguard.findings import Severity

    if exit_zero:
        return EXIT_CLEAN
    return EXIT_FINDINGS if any(f.severity is Severity.ERROR for f in findings) else EXIT_CLEAN


def emit(
    args: argparse.Namespace,
    findings: Sequence[Finding],
    errors: Sequence[InputError],
    notes: Sequence[str],
    summary: str,
    root: Path,
) -> None:
    """Write a report in the chosen format to stdout or ``--output``."""
    fmt = args.format
    stream: IO[str] = (
        open(args.output, "w", encoding="utf-8")  # noqa: SIM115 - closed below
        if args.output
        else sys.stdout
    )
    try:
        if fmt == "auto":
            fmt = "rich" if stream.isatty() else "plain"
        if fmt == "rich":
            from hookguard.report.terminal import render_terminal

            color = "NO_COLOR" not in os.environ and stream.isatty()
            render_terminal(findings, errors, notes, summary, stream, color)
        elif fmt == "json":
            from hookguard.report.json_report import render_json

            stream.write(render_json(findings, errors, notes))
        elif fmt == "sarif":
            from hookguard.report.sarif import render_sarif

            stream.write(render_sarif(findings, errors, root, notes))
        elif fmt == "github":
            from hookguard.report.github import render_github

            stream.write(render_github(findings, errors, notes, summary))
        else:
            from hookguard.report.plain import render_plain

            stream.write(render_plain(findings, errors, notes))
            if findings or errors:
                print(summary, file=sys.stderr)
    finally:
        if stream is not sys.stdout:
            stream.close()
