"""``hookguard check``: the pull-request gate and the pre-commit hook.

The gate runs with the base's ``[tool.hookguard]``; a change whose own pyproject.toml weakens
it (or is invalid) gets an error at that file's line and exit code 1 (see
:mod:`hookguard.gate`). Those errors are input problems, not files left out, so the summary
line counts them apart: ``...; 1 gate setting weakened or invalid in the change's
pyproject.toml``."""

from __future__ import annotations

import argparse

from hookguard.commands.common import (
    EXIT_USAGE,
    classes_of,
    emit,
    exit_code,
    options_from,
    progress_shown,
    summarise,
)
from hookguard.gate import GateError, run_gate
from hookguard.report.escape import printable


def run_check(args: argparse.Namespace) -> int:
    import sys

    options = options_from(args)
    try:
        with progress_shown(args):
            result = run_gate(args.repo, args.base, args.head, args.staged, options)
    except GateError as exc:
        print(f"hookguard: error: {printable(str(exc))}", file=sys.stderr)
        return EXIT_USAGE
    notes = list(result.notes)
    for change in result.changes:
        what = f"renamed to {change.new}" if change.new else "removed"
        when = f"in {change.short} ({change.subject})" if change.short else f"({change.subject})"
        notes.append(f"hook change: {change.class_fq}.{change.old} {what} {when} [{change.path}]")
    notes.extend(f"hook change: {change.describe()}" for change in result.call_changes)
    scope = "staged tree vs HEAD" if args.staged else f"{result.base[:10]}..{result.head[:10]}"
    files = [e for e in result.errors if e not in result.config_problems]
    summary = summarise(result.findings, files, result.stats.files, result.seconds,
                        classes_of(result), label=f"hookguard check ({scope})", new=True)
    if result.config_problems:
        count = len(result.config_problems)
        summary += (f"; {count} gate setting{'s' * (count != 1)} weakened or invalid in the "
                    "change's pyproject.toml")
    emit(args, result.findings, result.errors, notes, summary, result.root)
    return exit_code(result.findings, args.exit_zero, result.errors)
