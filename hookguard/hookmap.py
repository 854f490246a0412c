"""The hook map of a base class: each hook against each subclass, as a reviewer wants to see it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hookguard.findings import Finding
from hookguard.model.project import ClassInfo, Project
from hookguard.model.records import MethodKind
from hookguard.rules.base import is_dunder

INHERITED = "inherited"
OVERRIDDEN = "overridden"
WITH_SUPER = "overridden+super"
STALE = "stale"
DRIFTED = "drifted"
BYPASS = "bypass"
STATUSES = (INHERITED, OVERRIDDEN, WITH_SUPER, STALE, DRIFTED, BYPASS)
PROBLEMS = frozenset({STALE, DRIFTED, BYPASS})


# Why a method of the base's line is not shown by default (``hooks --all`` shows it).
MANGLED = "name-mangled"  # ``__x``: each class has its own, no subclass can override it
PROPERTY = "property"
PRIVATE = "private"  # ``_x`` that no subclass overrides: a helper, not a hook
UNUSED = "never overridden"
HIDDEN_KINDS = (UNUSED, PRIVATE, PROPERTY, MANGLED)
_JSON_KEY = {UNUSED: "never_overridden", PRIVATE: "private", PROPERTY: "properties",
             MANGLED: "name_mangled"}


@dataclass
class HookMap:
    base: ClassInfo
    hooks: list[str]  # the rows shown
    subclasses: list[ClassInfo]
    # hook -> subclass fq -> status, and -> detail: every method of the line, hidden ones too
    cells: dict[str, dict[str, str]]
    notes: dict[str, dict[str, str]]
    # hook (every method of the line) -> the class of the base's MRO that defines it first
    owners: dict[str, ClassInfo] = field(default_factory=dict)
    # kind (HIDDEN_KINDS) -> the methods of the line left out of ``hooks``, in MRO order
    hidden: dict[str, list[str]] = field(default_factory=dict)

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
        without one, and those that inherit every hook shown."""
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

    def hidden_summary(self) -> str:
        """What the default view leaves out, and how to see it ("" when nothing):
        ``hidden: 233 never overridden, 4 private, 3 properties (--all shows them)``."""
        parts = []
        for kind in HIDDEN_KINDS:
            n = len(self.hidden.get(kind, ()))
            if n:
                noun = {PROPERTY: "properties" if n != 1 else "property",
                        MANGLED: "name-mangled"}.get(kind, kind)
                parts.append(f"{n} {noun}")
        return f"hidden: {', '.join(parts)} (--all shows them)" if parts else ""

    def to_json(self) -> dict[str, Any]:
        return {
            "class": self.base.fq,
            "path": self.base.file.path,
            "hooks": self.hooks,
            "defined_in": {h: owner.fq for h, owner in self.owners.items()},
            "subclasses": [{"class": s.fq, "path": s.file.path} for s in self.subclasses],
            "cells": self.cells,
            "details": self.notes,
            "hidden": {_JSON_KEY[kind]: names for kind, names in self.hidden.items() if names},
        }


def line_methods(project: Project, base: ClassInfo) -> dict[str, ClassInfo]:
    """Every method name (dunders aside) that a class of ``base``'s MRO in the checkout defines
    (``base``, its bases and mixins), mapped to the first of them that does: the hooks a
    subclass of ``base`` can override, in MRO order."""
    owners: dict[str, ClassInfo] = {}
    for node in project.mro(base):
        if isinstance(node, ClassInfo):
            for name in node.record.methods:
                if name not in owners and not is_dunder(name):
                    owners[name] = node
    return owners


def _mangled(name: str) -> bool:
    """``__x``: Python names it ``_Class__x`` in each class that defines it (dunders aside)."""
    return name.startswith("__")


def _hidden_kind(name: str, owner: ClassInfo, overridden: bool) -> str | None:
    if _mangled(name):
        return MANGLED
    method = owner.method(name)
    if method is not None and method.kind is MethodKind.PROPERTY:
        return PROPERTY
    if overridden:
        return None
    return PRIVATE if name.startswith("_") else UNUSED


def build_hook_map(
    project: Project, base: ClassInfo, findings: list[Finding], *, show_all: bool = False
) -> HookMap:
    """The map of ``base``'s hooks (the methods of its whole MRO in the checkout) against each
    of its subclasses. Unless ``show_all``, rows no subclass overrides, name-mangled helpers and
    properties are left out (counted in :attr:`HookMap.hidden`)."""
    owners = line_methods(project, base)
    names = list(owners)
    line = {node.fq for node in project.mro(base) if isinstance(node, ClassInfo)}
    subclasses = sorted(project.descendants(base), key=lambda c: c.fq)
    by_symbol: dict[str, list[Finding]] = {}
    for finding in findings:
        by_symbol.setdefault(finding.symbol, []).append(finding)
    wanted = set(names)
    cells: dict[str, dict[str, str]] = {h: {} for h in names}
    notes: dict[str, dict[str, str]] = {h: {} for h in names}
    for sub in subclasses:
        definers = _first_definers(project, sub, wanted)
        for hook in names:
            definer = definers.get(hook)
            status = INHERITED
            # (``__x`` in a subclass is its own ``_Sub__x``: it overrides nothing)
            if definer is not None and definer.fq not in line and not _mangled(hook):
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
        for name in sub.record.methods:
            for finding in by_symbol.get(f"{sub.fq}.{name}", ()):
                new = finding.evidence.get("new")
                if finding.rule == "stale-override" and isinstance(new, str) and new in cells:
                    method = sub.record.methods[name]
                    cells[new][sub.fq] = STALE
                    notes[new][sub.fq] = f"defines {name} (line {method.def_line})"
    hooks: list[str] = []
    hidden: dict[str, list[str]] = {kind: [] for kind in HIDDEN_KINDS}
    for hook in names:
        overridden = any(status != INHERITED for status in cells[hook].values())
        kind = None if show_all else _hidden_kind(hook, owners[hook], overridden)
        if kind is None:
            hooks.append(hook)
        else:
            hidden[kind].append(hook)  # (its cells stay: JSON gives every one)
    return HookMap(base, hooks, subclasses, cells, notes,
                   owners, {k: v for k, v in hidden.items() if v})


def _first_definers(project: Project, sub: ClassInfo, names: set[str]) -> dict[str, ClassInfo]:
    """For each of ``names``, the first class of ``sub``'s MRO in the checkout that defines it
    (a method or a class attribute), ``sub`` itself included: who answers the name for ``sub``.
    A base outside the checkout between them is not known to define anything."""
    found: dict[str, ClassInfo] = {}
    for node in project.mro(sub):
        if not isinstance(node, ClassInfo):
            continue
        record = node.record
        for name in names.intersection(record.methods) | names.intersection(record.attributes):
            found.setdefault(name, node)
        if len(found) == len(names):
            break
    return found
