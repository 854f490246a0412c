"""Which findings have a mechanical fix, and why the others do not. No libcst here."""

from __future__ import annotations

import keyword
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from hookguard.findings import Finding, Severity

if TYPE_CHECKING:
    from hookguard.model.project import Project
    from hookguard.model.records import MethodRecord

STALE = "stale-override"
DRIFT = "signature-drift"

Status = Literal["fixed", "refused", "unchanged"]


@dataclass(frozen=True)
class Outcome:
    """What happened to one finding: one line of ``hookguard fix`` output."""

    path: str
    line: int
    code: str
    status: Status
    message: str

    def render(self, dry_run: bool = False) -> str:
        """One line; names and messages from the checkout escaped (no control sequences, no
        line that starts a CI workflow command)."""
        from hookguard.report.escape import printable, safe_path

        status = "would fix" if dry_run and self.status == "fixed" else self.status
        where = f"{safe_path(self.path)}:{self.line}"
        return f"{where}: {status} {self.code}: {printable(self.message)}"


@dataclass(frozen=True)
class RenameFix:
    """Rename the stale override ``cls.old`` (its ``def`` on ``line``) to ``new``.

    A rename carries its class's descendants along (``follows`` names the class whose rename
    they follow): a subclass's own override of ``old`` is renamed too (``refs_only`` false, its
    ``def`` on ``line``), and every descendant's ``self.old``/``super().old`` references follow
    (``refs_only`` true, ``line`` is then the ``class`` line). A rename and the renames that
    follow it form one ``group``: all of them happen, or none.
    """

    path: str
    line: int
    cls: str  # the innermost class name
    old: str
    new: str
    finding: Finding = field(compare=False, repr=False)
    follows: str = ""  # ``Class.old`` of the rename this one follows; "" for the finding's own
    refs_only: bool = False

    @property
    def method(self) -> str:
        return self.old

    @property
    def group(self) -> tuple[str, int, str]:
        return (self.finding.path, self.finding.line, self.finding.rule)

    def outcome(self, status: Status, message: str) -> Outcome:
        return Outcome(self.path, self.line, self.finding.code, status, message)


@dataclass(frozen=True)
class ParamsFix:
    """Add ``names`` (default ``None``) to the signature of ``cls.method``."""

    path: str
    line: int
    cls: str
    method: str
    names: tuple[str, ...]
    keyword_only: bool
    finding: Finding = field(compare=False, repr=False)

    @property
    def group(self) -> tuple[str, int, str]:
        return (self.finding.path, self.finding.line, self.finding.rule)

    def outcome(self, status: Status, message: str) -> Outcome:
        return Outcome(self.path, self.line, self.finding.code, status, message)


Fix = RenameFix | ParamsFix


def split_symbol(symbol: str) -> tuple[str, str]:
    """``pkg.mod.Outer.Inner.meth`` -> (``Inner``, ``meth``)."""
    parts = symbol.split(".")
    if len(parts) < 2:
        return "", parts[-1]
    return parts[-2], parts[-1]


def is_name(text: object) -> bool:
    return isinstance(text, str) and text.isidentifier() and not keyword.iskeyword(text)


def plan_fixes(
    findings: Iterable[Finding], project: Project | None = None
) -> tuple[list[Fix], list[Outcome]]:
    """Fixes for the findings that have one; a refusal for every other finding.

    With the audit's ``project``, a rename carries the class's descendants along (see
    :class:`RenameFix`); without it, only the class itself is renamed, and a rename is refused
    when another class still calls the old name.
    """
    fixes: list[Fix] = []
    refused: list[Outcome] = []
    seen: set[tuple[str, int, str]] = set()

    def refuse(finding: Finding, reason: str) -> None:
        refused.append(Outcome(finding.path, finding.line, finding.code, "refused", reason))

    for finding in findings:
        key = (finding.path, finding.line, finding.rule)
        if key in seen:
            continue
        seen.add(key)
        cls, method = split_symbol(finding.symbol)
        fix_or_reason: Fix | str
        if finding.rule == STALE:
            fix_or_reason = _plan_rename(finding, cls, method, project)
        elif finding.rule == DRIFT:
            fix_or_reason = _plan_params(finding, cls, method)
        else:
            fix_or_reason = f"no automatic fix for {finding.rule}"
        if isinstance(fix_or_reason, str):
            refuse(finding, fix_or_reason)
            continue
        fixes.append(fix_or_reason)
        if isinstance(fix_or_reason, RenameFix) and project is not None:
            checked = _drift_after_rename(fix_or_reason, project)
            if isinstance(checked, str):
                fixes.pop()
                refuse(finding, checked)
                continue
            if checked is not None:
                fixes.append(checked)
            fixes.extend(_followers(fix_or_reason, project))
    return fixes, refused


def _drift_after_rename(fix: RenameFix, project: Project) -> ParamsFix | str | None:
    """What the drift rule would say once ``fix`` is applied: the renamed override receives the
    calls the ancestors make to the new name. None: every call binds. A :class:`ParamsFix`:
    only keyword arguments are missing, added with the rename (default ``None``). A reason to
    refuse: positional or required arguments do not match, a rename would turn a dead override
    into a ``TypeError``."""
    from hookguard.model.binding import bind
    from hookguard.model.project import ClassInfo
    from hookguard.model.records import MethodKind

    info = project.classes.get(fix.finding.symbol.rsplit(".", 1)[0])
    method = info.record.methods.get(fix.old) if info is not None else None
    if info is None or method is None:
        return None
    unexpected: list[str] = []
    by_keyword = True
    for ancestor in project.ancestors(info):
        if not isinstance(ancestor, ClassInfo):
            continue
        for caller in ancestor.record.methods.values():
            for call in caller.calls:
                if call.name != fix.new or call.receiver not in ("self", "cls"):
                    continue
                unbound = call.receiver == "cls" and method.kind is MethodKind.PLAIN
                result = bind(call, method, unbound=unbound)
                if result.ok:
                    continue
                if result.missing or result.duplicated or result.surplus_positional:
                    return (
                        f"renaming would turn a dead override into a crash: "
                        f"{ancestor.name}.{caller.name} calls self.{fix.new}(...) "
                        f"({ancestor.file.path}:{call.line}), which {fix.cls}.{fix.old}"
                        f"{_signature_of(method)} cannot accept ({result.describe()}); port "
                        f"it to {fix.new} by hand"
                    )
                unexpected.extend(result.unexpected)
                by_keyword = by_keyword and all(n in call.keywords for n in result.unexpected)
    if not unexpected:
        return None
    names = tuple(dict.fromkeys(unexpected))
    if not all(is_name(n) for n in names):
        return f"the calls to {fix.new} pass arguments {fix.cls}.{fix.old} lacks; rename by hand"
    return ParamsFix(fix.path, fix.line, fix.cls, fix.old, names, by_keyword, fix.finding)


def _signature_of(method: MethodRecord) -> str:
    return method.signature()[len(method.name):]


def _followers(fix: RenameFix, project: Project) -> list[RenameFix]:
    """The renames that must come with ``fix``: one per descendant of its class."""
    info = project.classes.get(fix.finding.symbol.rsplit(".", 1)[0])
    if info is None:
        return []
    follows = f"{fix.cls}.{fix.old}"
    out: list[RenameFix] = []
    for sub in project.descendants(info):
        own = sub.record.methods.get(fix.old)
        if own is not None:
            line, refs_only = own.def_line, False
        else:
            line, refs_only = sub.record.line, True
        out.append(RenameFix(sub.file.path, line, sub.record.name, fix.old, fix.new, fix.finding,
                             follows, refs_only))
    return out


def _plan_rename(
    finding: Finding, cls: str, method: str, project: Project | None = None
) -> RenameFix | str:
    evidence = finding.evidence
    old = evidence.get("old") or method
    new = evidence.get("new")
    if evidence.get("kind") == "override-decorator" and not new:
        return (
            f"@override, but no base class defines {method}: remove @override, or rename the "
            "method to the hook it was meant to override"
        )
    if not new:
        return "the hook was removed, not renamed: delete the method or move its logic"
    if evidence.get("kind") == "override-decorator":
        return "no renamed hook to move to: remove @override or override an existing hook"
    if not (is_name(old) and is_name(new)) or old != method:
        return f"the finding does not name a method and its new name ({old!r} -> {new!r})"
    own = finding.symbol.rsplit(".", 1)[0]
    follow = {own}
    info = project.classes.get(own) if project is not None else None
    if project is not None and info is not None:
        follow.update(d.fq for d in project.descendants(info))
    others = [c for c in evidence.get("still_called_by") or () if c not in follow]
    if others:
        names = ", ".join(sorted(c.rsplit(".", 1)[-1] for c in others))
        return (
            f"{names} also call{'s' * (len(others) == 1)} self.{old}: renaming only {cls}'s "
            f"override would break {'it' if len(others) == 1 else 'them'}; rename by hand"
        )
    return RenameFix(finding.path, finding.line, cls, old, new, finding)


def _plan_params(finding: Finding, cls: str, method: str) -> ParamsFix | str:
    evidence = finding.evidence
    if evidence.get("fixable") is False:
        reason = evidence.get("reason")
        return str(reason) if reason else "the call-site evidence is ambiguous; fix by hand"
    missing = evidence.get("missing") or []
    if not isinstance(missing, list | tuple) or not missing:
        return "the finding names no missing keyword parameter"
    names = tuple(dict.fromkeys(str(n) for n in missing))
    bad = [n for n in names if not is_name(n)]
    if bad:
        return f"not a parameter name: {', '.join(bad)}"
    return ParamsFix(
        finding.path, finding.line, cls, method, names, bool(evidence.get("keyword_only")), finding
    )


def outside_note(finding: Finding) -> str:
    """A reminder for a rename whose old name is still used from outside the class."""
    if finding.severity is Severity.WARNING:
        return "; the old name is still used outside the class: review those call sites"
    return ""
