"""``hookguard audit``: the whole checkout, findings reported under the given paths."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from hookguard.commands.common import (
    classes_of,
    emit,
    exit_code,
    options_from,
    progress_shown,
    reported,
    summarise,
)
from hookguard.errors import UsageError


def run_audit(args: argparse.Namespace) -> int:
    from hookguard.engine import audit

    options = options_from(args)
    options.python = environment_of(args)
    with progress_shown(args):
        result = audit(args.paths or [Path.cwd()], options)
    classes = result.own_classes if result.own_classes is not None else classes_of(result)
    notes = list(result.notes)
    findings = reported(args, result.findings, notes)
    summary = summarise(findings, result.errors, result.stats.files, result.seconds, classes)
    emit(args, findings, result.errors, notes, summary, result.root)
    return exit_code(findings, args.exit_zero, result.errors)


def environment_of(args: argparse.Namespace) -> str | None:
    """The interpreter or virtual environment whose installed packages the audit reads:
    ``--python``, else the active virtual environment (``VIRTUAL_ENV``); None with
    ``--no-environment``."""
    given: str | None = getattr(args, "python", None)
    if getattr(args, "no_environment", False):
        if given:
            raise UsageError("--python and --no-environment contradict each other")
        return None
    return given or os.environ.get("VIRTUAL_ENV", "").strip() or None
