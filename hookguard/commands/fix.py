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
from typing import TYPE_CHECKING

from hookguard.commands.common import EXIT_CLEAN, EXIT_FINDINGS

if TYPE_CHECKING:
    from hookguard.engine import Options
    from hookguard.findings import Finding



def run_fix(args: argparse.Namespace) -> int:
    from hookguard.engine import Options, audit
    from hookguard.fix import fix_findings

    paths: list[Path] = list(getattr(args, "paths", None) or []) or [Path.cwd()]
    dry_run = bool(getattr(args, "diff", False))
    options = Options(
        use_cache=not getattr(args, "no_cache", False),
        contracts=tuple(getattr(args, "contracts", None) or ()),
        reuse_results=False,  # the fixer needs the class model, not only the findings
    )
    result = audit(paths, options)
    for note in result.notes:
        print(f"hookguard: note: {note}", file=sys.stderr)
    report = fix_findings(
        result.root, result.findings, write=not dry_run, project=result.project
    )
    status = sys.stderr if dry_run else sys.stdout
    if dry_run:
        sys.stdout.write(report.diff())
        sys.stdout.flush()
    for outcome in report.outcomes:
        print(outcome.render(dry_run=dry_run), file=status)
    changed = sum(f.changed for f in report.files)
    if changed and not dry_run:
        _follow_up(paths, options, result.findings, {f.path for f in report.files if f.changed})
    fixed, refused = len(report.fixed), len(report.refused)
    if report.outcomes:
        verb = "would change" if dry_run else "changed"
        print(
            f"hookguard fix: {fixed} fixed, {refused} refused; {verb} {changed} "
            f"file{'s' * (changed != 1)}",
            file=sys.stderr,
        )
    return EXIT_FINDINGS if refused else EXIT_CLEAN


def _follow_up(
    paths: list[Path], options: Options, before: list[Finding], changed: set[str]
) -> None:
    """Audit again: say what the fixed files still need (a renamed override may now be seen
    to take the wrong parameters, or to skip state the base hook sets)."""
    from hookguard.engine import audit

    known = {f.fingerprint for f in before}
    for finding in audit(paths, options).findings:
        if finding.path in changed and finding.fingerprint not in known:
            print(
                f"{finding.path}:{finding.line}: note: now reported, {finding.code} "
                f"{finding.rule}: {finding.message}",
                file=sys.stderr,
            )
