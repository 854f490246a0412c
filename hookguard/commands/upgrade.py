"""``hookguard upgrade PACKAGE==VERSION [--from VERSION] [PATH]``: the checkout's overrides that
upgrading a package breaks (:mod:`hookguard.upgrade.check`; ``docs/upgrade.md``).

Exit codes as every command: 0 clean (warnings allowed), 1 an error-level finding (or a file of
the checkout not analysed), 2 a usage problem: a bad spec, a version not found, an archive that
cannot be read, each said in one line."""

from __future__ import annotations

import argparse
from pathlib import Path

from hookguard.commands.common import emit, exit_code, progress_shown, reported, summarise


def run_upgrade(args: argparse.Namespace) -> int:
    from hookguard.engine import Options
    from hookguard.upgrade.check import run_upgrade as check_upgrade

    options = Options(use_cache=not args.no_cache, history=False, workers=args.jobs)
    with progress_shown(args):
        result = check_upgrade(
            args.path, args.spec, args.from_version, [Path(p) for p in args.source],
            args.python, args.download, options)
    label = (f"hookguard upgrade ({result.name} {result.old.version} -> "
             f"{result.new.version})")
    notes = list(result.notes)
    findings = reported(args, result.findings, notes)
    summary = summarise(findings, result.errors, result.stats.files, result.seconds,
                        result.classes, label=label)
    emit(args, findings, result.errors, notes, summary, result.root,
         extra={"upgrade": result.to_json()})
    return exit_code(findings, args.exit_zero, result.errors)
