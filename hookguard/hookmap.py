"""The hook map of a base class: each hook against each subclass, as a reviewer wants to see it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hookguard.findings import Finding
from hookguard.model.project import ClassInfo, Project
from hookguard.rules.base import is_dunder

INHERITED = "inherited"
OVERRIDDEN = "overridden"
WITH_SUPER = "overridden+super"
STALE = "stale"
DRIFTED = "drifted"
BYPASS = "bypass"
STATUSES = (INHERITED, OVERRIDDEN, WITH_SUPER, STALE, DRIFTED, BYPASS)
PROBLEMS = frozenset({STALE, DRIFTED, BYPASS})


@dataclass
class HookMap:
    base: ClassInfo
    hooks: list[str]
    subclasses: list[ClassInfo]
    cells: dict[str, dict[str, str]]  # hook -> subclass fq -> status
    notes: dict[str, dict[str, str]]  # hook -> subclass fq -> detail

    def overrides(self, sub: ClassInfo) -> list[tuple[str, str, str]]:
        """``(hook, status, detail)`` for each hook ``sub`` does not simply inherit."""
        return [
            (hook, self.cells[hook][sub.fq], self.notes[hook].get(sub.fq, ""))
            for hook in self.hooks
            if self.cells[hook][sub.fq] != INHERITED
        ]

    def counts(self, hook: str) -> dict[str, int]:
        """How many subclasses have each status for ``hook``."""
        counts = dict.fromkeys(STATUSES, 0)
        for status in self.cells[hook].values():
            counts[status] = counts.get(status, 0) + 1
        return counts

    def groups(self) -> tuple[list[ClassInfo], list[ClassInfo], list[ClassInfo]]:
        """The subclasses with a problem (stale, drifted, bypass), those that override hooks
        without one, and those that inherit every hook."""
        problems: list[ClassInfo] = []
        overriding: list[ClassInfo] = []
        inheriting: list[ClassInfo] = []
        for sub in self.subclasses:
            statuses = {status for _, status, _ in self.overrides(sub)}
            if statuses & PROBLEMS:
                problems.append(sub)
            elif statuses:
                overriding.append(sub)
            else:
                inheriting.append(sub)
        return problems, overriding, inheriting

    def to_json(self) -> dict[str, Any]:
        return {
            "class": self.base.fq,
            "path": self.base.file.path,
            "hooks": self.hooks,
            "subclasses": [{"class": s.fq, "path": s.file.path} for s in self.subclasses],
            "cells": self.cells,
            "details": self.notes,
        }


def build_hook_map(project: Project, base: ClassInfo, findings: list[Finding]) -> HookMap:
    hooks = [m for m in base.record.methods if not is_dunder(m)]
    subclasses = sorted(project.descendants(base), key=lambda c: c.fq)
    by_symbol: dict[str, list[Finding]] = {}
    for finding in findings:
        by_symbol.setdefault(finding.symbol, []).append(finding)
    cells: dict[str, dict[str, str]] = {h: {} for h in hooks}
    notes: dict[str, dict[str, str]] = {h: {} for h in hooks}
    for sub in subclasses:
        for hook in hooks:
            definer = project.defining_ancestor(sub, hook) if hook not in sub.record.methods \
                else sub
            status = INHERITED
            if isinstance(definer, ClassInfo) and definer is not base:
                method = definer.method(hook)
                calls_super = method is not None and any(
                    c.name == hook and c.receiver in ("super", "explicit") for c in method.calls
                )
                status = WITH_SUPER if calls_super else OVERRIDDEN
                if definer is not sub:
                    notes[hook][sub.fq] = f"via {definer.name}"
                for finding in by_symbol.get(f"{definer.fq}.{hook}", ()):
                    if finding.rule == "signature-drift":
                        status, notes[hook][sub.fq] = DRIFTED, finding.message
                    elif finding.rule == "contract-bypass" and status != DRIFTED:
                        status, notes[hook][sub.fq] = BYPASS, finding.message
            cells[hook][sub.fq] = status
        for method in sub.record.methods.values():
            for finding in by_symbol.get(f"{sub.fq}.{method.name}", ()):
                new = finding.evidence.get("new")
                if finding.rule == "stale-override" and isinstance(new, str) and new in cells:
                    cells[new][sub.fq] = STALE
                    notes[new][sub.fq] = f"defines {method.name} (line {method.def_line})"
    return HookMap(base, hooks, subclasses, cells, notes)
