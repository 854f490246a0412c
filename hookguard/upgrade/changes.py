"""How a package's hooks changed between two versions, as ``check`` derives a change's.

``base`` and ``head`` are the checkout's model with the old and the new version of the package
(:mod:`hookguard.upgrade.check`); the package's classes are those in ``package`` files. A
hook is a method the package calls on ``self`` in its class's line. What changes:

- ``renamed`` / ``removed``: the class no longer defines it, no base in the package does
  (moved up is no change), and its line called it on ``self``; renames are paired as ``check``
  pairs them (:func:`hookguard.git.changes.pair_renames`: body, parameters, callers);
- ``moved``: the hook left the subclass's bases with no class losing it (the base class moved,
  or the hook became a module function: :func:`hookguard.gate.orphaned_overrides`);
- ``undispatched``: still defined, now called as ``Class.hook(...)``, not through ``self``;
- ``uncalled``: still defined, and no longer called on ``self`` by any class of the package,
  nor named anywhere else in it (no file of the new version holds the name but its own
  definition: every file is searched, parsed or not);
- ``deprecated``: renamed or removed, and still called on ``self`` behind ``hasattr`` or
  ``getattr`` (a deprecation shim): old overrides run until the shim goes;
- ``new-arguments``: a call on ``self``/``cls`` in the new version passes a keyword that no call
  of the hook from the same method (or, for a new caller, from the class's line) passed before,
  or more positional arguments than any did; ``new-call`` where nothing in the line called it;
- ``signature``: the hook's parameters changed (what the checkout's ``super()`` calls bind
  against).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass

from hookguard.gate import (
    call_changes,
    hook_changes,
    orphaned_overrides,
    signature_difference,
)
from hookguard.git.changes import HookChange, pair_renames
from hookguard.model.project import ClassInfo, Project
from hookguard.model.records import CallSite
from hookguard.rules.base import is_dunder
from hookguard.upgrade.package import resolve_dotted

_SELF = ("self", "cls")


@dataclass(frozen=True)
class PackageChange:
    kind: str  # see the module's documentation
    class_fq: str
    hook: str
    new: str | None = None  # the new name (renamed)
    path: str = ""  # where, in the new version (the old one for a class it dropped)
    line: int = 0
    caller: str = ""  # ``Class.method`` that makes the call (new-arguments, new-call)
    keywords: tuple[str, ...] = ()  # keywords it passes now that it did not
    positional: tuple[int, int] | None = None  # (most positionals before, now)
    detail: str = ""  # the signature difference; the deprecation shim

    @property
    def owner(self) -> str:
        return self.class_fq.rsplit(".", 1)[-1]

    def describe(self) -> str:
        """One line, without the version: ``Trainer.compute_loss: Trainer.training_step now
        passes num_items_in_batch=``."""
        what = {
            "renamed": f"renamed to {self.new}",
            "removed": "removed",
            "moved": "left the bases of its subclasses",
            "undispatched": "no longer called through self",
            "uncalled": "no longer called",
            "deprecated": (f"{'renamed to ' + self.new if self.new else 'removed'}, still "
                           f"called behind {self.detail}"),
            "signature": self.detail,
        }.get(self.kind)
        if what is None:  # new-arguments, new-call
            passes = [f"{k}=" for k in self.keywords]
            if self.positional is not None:
                passes.append(f"{self.positional[1]} positional arguments (was "
                              f"{self.positional[0]})")
            verb = "now calls it, passing" if self.kind == "new-call" else "now passes"
            what = f"{self.caller} {verb} {', '.join(passes) or 'no arguments'}"
        return f"{self.owner}.{self.hook}: {what}"

    def to_json(self) -> dict[str, object]:
        return {
            "kind": self.kind, "class": self.class_fq, "hook": self.hook, "new": self.new,
            "path": self.path, "line": self.line, "caller": self.caller or None,
            "keywords": list(self.keywords),
            "positional": list(self.positional) if self.positional else None,
            "detail": self.detail or None, "description": self.describe(),
        }


#: ``(name, the path of the file defining it)`` -> whether the new version names it anywhere
#: but there (any file holding it as a word) or there other than by its ``def`` and ``self.``
Mentions = Callable[[str, str], bool]


def moved_classes(base: Project, head: Project, names: Collection[str],
                  package: Collection[str]) -> dict[str, ClassInfo]:
    """The classes the checkout names (``fw.Trainer``) that the new version defines in
    another module than the old one (re-exported under the same name): new fq -> the old
    class. They are compared as one class."""
    moved: dict[str, ClassInfo] = {}
    for name in names:
        was, now = resolve_dotted(base, name), resolve_dotted(head, name)
        if isinstance(was, ClassInfo) and isinstance(now, ClassInfo) and was.fq != now.fq and (
                was.file.path in package and now.file.path in package
                and now.fq not in base.classes):
            moved[now.fq] = was
    return moved


def lost_hooks(
    base: Project, head: Project, package: Collection[str], changed: Collection[str],
    mentions: Mentions, moved: Mapping[str, ClassInfo] | None = None,
) -> tuple[list[HookChange], set[tuple[str, str]]]:
    """The hooks the new version renamed, removed, moved, stopped dispatching or calling: what
    HG001's evidence is made of (``was_called``, ``undispatched`` as ``check`` sets them); and
    which of them are no longer called at all, as (class, hook)."""
    lost = [c for c in hook_changes(base, head, changed) if _in(head, base, c, package)]
    for fq, before in (moved or {}).items():
        lost += _lost_in(base, head, before, head.classes[fq])
    lost += orphaned_overrides(base, head, changed, lost)
    uncalled = uncalled_hooks(base, head, package, mentions)
    return lost + uncalled, {(c.class_fq, c.old) for c in uncalled}


def _lost_in(base: Project, head: Project, before: ClassInfo, after: ClassInfo
             ) -> list[HookChange]:
    """Hooks of a class that moved to another module and lost them there (renamed or
    removed), as :func:`hookguard.gate.hook_changes` finds them for a class that stayed."""
    removed = [m for m in before.record.methods if m not in after.record.methods]
    pairs = pair_renames(before.record, after.record, removed)
    found: list[HookChange] = []
    for old in removed:
        if is_dunder(old) or isinstance(head.defining_ancestor(after, old), ClassInfo):
            continue
        if not any(old in n.record.self_refs for n in base.mro(before)
                   if isinstance(n, ClassInfo)):
            continue  # not a hook its line called
        found.append(HookChange(class_fq=after.fq, old=old, new=pairs.get(old), commit="",
                                short="", subject="", path=after.file.path, was_called=True))
    return found


def _in(head: Project, base: Project, change: HookChange, package: Collection[str]) -> bool:
    info = head.classes.get(change.class_fq) or base.classes.get(change.class_fq)
    return info is not None and info.file.path in package


def uncalled_hooks(
    base: Project, head: Project, package: Collection[str], mentions: Mentions
) -> list[HookChange]:
    """Hooks a package class still defines that its line called on ``self`` before and that no
    class of the package calls on ``self`` now, named nowhere else in the new version."""
    package_classes = [i for i in head.classes.values() if i.file.path in package]
    still_used: set[str] = set()
    prefixes: set[str] = set()
    for info in package_classes:
        still_used |= info.record.self_refs
        prefixes |= info.record.self_prefixes
    for record in head.files.values():
        if record.path in package:
            prefixes |= record.prefix_refs
    prefixes.discard("")
    found: list[HookChange] = []
    for after in package_classes:
        before = base.classes.get(after.fq)
        if before is None or before.file.path not in package:
            continue
        called_before = base.inherited_refs(before) | before.record.self_refs
        for name in after.record.methods:
            if is_dunder(name) or name not in before.record.methods or (
                    name not in called_before or name in still_used):
                continue
            if any(name.startswith(p) for p in prefixes) or mentions(name, after.file.path):
                continue
            found.append(HookChange(
                class_fq=after.fq, old=name, new=None, commit="", short="", subject="",
                path=after.file.path, was_called=True, undispatched=True))
    return found


def package_changes(
    base: Project, head: Project, package: Collection[str], lost: list[HookChange],
    uncalled: Collection[tuple[str, str]], moved: Mapping[str, ClassInfo] | None = None,
) -> list[PackageChange]:
    """Every change of the package's hooks, for the report (and the deprecation warnings)."""
    changes: list[PackageChange] = []
    for change in lost:
        after = head.classes.get(change.class_fq)
        kind = ("uncalled" if (change.class_fq, change.old) in uncalled else "undispatched"
                ) if change.undispatched else "moved" if change.owner else change.kind
        where = after.method(change.new) if after is not None and change.new else None
        changes.append(PackageChange(
            kind, change.owner or change.class_fq, change.old, change.new, change.path,
            where.def_line if where is not None else (
                after.record.line if after is not None else 0)))
        if kind in ("renamed", "removed") and after is not None:
            guard = _deprecation_guard(head, after, change.old)
            if guard is not None:
                path, line, text = guard
                changes.append(PackageChange("deprecated", change.class_fq, change.old,
                                             change.new, path, line, detail=text))
    for call in call_changes(base, head):
        info = head.classes.get(call.class_fq)
        if call.kind == "signature" and info is not None and info.file.path in package:
            changes.append(PackageChange("signature", call.class_fq, call.method, None,
                                         call.path, call.line, detail=call.difference()))
    for fq, before in (moved or {}).items():
        after = head.classes[fq]
        for name, method in after.record.methods.items():
            was = before.record.methods.get(name)
            if was is not None and was.params != method.params:
                difference = "; ".join(signature_difference(was.bound_params,
                                                            method.bound_params))
                changes.append(PackageChange("signature", fq, name, None, after.file.path,
                                             method.def_line,
                                             detail=difference or "signature changed"))
    changes += argument_changes(base, head, package, moved)
    return changes


def _deprecation_guard(head: Project, after: ClassInfo, name: str
                       ) -> tuple[str, int, str] | None:
    """Where ``after``'s line still calls ``name`` on self behind ``hasattr``/``getattr``
    (path, line, the guard as written), or None."""
    for node in (*head.mro(after), *head.descendants(after)):
        if not isinstance(node, ClassInfo) or name not in node.record.self_refs:
            continue
        for method in node.record.methods.values():
            if name in method.guarded:
                return node.file.path, method.def_line, f"hasattr(self, {name!r})"
            for call in method.calls:
                if call.name == name and call.receiver in _SELF and call.condition and (
                        "hasattr" in call.condition or "getattr" in call.condition):
                    return node.file.path, call.line, call.condition
    return None


def argument_changes(base: Project, head: Project, package: Collection[str],
                     moved: Mapping[str, ClassInfo] | None = None) -> list[PackageChange]:
    """Calls on ``self``/``cls`` in the new version that pass more than before (see the
    module's documentation)."""
    found: dict[tuple[object, ...], PackageChange] = {}
    for fq, after in head.classes.items():
        if after.file.path not in package:
            continue
        before = base.classes.get(fq) or (moved or {}).get(fq)
        if before is not None and before.record is after.record:
            continue
        line_calls: dict[str, list[CallSite]] | None = None
        for caller, method in after.record.methods.items():
            old_method = before.record.methods.get(caller) if before is not None else None
            for call in method.calls:
                if call.receiver not in _SELF:
                    continue
                olds = [c for c in (old_method.calls if old_method is not None else ())
                        if c.name == call.name and c.receiver in _SELF]
                if not olds and before is not None:
                    if line_calls is None:
                        line_calls = _line_calls(base, before)
                    olds = line_calls.get(call.name, [])
                change = _compare(after, caller, call, olds, base, before)
                if change is not None:
                    key = (change.class_fq, change.caller, change.hook, change.keywords,
                           change.positional, change.kind)
                    found.setdefault(key, change)
    return list(found.values())


def _line_calls(base: Project, before: ClassInfo) -> dict[str, list[CallSite]]:
    calls: dict[str, list[CallSite]] = {}
    for node in (*base.mro(before), *base.descendants(before)):
        if isinstance(node, ClassInfo):
            for method in node.record.methods.values():
                for call in method.calls:
                    if call.receiver in _SELF:
                        calls.setdefault(call.name, []).append(call)
    return calls


def _compare(after: ClassInfo, caller: str, call: CallSite, olds: list[CallSite],
             base: Project, before: ClassInfo | None) -> PackageChange | None:
    where = f"{after.name}.{caller}"
    if not olds:
        existed = before is not None and any(
            isinstance(n, ClassInfo) and n.defines(call.name) for n in base.mro(before))
        if not existed or not (call.keywords or call.positional):
            return None  # a new hook, or a call passing nothing
        return PackageChange("new-call", after.fq, call.name, None, after.file.path, call.line,
                             where, call.keywords, None if call.star_args else (
                                 0, call.positional))
    keywords: tuple[str, ...] = ()
    if not any(o.star_kwargs for o in olds):
        passed = {k for o in olds for k in o.keywords}
        keywords = tuple(k for k in call.keywords if k not in passed)
    positional = None
    most = max(o.positional for o in olds)
    if not call.star_args and not any(o.star_args for o in olds) and call.positional > most:
        positional = (most, call.positional)
    if not keywords and positional is None:
        return None
    return PackageChange("new-arguments", after.fq, call.name, None, after.file.path, call.line,
                         where, keywords, positional)


__all__ = ["PackageChange", "argument_changes", "lost_hooks", "package_changes",
           "uncalled_hooks"]
