"""The change gate: what a base..head change (or the staged tree) breaks, across the whole tree.

Both trees are read straight from git objects: no checkout, no work-tree changes, and a blob that
both trees share is parsed once (and usually comes from the cache).

The gate's rules come from the base, never from the change under review (:func:`gate_config`).
Both trees are checked with the ``[tool.hookguard]`` of the base revision's pyproject.toml,
read through git (``--base REV``: that commit's; ``--staged``: HEAD's); the work tree's
pyproject.toml is not read at all. A base without one (or without the section) has the
defaults, and so does one whose settings are invalid (with a note: the change cannot be
blamed for it). The change's own pyproject.toml (the head commit's, or the staged one) is
compared with the merge base's, which is what the change edits: every way it checks less
(:func:`hookguard.config.weakenings`: a rule deselected, ignored or turned off, a severity
lowered, roots narrowed, include or exclude patterns that leave out files the base checks,
contracts dropped, history or structural checks turned off, max-file-size lowered,
duck-protocols added, module-aliases changed) is an input problem at the setting's line of
``pyproject.toml``, an error that fails the run (exit 1), and is not applied. A change that
adds a pyproject.toml where the base had none is compared with the defaults: it may only
strengthen them. A change whose pyproject.toml is invalid is reported the same way, and the
base's settings are used. Settings that only check more, or the same, are silent, and take
effect once the change is merged (the gate still uses the base's). So a pull request cannot
switch off its own review, and a pull request that really means to weaken the gate says so
in red, for a maintainer to merge on purpose.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from hookguard.config import Config, ConfigError, parse_config, weakenings
from hookguard.engine import Options, Workspace, input_errors, rebuilding_bad_records, run_rules
from hookguard.findings import Finding, InputError, Severity
from hookguard.git.changes import (
    HookChange,
    dropped_dispatch,
    enclosing_def,
    pair_renames,
    renamed_dispatch,
)
from hookguard.git.repo import GitError, Repo, TreeEntry
from hookguard.model.loader import LoadStats, load_trees
from hookguard.model.project import ClassInfo, Project
from hookguard.model.records import FileRecord, MethodRecord, Param, ParamKind
from hookguard.model.sources import PathFilter
from hookguard.model.untyped_calls import KeywordUse, keyword_uses
from hookguard.rules.base import PassedKeyword, call_guard, call_shape, is_dunder, is_test_file

if TYPE_CHECKING:
    from hookguard.contracts import HookContract
    from hookguard.git.history import HistoryIndex
    from hookguard.model.cache import RecordCache

STAGED = "staged changes"
PYPROJECT = "pyproject.toml"
# The most of a pyproject.toml the gate reads (the default max-file-size); larger is invalid.
_PYPROJECT_LIMIT = Config().max_file_size


class GateError(Exception):
    """The gate cannot run as asked (a missing revision): exit 2 with this message."""


@dataclass
class GateResult:
    root: Path
    base: str
    head: str
    changes: list[HookChange]
    call_changes: list[CallChange]
    findings: list[Finding]  # new relative to base
    errors: list[InputError]  # ``config_problems`` first, then files the change broke
    notes: list[str] = field(default_factory=list)
    # The change's pyproject.toml weakens the gate, or is invalid (also in ``errors``).
    config_problems: list[InputError] = field(default_factory=list)
    config: Config = field(default_factory=Config)  # what both trees were checked with
    stats: LoadStats = field(default_factory=LoadStats)
    seconds: float = 0.0
    # The two models compared (base, head). Kept with the result: freeing a model's records
    # costs more than building its project (the program itself exits without freeing them).
    projects: tuple[Project, Project] | None = field(default=None, repr=False)


def _missing_revision(rev: str, repo: Repo) -> GateError:
    shallow = " This is a shallow clone." if repo.is_shallow() else ""
    branch = rev.split("/", 1)[1] if rev.startswith("origin/") else rev
    return GateError(
        f"revision {rev!r} is not in this clone.{shallow} Fetch it first: in GitHub Actions use "
        f"actions/checkout with 'fetch-depth: 0', or run 'git fetch --depth=200 origin {branch}'"
    )


def resolve_range(repo: Repo, base: str, head: str) -> tuple[str, str]:
    """(merge-base of base and head, head) as commit shas, as a pull request diff uses."""
    merge_base, head_sha, _ = _resolve(repo, base, head)
    return merge_base, head_sha


def _resolve(repo: Repo, base: str, head: str) -> tuple[str, str, str]:
    """(merge-base of base and head, head, base) as commit shas."""
    try:
        head_sha = repo.resolve(head)
    except GitError:
        raise _missing_revision(head, repo) from None
    try:
        base_sha = repo.resolve(base)
    except GitError:
        raise _missing_revision(base, repo) from None
    try:
        return repo.merge_base(base_sha, head_sha), head_sha, base_sha
    except GitError:
        raise GateError(
            f"no common ancestor of {base!r} and {head!r} in this clone"
            + (" (shallow clone: fetch more history, e.g. 'fetch-depth: 0')"
               if repo.is_shallow() else "")
        ) from None


@dataclass
class GateConfig:
    """The settings a gate runs with (the base's), and what the change does to them."""

    config: Config
    problems: list[InputError] = field(default_factory=list)  # error level: exit 1
    notes: list[str] = field(default_factory=list)


def gate_config(
    repo: Repo,
    base_entries: Sequence[TreeEntry],
    head_entries: Sequence[TreeEntry],
    base_rev: str,
    rules_rev: str | None = None,
) -> GateConfig:
    """The ``[tool.hookguard]`` a gate checks both trees with, read through git, never from the
    work tree: ``rules_rev``'s pyproject.toml (the ``--base`` commit; the merge base
    ``base_rev``, whose tree is ``base_entries``, when None), the defaults where it has none or
    an invalid one (a note). The change's own pyproject.toml (in ``head_entries``) is compared
    with ``base_rev``'s (the defaults where it has none): each way it weakens the gate, or its
    being invalid, is a problem at its line, reported at error level and never applied."""
    base_blob, head_blob = _pyproject_blob(base_entries), _pyproject_blob(head_entries)
    rules_blob = base_blob
    if rules_rev is not None and rules_rev != base_rev:
        rules_blob = _pyproject_at(repo, rules_rev)
    wanted = sorted({b for b in (base_blob, head_blob, rules_blob) if b is not None})
    texts: dict[str, str] = {}
    parsed: dict[str | None, Config | ConfigError] = {None: Config()}
    for blob, data, size in repo.each_blob(wanted, _PYPROJECT_LIMIT):
        if data is None:  # over the limit (or gone): read as invalid, never in full
            parsed[blob] = ConfigError(PYPROJECT, 1, f"over {_PYPROJECT_LIMIT} bytes ({size})"
                                       if size >= 0 else "cannot be read")
            continue
        texts[blob] = data.decode("utf-8", errors="replace")
        try:
            parsed[blob] = parse_config(texts[blob], PYPROJECT)
        except ConfigError as exc:
            parsed[blob] = exc
    for blob in wanted:
        parsed.setdefault(blob, ConfigError(PYPROJECT, 1, "cannot be read"))
    notes: list[str] = []

    def settled(blob: str | None, where: str, instead: str) -> Config:
        found = parsed[blob]
        if isinstance(found, Config):
            return found
        notes.append(f"{PYPROJECT} at {where} has invalid [tool.hookguard] settings "
                     f"(line {found.line}: {found.message}): {instead}")
        return Config()

    rules = settled(rules_blob, f"the base ({(rules_rev or base_rev)[:10]})",
                    "the gate runs with the defaults")
    before = rules if rules_blob == base_blob else settled(
        base_blob, f"the merge base ({base_rev[:10]})", "the change is compared with the "
        "defaults")
    result = GateConfig(rules, notes=notes)
    if head_blob == base_blob:
        return result  # the change leaves it as it is
    head = parsed[head_blob]
    if isinstance(head, ConfigError):
        result.problems.append(InputError(
            PYPROJECT, max(head.line, 1), f"the change's [tool.hookguard] is invalid: "
            f"{head.message}; checked with the base's settings"))
        return result
    paths = sorted({e.path for e in base_entries} | {e.path for e in head_entries})
    for weaker in weakenings(before, head, texts.get(head_blob or "", ""), paths):
        result.problems.append(InputError(
            PYPROJECT, weaker.line, f"the change weakens the gate: '{weaker.key}' "
            f"{weaker.what}; checked with the base's settings"))
    return result


def _pyproject_blob(entries: Sequence[TreeEntry]) -> str | None:
    return next((e.blob for e in entries if e.path == PYPROJECT), None)


def _pyproject_at(repo: Repo, rev: str) -> str | None:
    """The blob of ``rev``'s pyproject.toml at the top of the tree (None: none, or a link,
    which a tree listing leaves out too)."""
    out = repo.git("ls-tree", "-z", "--full-tree", rev, "--", PYPROJECT)
    for item in out.split(b"\0"):
        meta, _, path = item.partition(b"\t")
        fields = meta.split()
        if path == PYPROJECT.encode() and len(fields) == 3 and fields[1] == b"blob" and (
                fields[0] != b"120000"):
            return fields[2].decode()
    return None


def _open_repo(repo_path: Path) -> tuple[Path, Repo]:
    """The checkout's root and repository, as :meth:`Workspace.open` finds them, without
    reading its pyproject.toml: the gate's settings come from git (:func:`gate_config`)."""
    target = repo_path.resolve()
    if not target.exists():
        raise GateError(f"{repo_path}: no such file or directory")
    repo = Repo.discover(target)
    if repo is None:
        raise GateError(f"{repo_path} is not inside a git repository")
    return repo.root.resolve(), repo


def _python_entries(entries: Sequence[TreeEntry], config: Config) -> list[tuple[str, str]]:
    accept = PathFilter(config, (e.path for e in entries)).accepts
    return [(e.path, e.blob) for e in entries if accept(e.path)]


def hook_changes(
    base: Project, head: Project, changed: Collection[str] = ()
) -> list[HookChange]:
    """Hooks removed or renamed from classes that have at least one subclass in ``head``: methods
    the class calls on ``self`` or a subclass overrides; a method moved up to a parent class is
    not a change (issue 13, item 8).

    One was called (``was_called``) when its class's line called it on ``self`` before, or when
    the change dropped, in one of the ``changed`` files, a call of it through a member
    (``self.module.predict(...)``) or its name as a string (a dispatch by name).
    """
    dropped = _dropped_uses(base, head, changed)
    added = _dropped_uses(head, base, changed)  # the same difference, the other way round
    changes: list[HookChange] = []
    for fq, after in head.classes.items():
        before = base.classes.get(fq)
        if before is None or before.record is after.record or not head.subclasses(after):
            continue  # new, unchanged (a blob both trees share is one record), or a leaf
        overridden = {m for sub in head.descendants(after) for m in sub.record.methods}
        called_after = head.inherited_refs(after) | after.record.self_refs
        changes.extend(_undispatched(base, before, after, overridden, called_after))
        changes.extend(_unprobed(base, head, before, after, overridden, called_after))
        removed = [m for m in before.record.methods if m not in after.record.methods]
        if not removed:
            continue
        pairs = pair_renames(before.record, after.record, removed)
        for old in removed:
            if isinstance(head.defining_ancestor(after, old), ClassInfo):
                continue  # moved up to a parent class: the family still has it
            # Dropped in the hook's own file, a string is a deprecation message or the like;
            # the framework's dispatch by name lives elsewhere.
            called = bool(dropped.get(old, set()) - {before.file.path, after.file.path}) or any(
                node.record.calls_on_self(old) for node in base.mro(before)
                if isinstance(node, ClassInfo))
            if not called and old not in overridden:
                continue  # neither called by the family nor overridden: not a hook (a test)
            changes.append(
                HookChange(
                    class_fq=fq, old=old, new=pairs.get(old), commit="", short="", subject="",
                    path=after.file.path, was_called=called,
                    refused=bool(added.get(old, set()) - {before.file.path, after.file.path}),
                )
            )
    return changes


def _dispatched(repo: Repo, base: str, head: str, changes: list[HookChange]
                ) -> list[HookChange]:
    """``changes``, each hook the model saw no call of marked called where the change renamed
    a dispatch of it (:func:`~hookguard.git.changes.renamed_dispatch`) or, removing it,
    removed one (:func:`~hookguard.git.changes.dropped_dispatch`)."""
    asked = [c for c in changes if not c.was_called]
    if not asked:
        return changes
    try:
        patch = repo.git("diff", "-p", "-U0", "--no-color", "--no-ext-diff", "--src-prefix=a/",
                         "--dst-prefix=b/", *(("--cached", base) if head == STAGED
                                              else (base, head)), "--", "*.py")
    except GitError:
        return changes  # (unanswered: the hook stays an API method, a warning)

    def enclosing(old: bytes, line: int) -> bytes | None:
        return enclosing_def(repo, base, old, line)

    return [replace(c, was_called=True) if c in asked and (
        renamed_dispatch(patch, c.old, c.new) if c.new
        else dropped_dispatch(patch, c.old, enclosing)
    ) else c for c in changes]


def orphaned_overrides(
    base: Project, head: Project, changed: Collection[str], known: Sequence[HookChange]
) -> list[HookChange]:
    """Overrides whose hook left their bases without any class losing it: the change moved or
    renamed the base class, switched the subclass to new bases, or replaced the method with a
    module function. Before, a base defined the method and the line called it on ``self``;
    after, no base defines it or calls it on ``self`` (and none outside the checkout may), and
    the subclass's own family does not call it either: the override no longer runs."""
    seen = {(c.class_fq, c.old) for c in known}
    found: list[HookChange] = []
    # In a changed file, or below a class in one (before or after): a base's file changed.
    candidates = _under_changed(base, changed) | _under_changed(head, changed)
    for fq, after in head.classes.items():
        before = base.classes.get(fq)
        if before is None or fq not in candidates:
            continue
        head_bases = [a for a in head.ancestors(after) if isinstance(a, ClassInfo)]
        if not head_bases:
            continue
        for name in after.record.methods:
            if is_dunder(name) or name not in before.record.methods:
                continue
            owner = base.defining_ancestor(before, name)
            if not isinstance(owner, ClassInfo) or name not in base.inherited_refs(before):
                continue  # not an override of a hook its bases called
            if any((a.fq, name) in seen for a in head_bases):
                continue  # a base that lost it is already known
            if isinstance(head.defining_ancestor(after, name), ClassInfo) or (
                name in head.inherited_refs(after)
                or head.unknown_before(after, None, name) is not None
                or any(name in d.record.self_refs for d in (after, *head.descendants(after)))
            ):
                continue  # still a hook, maybe a hook, or the family's own method
            found.append(HookChange(
                class_fq=head_bases[0].fq, old=name, new=None, commit="", short="",
                subject="", path=owner.file.path, owner=owner.fq,
            ))
    return found


def _under_changed(project: Project, changed: Collection[str]) -> set[str]:
    """The classes defined in ``changed`` files and every class below one of them."""
    found: set[str] = set()
    for info in project.classes.values():
        if info.file.path in changed and info.fq not in found:
            found.add(info.fq)
            found.update(d.fq for d in project.descendants(info))
    return found


def _undispatched(
    base: Project, before: ClassInfo, after: ClassInfo, overridden: set[str],
    called_after: frozenset[str],
) -> list[HookChange]:
    """Hooks ``after`` still defines but its line no longer calls through ``self``, called
    instead as ``Class.name(...)`` in its file (made static, say), while a subclass overrides
    them (``overridden``: what ``after``'s subclasses define; ``called_after``: what its line
    uses on ``self``): the overrides stopped running."""
    called_before = base.inherited_refs(before) | before.record.self_refs
    return [
        HookChange(class_fq=after.fq, old=name, new=None, commit="", short="", subject="",
                   path=after.file.path, was_called=True, undispatched=True)
        for name in after.record.methods
        if name in before.record.methods and name in called_before
        and name not in called_after and name in overridden
        and name in after.file.attr_refs and not is_dunder(name)
    ]


def _unprobed(
    base: Project, head: Project, before: ClassInfo, after: ClassInfo, overridden: set[str],
    called_after: frozenset[str],
) -> list[HookChange]:
    """Optional hooks the class's line stopped calling: before the change, it called the name
    on ``self`` where ``hasattr(self, "name")`` (a lookup by name in its file) said a subclass
    has it, and no class of its line defined it; after, nothing in its line calls it, while a
    subclass still defines it (tornado's ``get_error_html``, probed and called in
    ``write_error`` until 3d5c48f8: issue 23's incidents)."""
    probed = before.file.string_refs | before.file.literals  # (``hasattr(self, "x")`` is
    # read as a use on self: its string is among the file's literals)
    return [
        HookChange(class_fq=after.fq, old=name, new=None, commit="", short="", subject="",
                   path=after.file.path, was_called=True, probed=True)
        for name in sorted(overridden & probed)
        if before.record.calls_on_self(name) and name not in called_after
        and not is_dunder(name) and name not in before.record.methods
        and base.defining_ancestor(before, name) is None
        and head.defining_ancestor(after, name) is None
        and head.unknown_before(after, None, name) is None
    ]


def _dropped_uses(
    base: Project, head: Project, changed: Collection[str]
) -> dict[str, set[str]]:
    """Names that ``changed`` files called through a member (``self.<member>.name(...)``, by
    its class) or held as a string before the change and no longer after it, with the files
    that held the string ("" for a member call)."""

    def uses(project: Project) -> set[tuple[str, str, str]]:
        found = {
            ("", info.fq, call.name)  # a member call counts wherever it was, but in tests
            for info in project.classes.values()
            if info.file.path in changed and not is_test_file(info.file.path)
            for method in info.record.methods.values()
            # (a call of its own name inside a method is a wrapper forwarding it, no caller)
            for call in method.calls if call.receiver in ("member", "typed")
            and call.name != method.name
        }
        for path in changed:
            record = project.files.get(path)
            if record is not None:  # a file defining the name itself holds it as a message
                defined = {name for c in record.classes for name in c.methods}
                found.update((path, "", literal) for literal in record.literals - defined)
        return found

    dropped: dict[str, set[str]] = {}
    for path, _, name in uses(base) - uses(head):
        dropped.setdefault(name, set()).add(path)
    return dropped


@dataclass(frozen=True)
class CallChange:
    """A hook's signature changed, or a base started passing new keywords to it."""

    class_fq: str
    method: str
    detail: str
    path: str
    line: int
    commit: str = ""
    #: ``signature``: the hook's parameters changed (``before`` -> ``after``); ``passes``: a
    #: method of the class passes the hook new keywords (``keywords``, from ``caller``)
    kind: str = "signature"
    before: tuple[Param, ...] = field(default=(), compare=False)
    after: tuple[Param, ...] = field(default=(), compare=False)
    caller: str = ""
    keywords: tuple[str, ...] = ()

    def describe(self) -> str:
        where = f" in {self.commit}" if self.commit else ""
        return f"{self.class_fq}.{self.method}: {self.detail}{where} [{self.path}:{self.line}]"

    def difference(self) -> str:
        """The change alone, short: ``gains keyword x``, ``parameter y removed``,
        ``Base.run now passes x=``; never the two signatures (a note, issue 26, item 6)."""
        if self.kind == "passes":
            return f"{self.caller} now passes {_names([f'{k}=' for k in self.keywords])}"
        return "; ".join(signature_difference(self.before, self.after)) or "signature changed"


#: The longest note ``check`` prints for one hook change (the JSON output has the detail).
NOTE_LIMIT = 160
_MAX_NAMES = 4  # names listed in a note before "and N more"

_ADDED = {
    ParamKind.POSITIONAL_ONLY: ("positional parameter", "positional parameters"),
    ParamKind.POSITIONAL_OR_KEYWORD: ("parameter", "parameters"),
    ParamKind.KEYWORD_ONLY: ("keyword", "keywords"),
}
_KIND_WORDS = {
    ParamKind.POSITIONAL_ONLY: "positional-only",
    ParamKind.POSITIONAL_OR_KEYWORD: "positional-or-keyword",
    ParamKind.KEYWORD_ONLY: "keyword-only",
}


def _names(names: Sequence[str]) -> str:
    """``a, b and c``; past :data:`_MAX_NAMES`, ``a, b, c, d and 7 more``."""
    shown = list(names[:_MAX_NAMES])
    rest = len(names) - len(shown)
    if rest:
        return f"{', '.join(shown)} and {rest} more"
    return shown[0] if len(shown) == 1 else f"{', '.join(shown[:-1])} and {shown[-1]}"


def signature_difference(before: Sequence[Param], after: Sequence[Param]) -> list[str]:
    """What changed from ``before`` to ``after``, one short phrase per kind of change:
    ``gains keyword num_blocks_per_seq``, ``parameter x removed``, ``parameter x renamed to
    y``, ``x becomes keyword-only``, ``x loses its default``, ``positional order now b, a``."""
    old = {p.name: p for p in before}
    new = {p.name: p for p in after}
    removed = [p for p in before if p.name not in new]
    added = [p for p in after if p.name not in old]
    parts: list[str] = []
    if len(removed) == 1 == len(added) and removed[0].kind is added[0].kind and (
            list(before).index(removed[0]) == list(after).index(added[0])):
        parts.append(f"parameter {removed[0].name} renamed to {added[0].name}")
        removed, added = [], []
    for kind, (one, many) in _ADDED.items():
        names = [p.name for p in added if p.kind is kind]
        if names:
            parts.append(f"gains {one if len(names) == 1 else many} {_names(names)}")
    for star, param in (("*", ParamKind.VAR_POSITIONAL), ("**", ParamKind.VAR_KEYWORD)):
        parts += [f"gains {star}{p.name}" for p in added if p.kind is param]
    plain = [p.name for p in removed if p.kind in _KIND_WORDS]
    if plain:
        parts.append(f"parameter{'s' * (len(plain) != 1)} {_names(plain)} removed")
    for star, param in (("*", ParamKind.VAR_POSITIONAL), ("**", ParamKind.VAR_KEYWORD)):
        parts += [f"{star}{p.name} removed" for p in removed if p.kind is param]
    kept = [(old[p.name], p) for p in after if p.name in old]
    for kind, word in _KIND_WORDS.items():
        names = [a.name for b, a in kept if a.kind is kind and b.kind is not a.kind]
        if names:
            parts.append(f"{_names(names)} become{'s' * (len(names) == 1)} {word}")
    for has, word in ((True, "gain"), (False, "lose")):
        names = [a.name for b, a in kept if a.has_default is has and b.has_default is not has]
        if names:
            single = len(names) == 1
            what = ("a default" if has else "its default") if single else (
                "defaults" if has else "their defaults")
            parts.append(f"{_names(names)} {word}{'s' * single} {what}")
    positional = (ParamKind.POSITIONAL_ONLY, ParamKind.POSITIONAL_OR_KEYWORD)
    old_order = [p.name for p in before if p.kind in positional and p.name in new]
    new_order = [p.name for p in after if p.kind in positional and p.name in old]
    if old_order != new_order and sorted(old_order) == sorted(new_order):
        shown = ", ".join(new_order[:_MAX_NAMES]) + (", ..." if len(new_order) > _MAX_NAMES
                                                       else "")
        parts.append(f"positional order now ({shown})")
    return parts


def shorten(text: str, limit: int = NOTE_LIMIT) -> str:
    """``text`` cut to ``limit`` characters, ending in an ellipsis when cut."""
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def added_calls(
    base: Project, head: Project
) -> set[tuple[str, str, str, tuple[object, ...]]]:
    """The calls on ``self``/``cls`` that a change wrote into methods that were already there
    (code in use, not a new method nothing may call yet), by class, method, hook and shape."""
    added: set[tuple[str, str, str, tuple[object, ...]]] = set()
    for after, old, method in _kept_methods(base, head):
        had = {(c.name, call_shape(c)) for c in old.calls}
        for call in method.calls:
            if call.receiver in ("self", "cls") and (call.name, call_shape(call)) not in had:
                added.add((after.fq, method.name, call.name, call_shape(call)))
    return added


def kept_guards(base: Project, head: Project) -> set[tuple[str, str, str, str]]:
    """The guards a change's calls are judged without (``RuleContext.kept_guards``), as
    (class, method, hook, guard): those of the guarded calls (on ``self``, a member, a narrowed
    name) the base revision made in methods the change kept (the new call runs where that one
    ran), and those of the calls in methods the change added to classes that were there
    (``DiffusionPipeline.enable_sequential_cpu_offload``, calling ``self.to("cpu",
    silence_dtype_warnings=True)`` when not on the CPU: written to run, the guard is the
    change's own intent). Whether the method runs at all is still the rule's to prove."""
    kept = {(after.fq, method.name, call.name, guard)
            for after, old, method in _kept_methods(base, head)
            for call in old.calls
            if call.receiver != "super" and (guard := call_guard(call))}
    for fq, after in head.classes.items():
        before = base.classes.get(fq)
        if before is None or before.record is after.record:
            continue
        for name, method in after.record.methods.items():
            if name not in before.record.methods:
                kept.update((fq, name, call.name, guard) for call in method.calls
                            if call.receiver != "super" and (guard := call_guard(call)))
    return kept


def _kept_methods(
    base: Project, head: Project
) -> Iterator[tuple[ClassInfo, MethodRecord, MethodRecord]]:
    """``(class in head, method before, method after)`` for each method that a class the change
    touched had before and still has."""
    for fq, after in head.classes.items():
        before = base.classes.get(fq)
        if before is None or before.record is after.record:
            continue
        for name, method in after.record.methods.items():
            old = before.record.methods.get(name)
            if old is not None:
                yield after, old, method


@dataclass(frozen=True)
class KeywordGain:
    """``owner``'s family now takes ``keywords`` at ``method`` (or, with ``any_new``, any
    keyword outside ``old``, what it took before): a change widened it there."""

    owner: str
    keywords: frozenset[str]
    any_new: bool
    old: frozenset[str]

    def covers(self, keyword: str) -> bool:
        return keyword in self.keywords or (self.any_new and keyword not in self.old)


def keyword_gains(base: Project, head: Project) -> dict[str, list[KeywordGain]]:
    """Hooks a change taught to accept more keywords, by method name, with the families they
    were widened for: the widened class when it has subclasses; the nearest base that declares
    the hook (``RayExecutor.p2p_connect`` gained ``remote_engine_id``: ``ExecutorBase``'s
    family is the one its callers hold); and, for a keyword several classes gained, the
    nearest base they share (``load_serial``, given to three ZeRO optimizers). Only methods
    that were already there."""
    gains: dict[str, list[KeywordGain]] = {}
    gainers: dict[tuple[str, str], list[ClassInfo]] = {}  # (method, keyword) -> widened classes
    for after, old, method in _kept_methods(base, head):
        if old.params == method.params or old.takes_any_keyword:
            continue
        name, any_new = method.name, method.takes_any_keyword
        new = frozenset() if any_new else method.keyword_names - old.keyword_names
        if not (new or any_new):
            continue
        owners = [after] if head.subclasses(after) else []
        declaring = head.defining_ancestor(after, name)
        if isinstance(declaring, ClassInfo):
            owners.append(declaring)
        for owner in owners:
            gains.setdefault(name, []).append(
                KeywordGain(owner.fq, new, any_new, old.keyword_names))
        for keyword in new:
            gainers.setdefault((name, keyword), []).append(after)
    for (name, keyword), classes in gainers.items():
        if len(classes) < 2:
            continue
        shared = _nearest_shared_base(head, classes)
        if shared is not None:
            gains.setdefault(name, []).append(
                KeywordGain(shared.fq, frozenset({keyword}), False, frozenset()))
    return gains


def _nearest_shared_base(project: Project, classes: Sequence[ClassInfo]) -> ClassInfo | None:
    """The first class of the first one's line (itself included) that every other one has in
    its line, in the checkout."""
    lines = [set(project.mro(c)) for c in classes[1:]]
    for node in project.mro(classes[0]):
        if isinstance(node, ClassInfo) and all(node in line for line in lines):
            return node
    return None


def passed_keywords(
    repo: Repo,
    base_entries: Sequence[TreeEntry],
    head_entries: Sequence[TreeEntry],
    changed: Collection[str],
    base: Project,
    head: Project,
) -> list[PassedKeyword]:
    """Keywords the change passes, through receivers the model does not type, to hooks it
    taught a base to accept: ``model.load_state_dict(sd, args=args)`` written by the change
    that gave ``BaseModel.load_state_dict`` its ``args``. Only the changed files are read."""
    gains = keyword_gains(base, head)
    if not gains:
        return []
    before = {e.path: e.blob for e in base_entries}
    after = {e.path: e.blob for e in head_entries}
    paths = [p for p in sorted(changed) if p.endswith(".py") and p in after]
    wanted = [after[p] for p in paths] + [before[p] for p in paths if p in before]
    blobs = repo.read_blobs(wanted)
    return keywords_passed(paths, lambda p: blobs.get(before.get(p, ""), b""),
                           lambda p: blobs.get(after[p], b""), gains, head)


def keywords_passed(
    paths: Sequence[str], old_bytes: Callable[[str], bytes], new_bytes: Callable[[str], bytes],
    gains: dict[str, list[KeywordGain]], head: Project,
    uses_in: Callable[[bytes, str, Collection[str]], list[KeywordUse]] = keyword_uses,
) -> list[PassedKeyword]:
    """The keywords ``paths`` pass in their new bytes and not in their old ones, through
    receivers the model does not type, to hooks ``gains`` says were taught them (see
    :func:`passed_keywords`; ``upgrade`` asks it of a package's two versions)."""
    found: list[PassedKeyword] = []
    tolerated: set[tuple[str, str]] = set()  # passed only after checking the callee takes it
    for path in paths:
        old = {(u.method, u.keyword) for u in uses_in(old_bytes(path), path, gains)}
        record = head.files.get(path)
        for use in uses_in(new_bytes(path), path, gains):
            if use.guarded:
                tolerated.add((use.method, use.keyword))
            receiver = _receiver(use, record, head)
            if (use.method, use.keyword) in old or use.guarded or receiver is None:
                continue  # the file passed it before the change: not what the change taught
            holder = _holder(use, record, head)
            for gain in gains[use.method]:
                if not gain.covers(use.keyword):
                    continue
                if use.function == use.method and holder is not None and any(
                        isinstance(node, ClassInfo) and node.fq == gain.owner
                        for node in head.mro(holder)):
                    # The family's own implementation of the hook passes it to its parts
                    # (``self.decoder.sharded_state_dict(..., metadata=metadata)``): whoever
                    # is never a part never gets it.
                    continue
                found.append(PassedKeyword(gain.owner, use.method, use.keyword, path,
                                           use.line, use.col, receiver or None))
    # ``if "from_checkpoint" in getfullargspec(task.build_model).args``: the change itself
    # expects overrides without the keyword, so no call of it proves one wrong.
    return sorted(dict.fromkeys(p for p in found if (p.method, p.keyword) not in tolerated),
                  key=lambda p: (p.path, p.line, p.col))


def _holder(use: KeywordUse, record: FileRecord | None, head: Project) -> ClassInfo | None:
    """The class whose method the keyword use is in."""
    if use.holder is None or record is None:
        return None
    return head.classes.get(f"{record.module}.{use.holder}" if record.module else use.holder)


def _receiver(use: KeywordUse, record: FileRecord | None, head: Project) -> str | None:
    """Which family a keyword use speaks for: ``""`` for any (a local, a call result, a member
    nothing declares), a class's fully qualified name for a member declared only by its
    annotation (``self.type: ParamType``: any subclass of ``ParamType`` may be there), ``None``
    for none. Not when the receiver is any object with the method (``if hasattr(module,
    "m"): module.m(...)``), nor when the model knows what is constructed into the member (that
    binding is checked as a call through composition), nor when the declaration names a class
    the model does not know."""
    if use.duck:
        return None
    holder = _holder(use, record, head)
    if use.member is None or holder is None:
        return ""
    for info in head.mro(holder):  # the nearest declaration of the member wins
        if not isinstance(info, ClassInfo):
            continue
        if use.member in info.record.constructed:
            return None
        written = info.record.members.get(use.member)
        if written is None:
            continue
        if written.endswith("()"):
            return None
        declared = head.resolve_name(info.file, written, scope=info.record.qualname)
        return declared.fq if isinstance(declared, ClassInfo) else None
    return ""


def call_changes(base: Project, head: Project) -> list[CallChange]:
    """Signature changes and newly passed keywords at the base's own call sites."""
    changes: list[CallChange] = []
    for after, old, method in _kept_methods(base, head):
        if not head.subclasses(after):
            continue
        fq, name = after.fq, method.name
        if old.params != method.params:
            changes.append(CallChange(fq, name, f"signature {old.signature()} -> "
                                      f"{method.signature()}", after.file.path,
                                      method.def_line, before=old.bound_params,
                                      after=method.bound_params))
        old_keywords: dict[str, set[str]] = {}
        for call in old.calls:
            old_keywords.setdefault(call.name, set()).update(call.keywords)
        for call in method.calls:
            if call.receiver not in ("self", "cls", "super"):
                continue
            added = [k for k in call.keywords if k not in old_keywords.get(call.name, set())]
            if added and call.name in old_keywords:
                changes.append(CallChange(
                    fq, call.name,
                    f"{after.name}.{name} now passes " + ", ".join(f"{k}=" for k in added),
                    after.file.path, call.line, kind="passes", caller=f"{after.name}.{name}",
                    keywords=tuple(added),
                ))
    return changes


def _contract_paths(entries: Sequence[TreeEntry], config: Config) -> list[str]:
    """The contract files a tree declares: the ``*.toml`` directly in each ``contracts``
    folder of its settings (or a file named there), else those in ``contracts/``."""
    folders = [p.strip("/") for p in config.contracts] or ["contracts"]
    found: list[str] = []
    for folder in folders:
        prefix = folder + "/"
        inside = [e.path for e in entries if e.path == folder or e.path.startswith(prefix)]
        if folder in inside:
            found.append(folder)
            continue
        found.extend(sorted({p for p in inside if p.endswith(".toml")
                             and "/" not in p[len(prefix):]}))
    return found


def base_contracts(repo: Repo, entries: Sequence[TreeEntry], config: Config
                   ) -> list[HookContract]:
    """The contracts of the base tree, read through git: the change under review cannot edit
    what it is checked against (a contract it loosens applies once merged)."""
    wanted = _contract_paths(entries, config)
    if not wanted:
        return []
    from hookguard.contracts import ContractError
    from hookguard.contracts.reader import parse_contract_files

    blob_of = {e.path: e.blob for e in entries}
    texts = repo.read_blobs([blob_of[p] for p in wanted])

    def decoded(path: str) -> str:
        try:
            return texts[blob_of[path]].decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ContractError(path, 0, f"cannot read contract file: {exc}") from None

    return parse_contract_files((path, decoded(path)) for path in wanted)


def _attribute(
    changes: list[HookChange], history: HistoryIndex | None, rev_range: str | None
) -> list[HookChange]:
    """Name the commit in the range that made each change (staged changes have none)."""
    if history is None or rev_range is None:
        return [replace(c, subject=STAGED) for c in changes]
    named = []
    for change in changes:
        found = history.removal_commit(change.path, change.old, rev_range)
        sha, short, subject = found if found else ("", "", "")
        named.append(replace(change, commit=sha, short=short, subject=subject))
    return named


def run_gate(
    repo_path: Path, base: str | None, head: str, staged: bool, options: Options
) -> GateResult:
    """Compare ``head`` (or the staged tree) with ``base``: the findings the change brings."""
    return rebuilding_bad_records(
        lambda o: _run_gate(repo_path, base, head, staged, o), options)


def _run_gate(
    repo_path: Path, base: str | None, head: str, staged: bool, options: Options
) -> GateResult:
    started = time.perf_counter()
    root, repo = _open_repo(repo_path)
    rules_sha: str | None = None
    if staged:
        if not repo.has_head():
            raise GateError("the repository has no commits yet: nothing to compare against")
        base_sha, head_sha = repo.resolve("HEAD"), STAGED
        head_entries = repo.ls_index()
        rev_range = None
    else:
        if base is None:
            raise GateError("give --base REV (or --staged to check the staged tree)")
        base_sha, head_sha, rules_sha = _resolve(repo, base, head)
        head_entries = repo.ls_tree(head_sha)
        rev_range = f"{base_sha}..{head_sha}"
    base_entries = repo.ls_tree(base_sha)
    settings = gate_config(repo, base_entries, head_entries, base_sha, rules_sha)
    config = settings.config
    workspace = Workspace(root, repo, config)
    cache: RecordCache | None = workspace.cache(options)
    (base_records, _), (head_records, stats) = load_trees(
        [_python_entries(base_entries, config), _python_entries(head_entries, config)],
        repo.read_blobs, cache, config.max_file_size, options.workers,
        # The head's files, checked out, are read in place (each checked to be the blob).
        worktree=(repo.root, 1) if staged or head_sha == repo.resolve("HEAD") else None,
    )
    mirrors = dict(config.module_aliases)
    base_project = Project.build(base_records, mirrors)
    head_project = base_project.with_files(base_records, head_records)
    contracts = base_contracts(repo, base_entries, config)
    if options.contracts:  # named on the command line: the workflow's choice, read from disk
        contracts += workspace.load_contracts(options.contracts, with_config=False)
    base_blobs = {e.path: e.blob for e in base_entries}
    head_blobs = {e.path: e.blob for e in head_entries}
    edited = sorted(p for p in {*_contract_paths(base_entries, config),
                                *_contract_paths(head_entries, config)}
                    if base_blobs.get(p) != head_blobs.get(p))
    history = None
    if rev_range:  # (the walk, and its worker pools, imported only when a range asks for it)
        from hookguard.git.history import HistoryIndex

        history = HistoryIndex(repo)
    changed = _changed_paths(base_entries, head_entries)
    lost = _dispatched(repo, base_sha, head_sha,
                       hook_changes(base_project, head_project, changed))
    lost += orphaned_overrides(base_project, head_project, changed, lost)
    changes = _attribute(lost, history, rev_range)
    signature_changes = call_changes(base_project, head_project)
    if rev_range is not None:
        signature_changes = [
            replace(c, commit=repo.last_commit(rev_range, c.path)) for c in signature_changes
        ]
    # Only classes a change can affect can have new findings: those in changed files and
    # their subclasses, on either side.
    scope = set(_affected(base_project, changed) | _affected(head_project, changed))
    keywords = passed_keywords(repo, base_entries, head_entries, changed, base_project,
                               head_project)
    for owner in {p.owner for p in keywords}:  # a family the change's calls reach, untouched
        scope.update(c.fq for c in head_project.descendants(head_project.classes[owner]))
    before = run_rules(base_project, config, contracts, None, select=options.select,
                       only=scope, reviewing=True)
    after = run_rules(head_project, config, contracts, None, changes, select=options.select,
                      added_calls=added_calls(base_project, head_project),
                      kept_guards=kept_guards(base_project, head_project),
                      passed_keywords=keywords, only=scope, reviewing=True)
    known = {f.fingerprint: f for f in before}
    new = [f for f in after if _new_evidence(f, known.get(f.fingerprint))
           and not _written_by_the_change(f, base_project)]
    for finding in new:
        earlier = known.get(finding.fingerprint)
        if earlier is not None:  # already broken: name the calls the change adds
            added = [c["message"] for c in finding.evidence["calls"]
                     if c not in earlier.evidence["calls"]]
            finding.message += f" (this change adds: {'; '.join(added)})"
        causes = [c.describe() for c in signature_changes if c.method == finding.hook]
        if causes and finding.rule == "signature-drift":
            finding.evidence["caused_by"] = causes
            finding.message += f" (caused by: {causes[0]})"
    base_errors = {(e.path, e.message) for e in input_errors(base_project)}
    errors = [e for e in input_errors(head_project) if (e.path, e.message) not in base_errors]
    notes = list(settings.notes)
    if edited:
        notes.append("the change edits contract files (" + ", ".join(edited[:3])
                     + (f" and {len(edited) - 3} more" if len(edited) > 3 else "")
                     + "): checked against the base's contracts; they apply once merged")
    if cache is not None:
        cache.save()
        notes.extend(cache.warnings)
    return GateResult(
        root=workspace.root,
        base=base_sha,
        head=head_sha,
        changes=changes,
        call_changes=signature_changes,
        findings=new,
        errors=settings.problems + errors,
        notes=notes,
        config_problems=settings.problems,
        config=config,
        stats=stats,
        seconds=time.perf_counter() - started,
        projects=(base_project, head_project),
    )


def _new_evidence(finding: Finding, before: Finding | None) -> bool:
    """Whether ``finding`` is new: the base had none like it, or it is a call an override
    cannot accept that the change added (another caller of an override already broken: the
    change still breaks it, and whoever writes the call should hear it)."""
    if before is None:
        return True
    if finding.severity is Severity.ERROR and before.severity is not Severity.ERROR:
        return True  # the change made it a proof (an unguarded call where one was guarded)
    if finding.code != "HG002" or finding.severity is not before.severity:
        return False

    def callers(found: Finding) -> set[tuple[str, str]]:
        calls = found.evidence.get("calls")
        return {(c["path"], c["message"]) for c in calls} if isinstance(calls, list) else set()

    return bool(callers(finding) - callers(before))


def _written_by_the_change(finding: Finding, base: Project) -> bool:
    """A stale override of a hook this change removed, written by the same change (its method
    is not in the base tree): written knowing the hook was gone, on purpose (a test that the
    removed hook is refused, say). ``@override`` on a new method stays a finding."""
    if finding.code != "HG001" or finding.evidence.get("kind") != "diff":
        return False
    cls, _, name = finding.symbol.rpartition(".")
    info = base.classes.get(cls)
    return info is None or name not in info.record.methods


def _changed_paths(base: Sequence[TreeEntry], head: Sequence[TreeEntry]) -> set[str]:
    before = {e.path: e.blob for e in base}
    after = {e.path: e.blob for e in head}
    return {p for p in before.keys() | after.keys() if before.get(p) != after.get(p)}


def _affected(project: Project, changed: set[str]) -> set[str]:
    """Classes defined in ``changed`` files, every subclass of them, and the families of the
    members they call methods on (``self.policy.attention(...)`` with ``policy: Policy``)."""
    roots = [c for c in project.classes.values() if c.file.path in changed]
    for changed_class in list(roots):
        if changed_class.record.narrows:  # ``if isinstance(x, Layer): x.merge(...)``
            for method in changed_class.record.methods.values():
                for call in method.calls:
                    if call.receiver == "typed" and call.explicit_base is not None:
                        held = project.resolve_name(changed_class.file, call.explicit_base,
                                                    scope=changed_class.record.qualname)
                        if isinstance(held, ClassInfo):
                            roots.append(held)
        for info in project.mro(changed_class):  # members may be declared by a base
            if not isinstance(info, ClassInfo):
                continue
            for written in info.record.members.values():
                held = project.resolve_name(info.file, written.removesuffix("()"),
                                            scope=info.record.qualname)
                if isinstance(held, ClassInfo):
                    roots.append(held)
    affected = {c.fq for c in roots}
    below: set[str] = set()  # found as a descendant: its own descendants are in already
    for root in {c.fq: c for c in roots}.values():  # (a base many members name: once)
        if root.fq not in below:
            below.update(d.fq for d in project.descendants(root))
    return affected | below


__all__ = [
    "CallChange",
    "GateConfig",
    "GateError",
    "GateResult",
    "gate_config",
    "hook_changes",
    "run_gate",
    "shorten",
    "signature_difference",
]
