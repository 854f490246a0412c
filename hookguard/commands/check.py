"""``hookguard check``: the pull-request gate and the pre-commit hook.

The gate runs with the base's ``[tool.hookguard]``; a change whose own pyproject.toml weakens
it (or is invalid) gets an error at that file's line and exit code 1 (see
:mod:`hookguard.gate`). Those errors are input problems, not files left out, so the summary
line counts them apart: ``...; 1 gate setting weakened or invalid in the change's
pyproject.toml``.

Each hook change the gate found is a note of one short line, the difference only
(``hook change: Base.hook: gains keyword num_blocks_per_seq [pkg/base.py:40]``), at most
:data:`~hookguard.gate.NOTE_LIMIT` characters; the same change to several classes is one note.
The JSON output keeps the detail (both signatures, the commit's subject) under
``hook_changes``.

When ``check --staged`` fails (the pre-commit hook blocks a commit) on findings that ``fix`` can
fix (HG001 stale overrides, HG002 missing keywords), one line on stderr after the summary says
how: ``hookguard fix --staged``, and under pre-commit (``PRE_COMMIT=1``, where a pinned hook
leaves no ``hookguard`` on PATH) its manual-stage hook ``hookguard-fix``."""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from hookguard.commands.common import (
    EXIT_USAGE,
    classes_of,
    emit,
    exit_code,
    options_from,
    progress_shown,
    reported,
    summarise,
)
from hookguard.gate import NOTE_LIMIT, GateError, run_gate, shorten
from hookguard.report.escape import printable

if TYPE_CHECKING:
    from hookguard.findings import Finding
    from hookguard.gate import CallChange, GateResult
    from hookguard.git.changes import HookChange
    from hookguard.upgrade.dependencies import DependencyResult

_ALSO = 2  # other classes named in a note for the same change, before "and N more"


def run_check(args: argparse.Namespace) -> int:
    import sys

    options = options_from(args)
    try:
        with progress_shown(args):
            result = run_gate(args.repo, args.base, args.head, args.staged, options)
            dependencies = (None if args.staged or getattr(args, "no_dependencies", False)
                            else dependency_check(result, options.select))
    except GateError as exc:
        print(f"hookguard: error: {printable(str(exc))}", file=sys.stderr)
        return EXIT_USAGE
    findings, errors = list(result.findings), list(result.errors)
    notes = list(result.notes) + hook_change_notes(result)
    extra: dict[str, Any] = {"hook_changes": hook_changes_json(result)}
    seconds = result.seconds
    if dependencies is not None:
        known = {(f.fingerprint, f.path, f.line) for f in findings}
        findings += [f for f in dependencies.findings
                     if (f.fingerprint, f.path, f.line) not in known]
        findings.sort(key=lambda f: f.sort_key())
        errors += dependencies.problems
        notes += dependencies.notes
        extra["dependencies"] = dependencies.to_json()
        seconds += dependencies.seconds
    findings = reported(args, findings, notes)
    scope = "staged tree vs HEAD" if args.staged else f"{result.base[:10]}..{result.head[:10]}"
    files = [e for e in result.errors if e not in result.config_problems]
    summary = summarise(findings, files, result.stats.files, seconds,
                        classes_of(result), label=f"hookguard check ({scope})", new=True)
    if result.config_problems:
        count = len(result.config_problems)
        summary += (f"; {count} gate setting{'s' * (count != 1)} weakened or invalid in the "
                    "change's pyproject.toml")
    if dependencies is not None:
        summary += dependencies.summary()
    emit(args, findings, errors, notes, summary, result.root, extra=extra)
    code = exit_code(findings, args.exit_zero, errors)
    hint = fix_hint(findings, os.environ) if args.staged and code else None
    if hint:
        print(hint, file=sys.stderr)
    return code


def dependency_check(result: GateResult, select: Sequence[str]) -> DependencyResult | None:
    """The upgrade check of each dependency the change moves (``--no-dependencies`` turns it
    off): :mod:`hookguard.upgrade.dependencies`."""
    from hookguard.git.repo import Repo
    from hookguard.upgrade.dependencies import check_dependencies

    if result.projects is None or (select and not {"HG001", "HG002"} & set(select)):
        return None  # (the upgrade check reports HG001 and HG002 only)
    head = result.projects[1]
    return check_dependencies(Repo(result.root), result.base, result.head, result.config,
                              list(head.files.values()), head, select)


#: The rules whose findings ``hookguard fix`` fixes (renames, missing keywords).
FIXABLE_CODES = frozenset({"HG001", "HG002"})


def fix_hint(findings: Sequence[Finding], environ: Mapping[str, str]) -> str | None:
    """The one line a blocked commit needs: how to fix it. None when no finding is of a kind
    ``fix`` fixes (a bypassed contract, a file that does not parse: fixed by hand)."""
    if not any(f.code in FIXABLE_CODES for f in findings):
        return None
    manual = (" (or: pre-commit run --hook-stage manual hookguard-fix)"
              if environ.get("PRE_COMMIT") == "1" else "")
    return (f"hookguard: to fix what it can, run: hookguard fix --staged{manual}; then git add "
            "the fixed files and commit again")


def _short_class(fq: str) -> str:
    return fq.rsplit(".", 1)[-1]


def _short_commit(commit: str) -> str:
    """``a37e962`` of ``a37e962 (subject)`` (a call change's commit) or of a full sha."""
    return commit.split(" ", 1)[0][:10]


def hook_change_notes(result: GateResult) -> list[str]:
    """One short line per hook change: ``hook change: Base.step renamed to do_step in a37e962
    [pkg/base.py]``, ``hook change: Base.fetch: gains keyword scale [pkg/base.py:5]``. A change
    made alike to several classes (one hook renamed in a family's every class, say) is one
    line that names the first and counts the others."""
    groups: dict[tuple[str, ...], list[tuple[str, str]]] = {}  # key -> (class.hook, where)
    lines: dict[tuple[str, ...], str] = {}  # key -> what changed, after "class.hook"
    for change in result.changes:
        what = _hook_change_what(change)
        key: tuple[str, ...] = ("hook", change.old, what, change.short)
        lines.setdefault(key, what)
        groups.setdefault(key, []).append(
            (f"{_short_class(change.class_fq)}.{change.old}", f" [{change.path}]"))
    for call in result.call_changes:
        what = ": " + call.difference() + (f" in {_short_commit(call.commit)}"
                                           if call.commit else "")
        key = ("call", call.method, what)
        lines.setdefault(key, what)
        groups.setdefault(key, []).append(
            (f"{_short_class(call.class_fq)}.{call.method}", f" [{call.path}:{call.line}]"))
    notes: list[str] = []
    for key, members in groups.items():
        names = list(dict.fromkeys(name for name, _ in members))
        first, where = names[0], members[0][1]
        also = ""
        if len(names) > 1:
            others = names[1:]
            shown = ", ".join(others[:_ALSO])
            more = len(others) - _ALSO
            also = f" (also {shown}{f' and {more} more' if more > 0 else ''})"
        tail = where + also
        head = f"hook change: {first}"
        body = shorten(lines[key], max(40, NOTE_LIMIT - len(head) - len(tail)))
        notes.append(shorten(head + body + tail, NOTE_LIMIT))
    return notes


def _hook_change_what(change: HookChange) -> str:
    if change.undispatched:
        what = " no longer called through self"
    elif change.probed:
        what = " no longer called (an optional hook, probed with hasattr)"
    elif change.new:
        what = f" renamed to {change.new}"
    elif change.owner and change.owner != change.class_fq:
        what = f" removed (it was {_short_class(change.owner)}'s)"
    else:
        what = " removed"
    return what + (f" in {change.short}" if change.short else "")


def hook_changes_json(result: GateResult) -> list[dict[str, Any]]:
    """Every hook change in full, for ``--format json`` (the notes say them in short)."""
    out: list[dict[str, Any]] = []
    for change in result.changes:
        out.append({
            "kind": change.kind,
            "class": change.class_fq,
            "hook": change.old,
            "new": change.new,
            "owner": change.owner or change.class_fq,
            "path": change.path,
            "commit": change.commit,
            "short": change.short,
            "subject": change.subject,
        })
    for call in result.call_changes:
        out.append(_call_change_json(call))
    return out


def _call_change_json(call: CallChange) -> dict[str, Any]:
    return {
        "kind": call.kind,  # "signature" or "passes"
        "class": call.class_fq,
        "hook": call.method,
        "difference": call.difference(),
        "detail": call.describe(),  # both signatures, or the keywords the caller now passes
        "path": call.path,
        "line": call.line,
        "commit": call.commit,
    }
