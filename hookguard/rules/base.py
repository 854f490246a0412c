"""What every rule shares: identity, documentation, and the context a check runs in."""

from __future__ import annotations

import inspect
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, ClassVar

from hookguard.config import Config
from hookguard.findings import Finding, Location, Severity
from hookguard.hedges import Hedge
from hookguard.model.project import UNKNOWN_BASE, ClassInfo, External, Project
from hookguard.model.reach import is_test_file as is_test_file
from hookguard.model.reach import live_methods
from hookguard.model.records import CallSite, MethodRecord

if TYPE_CHECKING:
    from hookguard.contracts import HookContract
    from hookguard.git.history import HistoryIndex, HookChange


@dataclass(frozen=True)
class PassedKeyword:
    """A change taught ``owner.method`` to accept ``keyword`` and, in the same change, passes
    ``keyword`` to ``method`` at ``path:line`` through a receiver the model does not type (a
    local, a call result) or knows only from an annotation (``declared``, fully qualified:
    any subclass of it may be there): the call is for ``owner``'s family, and every override
    there (under ``declared``) must accept it."""

    owner: str  # fully qualified
    method: str
    keyword: str
    path: str
    line: int
    col: int
    declared: str | None = None


@dataclass
class References:
    """Every way the checkout names an attribute outside ``self``: for "is this method live?"."""

    attributes: frozenset[str]
    strings: frozenset[str]
    prefixes: frozenset[str]
    definers: dict[str, list[ClassInfo]]  # method name -> classes that define it
    # ``obj.x`` outside test files: a test calling a method directly does not make it live
    code_attributes: frozenset[str] = frozenset()
    # name -> the names ``hasattr`` prefers to it: it is looked up only on objects without
    # them (see :attr:`hookguard.model.records.FileRecord.fallbacks`)
    fallbacks: dict[str, frozenset[str]] = field(default_factory=dict)
    project: Project | None = field(default=None, repr=False)
    _typed: dict[str, list[ClassInfo]] = field(default_factory=dict, repr=False)
    _typed_anywhere: set[str] = field(default_factory=set, repr=False)
    _narrowing: dict[str, list[ClassInfo]] | None = field(default=None, repr=False)
    _self_users: dict[str, list[ClassInfo]] | None = field(default=None, repr=False)
    _opened: dict[str, str] | None = field(default=None, repr=False)
    _member_callers: dict[str, list[ClassInfo]] | None = field(default=None, repr=False)
    _member_held: dict[str, list[ClassInfo]] = field(default_factory=dict, repr=False)

    def opened(self, info: ClassInfo) -> str | None:
        """Where a class in ``info``'s MRO is given methods by ``setattr(Cls, <computed
        name>, ...)`` (the file's path), or None: such a class may define any name."""
        project = self.project
        if project is None:
            return None
        if self._opened is None:
            self._opened = {}
            for record in project.files.values():
                for written in record.open_classes:
                    node = project.resolve_name(record, written)
                    if isinstance(node, ClassInfo):
                        self._opened.setdefault(node.fq, record.path)
        if not self._opened:
            return None
        return next((self._opened[n.fq] for n in project.mro(info)
                     if isinstance(n, ClassInfo) and n.fq in self._opened), None)

    @classmethod
    def of(cls, project: Project) -> References:
        records = project.files.values()
        definers: dict[str, list[ClassInfo]] = {}
        for info in project.classes.values():
            for method in info.record.methods:
                definers.setdefault(method, []).append(info)
        prefixes = frozenset().union(*(r.prefix_refs for r in records))
        fallbacks: dict[str, set[str]] = {}
        for record in records:
            for old, new in record.fallbacks:
                fallbacks.setdefault(old, set()).add(new)
        # ``ss.spawn(2)`` on what ``np.random.SeedSequence(...)`` returned names a method of
        # the checkout's classes only when the package that built it is in the checkout
        packages = {module.split(".")[0] for module in project.modules}
        built_here = {name for r in records for package, name in r.instance_refs
                      if package in packages}
        return cls(
            frozenset().union(*(r.attr_refs for r in records)) | built_here,
            frozenset().union(*(r.string_refs for r in records)),
            prefixes - {""},
            definers,
            frozenset().union(*(r.attr_refs for r in records if not is_test_file(r.path)))
            | {name for r in records if not is_test_file(r.path)
               for package, name in r.instance_refs if package in packages},
            {old: frozenset(new) for old, new in fallbacks.items()},
            project,
        )

    def typed_reaches(self, name: str, info: ClassInfo) -> bool:
        """Whether a call of ``name`` on a name narrowed by ``isinstance`` (``if isinstance(t,
        Conv2d): t.update_layer_conv2d(...)``) can reach an instance of ``info``: it is narrowed
        to a class in ``info``'s line, or to one the checkout cannot name."""
        project = self.project
        if project is None:
            return False
        narrowed = self._typed.get(name)
        if narrowed is None:
            narrowed = self._typed[name] = []
            if self._narrowing is None:  # name -> the classes that narrow and call it
                self._narrowing = {}
                for holder in project.classes.values():
                    if holder.record.narrows:
                        for called in holder.record.member_calls:
                            self._narrowing.setdefault(called, []).append(holder)
            for holder in self._narrowing.get(name, ()):
                for method in holder.record.methods.values():
                    for call in method.calls:
                        if call.receiver == "typed" and call.name == name:
                            node = project.resolve_name(
                                holder.file, call.explicit_base or "?",
                                scope=holder.record.qualname)
                            if not isinstance(node, ClassInfo):
                                self._typed_anywhere.add(name)  # a class it cannot name
                            else:
                                narrowed.append(node)
        if name in self._typed_anywhere:
            return True
        line = project.mro(info)
        return any(node in line for node in narrowed)

    def member_reaches(self, name: str, info: ClassInfo) -> bool:
        """Whether code outside test files calls ``name`` on a member its class declares or
        constructs as a class of ``info``'s line (``self.scheduler.metric_names()`` with
        ``scheduler: TrialScheduler``): the member may hold an ``info``, whatever classes
        outside the line define the name too (syne-tune: first contact, round 30)."""
        project = self.project
        if project is None:
            return False
        if self._member_callers is None:
            self._member_callers = {}
            for holder in project.classes.values():
                if holder.record.member_calls and not is_test_file(holder.file.path):
                    for called in holder.record.member_calls:
                        self._member_callers.setdefault(called, []).append(holder)
        callers = self._member_callers.get(name)
        if not callers:  # (most names: no member call uses them)
            return False
        held = self._member_held.get(name)
        if held is None:  # the classes those members hold: the same for every ``info``
            held = self._member_held[name] = list(dict.fromkeys(
                found for holder in callers
                for found in _member_classes(project, holder, [
                    call.explicit_base for method in holder.record.methods.values()
                    for call in method.calls
                    if call.receiver == "member" and call.name == name])))
        if not held:
            return False
        line = project.mro(info)
        return any(node in line or info in project.mro(node) for node in held)

    def used_elsewhere(self, name: str, info: ClassInfo) -> bool:
        """Whether ``name`` is a step of other classes' code: classes outside ``info``'s line
        use it on ``self``, none in the line does, and the code that drives it from outside
        picks those classes by ``isinstance`` (``if isinstance(target, Conv2d):
        target.update_layer_conv2d(...)``), never ``info``'s line (see
        :mod:`hookguard.model.reach`). A public method nothing outside drives stays API."""
        project = self.project
        if project is None or self.typed_reaches(name, info) or not self._typed.get(name):
            return False
        users = self._self_users
        if users is None:
            users = self._self_users = {}
            for holder in project.classes.values():
                for ref in holder.record.self_refs:
                    users.setdefault(ref, []).append(holder)
        line = set(project.mro(info))
        found = users.get(name, ())
        return bool(found) and not any(c in line for c in found)

    def names(self, name: str) -> bool:
        """Whether code anywhere names ``name`` other than through ``self``."""
        return (
            name in self.attributes or name in self.strings or name.startswith(self.prefix_tuple)
        )

    @cached_property
    def prefix_tuple(self) -> tuple[str, ...]:
        return tuple(self.prefixes)

    @cached_property
    def handed(self) -> frozenset[str]:
        """The names some class of the checkout hands on as values (``ClassRecord.handed``):
        only those are worth asking a class's line about."""
        project = self.project
        if project is None:
            return frozenset()
        return frozenset().union(*(info.record.handed for info in project.classes.values()))

    def outside(
        self, name: str, family: set[str], has: Callable[[str], bool] = lambda _: False
    ) -> tuple[Hedge, str] | None:
        """Why code outside the class family finds ``name`` (the hedge and its words), or None.

        ``obj.name`` with an unknown receiver counts only when no class outside ``family``
        (fully qualified names) defines ``name``: otherwise it most likely means that class.
        A ``hasattr`` fallback counts only when the class lacks (``has``, a name its line
        defines in the checkout) one of the names preferred to it.
        """
        if name in self.strings:
            return Hedge.BY_NAME, f"'{name}' is looked up by name (getattr/hasattr)"
        preferred = self.fallbacks.get(name)
        if preferred and not all(has(new) for new in preferred):
            missing = ", ".join(sorted(new for new in preferred if not has(new)))
            return (Hedge.BY_NAME,
                    f"'{name}' is looked up by name, as a fallback for objects without {missing}")
        for prefix in self.prefixes:
            if name.startswith(prefix):
                return (Hedge.COMPUTED_NAME,
                        f"'{name}' matches a computed attribute name ('{prefix}...')")
        if name in self.code_attributes and all(
            c.fq in family for c in self.definers.get(name, ())
        ):
            return (Hedge.OTHER_RECEIVERS,
                    f"'{name}' is referenced as an attribute outside the class")
        return None


def _member_classes(
    project: Project, holder: ClassInfo, members: Iterable[str | None]
) -> Iterator[ClassInfo]:
    """The classes ``holder``'s line declares (an annotation) or constructs into each of
    ``self.<members>``, where they resolve to classes of the checkout."""
    wanted = {m for m in members if m}
    for node in project.mro(holder):
        if not isinstance(node, ClassInfo) or not wanted:
            continue
        written = [node.record.members[m] for m in wanted if m in node.record.members]
        written += [c for m in wanted for c in node.record.constructed.get(m, ())]
        for name in written:
            found = project.resolve_name(node.file, name.removesuffix("()"),
                                         scope=node.record.qualname)
            if isinstance(found, ClassInfo):
                yield found


def base_hedge(hidden: External) -> Hedge:
    """The hedge of a base outside the checkout: named, or an expression never resolved."""
    return Hedge.UNRESOLVED_BASE if hidden.name == UNKNOWN_BASE else Hedge.EXTERNAL_BASE


def call_guard(call: CallSite) -> str:
    """What ``call`` runs only under (empty: it runs whenever its method does): the tests of
    its ``if`` on the instance's state, of the innermost branch around it whatever it reads,
    and of the early exits before it, negated."""
    parts = [call.condition] if call.condition else []
    if call.branch and not (call.condition and call.branch in call.condition):
        parts.append(call.branch)
    parts += [f"not ({test})" for test in call.exits]
    return " and ".join(parts)


def call_shape(call: CallSite) -> tuple[object, ...]:
    """What a call passes, whatever its line: for telling a call a change added."""
    return (call.receiver, call.positional, call.keywords, call.star_args, call.star_kwargs)


def is_test_double(project: Project, info: ClassInfo) -> bool:
    """A class in a test file that holds no tests (no ``test*`` method in its line): a fake, a
    mock or a model a test builds. What runs on it is what a test calls, and a call it cannot
    accept fails that test by itself."""
    return is_test_file(info.file.path) and not any(
        name.startswith("test") for node in project.mro(info) if isinstance(node, ClassInfo)
        for name in node.record.methods)


def never_collected(project: Project, info: ClassInfo) -> bool:
    """A test class pytest never collects, so its methods never run: it holds tests (its line
    defines ``test_*`` methods) in a test file, its name does not start with ``Test``, no base
    outside the checkout (``unittest.TestCase``, or one that may be) is in its line, and nothing
    subclasses it. A project that renames what pytest collects (``python_classes``) is not
    read: this only ever drops findings."""
    if info.name.startswith("Test") or not is_test_file(info.file.path):
        return False
    mro = project.mro(info)
    if any(isinstance(node, External) and not node.is_empty for node in mro):
        return False
    if not any(name.startswith("test_") for node in mro if isinstance(node, ClassInfo)
               for name in node.record.methods):
        return False
    return next(iter(project.descendants(info)), None) is None


@dataclass
class RuleContext:
    project: Project
    config: Config
    contracts: list[HookContract] = field(default_factory=list)
    history: HistoryIndex | None = None
    changes: list[HookChange] = field(default_factory=list)  # from a base..head diff
    only: frozenset[str] | None = None  # check only these classes (fully qualified); None: all
    # calls the change under review added (``check``): (class, method, call name, shape)
    added_calls: frozenset[tuple[str, str, str, tuple[object, ...]]] = frozenset()
    # keywords the change passes to hooks it taught a base to accept (``check``)
    passed_keywords: tuple[PassedKeyword, ...] = ()
    # guarded calls the base revision made in methods the change kept (``check``, ``upgrade``):
    # (class, method, call name, guard); a call the change makes under the same guard runs
    # where the old one did
    kept_guards: frozenset[tuple[str, str, str, str]] = frozenset()
    # a change is under review (``check``, ``upgrade``): it is the history a drift needs;
    # an audit asks ``history`` whether a call once fitted the override it now fails
    reviewing: bool = False
    _live: dict[str, frozenset[str] | None] = field(default_factory=dict, repr=False)

    def classes(self) -> Iterator[ClassInfo]:
        """The classes to check: all of them, or the ones a change can affect."""
        if self.only is None:
            yield from self.project.classes.values()
        else:
            for fq in sorted(self.only):
                info = self.project.classes.get(fq)
                if info is not None:
                    yield info

    @cached_property
    def references(self) -> References:
        return References.of(self.project)

    def live(self, info: ClassInfo) -> frozenset[str] | None:
        """The methods an instance of ``info`` can run (see :mod:`hookguard.model.reach`)."""
        cache = self._live
        if info.fq not in cache:
            refs = self.references
            cache[info.fq] = live_methods(
                self.project, info,
                lambda name: refs.names(name) or refs.typed_reaches(name, info),
                lambda name: refs.used_elsewhere(name, info))
        return cache[info.fq]

    def family(self, info: ClassInfo) -> set[str]:
        """Fully qualified names of ``info``, its ancestors and its descendants."""
        names = {n.fq for n in self.project.mro(info) if isinstance(n, ClassInfo)}
        names.update(d.fq for d in self.project.descendants(info))
        return names

    def family_self_refs(self, info: ClassInfo, name: str) -> list[ClassInfo]:
        """Classes in ``info``'s line (ancestors, itself, descendants) using ``self.name``."""
        users = []
        for node in (*self.project.mro(info), *self.project.descendants(info)):
            if isinstance(node, ClassInfo) and (
                name in node.record.self_refs
                or any(name.startswith(p) for p in node.record.self_prefixes)
            ):
                users.append(node)
        return users


class Rule(ABC):
    """Base class. The subclass docstring is the rule's documentation, in ruff's sections."""

    code: ClassVar[str]
    name: ClassVar[str]
    severity: ClassVar[Severity]
    summary: ClassVar[str]
    autofix: ClassVar[str] = "No autofix."
    # Each finding is about one class of ``ctx.classes()`` and depends only on what
    # :mod:`hookguard.incremental` tracks; False for rules that must always run whole.
    per_class: ClassVar[bool] = True

    @abstractmethod
    def check(self, ctx: RuleContext) -> Iterable[Finding]:
        """Yield this rule's findings for the whole project."""

    @classmethod
    def documentation(cls) -> str:
        doc = inspect.cleandoc(cls.__doc__ or "")
        header = f"{cls.code} {cls.name} ({cls.severity.value})"
        return f"{header}\n\n{doc}\n\n## Autofix\n{cls.autofix}"

    def finding(
        self,
        info: ClassInfo,
        method: MethodRecord,
        *,
        hook: str,
        message: str,
        severity: Severity | None = None,
        evidence: dict[str, object] | None = None,
        related: Iterable[Location] = (),
    ) -> Finding | None:
        """A finding at ``method``'s ``def``, or None when a comment there suppresses it."""
        if method.suppressed & {"*", self.name, self.code}:
            return None
        return Finding(
            rule=self.name,
            code=self.code,
            severity=severity or self.severity,
            path=info.file.path,
            line=method.def_line,
            column=method.col,
            end_line=method.def_line,
            end_column=method.col + len(f"def {method.name}"),
            symbol=f"{info.fq}.{method.name}",
            hook=hook,
            message=message,
            evidence=dict(evidence or {}),
            related=list(related),
        )


def is_dunder(name: str) -> bool:
    return name.startswith("__") and name.endswith("__")


def is_class_private(name: str) -> bool:
    """``__setup``: Python renames it per class (``_Base__setup``, ``_Sub__setup``), so a
    subclass's method of that name never replaces the base's, and the base's ``self.__setup()``
    always calls its own (first contact, rounds 5 and 10)."""
    return name.startswith("__") and not name.endswith("__")
