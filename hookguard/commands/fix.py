"""``hookguard fix``: audit, then apply the mechanical fixes (libcst) or print them as a diff.

Output: one line per finding, ``path:line: fixed CODE: what`` or ``path:line: refused CODE:
why``. With ``--diff`` the unified diff goes to stdout, those lines to stderr, and nothing is
written. Exit codes: with ``--diff``, 1 when it would change files and 0 when it would not (as
``ruff --diff``); without, 0 when every finding was fixed (or there was nothing to do) and 1
when some finding was refused, has no automatic fix or has only an unsafe one held back; 2 on a
usage error.

As in ruff, safe fixes are the default and unsafe ones apply under ``--unsafe-fixes``: the
rename of a stale override the base calls with arguments it does not take, together with the
base's signature (``path:line: held back CODE (unsafe fix, use --unsafe-fixes): ...`` without
the flag, counted in the summary). ``--diff`` shows both: the unsafe fixes held back follow
the patch, commented out. ``--add-override`` also adds ``@override`` to every method proven
to override a hook, from ``typing`` when the project's ``requires-python`` (else the running
interpreter) is 3.12 or newer, ``typing_extensions`` before.

``--staged`` fixes what ``hookguard check --staged`` (the pre-commit hook) found: a rename that
is only staged is not in the history yet, so ``audit`` has no evidence of it, but the gate sees
it by comparing the staged tree with HEAD.
"""

from __future__ import annotations

import argparse
import os
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
    from hookguard.fix.plan import OVERRIDE_CODE

    paths: list[Path] = list(getattr(args, "paths", None) or []) or [Path.cwd()]
    dry_run = bool(getattr(args, "diff", False))
    staged = bool(getattr(args, "staged", False))
    unsafe = bool(getattr(args, "unsafe_fixes", False))
    add_override = bool(getattr(args, "add_override", False))
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
    source = None
    if add_override:
        version, why = target_python(result.root)
        source = "typing" if version >= (3, 12) else "typing_extensions"
        print(f"hookguard: note: @override from {source}: {why}", file=sys.stderr)
    report = fix_findings(
        result.root, findings, write=not dry_run, project=result.project, unsafe=unsafe,
        add_override=source, scopes=_scopes(result.root, paths),
    )
    status = sys.stderr if dry_run else sys.stdout
    if dry_run:
        sys.stdout.write(report.diff() + report.held_diff())
        sys.stdout.flush()
    for outcome in report.outcomes:
        print(outcome.render(dry_run=dry_run), file=status)
    changed_files = sorted(f.path for f in report.files if f.changed)
    changed = len(changed_files)
    if changed and not dry_run and not staged:
        _follow_up(paths, options, findings, set(changed_files))
    decorated = [o for o in report.fixed if o.code == OVERRIDE_CODE]
    fixed = len(report.fixed) - len(decorated)
    refused, held = len(report.refused), len(report.held)
    if report.outcomes or add_override:
        verb = "would change" if dry_run else "changed"
        unsafe_fixed = sum(1 for o in report.fixed if o.unsafe)
        parts = [
            f"{fixed} fixed{f' ({unsafe_fixed} unsafe)' if unsafe_fixed else ''}, "
            f"{refused} refused",
            f"{verb} {changed} file{'s' * (changed != 1)}",
        ]
        if add_override:
            count = len(decorated)
            parts.append(f"{'would add' if dry_run else 'added'} @override to {count} "
                         f"method{'s' * (count != 1)}")
        if held:
            parts.append(f"{held} fix{'es' * (held != 1)} held back as unsafe "
                         "(use --unsafe-fixes)")
        print(f"hookguard fix: {'; '.join(parts)}", file=sys.stderr)
    if decorated and source == "typing_extensions":
        missing = _undeclared(result.root, "typing_extensions")
        if missing:
            print(f"hookguard: note: {missing}", file=sys.stderr)
    if staged and changed and not dry_run:
        print("hookguard fix: stage the fixes, then commit again: git add "
              + " ".join(shlex.quote(printable(p)) for p in changed_files), file=sys.stderr)
    if dry_run:
        return EXIT_FINDINGS if changed else EXIT_CLEAN
    return EXIT_FINDINGS if refused or held else EXIT_CLEAN


def _scopes(root: Path, paths: list[Path]) -> list[str]:
    """``paths`` relative to ``root`` (``""``: all of it), as the audit scopes findings."""
    out = []
    for path in paths:
        rel = os.path.relpath(path.resolve(), root)
        out.append("" if rel == "." else Path(rel).as_posix())
    return out


def target_python(root: Path) -> tuple[tuple[int, int], str]:
    """The oldest Python the project supports, and where that comes from: the lower bound of
    ``[project] requires-python`` in ``root``'s pyproject.toml, else the running
    interpreter."""
    running = sys.version_info[:2]
    here = f"the running Python is {running[0]}.{running[1]}"
    project = _pyproject_table(root)
    if project is None:
        return running, f"no readable pyproject.toml; {here}"
    spec = project.get("requires-python") if isinstance(project, dict) else None
    if not isinstance(spec, str):
        return running, f"pyproject.toml sets no requires-python; {here}"
    shown = printable(spec)
    bound = python_lower_bound(spec)
    if bound is None:
        return running, f"requires-python = {shown!r} has no lower bound hookguard reads; {here}"
    return bound, f"requires-python = {shown!r}"


def python_lower_bound(spec: str) -> tuple[int, int] | None:
    """The lowest ``(major, minor)`` a PEP 440 specifier (``>=3.10``, ``~=3.12``,
    ``==3.12.*``, ``>=3.9,<4``) allows, when a clause bounds it from below; ``>3.11`` allows
    3.11.1, so it bounds at 3.11. ``(3, 0)`` when nothing bounds it (``<4``); None when no
    clause can be read."""
    import re

    best: tuple[int, int] | None = None
    read = False
    for clause in spec.split(","):
        match = re.fullmatch(r"\s*(~=|===|==|>=|<=|!=|>|<)\s*v?(\d+)(?:\.(\d+))?[.\w*+!-]*\s*",
                             clause)
        if match is None:
            continue
        read = True
        op, major, minor = match.group(1), int(match.group(2)), int(match.group(3) or 0)
        if op in ("~=", "===", "==", ">=", ">") and (best is None or (major, minor) > best):
            best = (major, minor)
    if not read:
        return None
    return best or (3, 0)


def _undeclared(root: Path, package: str) -> str:
    """A note when pyproject.toml lists the project's dependencies and ``package`` is not
    among them ('' otherwise)."""
    import re

    project = _pyproject_table(root)
    deps = project.get("dependencies") if isinstance(project, dict) else None
    if not isinstance(deps, list):
        return ""
    wanted = re.sub(r"[-_.]+", "-", package).lower()
    for dep in deps:
        name = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", str(dep))
        if name and re.sub(r"[-_.]+", "-", name.group(1)).lower() == wanted:
            return ""
    return (f"the added imports need {package}, which pyproject.toml's [project] dependencies "
            "do not list (another dependency may bring it): add it there")


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


def _pyproject_table(root: Path) -> dict[str, object] | None:
    """The ``[project]`` table of ``root``'s pyproject.toml ({} without one); None when there
    is no readable pyproject.toml."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on 3.10 only
        import tomli as tomllib  # type: ignore[import-not-found,unused-ignore]
    try:
        with open(root / "pyproject.toml", "rb") as handle:
            data = tomllib.load(handle)
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError):
        return None
    project = data.get("project")
    return project if isinstance(project, dict) else {}
