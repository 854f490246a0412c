"""Which findings have a mechanical fix, and why the others do not. No libcst here."""

from __future__ import annotations

import keyword
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, NamedTuple

from hookguard.findings import Finding, Severity
from hookguard.model.records import ParamKind

if TYPE_CHECKING:
    from hookguard.model.project import Project
    from hookguard.model.records import CallSite, MethodRecord

STALE = "stale-override"
DRIFT = "signature-drift"
OVERRIDE_CODE = "override"  # the code of an ``--add-override`` outcome (not a finding)

Status = Literal["fixed", "refused", "unchanged", "held"]


@dataclass(frozen=True)
class Outcome:
    """What happened to one finding: one line of ``hookguard fix`` output."""

    path: str
    line: int
    code: str
    status: Status
    message: str
    unsafe: bool = False  # an unsafe fix: applied only under ``--unsafe-fixes``

    def render(self, dry_run: bool = False) -> str:
        """One line; names and messages from the checkout escaped (no control sequences, no
        line that starts a CI workflow command)."""
        from hookguard.report.escape import printable, safe_path

        where = f"{safe_path(self.path)}:{self.line}"
        if self.code == OVERRIDE_CODE:
            verb = "would add" if dry_run and self.status == "fixed" else (
                "added" if self.status == "fixed" else self.status)
            return f"{where}: {verb} @override: {printable(self.message)}"
        status: str = "would fix" if dry_run and self.status == "fixed" else self.status
        code = self.code
        if self.status == "held":
            status, code = "held back", f"{code} (unsafe fix, use --unsafe-fixes)"
        elif self.unsafe:
            code = f"{code} (unsafe fix)"
        return f"{where}: {status} {code}: {printable(self.message)}"


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


class PortParam(NamedTuple):
    """One parameter of a ported signature: the base's name and kind, and where its default
    comes from: ``""`` none (required, or ``*args``/``**kwargs``), ``"base"`` the base's,
    ``"override"`` the override's own (it declared the parameter with one), ``"none"``
    ``None`` (a parameter new to the override that its own class's calls do not pass), or
    ``"receiver"`` for ``self``/``cls``, kept as the override wrote it."""

    name: str
    kind: ParamKind
    default: str


@dataclass(frozen=True)
class PortFix(RenameFix):
    """An unsafe fix: rename the stale override ``cls.old`` to ``new`` *and* give it the
    signature of the base's ``new`` (``base_cls.new`` on ``base_line`` of ``base_path``), so
    that the calls the base makes to the hook bind. The override's body is kept. Applied only
    under ``--unsafe-fixes``: the override starts to run where the base calls the hook, with
    parameters it never had."""

    base_path: str = ""
    base_line: int = 0
    base_cls: str = ""
    base_module: str = ""
    base_is_package: bool = False
    params: tuple[PortParam, ...] = ()
    relaxed: tuple[tuple[str, str], ...] = ()  # (parameter, the caller that omits it)
    why: str = ""  # why a plain rename would crash


@dataclass(frozen=True)
class OverrideFix:
    """Add ``@override`` to ``cls.method`` (its ``def`` on ``line``), which overrides
    ``base``. ``after``: the group of the rename that makes it an override; the decorator is
    added only with that rename."""

    path: str
    line: int
    cls: str
    method: str
    base: str
    after: tuple[str, int, str] | None = None

    @property
    def group(self) -> tuple[str, int, str]:
        return (self.path, self.line, OVERRIDE_CODE)

    def outcome(self, status: Status, message: str) -> Outcome:
        return Outcome(self.path, self.line, OVERRIDE_CODE, status, message)


Fix = RenameFix | ParamsFix | OverrideFix


def split_symbol(symbol: str) -> tuple[str, str]:
    """``pkg.mod.Outer.Inner.meth`` -> (``Inner``, ``meth``)."""
    parts = symbol.split(".")
    if len(parts) < 2:
        return "", parts[-1]
    return parts[-2], parts[-1]


def is_name(text: object) -> bool:
    return isinstance(text, str) and text.isidentifier() and not keyword.iskeyword(text)


def plan_fixes(
    findings: Iterable[Finding], project: Project | None = None, *, ports: bool = False
) -> tuple[list[Fix], list[Outcome]]:
    """Fixes for the findings that have one; a refusal for every other finding.

    With the audit's ``project``, a rename carries the class's descendants along (see
    :class:`RenameFix`); without it, only the class itself is renamed, and a rename is refused
    when another class still calls the old name. A rename the base's calls could not bind is
    refused, or, with ``ports``, planned as a :class:`PortFix` (an unsafe fix: the caller
    decides whether to apply it).
    """
    fixes: list[Fix] = []
    refused: list[Outcome] = []
    seen: set[tuple[str, int, str]] = set()

    def refuse(finding: Finding, reason: str) -> None:
        refused.append(Outcome(finding.path, finding.line, finding.code, "refused", reason))

    findings = list(findings)
    stale = {f.symbol for f in findings if f.rule == STALE}
    for finding in findings:
        key = (finding.path, finding.line, finding.rule)
        if key in seen:
            continue
        seen.add(key)
        overrides = finding.evidence.get("overrides") if finding.rule == STALE else None
        if isinstance(overrides, str):  # a link of a chain: it follows the first link's fix
            if overrides not in stale:
                refuse(finding, f"it overrides {overrides}, itself stale: fix that one, and "
                                "this override follows it")
            continue
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
            rename = fix_or_reason
            checked = _drift_after_rename(rename, project)
            if isinstance(checked, _Crash):
                fixes.pop()
                crash = f"renaming would turn a dead override into a crash: {checked.detail}"
                if not ports:
                    refuse(finding, f"{crash}; port it to {rename.new} by hand")
                    continue
                port = _plan_port(rename, project, checked.detail)
                if isinstance(port, str):
                    refuse(finding, f"{crash}; and its signature cannot be ported: {port}; "
                                    f"port it to {rename.new} by hand")
                    continue
                fixes.append(port)
            elif isinstance(checked, str):
                fixes.pop()
                refuse(finding, checked)
                continue
            elif checked is not None:
                fixes.append(checked)
            fixes.extend(_followers(rename, project))
    return fixes, refused


@dataclass(frozen=True)
class _Crash:
    """A rename the base's calls could not bind: ``detail`` names the call and why."""

    detail: str


def _drift_after_rename(
    fix: RenameFix, project: Project
) -> ParamsFix | _Crash | str | None:
    """What the drift rule would say once ``fix`` is applied: the renamed override receives the
    calls the ancestors make to the new name. None: every call binds. A :class:`ParamsFix`:
    only keyword arguments are missing, added with the rename (default ``None``). A
    :class:`_Crash`: positional or required arguments do not match, a rename would turn a dead
    override into a ``TypeError`` (only a ported signature can fix that). A reason to refuse:
    the calls pass arguments that are not names."""
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
                    return _Crash(
                        f"{ancestor.name}.{caller.name} calls self.{fix.new}(...) "
                        f"({ancestor.file.path}:{call.line}), which {fix.cls}.{fix.old}"
                        f"{_signature_of(method)} cannot accept ({result.describe()})"
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


_VARIADIC = (ParamKind.VAR_POSITIONAL, ParamKind.VAR_KEYWORD)
_POSITIONAL = (ParamKind.POSITIONAL_ONLY, ParamKind.POSITIONAL_OR_KEYWORD)


def _plan_port(fix: RenameFix, project: Project, why: str) -> PortFix | str:
    """The rename ``fix`` with the signature of the hook it is renamed to, or why it cannot be
    ported. The ported signature is the base's: its parameters, names, kinds and order, with
    the base's defaults (the override's own default where it declared the parameter with one;
    ``None`` for a parameter new to the override that its own class's calls do not pass). It
    must bind every call the base's line makes to the new name and every call the class and
    its descendants make to the old one (those are renamed with it), and a positional
    argument must reach the parameter it reached before."""
    from dataclasses import replace

    from hookguard.model.binding import bind
    from hookguard.model.project import ClassInfo
    from hookguard.model.records import MethodKind, Param

    info = project.classes.get(fix.finding.symbol.rsplit(".", 1)[0])
    method = info.record.methods.get(fix.old) if info is not None else None
    if info is None or method is None:
        return f"{fix.cls}.{fix.old} is not in the model"
    base = project.defining_ancestor(info, fix.new)
    if not isinstance(base, ClassInfo):
        return f"no class in the checkout defines {fix.new}"
    hidden = project.unknown_before(info, base, fix.new)
    if hidden is not None:
        return f"{hidden.name}, outside the checkout, may define {fix.new} before {base.name}"
    hook = base.record.methods.get(fix.new)
    if hook is None:
        return f"{base.name}.{fix.new} is not a method"
    if MethodKind.PROPERTY in (hook.kind, method.kind):
        return "a property"
    if hook.kind is not method.kind:
        return (f"{base.name}.{fix.new} is a {hook.kind.value} method and {fix.cls}.{fix.old} "
                f"a {method.kind.value} one")
    if hook.is_async != method.is_async:
        which = "" if hook.is_async else "not "
        return f"{base.name}.{fix.new} is {which}async and {fix.cls}.{fix.old} is the opposite"
    receiver = hook.kind is not MethodKind.STATIC
    if receiver and not (
        hook.params and method.params
        and hook.params[0].kind in _POSITIONAL and method.params[0].kind in _POSITIONAL
    ):
        return "it or the base's hook takes no self/cls parameter"
    own = {p.name: p for p in (method.params[1:] if receiver else method.params)}
    ported: list[PortParam] = []
    if receiver:
        ported.append(PortParam(method.params[0].name, hook.params[0].kind, "receiver"))
    for param in hook.params[1:] if receiver else hook.params:
        mine = own.get(param.name)
        if param.kind in _VARIADIC:
            default = ""
        elif mine is not None and mine.has_default and mine.kind not in _VARIADIC:
            default = "override"
        else:
            default = "base" if param.has_default else ""
        ported.append(PortParam(param.name, param.kind, default))
    if receiver and ported[0].name in {p.name for p in ported[1:]}:
        return f"the base's hook has a parameter named {ported[0].name}"

    # The calls the ported method must accept: the base line's to the new name, and the
    # family's to the old one (renamed with it). (who, where, call, written for the override)
    calls: list[tuple[str, str, CallSite, bool]] = []
    for ancestor in project.ancestors(info):
        if isinstance(ancestor, ClassInfo):
            for caller in ancestor.record.methods.values():
                calls.extend((f"{ancestor.name}.{caller.name}",
                              f"{ancestor.file.path}:{c.line}", c, False)
                             for c in caller.calls
                             if c.name == fix.new and c.receiver in ("self", "cls"))
    family = [info, *project.descendants(info)]
    for member in family:
        receivers = ("self", "cls") if member is info else ("self", "cls", "super")
        for caller in member.record.methods.values():
            calls.extend((f"{member.name}.{caller.name}", f"{member.file.path}:{c.line}", c, True)
                         for c in caller.calls
                         if c.name == fix.old and c.receiver in receivers)

    def record(port: list[PortParam]) -> MethodRecord:
        params = tuple(Param(p.name, p.kind, p.default not in ("", "receiver")) for p in port)
        return replace(method, name=fix.new, params=params)

    def binds(target: MethodRecord, call: CallSite) -> tuple[bool, str, list[str]]:
        unbound = call.receiver == "cls" and target.kind is MethodKind.PLAIN
        result = bind(call, target, unbound=unbound)
        only_missing = not (result.unexpected or result.duplicated or result.surplus_positional)
        return result.ok, result.describe(), result.missing if only_missing else []

    relaxed: dict[str, str] = {}
    for who, _, call, ours in calls:
        ok, _, missing = binds(record(ported), call)
        if ok or not ours or not missing or any(n in own for n in missing):
            continue
        # Parameters new to the override that its own class's calls do not pass: default
        # ``None`` (the body cannot use them; the codemod refuses a body that names them).
        names = set(missing)
        first = min(i for i, p in enumerate(ported) if p.name in names)
        if ported[first].kind in _POSITIONAL:  # a default needs defaults after it
            names.update(p.name for p in ported[first:] if p.kind in _POSITIONAL
                         and p.default == "" and p.name not in own)
            if any(p.kind in _POSITIONAL and p.default == "" and p.name not in names
                   for p in ported[first:]):
                continue  # the check below refuses it
        for index, entry in enumerate(ported):
            if entry.name in names and entry.default == "":
                ported[index] = entry._replace(default="none")
                relaxed.setdefault(entry.name, who)
    defaulted = False  # a positional parameter with a default needs defaults after it
    for index, entry in enumerate(ported):
        if entry.kind not in _POSITIONAL or entry.default == "receiver":
            continue
        if entry.default:
            defaulted = True
        elif defaulted:
            if entry.name in own:
                return (f"{fix.cls}.{fix.old}'s default for a parameter before {entry.name} "
                        f"would come before {entry.name}, which {base.name}.{fix.new} requires")
            ported[index] = entry._replace(default="none")  # new: the body cannot use it
    target = record(ported)
    signature = _signature_of(target)
    for who, where, call, ours in calls:
        ok, problem, _ = binds(target, call)
        if not ok:
            return (f"{who} calls self.{call.name}(...) ({where}), which the ported "
                    f"{fix.new}{signature} cannot accept ({problem})")
        if ours and (call.positional or call.star_args):
            before = [p.name for p in method.bound_params if p.kind in _POSITIONAL]
            after = [p.name for p in target.bound_params if p.kind in _POSITIONAL]
            count = max(len(before), len(after)) if call.star_args else call.positional
            if before[:count] != after[:count]:
                return (f"{who} passes positional arguments to self.{fix.old} ({where}), and "
                        f"{base.name}.{fix.new}{_signature_of(hook)} takes its parameters in "
                        "another order")
    for sub in family[1:]:
        theirs = sub.record.methods.get(fix.old)
        if theirs is None:
            continue
        for who, where, call, _ in calls:
            ok, problem, _ = binds(theirs, call)
            if not ok:
                return (f"its subclass {sub.name} overrides {fix.old} too, and "
                        f"{sub.name}.{fix.old}{_signature_of(theirs)} cannot accept the call "
                        f"in {who} ({where}: {problem})")
    return PortFix(
        fix.path, fix.line, fix.cls, fix.old, fix.new, fix.finding,
        base_path=base.file.path, base_line=hook.def_line, base_cls=base.record.name,
        base_module=base.file.module, base_is_package=base.file.is_package,
        params=tuple(ported),
        relaxed=tuple(relaxed.items()), why=why,
    )


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


# Construction methods: every type checker exempts them from override checks (and from
# pyright's ``reportImplicitOverride`` and ty's ``missing-override-decorator``).
CONSTRUCTORS = frozenset({
    "__init__", "__new__", "__init_subclass__", "__post_init__", "__class_getitem__",
})


def plan_overrides(
    project: Project, scopes: Iterable[str] = ("",), renames: Iterable[Fix] = ()
) -> list[OverrideFix]:
    """``@override`` for every method under ``scopes`` (paths relative to the root, ``""``:
    all) that is proven to override a hook, and for every override a rename in ``renames``
    makes one.

    Proven: a class of the checkout in the method's MRO defines the name, or a well-known base
    outside it does (:mod:`hookguard.model.externals`). Left alone: methods that already carry
    ``@override`` (or ``@overrides``), properties and overloads, name-mangled ``__private``
    methods (they override nothing), and dunder methods, except a dunder a class of the
    checkout defines itself (``__call__``, ``__getitem__``, ``__eq__`` redefined by a base
    of the family: a hook of that family) that is not a constructor (:data:`CONSTRUCTORS`).
    The dunders ``object`` and other bases outside the checkout define cannot disappear under
    a rename, and decorating every ``__repr__`` is noise.
    """
    from hookguard.model.externals import external_defines
    from hookguard.model.project import ClassInfo, External

    chosen = [s.strip("/") for s in scopes]

    def in_scope(path: str) -> bool:
        return any(not s or path == s or path.startswith(s + "/") for s in chosen)

    out: dict[tuple[str, int], OverrideFix] = {}
    for fix in renames:
        if not isinstance(fix, RenameFix) or fix.refs_only:
            continue
        fq = ".".join(fix.finding.symbol.split(".")[:-1])
        info = project.classes.get(fq) if not fix.follows else None
        if fix.follows:
            info = next((c for c in project.classes.values()
                         if c.file.path == fix.path and c.record.name == fix.cls
                         and fix.old in c.record.methods
                         and c.record.methods[fix.old].def_line == fix.line), None)
        method = info.record.methods.get(fix.old) if info is not None else None
        if method is None or method.is_override:
            continue
        parent = fix.follows.split(".")[0] if fix.follows else ""
        what = f"the renamed hook {fix.new}" if not parent else f"{parent}.{fix.new}"
        out[(fix.path, fix.line)] = OverrideFix(fix.path, fix.line, fix.cls, fix.old, what,
                                                fix.group)
    for info in project.classes.values():
        if not in_scope(info.file.path):
            continue
        inherited = project.inherited_names(info)
        externals = [n for n in project.ancestors(info) if isinstance(n, External)]
        for name, method in info.record.methods.items():
            if (method.is_override or (info.file.path, method.def_line) in out
                    or _skipped_method(name, method)):
                continue
            base: str | None = None
            if name in inherited:
                node = project.defining_ancestor(info, name)
                if isinstance(node, ClassInfo):
                    base = f"{node.name}.{name}"
            if name.startswith("__") and name.endswith("__"):
                if name in CONSTRUCTORS:
                    continue
            elif base is None:
                known = next((e for e in externals if external_defines(e.name, name)), None)
                base = f"{known.name}.{name}" if known is not None else None
            if base is not None:
                out[(info.file.path, method.def_line)] = OverrideFix(
                    info.file.path, method.def_line, info.record.name, name, base)
    return [out[key] for key in sorted(out)]


def _skipped_method(name: str, method: MethodRecord) -> bool:
    from hookguard.model.records import MethodKind

    if name.startswith("__") and not name.endswith("__"):
        return True  # name-mangled: ``_Class__name``, never an override
    if method.kind is MethodKind.PROPERTY:
        return True
    return any(d.rsplit(".", 1)[-1] == "overload" for d in method.decorators)
