"""``hookguard audit``: the whole checkout, findings reported under the given paths."""

from __future__ import annotations

import argparse
from pathlib import Path

from hookguard.commands.common import (
    classes_of,
    emit,
    exit_code,
    options_from,
    progress_shown,
    summarise,
)


def run_audit(args: argparse.Namespace) -> int:
    from hookguard.engine import audit

    options = options_from(args)
    with progress_shown(args):
        result = audit(args.paths or [Path.cwd()], options)
    summary = summarise(result.findings, result.errors, result.stats.files, result.seconds,
                        classes_of(result))
    emit(args, result.findings, result.errors, result.notes, summary, result.root)
    return exit_code(result.findings, args.exit_zero, result.errors)
