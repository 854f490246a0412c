"""``hookguard upgrade``: the checkout's overrides that a package upgrade breaks.

Both versions of the package are read as bytes (:mod:`hookguard.upgrade.sources`), parsed
lazily with hookguard's own extractor (:mod:`hookguard.upgrade.package`), and each is put
beside the checkout in one model, as if it were part of it: ``base`` (the checkout with the old
version) and ``head`` (with the new one). Then the upgrade is a change like the ones ``check``
gates: the package's hook changes (:mod:`hookguard.upgrade.changes`) are the evidence, the
rules HG001 and HG002 run on both models for the checkout's classes whose line reaches a class
of the package, and a finding the new version brings (not in ``base``, or a call ``base`` did
not make) is reported, at the override, with the framework's call site in the new version as
evidence, and evidence kind ``upgrade``. The package's own classes are never reported on.

What is an error (exit 1), and nothing else is:

HG002, new arguments (``unexpected keyword``, surplus positionals, a required parameter the
call does not pass):

1. a call ``self.hook(...)`` or ``cls.hook(...)`` in a method of a package class in the
   override's MRO, in the new version, that the override cannot bind as CPython would
   (:func:`hookguard.model.binding.bind`);
2. from a caller whose calls the override could take in the old version: a caller that failed
   for it in the old version too is no news, whatever it passes now (an HG002 finding of the
   old version for the same class and hook names its callers), and a finding with no new
   caller is not reported;
3. HG002's own conditions for a proof hold (``docs/design.md``, "What an error proves"): every
   class between the override and the caller is known (a base outside both the checkout and
   the package that may define the hook makes it a warning), the caller runs for the class
   (not replaced without ``super()``, reachable), it is no test double, no decorator that may
   wrap the override, no other call shape in the caller fits;
4. and no shim (:mod:`hookguard.upgrade.shims`): the caller's function checks no signature of
   the hook before the call, no ``if``/``and`` around the call tests such a check (inline, or
   kept in a name, attribute or helper of the caller's file), the call is in no ``try`` that
   catches ``TypeError``, and no function of the caller's file checks the hook's signature and
   assigns the hook (an adapter). With a shim it is a warning that the shim will go; also when
   the caller picks the call shape by such a check (``if "kw" in signature(self.hook)
   .parameters: self.hook(..., kw=x) else: self.hook(...)``), and for a keyword passed through
   ``**kwargs`` only where such a check found it accepted.

HG002, the checkout's own ``super().hook(...)`` that the new version's hook cannot accept (a
parameter removed, a required one added): an error on the same terms.

HG001, a hook that no longer runs:

1. ``renamed`` / ``removed``: a package class in the override's MRO defined the hook in the
   old version and its line called it on ``self`` (or the package dropped a dispatch of it by
   name); in the new version no class of that MRO defines it (moved up is no change), and its
   line does not call it on ``self`` at all, not even behind ``hasattr`` (that is a deprecation
   shim: a warning that it will go); ``moved``: the hook left the override's bases;
2. ``uncalled``: the package still defines it, its line called it on ``self`` in the old
   version, and in the new version no class of the package calls it on ``self`` and no file of
   the new version names it (each file is searched as bytes) but by its ``def`` and its own
   file's ``self.`` uses; ``undispatched``: now called as ``Class.hook(...)`` only;
3. HG001's own conditions (``docs/design.md``): the checkout does not call the name itself
   (``self.``, ``getattr``, a computed name, ``obj.name`` where no other class defines it), no
   base outside both the checkout and the package may define it, the class did not take the
   new name; every file of the new version that holds the name is parsed, so a lookup of it by
   name anywhere in the package makes it a warning.

Everything else the upgrade changes is a warning that says why, a note, or nothing.
"""

from __future__ import annotations

import dataclasses
import os
import re
import time
from collections.abc import Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from hookguard import progress
from hookguard.config import Config
from hookguard.engine import Options, Workspace, input_errors, run_rules
from hookguard.errors import UsageError
from hookguard.findings import Finding, InputError, Location, Severity
from hookguard.gate import (
    KeywordGain,
    added_calls,
    kept_guards,
    keyword_gains,
    keywords_passed,
)
from hookguard.git.changes import HookChange
from hookguard.model.binding import BindResult, bind
from hookguard.model.cache import RecordCache
from hookguard.model.loader import LoadStats, content_keys, load_worktree
from hookguard.model.project import ClassInfo, External, Project
from hookguard.model.records import FileRecord, MethodKind, MethodRecord, ParamKind
from hookguard.model.sources import WorktreeSnapshot, blob_sha
from hookguard.model.untyped_calls import KeywordUse, keyword_uses
from hookguard.rules.base import (
    PassedKeyword,
    call_shape,
    is_dunder,
    is_test_double,
    is_test_file,
    never_collected,
)
from hookguard.upgrade.changes import (
    PackageChange,
    lost_hooks,
    moved_classes,
    package_changes,
)
from hookguard.upgrade.package import PackageVersion, resolve_dotted
from hookguard.upgrade.shims import KeywordAdapter, Shim, ShimFinder, keyword_adapters
from hookguard.upgrade.sources import Distribution, Locator, canonical_version, parse_spec

RULES = ("HG001", "HG002")
_ROUNDS = 4  # of "parse every file that names a changed hook, and derive the changes again"
_SELF = ("self", "cls")
_NOTES = 12  # hook changes listed as notes (all are in the JSON output)


@dataclass
class UpgradeResult:
    root: Path
    name: str
    old: Distribution
    new: Distribution
    findings: list[Finding]
    errors: list[InputError]
    notes: list[str]
    changes: list[PackageChange] = field(default_factory=list)
    stats: LoadStats = field(default_factory=LoadStats)
    classes: int = 0  # the checkout's
    subclasses: list[str] = field(default_factory=list)  # the checkout's classes checked
    seconds: float = 0.0

    def to_json(self) -> dict[str, object]:
        return {
            "package": self.name,
            "from": {"version": self.old.version, "source": self.old.origin},
            "to": {"version": self.new.version, "source": self.new.origin},
            "subclasses": self.subclasses,
            "changes": [c.to_json() for c in self.changes],
        }


def find_versions(locator: Locator, version: str, from_version: str | None
                  ) -> tuple[Distribution, Distribution]:
    """(the version upgraded from, the one upgraded to)."""
    if from_version is not None:
        if canonical_version(from_version) == canonical_version(version):
            raise UsageError(f"nothing to compare: --from {from_version} is {version}")
        locator.check_sources([from_version, version])
        old = locator.find(from_version)
    else:
        old = locator.find_installed()
        if canonical_version(old.version) == canonical_version(version):
            raise UsageError(f"{old.label()} is the installed version: give the version "
                             "upgraded from with --from VERSION")
        locator.check_sources([old.version, version])
    new = locator.find(version)
    for dist in (old, new):
        if not dist.files:
            raise UsageError(f"{dist.label()} ({dist.origin}): no Python files of its import "
                             "packages in it")
    return old, new


def run_upgrade(
    target: Path,
    spec: str,
    from_version: str | None = None,
    sources: Sequence[Path] = (),
    python: str | None = None,
    download: bool = False,
    options: Options | None = None,
) -> UpgradeResult:
    started = time.perf_counter()
    options = options or Options()
    name, version = parse_spec(spec)
    workspace = Workspace.open(target)
    config = workspace.config
    # The package's versions: their wheels' listings, records and shim answers are cached
    # outside the checkout, as an audit's installed packages are (``sources.cache_folder``).
    locator = Locator(name, sources, python, download, workspace.root, config.max_file_size,
                      use_cache=options.use_cache)
    with progress.phase("reading the package"):
        old, new = find_versions(locator, version, from_version)
    notes: list[str] = []
    # The checkout, read as ``audit`` reads it; its records are cached only where
    # HOOKGUARD_CACHE_DIR puts the cache, outside the checkout: this command writes nothing
    # into it.
    cache = workspace.cache(options) if _cache_outside(workspace.root) else None
    snapshot = WorktreeSnapshot(workspace.root, workspace.repo, config)
    paths = snapshot.paths()
    with progress.phase("reading files"):
        keys = content_keys(workspace.root, paths, cache, config.max_file_size)
    records, stats = load_worktree(workspace.root, paths, cache, config.max_file_size,
                                   options.workers, keys)
    if cache is not None:
        cache.save()
        notes.extend(cache.warnings)
    result = check_versions(workspace.root, config, records, name, old, new, started,
                            (locator.cache(old.version), locator.cache(new.version)))
    locator.save_caches()
    result.stats = stats
    result.notes[:0] = [*notes, *locator.notes]
    return result


def check_versions(root: Path, config: Config, records: Sequence[FileRecord], name: str,
                   old: Distribution, new: Distribution, started: float | None = None,
                   caches: tuple[RecordCache | None, RecordCache | None] = (None, None)
                   ) -> UpgradeResult:
    """The upgrade of ``name`` from ``old`` to ``new``, for the checkout whose Python files
    are ``records`` (read as ``config`` says): what ``upgrade`` reports once both versions
    are found, and what ``check --base`` runs for a dependency the change moves. ``caches``:
    the package caches of ``old`` and ``new`` (records and shim answers), or None."""
    started = time.perf_counter() if started is None else started
    notes: list[str] = []
    tops = set(old.tops) | set(new.tops)
    own = [r for r in records if not _is_copy(r, tops)]
    if len(own) < len(records):
        notes.append(f"the checkout holds its own copy of {', '.join(sorted(tops))} "
                     f"({len(records) - len(own)} files): the package's versions are used")
    aliases = dict(config.module_aliases)
    with progress.phase("building the model"):
        checkout = Project.build(own, aliases)
    result = UpgradeResult(root, name, old, new, [], input_errors(checkout), notes,
                           classes=len(checkout.classes))
    names = sorted({node.name for info in checkout.classes.values()
                    for node in checkout.mro(info)
                    if isinstance(node, External) and node.name.split(".")[0] in tops})
    if not names:
        notes.append(f"no class in the checkout subclasses a class of {name}")
        result.seconds = time.perf_counter() - started
        return result
    with progress.phase("reading the package"):
        upgrade = _Upgrade(name, old, new, own, aliases, names, caches)
        upgrade.derive()
    for read in (upgrade.old, upgrade.new):
        broken = sorted((r.path, r.error) for r in read.records.values() if r.error)
        for path, error in broken[:3]:
            notes.append(f"{read.dist.label()}: {path} was not analysed ({error})")
        if len(broken) > 3:
            notes.append(f"{read.dist.label()}: and {len(broken) - 3} more files not analysed")
    own_paths = {r.path for r in own}
    scope = upgrade.scope(own_paths)
    result.subclasses = sorted(scope)
    result.changes = upgrade.changes
    notes.extend(upgrade.missing_bases(checkout))
    if not scope:
        notes.append(f"no class in the checkout reaches a class of {name} "
                     "(its bases do not resolve in either version)")
    else:
        with progress.phase("checking overrides"):
            result.findings = upgrade.findings(config, scope, own)
        notes.extend(upgrade.change_notes(scope))
    result.seconds = time.perf_counter() - started
    return result


def _cache_outside(root: Path) -> bool:
    moved = os.environ.get("HOOKGUARD_CACHE_DIR")
    return moved is not None and moved != "" and not Path(moved).resolve().is_relative_to(
        root.resolve())


def _is_copy(record: FileRecord, tops: Collection[str]) -> bool:
    """A checkout file at the root of a package the upgrade reads (the checkout is that
    package, or holds a copy of it at its root): the package's versions stand in for it."""
    top = record.module.split(".")[0]
    first = record.path.split("/")[0]
    return top in tops and (first == top or first == f"{top}.py")


class _Upgrade:
    """The two models, the package's changes, and the findings derived from them."""

    def __init__(self, name: str, old: Distribution, new: Distribution,
                 own: list[FileRecord], aliases: dict[str, str], names: Sequence[str],
                 caches: tuple[RecordCache | None, RecordCache | None] = (None, None)) -> None:
        self.name = name
        self.old_dist, self.new_dist = old, new
        self.own = own
        self.aliases = aliases
        self.names = names
        self.moved: dict[str, ClassInfo] = {}
        memo: dict[tuple[str, str], FileRecord] = {}
        self.old = PackageVersion(old, memo, caches[0])
        self.new = PackageVersion(new, memo, caches[1])
        for version in (self.old, self.new):
            version.close(names)
        self._share()
        self.base = self.head = Project(files={})
        self.lost: list[HookChange] = []
        self.uncalled: set[tuple[str, str]] = set()
        self.changes: list[PackageChange] = []
        self.shims = ShimFinder(new.files, caches[1], new.blobs)
        self.old_shims = ShimFinder(old.files, caches[0], old.blobs)
        self._occurs: dict[str, set[str]] = {}
        self._package: set[str] | None = None
        self._adapters: dict[str, KeywordAdapter | None] = {}

    @property
    def package(self) -> set[str]:
        """The package's files parsed (both versions hold the same: :meth:`_share`)."""
        if self._package is None:
            self._package = set(self.old.records) | set(self.new.records)
        return self._package

    def _share(self) -> None:
        """Each version parses what the other one did: both models hold the same files."""
        self.old.load(self.new.records)
        self.new.load(self.old.records)

    def _build(self) -> None:
        self._package = None
        self.base = Project.build([*self.own, *self.old.records.values()], self.aliases)
        self.head = Project.build([*self.own, *self.new.records.values()], self.aliases)

    def _mentions(self, name: str, own_path: str) -> bool:
        if name not in self._occurs:
            self._occurs.update(self.new.occurrences([name]))
        if self._occurs[name] - {own_path}:
            return True
        record = self.head.files.get(own_path)
        return record is not None and (name in record.attr_refs or name in record.string_refs
                                       or name in record.literals)

    def derive(self) -> None:
        """Build both models and derive the hook changes; parse every file of either version
        that holds the name of a hook that changed, and derive them again, until none is
        left (what the package says about the name anywhere is part of the proof)."""
        for round_ in range(_ROUNDS):
            self._build()
            package = self.package
            changed = {p for p in package
                       if self.old.records.get(p) is not self.new.records.get(p)}
            self.moved = moved_classes(self.base, self.head, self.names, package)
            self.lost, self.uncalled = lost_hooks(self.base, self.head, package, changed,
                                                  self._mentions, self.moved)
            hooks = {c.old for c in self.lost} | {c.new for c in self.lost if c.new}
            # A hook the checkout overrides that the new version taught a keyword: where the
            # package passes it is part of the proof (``_passed_keywords``).
            hooks |= self._taught().keys()
            wanted: set[str] = set()
            for version in (self.old, self.new):
                for found in version.occurrences(hooks).values():
                    wanted |= found
            if round_ == _ROUNDS - 1 or not (self.old.load(wanted) | self.new.load(wanted)):
                break
            self._share()
        self.changes = package_changes(self.base, self.head, self.package, self.lost,
                                       self.uncalled, self.moved)

    def scope(self, own_paths: Collection[str]) -> set[str]:
        """The checkout's classes whose line reaches a class of the package (either version)."""
        package = self.package

        def reaches(project: Project, info: ClassInfo | None) -> bool:
            return info is not None and any(isinstance(n, ClassInfo) and n.file.path in package
                                            for n in project.mro(info))

        return {fq for fq, info in self.head.classes.items() if info.file.path in own_paths
                and (reaches(self.head, info) or reaches(self.base, self.base.classes.get(fq)))}

    def missing_bases(self, checkout: Project) -> list[str]:
        """Notes for the checkout's bases that the old version defines and the new one does
        not (or not where the checkout imports them from)."""
        old_project, new_project = self.old.project(), self.new.project()
        tops = set(self.old_dist.tops) | set(self.new_dist.tops)
        notes: list[str] = []
        seen: set[str] = set()
        for info in checkout.classes.values():
            for base in checkout.bases(info):
                if not isinstance(base, External) or base.name.split(".")[0] not in tops or (
                        base.name in seen):
                    continue
                seen.add(base.name)
                was = resolve_dotted(old_project, base.name)
                now = resolve_dotted(new_project, base.name)
                if isinstance(was, ClassInfo) and not isinstance(now, ClassInfo):
                    notes.append(
                        f"{info.name} ({info.file.path}:{info.record.line}) subclasses "
                        f"{base.name}, which {self.new_dist.label()} does not define where "
                        f"{self.old_dist.version} did ({was.file.path}): check that it still "
                        "imports")
        return notes

    # -- findings ---------------------------------------------------------------------------
    def findings(self, config: Config, scope: set[str], own: list[FileRecord]
                 ) -> list[Finding]:
        before = run_rules(self.base, config, [], None, select=RULES, only=scope, reviewing=True)
        after = run_rules(self.head, config, [], None, self.lost, select=RULES,
                          added_calls=added_calls(self.base, self.head),
                          kept_guards=kept_guards(self.base, self.head),
                          passed_keywords=self._passed_keywords(), only=scope, reviewing=True)
        known = {f.fingerprint: f for f in before}
        attributes = frozenset().union(*(r.attr_refs for r in own if not is_test_file(r.path)))
        found: list[Finding] = []
        for finding in after:
            earlier = known.get(finding.fingerprint)
            if not _new(finding, earlier):
                continue
            made = self._translate(finding, attributes, earlier)
            if made is not None:
                found.append(made)
        reported = {f.symbol for f in found}
        for extra in (*self._dropped_adapters(scope), *self._shimmed_calls(scope),
                      *self._keyword_checks(scope), *self._deprecated(scope)):
            if extra.symbol not in reported:
                reported.add(extra.symbol)
                found.append(extra)
        return sorted(found, key=Finding.sort_key)

    def _passed_keywords(self) -> list[PassedKeyword]:
        """Keywords the new version passes, through receivers the model does not type, to a
        hook the same version taught them (click 8.2: ``self.type.get_metavar(param=self,
        ctx=ctx)``, with ``ParamType.get_metavar`` given ``ctx``): the same proof ``check``
        takes from a change (``gate.passed_keywords``), read from the two versions' files
        that name such a hook."""
        gains = self._taught()
        if not gains:
            return []
        where = self.new.occurrences(gains.keys())
        paths = sorted(p for p in set().union(*where.values()) if p in self.package)

        def old_bytes(path: str) -> bytes:
            data = self.old_dist.files.get(path)
            return data if isinstance(data, bytes) else b""

        def new_bytes(path: str) -> bytes:
            data = self.new_dist.files.get(path)
            return data if isinstance(data, bytes) else b""

        version = self.new

        def uses_in(data: bytes, path: str, methods: Collection[str]) -> list[KeywordUse]:
            def read() -> list[dict[str, object]]:
                return [dataclasses.asdict(u) for u in keyword_uses(data, path, methods)]

            kept = version.answer(f"keyword-uses:{path}:{','.join(sorted(methods))}", read,
                                  content=blob_sha(data))
            try:
                return [KeywordUse(**u) for u in kept] if isinstance(kept, list) else []
            except TypeError:  # pragma: no cover - signed: only a bug writes another shape
                return keyword_uses(data, path, methods)

        return keywords_passed(paths, old_bytes, new_bytes, gains, self.head, uses_in)

    def _taught(self) -> dict[str, list[KeywordGain]]:
        """The keywords the new version taught hooks that the checkout's classes override,
        where the taught class is in the overriding class's line (``keyword_gains``, kept to
        what can concern the checkout: a version teaches hundreds of ``forward`` methods)."""
        gains = keyword_gains(self.base, self.head)
        wanted: dict[str, list[KeywordGain]] = {}
        for record in self.own:
            for cls in record.classes:
                fq = f"{record.module}.{cls.qualname}" if record.module else cls.qualname
                info = self.head.classes.get(fq)
                if info is None:
                    continue
                line = {n.fq for n in self.head.mro(info) if isinstance(n, ClassInfo)}
                for name in cls.methods:
                    for gain in gains.get(name, ()):
                        if gain.owner in line and not is_dunder(name):
                            wanted.setdefault(name, []).append(gain)
        return {name: list(dict.fromkeys(found)) for name, found in wanted.items()}

    def _evidence(self, change: str, hook: str, extra: dict[str, object]) -> dict[str, object]:
        return {"kind": "upgrade", "change": change, "package": self.name,
                "from": self.old_dist.version, "to": self.new_dist.version, "hook": hook,
                **extra}

    def _class_of(self, finding: Finding) -> ClassInfo | None:
        return self.head.classes.get(finding.symbol.rpartition(".")[0])

    def _checkout_only(self, related: Iterable[Location]) -> list[Location]:
        package = self.package
        return [r for r in related if r.path not in package]

    def _translate(self, finding: Finding, attributes: frozenset[str],
                   earlier: Finding | None) -> Finding | None:
        info = self._class_of(finding)
        if info is None:
            return None
        evidence = finding.evidence
        kind = str(evidence.get("kind", ""))
        method = finding.symbol.rpartition(".")[2]
        ver = self.new_dist.version
        reason = _warning_reason(finding)
        if finding.code == "HG002" and kind == "proven":
            return self._new_arguments(finding, info, method, reason, earlier)
        if finding.code == "HG002" and kind == "passed-keyword":
            return self._passed_keyword(finding, info, method)
        if finding.code == "HG001" and kind in ("diff", "undispatched"):
            old = str(evidence.get("old") or method)
            new = evidence.get("new")
            ancestor = str(evidence.get("ancestor") or "")
            change = next((c for c in self.lost if c.class_fq == ancestor and c.old == old),
                          None)
            owner_fq = (change.owner if change is not None and change.owner else ancestor)
            owner = owner_fq.rsplit(".", 1)[-1]
            if kind == "undispatched":
                uncalled = (ancestor, old) in self.uncalled
                what = "no longer calls" if uncalled else (
                    f"calls as {owner}.{old}(...), not through self")
                headline = f"{owner}.{old}, which {ver} {what}: this override never runs"
                fix = "move its logic to a hook the new version calls"
                label = "uncalled" if uncalled else "undispatched"
                if old in attributes and reason is None:
                    reason = f"'{old}' is used as an attribute in the checkout, which may call it"
            elif change is not None and change.owner:
                headline = (f"{owner}.{old}, which is no longer in its bases in {ver}: this "
                            "override never runs")
                fix, label = str(evidence.get("fix", "")), "moved"
            elif new:
                headline = f"{owner}.{old}, which {ver} renamed to {new}: this override never runs"
                fix, label = f"rename it to {new}", "renamed"
            else:
                headline = (f"{owner}.{old}, which {ver} removed: nothing calls it any more")
                fix, label = str(evidence.get("fix", "")), "removed"
            severity = Severity.WARNING if reason else Severity.ERROR
            message = f"{info.name}.{method} overrides {headline}"
            if reason:
                message += f" (warning only: {reason})"
            where = self._where(owner_fq, str(new) if new else None)
            details = dict(evidence)
            details.pop("kind", None)
            return _replace(finding, severity, f"{message}; {fix}", self._evidence(
                label, f"{owner_fq}.{old}", {**details, "rule": kind, "fix": fix,
                                             "calls": where}),
                self._checkout_only(finding.related))
        # Other kinds (``super()`` calls the new hook cannot take, structural drift): the
        # rule's message, with the versions.
        calls = [{"path": r.path, "line": r.line, "column": r.column, "message": r.message,
                  "version": ver} for r in finding.related if r.path in self.package]
        details = dict(evidence)
        details.pop("kind", None)
        changed = next((c for c in self.changes if c.kind == "signature" and calls
                        and c.path == calls[0]["path"] and c.hook == finding.hook), None)
        if changed is not None:
            message = (f"{finding.message} ({self.name} {ver}: {changed.describe()}, "
                       f"{changed.path}:{changed.line})")
        else:
            at = f", {calls[0]['path']}:{calls[0]['line']}" if calls else ""
            message = (f"{finding.message} (upgrading {self.name} {self.old_dist.version} to "
                       f"{ver}{at})")
        return _replace(finding, finding.severity, message, self._evidence(
            "signature" if kind == "proven-super" else kind, f"{finding.hook}",
            {**details, "rule": kind, "calls": calls}), self._checkout_only(finding.related))

    def _where(self, owner_fq: str, new: str | None) -> list[dict[str, object]]:
        info = self.head.classes.get(owner_fq)
        target = info.method(new) if info is not None and new else None
        if info is None or target is None:
            return []
        return [{"path": info.file.path, "line": target.def_line, "column": target.col,
                 "message": f"{info.name}.{new}", "version": self.new_dist.version}]

    def _new_arguments(self, finding: Finding, info: ClassInfo, method_name: str,
                       reason: str | None, earlier: Finding | None) -> Finding:
        ver = self.new_dist.version
        evidence = finding.evidence
        before = _call_messages(earlier) if earlier is not None else set()
        calls = [c for c in evidence.get("calls", []) if isinstance(c, dict)
                 and _caller(c) not in before]  # the calls the upgrade brings
        package = self.package
        inside = [c for c in calls if c.get("path") in package]
        shims: list[tuple[dict[str, object], Shim | None]] = [
            (c, self.shims.at_call(str(c["path"]), _int(c.get("line")), _int(c.get("column")),
                                   finding.hook)) for c in inside]
        bare = [c for c, shim in shims if shim is None]
        shimmed = [(c, s) for c, s in shims if s is not None]
        first = bare[0] if bare else inside[0] if inside else calls[0] if calls else {}
        text = str(first.get("message", ""))
        caller, _, problem = text.partition(" calls ")
        problem = problem.partition(": ")[2]
        shown = _problems(problem)
        message = (f"{info.name}.{method_name} cannot accept the call in {caller} "
                   f"({first.get('path')}:{first.get('line')}, {ver}): {shown}")
        severity = finding.severity
        shim_json: dict[str, object] | None = None
        if inside and not bare:
            shim = shimmed[0][1]
            assert shim is not None
            severity = Severity.WARNING
            shim_json = shim.to_json()
            message += (f"; the call does not fail now: {ver} {shim.describe()}, a shim a "
                        "later release may drop")
        elif severity is Severity.ERROR:
            message += "; this raises TypeError at run time"
        missing = [str(n) for n in evidence.get("missing", [])]
        if reason:
            message += f" (warning only: {reason})"
        if missing:
            message += "; add " + ", ".join(f"{n}=None" for n in missing)
        details = dict(evidence)
        details.pop("kind", None)
        shown_calls = [{**c, "version": ver} for c in (bare or inside or calls)]
        return _replace(finding, severity, message, self._evidence(
            "new-arguments", f"{finding.hook}", {**details, "rule": "proven",
                                                 "calls": shown_calls, "shim": shim_json}),
            self._checkout_only(finding.related))

    def _passed_keyword(self, finding: Finding, info: ClassInfo, method_name: str) -> Finding:
        ver = self.new_dist.version
        evidence = finding.evidence
        calls = [c for c in evidence.get("calls", []) if isinstance(c, dict)]
        first = calls[0] if calls else {}
        missing = [str(n) for n in evidence.get("missing", [])]
        keywords = ", ".join(f"{k}=" for k in missing)
        message = (f"{info.name}.{method_name} cannot accept {keywords}, which {ver} passes to "
                   f"{finding.hook}() at {first.get('path')}:{first.get('line')} after teaching "
                   f"the hook to take it; this raises TypeError when that call reaches a "
                   f"{info.name}")
        if finding.severity is Severity.WARNING:
            reason = _warning_reason(finding)
            if reason:
                message += f" (warning only: {reason})"
        if missing:
            message += "; add " + ", ".join(f"{n}=None" for n in missing)
        details = dict(evidence)
        details.pop("kind", None)
        return _replace(finding, finding.severity, message, self._evidence(
            "new-arguments", f"{finding.hook}", {
                **details, "rule": "passed-keyword",
                "calls": [{**c, "version": ver} for c in calls], "shim": None}),
            self._checkout_only(finding.related))

    # -- what the rules do not say: shims and deprecations -----------------------------------
    def _overrides(self, scope: set[str]) -> Iterable[tuple[ClassInfo, MethodRecord]]:
        for fq in sorted(scope):
            info = self.head.classes[fq]
            if is_test_double(self.head, info) or never_collected(self.head, info):
                continue
            for method in info.record.methods.values():
                if not method.suppressed & {"*", "signature-drift", "HG002", "stale-override",
                                            "HG001"}:
                    yield info, method

    def _package_line(self, info: ClassInfo) -> list[ClassInfo]:
        package = self.package
        return [n for n in self.head.ancestors(info)
                if isinstance(n, ClassInfo) and n.file.path in package]

    def _shimmed_calls(self, scope: set[str]) -> Iterator[Finding]:
        """Calls of the new version the override cannot take, that a shim keeps from
        failing, where the rule found none (another call shape of the caller fits)."""
        ver = self.new_dist.version
        for info, method in self._overrides(scope):
            if method.kind is MethodKind.PROPERTY:
                continue
            mro = self.head.mro(info)
            for owner in self._package_line(info):
                old_owner = self.base.classes.get(owner.fq)
                for caller in owner.record.methods.values():
                    definer = next((n for n in mro if isinstance(n, ClassInfo)
                                    and n.defines(caller.name)), None)
                    if definer is not owner:
                        continue  # replaced for this class: it may never run
                    old_caller = old_owner.method(caller.name) if old_owner else None
                    for call in caller.calls:
                        if call.receiver not in _SELF or call.name != method.name:
                            continue
                        result = bind(call, method, unbound=call.receiver == "cls"
                                      and method.kind is MethodKind.PLAIN)
                        if result.ok or (old_caller is not None and any(
                                c.name == call.name and call_shape(c) == call_shape(call)
                                for c in old_caller.calls)):
                            continue
                        shim = self.shims.at_call(owner.file.path, call.line, call.col,
                                                  call.name)
                        if shim is None:
                            continue
                        yield self._shim_finding(
                            info, method, f"{info.name}.{method.name} cannot accept the call "
                            f"in {owner.name}.{caller.name} ({owner.file.path}:{call.line}, "
                            f"{ver}): {_describe(result)}", shim, owner, result.unexpected,
                            call.line)
                        break

    def _keyword_checks(self, scope: set[str]) -> Iterator[Finding]:
        """``"kw" in inspect.signature(self.hook).parameters`` in the new version (and not in
        the old one), where the override does not take ``kw``: passed only to overrides that
        take it; nothing fails until the check goes."""
        for info, method in self._overrides(scope):
            if method.takes_any_keyword:
                continue
            for owner in self._package_line(info):
                checks = self.shims.keyword_checks(owner.file.path, method.name)
                if not checks:
                    continue
                old_owner = self.base.classes.get(owner.fq)
                before = {c.keyword for c in self.old_shims.keyword_checks(
                    old_owner.file.path, method.name)} if old_owner is not None else set()
                for check in checks:
                    if check.scope != owner.record.qualname or check.keyword in before or (
                            check.keyword in method.keyword_names):
                        continue
                    shim = Shim("signature-check", check.path, check.line, check.source)
                    yield self._shim_finding(
                        info, method, f"{info.name}.{method.name} does not take "
                        f"{check.keyword}, which {owner.name} passes to {method.name} only where "
                        f"the override takes it ({check.path}:{check.line}, "
                        f"{self.new_dist.version})", shim, owner, [check.keyword], check.line)
                    break

    def _dropped_adapters(self, scope: set[str]) -> Iterator[Finding]:
        """Overrides that require a parameter the old version passed only to callables that
        take it, and the new version passes to nothing (Django 3.0 dropped
        ``partial(conv, context={})`` from ``SQLCompiler.get_converters``, where
        ``Field.get_db_converters`` hands ``self.from_db_value`` out): the override is called
        without it."""
        old_ver, ver = self.old_dist.version, self.new_dist.version
        for info, method in self._overrides(scope):
            required = [p.name for p in method.bound_params if not p.has_default and p.kind in (
                ParamKind.POSITIONAL_OR_KEYWORD, ParamKind.KEYWORD_ONLY)]
            if not required or method.kind is MethodKind.PROPERTY:
                continue
            line = self._package_line(info)
            # The package hands the method out as a value (``return [self.from_db_value]``):
            # what calls it is the package's code, through the adapter.
            handing = next((n for n in line if method.name in n.record.self_refs), None)
            if handing is None:
                continue
            own = [n.method(method.name) for n in line if n.defines(method.name)]
            for keyword in required:
                if any(m is not None and keyword in m.keyword_names for m in own):
                    continue  # the package's own hook takes it: its callers pass it
                adapter = self._dropped_adapter(keyword)
                if adapter is None:
                    continue
                what = (f"{info.name}.{method.name} requires {keyword}, which {old_ver} passed "
                        f"only to callables that take it ({adapter.function}, {adapter.path}:"
                        f"{adapter.line}: {adapter.source}) and {ver} no longer passes; "
                        f"{handing.name} hands self.{method.name} to its callers, so it is "
                        f"called without {keyword}: this raises TypeError; remove {keyword} "
                        "or give it a default")
                yield Finding(
                    rule="signature-drift", code="HG002", severity=Severity.ERROR,
                    path=info.file.path, line=method.def_line, column=method.col,
                    end_line=method.def_line,
                    end_column=method.col + len(f"def {method.name}"),
                    symbol=f"{info.fq}.{method.name}", hook=method.name, message=what,
                    evidence=self._evidence("dropped-adapter", f"{handing.fq}.{method.name}", {
                        "keyword": keyword, "fixable": False,
                        "reason": "the override must stop requiring the parameter",
                        "calls": [{"path": adapter.path, "line": adapter.line, "column": 1,
                                   "message": adapter.source, "version": old_ver}],
                        "fix": f"remove {keyword}"}),
                )
                break

    def _dropped_adapter(self, keyword: str) -> KeywordAdapter | None:
        """A function of the old version that passed ``keyword`` only to callables taking it,
        still there in the new version without doing so."""
        if keyword in self._adapters:
            return self._adapters[keyword]
        found: KeywordAdapter | None = None
        for adapter in self._adapters_in(self.old, keyword):
            new = self.new_dist.files.get(adapter.path)
            if not isinstance(new, bytes) or not re.search(
                    rb"\bdef\s+" + re.escape(adapter.function.rsplit(".", 1)[-1].encode())
                    + rb"\b", new):
                continue  # moved or gone: nothing shows where its callers went
            if any(a.function == adapter.function
                   for a in _file_adapters(self.new, new, adapter.path, keyword)):
                continue
            found = adapter
            break
        self._adapters[keyword] = found
        return found

    @staticmethod
    def _adapters_in(version: PackageVersion, keyword: str) -> list[KeywordAdapter]:
        """Every keyword adapter for ``keyword`` in ``version``'s files (kept in its cache)."""
        quoted = re.compile(rb"[\"']" + re.escape(keyword.encode()) + rb"[\"']")

        def scan() -> list[dict[str, object]]:
            found: list[dict[str, object]] = []
            for path, data in sorted(version.dist.files.items()):
                if not isinstance(data, bytes) or not quoted.search(data) or (
                        not _INSPECTING.search(data)):
                    continue  # an adapter names the keyword as a string
                found.extend(dataclasses.asdict(a) for a in keyword_adapters(data, path, keyword))
            return found

        return _adapters(version.answer(f"keyword-adapters:{keyword}", scan))

    def _shim_finding(self, info: ClassInfo, method: MethodRecord, what: str, shim: Shim,
                      owner: ClassInfo, missing: Sequence[str], line: int) -> Finding:
        ver = self.new_dist.version
        message = (f"{what}; the call does not fail now: {ver} {shim.describe()}, a shim a "
                   "later release may drop")
        if missing:
            message += "; add " + ", ".join(f"{n}=None" for n in missing)
        return Finding(
            rule="signature-drift", code="HG002", severity=Severity.WARNING,
            path=info.file.path, line=method.def_line, column=method.col,
            end_line=method.def_line, end_column=method.col + len(f"def {method.name}"),
            symbol=f"{info.fq}.{method.name}", hook=method.name, message=message,
            evidence=self._evidence("shim", f"{owner.fq}.{method.name}", {
                "missing": list(missing), "fixable": bool(missing), "shim": shim.to_json(),
                "calls": [{"path": owner.file.path, "line": line, "column": 1,
                           "message": what, "version": ver}],
                "fix": "accept " + ", ".join(missing) if missing else "match the call"}),
        )

    def _deprecated(self, scope: set[str]) -> Iterator[Finding]:
        """Overrides of a hook the new version renamed or removed and still calls, behind a
        deprecation shim (``hasattr``): they run until the shim goes."""
        deprecated = {(c.class_fq, c.hook): c for c in self.changes if c.kind == "deprecated"}
        if not deprecated:
            return
        ver = self.new_dist.version
        for info, method in self._overrides(scope):
            for owner in self._package_line(info):
                change = deprecated.get((owner.fq, method.name))
                if change is None:
                    continue
                if change.new and (info.defines(change.new) or any(
                        isinstance(n, ClassInfo) and n.file.path not in self.package
                        and n.defines(change.new) for n in self.head.mro(info))):
                    break  # already moved to the new name
                verb = f"renamed to {change.new}" if change.new else "removed"
                fix = f"rename it to {change.new}" if change.new else (
                    "move its logic to the hook that replaced it")
                yield Finding(
                    rule="stale-override", code="HG001", severity=Severity.WARNING,
                    path=info.file.path, line=method.def_line, column=method.col,
                    end_line=method.def_line, end_column=method.col + len(f"def {method.name}"),
                    symbol=f"{info.fq}.{method.name}", hook=change.new or method.name,
                    message=(f"{info.name}.{method.name} overrides {owner.name}.{method.name}, "
                             f"which {ver} {verb}; it still runs through a deprecation shim "
                             f"({change.detail} at {change.path}:{change.line}), which a later "
                             f"release will drop; {fix}"),
                    evidence=self._evidence("deprecated", f"{owner.fq}.{method.name}", {
                        "old": method.name, "new": change.new, "ancestor": owner.fq,
                        "fix": fix, "calls": [{"path": change.path, "line": change.line,
                                               "column": 1, "message": change.detail,
                                               "version": ver}]}),
                )
                break

    # -- notes ------------------------------------------------------------------------------
    def change_notes(self, scope: set[str]) -> list[str]:
        """The hook changes that concern the checkout's classes: of a class in their line, to
        a name one of them defines."""
        defined: dict[str, set[str]] = {}
        for fq in scope:
            info = self.head.classes[fq]
            for node in (*self.head.mro(info), *self.base.mro(self.base.classes.get(fq, info))):
                if isinstance(node, ClassInfo):
                    defined.setdefault(node.fq, set()).update(info.record.methods)
        relevant = [c for c in self.changes if c.hook in defined.get(c.class_fq, ())]
        label = self.new_dist.version
        notes = [_shorten(f"{self.name} {label}: {c.describe()} [{c.path}:{c.line}]")
                 for c in relevant[:_NOTES]]
        if len(relevant) > _NOTES:
            notes.append(f"and {len(relevant) - _NOTES} more hook changes that concern the "
                         "checkout's classes (JSON output: upgrade.changes)")
        return notes


def _file_adapters(version: PackageVersion, data: bytes, path: str, keyword: str
                   ) -> list[KeywordAdapter]:
    """The keyword adapters for ``keyword`` in one file of ``version`` (kept in its cache)."""
    return _adapters(version.answer(
        f"keyword-adapters:{path}:{keyword}",
        lambda: [dataclasses.asdict(a) for a in keyword_adapters(data, path, keyword)],
        content=blob_sha(data)))


def _adapters(kept: object) -> list[KeywordAdapter]:
    try:
        return [KeywordAdapter(str(a["keyword"]), str(a["path"]), int(a["line"]),
                               str(a["function"]), str(a["source"]))
                for a in kept] if isinstance(kept, list) else []
    except (KeyError, TypeError, ValueError):  # pragma: no cover - signed: only a bug
        return []


# Words an inspection of a callable's parameters is written with (see ``shims._inspector``):
# a file without one holds no keyword adapter.
_INSPECTING = re.compile(rb"signature|getfullargspec|getargspec|getcallargs|accept|support"
                         rb"|takes?_|has_")


def _new(finding: Finding, before: Finding | None) -> bool:
    """New in the upgrade: no finding like it with the old version, or HG002 with a call the
    old version did not make (compared by caller and problem, not line)."""
    if before is None:
        return True
    if finding.code != "HG002" or finding.severity is not before.severity:
        return False

    return bool(_call_messages(finding) - _call_messages(before))


def _call_messages(found: Finding) -> set[str]:
    """An HG002 finding's failing callers, as ``Class.caller calls hook``: the same in both
    versions whatever the line (a caller that failed before fails for the same override
    whatever it passes now: the upgrade breaks nothing there)."""
    calls = found.evidence.get("calls")
    return {_caller(c) for c in calls if isinstance(c, dict)} if isinstance(
        calls, list) else set()


def _caller(call: dict[str, object]) -> str:
    return str(call.get("message")).partition(": ")[0]


def _warning_reason(finding: Finding) -> str | None:
    """The reason a rule gave for a warning (``(warning only: ...)`` in its message)."""
    if finding.severity is not Severity.WARNING:
        return None
    message = finding.message
    fix = finding.evidence.get("fix")
    if finding.code == "HG001" and isinstance(fix, str) and message.endswith(f"; {fix}"):
        message = message[: -len(fix) - 2]
    start = message.find(" (warning only: ")
    if start < 0:
        return None
    end = message.rfind(")")
    return message[start + len(" (warning only: "): end] if end > start else None


def _problems(described: str) -> str:
    """``unexpected keyword argument 'x'`` -> ``unexpected keyword x``."""
    text = described.replace("unexpected keyword arguments ", "unexpected keywords ")
    text = text.replace("unexpected keyword argument ", "unexpected keyword ")
    return text.replace("'", "")


def _describe(result: BindResult) -> str:
    return _problems(result.describe())


def _int(value: object) -> int:
    return value if isinstance(value, int) else 0


def _shorten(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _replace(finding: Finding, severity: Severity, message: str, evidence: dict[str, object],
             related: list[Location]) -> Finding:
    return Finding(
        rule=finding.rule, code=finding.code, severity=severity, path=finding.path,
        line=finding.line, column=finding.column, symbol=finding.symbol, hook=finding.hook,
        message=message, evidence=evidence, related=related, end_line=finding.end_line,
        end_column=finding.end_column)


__all__ = ["UpgradeResult", "check_versions", "find_versions", "run_upgrade"]
