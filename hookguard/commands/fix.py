"""``hookguard fix``: audit, then apply the mechanical fixes (libcst) or print them as a diff.

Output: one line per finding, ``path:line: fixed CODE: what`` or ``path:line: refused CODE:
why``. With ``--diff`` the unified diff goes to stdout, those lines to stderr, and nothing is
written. Exit 0 when every finding was fixed (or there was nothing to do), 1 when some finding
was refused or has no automatic fix, 2 on a usage error.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

EXIT_CLEAN, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2


def run_fix(args: argparse.Namespace) -> int:
    from hookguard.engine import Options, audit
    from hookguard.fix import fix_findings

    paths: list[Path] = list(getattr(args, "paths", None) or []) or [Path.cwd()]
    dry_run = bool(getattr(args, "diff", False))
    options = Options(
        use_cache=not getattr(args, "no_cache", False),
        contracts=tuple(getattr(args, "contracts", None) or ()),
    )
    result = audit(paths, options)
    for note in result.notes:
        print(f"hookguard: note: {note}", file=sys.stderr)
    report = fix_findings(result.root, result.findings, write=not dry_run)
    status = sys.stderr if dry_run else sys.stdout
    if dry_run:
        sys.stdout.write(report.diff())
        sys.stdout.flush()
    for outcome in report.outcomes:
        print(outcome.render(dry_run=dry_run), file=status)
    changed = sum(f.changed for f in report.files)
    fixed, refused = len(report.fixed), len(report.refused)
    if report.outcomes:
        verb = "would change" if dry_run else "changed"
        print(
            f"hookguard fix: {fixed} fixed, {refused} refused; {verb} {changed} "
            f"file{'s' * (changed != 1)}",
            file=sys.stderr,
        )
    return EXIT_FINDINGS if refused else EXIT_CLEAN
