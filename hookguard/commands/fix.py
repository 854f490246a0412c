"""``hookguard fix``: audit, then apply the mechanical fixes (libcst) or print them as a diff.

Output: one line per finding, ``path:line: fixed CODE: what`` or ``path:line: refused CODE:
why``. With ``--diff`` the unified diff goes to stdout, those lines to stderr, and nothing is
written. Exit codes: with ``--diff``, 1 when it would change files and 0 when it would not (as
``ruff --diff``); without, 0 when every finding was fixed (or there was nothing to do) and 1
when some finding was refused or has no automatic fix; 2 on a usage error.

``--staged`` fixes what ``hookguard check --staged`` (the pre-commit hook) found: a rename that
is only staged is not in the history yet, so ``audit`` has no evidence of it, but the gate sees
it by comparing the staged tree with HEAD.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from hookguard.commands.common import EXIT_CLEAN, EXIT_FINDINGS, options_from, progress_shown
from hookguard.errors import UsageError
from hookguard.report.escape import printable, safe_path

if TYPE_CHECKING:
    from hookguard.engine import Options
    from hookguard.findings import Finding


def run_fix(args: argparse.Namespace) -> int:
    from dataclasses import replace

    from hookguard.engine import audit
    from hookguard.fix import fix_findings

    paths: list[Path] = list(getattr(args, "paths", None) or []) or [Path.cwd()]
    dry_run = bool(getattr(args, "diff", False))
    staged = bool(getattr(args, "staged", False))
    options = replace(
        options_from(_with_defaults(args)),
        reuse_results=False,  # the fixer needs the class model, not only the findings
    )
    if not dry_run:  # finish a run that was interrupted, before looking at the code
        from hookguard.engine import Workspace
        from hookguard.fix.apply import recover

        for note in recover(Workspace.open(paths[0]).root):
            print(f"hookguard: note: {note}", file=sys.stderr)
    with progress_shown(args):
        result = audit(paths, options)
    findings = result.findings
    for note in result.notes:
        print(f"hookguard: note: {printable(note)}", file=sys.stderr)
    if staged:
        findings = _staged_findings(result.root, options)
    report = fix_findings(result.root, findings, write=not dry_run, project=result.project)
    status = sys.stderr if dry_run else sys.stdout
    if dry_run:
        sys.stdout.write(report.diff())
        sys.stdout.flush()
    for outcome in report.outcomes:
        print(outcome.render(dry_run=dry_run), file=status)
    changed_files = sorted(f.path for f in report.files if f.changed)
    changed = len(changed_files)
    if changed and not dry_run and not staged:
        _follow_up(paths, options, findings, set(changed_files))
    fixed, refused = len(report.fixed), len(report.refused)
    if report.outcomes:
        verb = "would change" if dry_run else "changed"
        print(
            f"hookguard fix: {fixed} fixed, {refused} refused; {verb} {changed} "
            f"file{'s' * (changed != 1)}",
            file=sys.stderr,
        )
    if staged and changed and not dry_run:
        print("hookguard fix: stage the fixes, then commit again: git add "
              + " ".join(shlex.quote(printable(p)) for p in changed_files), file=sys.stderr)
    if dry_run:
        return EXIT_FINDINGS if changed else EXIT_CLEAN
    return EXIT_FINDINGS if refused else EXIT_CLEAN


def _with_defaults(args: argparse.Namespace) -> argparse.Namespace:
    """The shared flags ``fix`` does not take, at their defaults (callers may pass fewer)."""
    return argparse.Namespace(
        no_cache=bool(getattr(args, "no_cache", False)),
        no_history=bool(getattr(args, "no_history", False)),
        contracts=list(getattr(args, "contracts", None) or []),
        select=list(getattr(args, "select", None) or []),
        jobs=getattr(args, "jobs", None),
    )


def _staged_findings(root: Path, options: Options) -> list[Finding]:
    """What ``check --staged`` reports, for the files as they are in the working tree."""
    from hookguard.gate import GateError, run_gate

    try:
        gate = run_gate(root, None, "HEAD", True, options)
    except GateError as exc:
        raise UsageError(str(exc)) from None
    for note in gate.notes:
        print(f"hookguard: note: {printable(note)}", file=sys.stderr)
    return gate.findings


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
                f"{safe_path(finding.path)}:{finding.line}: note: now reported, {finding.code} "
                f"{finding.rule}: {printable(finding.message)}",
                file=sys.stderr,
            )
