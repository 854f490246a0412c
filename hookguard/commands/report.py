"""``hookguard report --html FILE``: the audit as one self-contained HTML page (CI artifact)."""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path

from hookguard.commands.common import (
    classes_of,
    exit_code,
    options_from,
    progress_shown,
    reported,
    summarise,
)
from hookguard.errors import UsageError
from hookguard.findings import Finding, Severity
from hookguard.hookmap import HookMap
from hookguard.model.project import ClassInfo, Project

MAX_FAMILIES = 50


def run_report(args: argparse.Namespace) -> int:
    from hookguard.engine import audit
    from hookguard.report.escape import printable
    from hookguard.report.html import code_link_base, render_html

    target = Path(args.html)
    if not target.parent.is_dir():
        raise UsageError(f"cannot write the report to {printable(str(target))}: "
                         "no such directory")
    options = replace(options_from(args), reuse_results=False)  # the hook maps need the model
    with progress_shown(args):
        result = audit(args.paths or [Path.cwd()], options)
    notes = list(result.notes)
    findings = reported(args, result.findings, notes)
    summary = summarise(findings, result.errors, result.stats.files, result.seconds,
                        classes_of(result))
    hook_maps: list[HookMap] = []
    dead: dict[str, list[Finding]] = {}
    left_out = 0
    if result.project is not None:
        hook_maps, dead, left_out = families(result.project, findings)
    page = render_html(findings, result.errors, notes, summary, result.root,
                       hook_maps, dead, code_link_base(result.root, target), left_out)
    try:
        target.write_text(page, encoding="utf-8", errors="surrogateescape")
    except OSError as exc:
        raise UsageError(f"cannot write the report to {printable(str(target))}: "
                         f"{exc.strerror or exc}") from None
    print(printable(summary), file=sys.stderr)
    print(f"hookguard: wrote {printable(str(target))}", file=sys.stderr)
    return exit_code(findings, args.exit_zero, result.errors)


def families(
    project: Project, findings: list[Finding]
) -> tuple[list[HookMap], dict[str, list[Finding]], int]:
    """The hook map of each family a finding is about (the ancestor whose hook it concerns;
    the first :data:`MAX_FAMILIES`, those with error-level findings first), each family's
    stale-override findings, and how many families were left out. A map's rows are the hooks
    some subclass overrides (:func:`~hookguard.hookmap.build_hook_map`)."""
    from hookguard.hookmap import build_hook_map

    bases: dict[str, ClassInfo] = {}
    errors: set[str] = set()
    dead: dict[str, list[Finding]] = {}
    for finding in findings:
        base = _family_base(project, finding)
        if base is None:
            continue
        bases.setdefault(base.fq, base)
        if finding.severity is Severity.ERROR:
            errors.add(base.fq)
        if finding.rule == "stale-override":
            dead.setdefault(base.fq, []).append(finding)
    ordered = sorted(bases.values(), key=lambda b: b.fq not in errors)  # (stable)
    maps = [build_hook_map(project, base, findings) for base in ordered[:MAX_FAMILIES]]
    return maps, dead, max(0, len(ordered) - MAX_FAMILIES)


def _family_base(project: Project, finding: Finding) -> ClassInfo | None:
    ancestor = finding.evidence.get("ancestor")
    if isinstance(ancestor, str) and ancestor in project.classes:
        return project.classes[ancestor]
    info = project.classes.get(finding.symbol.rsplit(".", 1)[0])
    if info is None:
        return None
    node = project.defining_ancestor(info, finding.hook)
    return node if isinstance(node, ClassInfo) else None
