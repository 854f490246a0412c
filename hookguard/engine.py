"""One audit of a checkout: discover files, load records, build the model, run the rules."""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import time
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import msgspec

from hookguard import progress
from hookguard.config import Config, ConfigError, load_config
from hookguard.findings import Finding, InputError, Severity
from hookguard.git.repo import Repo
from hookguard.hedges import mark_unloadable, needs_loading
from hookguard.incremental import (
    STATE_VERSION,
    AuditState,
    affected_classes,
    class_of,
    decode_state,
    encode_state,
    mentions_path,
)
from hookguard.model.cache import CACHE_DIR_NAME, RecordCache, encoded
from hookguard.model.loadable import unloadable
from hookguard.model.loader import LoadStats, content_keys, load_worktree
from hookguard.model.project import ClassInfo, Project
from hookguard.model.records import FileRecord, UndecodableRecord
from hookguard.model.sources import (
    WorktreeSnapshot,
    audited_text,
    linked_folders,
    through_link,
)
from hookguard.rules import ALL_RULES, RuleContext, rule_is_per_class
from hookguard.rules.base import PassedKeyword

if TYPE_CHECKING:
    from hookguard.contracts import HookContract
    from hookguard.git.history import HistoryIndex, HookChange
    from hookguard.upgrade.environment import InstalledPackages


@dataclass
class Options:
    use_cache: bool = True
    history: bool = True
    contracts: tuple[str, ...] = ()
    workers: int | None = None
    select: tuple[str, ...] = ()
    reuse_results: bool = True  # answer an unchanged checkout with the last run's findings
    # Read nothing from the cache and write it anew (set by rebuilding_bad_records): why.
    distrust_cache: str = ""
    # The interpreter (or virtual environment folder) whose installed packages the checkout's
    # bases are read from, as bytes, never imported (hookguard.upgrade.environment); None: none.
    python: str | None = None


@dataclass
class AuditResult:
    root: Path
    findings: list[Finding]
    errors: list[InputError]
    notes: list[str]
    stats: LoadStats
    project: Project | None  # None when the whole result came from the cache
    seconds: float = 0.0
    contracts: list[HookContract] = field(default_factory=list)
    git_logs: int = 0  # ``git log`` runs for history evidence (0 when all came from the cache)
    rechecked: int | None = None  # classes re-checked by an incremental run; None: all were
    own_classes: int | None = None  # the checkout's classes, when installed ones joined the model


@dataclass
class Workspace:
    """Where an audit runs: the repository (if any), its root and its configuration."""

    root: Path
    repo: Repo | None
    config: Config

    @classmethod
    def open(cls, target: Path) -> Workspace:
        target = target.resolve()
        if not target.exists():
            raise ConfigError(str(target), 0, "no such file or directory")
        repo = Repo.discover(target)
        root = repo.root.resolve() if repo else (target if target.is_dir() else target.parent)
        return cls(root, repo, load_config(root))

    def relative(self, path: Path) -> str:
        rel = os.path.relpath(path.resolve(), self.root)
        if rel.startswith(".."):
            raise ConfigError(str(path), 0, f"is outside the checkout at {self.root}")
        return "" if rel == "." else Path(rel).as_posix()

    def cache(self, options: Options) -> RecordCache | None:
        if not options.use_cache:
            return None
        # HOOKGUARD_CACHE_DIR moves it (one folder per checkout under it); an environment
        # variable, not a config key, because the checkout's pyproject.toml is untrusted input.
        moved = os.environ.get("HOOKGUARD_CACHE_DIR")
        if moved:
            folder = hashlib.sha256(str(self.root).encode("utf-8", "surrogateescape"))
            directory = Path(moved).absolute() / f"{self.root.name}-{folder.hexdigest()[:12]}"
            with contextlib.suppress(OSError):  # else the cache notes it cannot write
                directory.parent.mkdir(parents=True, exist_ok=True)
        else:
            directory = self.root / CACHE_DIR_NAME
        cache = RecordCache(directory, self.config.digest(), self.root)
        if options.distrust_cache:
            cache.distrust(options.distrust_cache)
        return cache

    def load_contracts(self, extra: Sequence[str], with_config: bool = True
                       ) -> list[HookContract]:
        """The contracts the configuration names (with ``with_config``: ``contracts/`` when
        it names none), and those in ``extra``, read from disk."""
        paths = [*(self.config.contracts if with_config else ()), *extra]
        if with_config and not paths and any((self.root / "contracts").glob("*.toml")):
            paths = ["contracts"]
        if not paths:
            return []
        from hookguard.contracts import load_contracts

        contracts: list[HookContract] = []
        for path in paths:
            for contract in load_contracts(self.root / path):
                location = Path(contract.path).resolve()
                if location.is_relative_to(self.root):
                    contract = replace(contract, path=location.relative_to(self.root).as_posix())
                contracts.append(contract)
        return contracts


def run_rules(
    project: Project,
    config: Config,
    contracts: list[HookContract],
    history: HistoryIndex | None,
    changes: Sequence[HookChange] = (),
    select: Sequence[str] = (),
    only: Collection[str] | None = None,
    added_calls: Collection[tuple[str, str, str, tuple[object, ...]]] = (),
    passed_keywords: Sequence[PassedKeyword] = (),
    kept_guards: Collection[tuple[str, str, str, str]] = (),
    reviewing: bool = False,
) -> list[Finding]:
    """Run the enabled rules; ``only`` limits the per-class rules to those classes;
    ``added_calls`` and ``passed_keywords`` are what a change under review added, and
    ``reviewing`` says there is one (see ``RuleContext``)."""
    context = _CountedContext if progress.active() else RuleContext
    ctx = context(project, config, contracts, history, list(changes),
                  frozenset(only) if only is not None else None, frozenset(added_calls),
                  tuple(passed_keywords), frozenset(kept_guards), reviewing)
    findings: list[Finding] = []
    for rule_class in ALL_RULES:
        if select and rule_class.name not in select and rule_class.code not in select:
            continue
        if not config.rule_enabled(rule_class.name, rule_class.code):
            continue
        level = config.severity_for(rule_class.name, rule_class.code, "")
        if level == "off":
            continue
        with progress.phase(rule_class.name):
            for finding in rule_class().check(ctx):
                if level in ("error", "warning"):
                    finding.severity = Severity(level)
                findings.append(finding)
    return sorted(findings, key=Finding.sort_key)


class _CountedContext(RuleContext):
    """A rule context that counts the classes a rule has checked, for the progress display
    (used only while it is shown)."""

    def classes(self) -> Iterator[ClassInfo]:
        infos = list(super().classes())
        progress.start("classes", total=len(infos))
        for info in infos:
            yield info
            progress.advance("classes")


def input_errors(project: Project) -> list[InputError]:
    return sorted(
        (InputError(e.path, e.line, e.message) for e in project.errors),
        key=lambda e: (e.path, e.line),
    )


_Result = TypeVar("_Result")


def rebuilding_bad_records(run: Callable[[Options], _Result], options: Options) -> _Result:
    """``run(options)``; where a cached record passed the cache's checks and still does not
    decode (:class:`UndecodableRecord`, met whenever a rule first reads it), ``run`` again on
    a cache it reads nothing from: a cache can make a run faster, never different."""
    try:
        return run(options)
    except UndecodableRecord as exc:
        if not options.use_cache or options.distrust_cache:
            raise
        return run(replace(options, distrust_cache=f"holds a record that does not decode ({exc})"))


def audit(targets: Sequence[Path], options: Options | None = None) -> AuditResult:
    """Audit the checkout containing ``targets``; report findings under ``targets``."""
    return rebuilding_bad_records(lambda o: _audit(targets, o), options or Options())


def _audit(targets: Sequence[Path], options: Options) -> AuditResult:
    started = time.perf_counter()
    targets = list(targets) or [Path.cwd()]
    workspace = Workspace.open(targets[0])
    config = workspace.config
    scopes = [workspace.relative(t) for t in targets]
    notes: list[str] = []
    cache = workspace.cache(options)
    snapshot = WorktreeSnapshot(workspace.root, workspace.repo, config)
    paths = snapshot.paths()
    with progress.phase("reading files"):
        keys = content_keys(workspace.root, paths, cache, config.max_file_size)
    contracts = workspace.load_contracts(options.contracts)
    use_history = options.history and config.history
    installed = _installed(options, workspace)
    inputs = own_inputs = _inputs_digest(workspace, contracts, use_history, options)
    if installed is not None:  # as the last run read them (their files unchanged), or new
        inputs = _digest(own_inputs, installed.fingerprint(installed.last_reads(cache)))
    result_key = _result_key(keys, inputs, scopes)
    if cache is not None and options.reuse_results:
        stored = _decode_result(cache.get_result(result_key))
        if stored is not None:
            findings, errors, notes = stored
            cache.save()
            return AuditResult(
                root=workspace.root, findings=findings, errors=errors,
                notes=[*notes, *cache.warnings], stats=LoadStats(files=len(paths),
                                                                 cached=len(paths)),
                project=None, seconds=time.perf_counter() - started, contracts=contracts,
                rechecked=0,
            )
    history = None
    if use_history:
        history, note = open_history(workspace.repo, cache, config.max_file_size)
        if note:
            notes.append(note)
    try:  # (history is asked by the rules, and by nothing after them)
        # A cold run: git walks history beside the parse, the model and the rules, and the
        # files are parsed in the walk's worker processes (started before git's reader).
        pool = history.prefetch(options.workers) if history is not None else None
        records, stats = load_worktree(
            workspace.root, paths, cache, config.max_file_size, options.workers, keys, pool
        )
        with progress.phase("building the model"):
            project = checkout = Project.build(records, dict(config.module_aliases))
        own: frozenset[str] | None = None  # the classes to report on (None: all)
        if installed is not None:
            with progress.phase("reading installed packages"):
                project, own = installed.extend(checkout, records, dict(config.module_aliases))
            installed.remember_reads(cache)
            notes.extend(installed.notes)
            read_now = _digest(own_inputs, installed.fingerprint())
            if read_now != inputs:  # this run read other installed files than the last one
                inputs = read_now
                result_key = _result_key(keys, inputs, scopes)
        stored_state = cache.get_state() if cache is not None else None
        state = decode_state(stored_state) if stored_state is not None else None
        rerun = None
        if isinstance(state, AuditState) and state.version == STATE_VERSION and (
            state.inputs == inputs
        ):
            assert cache is not None
            rerun = _affected_since(state, project, keys, cache, _names_in(contracts))
        only = rerun if own is None else own if rerun is None else own & rerun
        findings = run_rules(project, config, contracts, history, select=options.select,
                             only=only)
        if installed is not None:
            findings = installed.translate(findings)
    finally:
        if history is not None:
            history.close()  # (a walk prefetched and never asked for: its git stops)
    history_notes = history.errors if history is not None else []
    if rerun is not None:
        assert isinstance(state, AuditState)
        findings = _merge(state, findings, rerun)
        # What history could not answer for the classes not re-checked still holds.
        history_notes = list(dict.fromkeys([*state.history_notes, *history_notes]))
    notes.extend(history_notes)
    if cache is not None:
        state_now = _state_of(inputs, keys, findings, history_notes)
        cache.put_state(encoded(lambda: encode_state(state_now)))
    if use_history and workspace.repo is not None:  # (after the state: asked afresh each run)
        findings = mark_unloadable(findings, unloadable(
            checkout, needs_loading(findings), workspace.repo.deleted_module,
            workspace.repo.removed_definition,
            lambda record: audited_text(workspace.root, record.path, record.content_key)))
    findings = once_per_file(workspace.root, [f for f in findings if in_scope(f.path, scopes)])
    errors = [e for e in input_errors(checkout) if in_scope(e.path, scopes)]
    if cache is not None:
        result = (findings, errors, list(notes))
        cache.put_result(result_key, encoded(lambda: msgspec.msgpack.encode(result)))
        cache.save()
        notes.extend(cache.warnings)
    return AuditResult(
        root=workspace.root,
        findings=findings,
        errors=errors,
        notes=notes,
        stats=stats,
        project=project,
        seconds=time.perf_counter() - started,
        contracts=contracts,
        git_logs=history.git_logs if history is not None else 0,
        rechecked=len(rerun) if rerun is not None else None,
        own_classes=len(own) if own is not None else None,
    )


def _installed(options: Options, workspace: Workspace) -> InstalledPackages | None:
    """The installed packages ``--python`` (or the active virtual environment) names, or
    None; a bad path is a usage error."""
    if options.python is None:
        return None
    from hookguard.upgrade.environment import open_installed

    return open_installed(options.python, workspace.root, workspace.config.max_file_size,
                          options.use_cache)


def _digest(*parts: str) -> str:
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()


_RESULT_DECODER = msgspec.msgpack.Decoder(tuple[list[Finding], list[InputError], list[str]])


def _decode_result(data: bytes | None) -> tuple[list[Finding], list[InputError], list[str]] | None:
    """The stored result of an audit, or None where none is stored (or the bytes are not one)."""
    if data is None:
        return None
    try:
        return _RESULT_DECODER.decode(data)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None


def _result_key(keys: dict[str, str | OSError], inputs: str, scopes: Sequence[str]) -> str:
    """A digest of everything an audit's result depends on: the files, the other inputs
    (:func:`_inputs_digest`) and the paths reported on."""
    digest = hashlib.sha256()
    for path, key in keys.items():
        line = f"{path}\0{key if isinstance(key, str) else 'unreadable'}\n"
        digest.update(line.encode("utf-8", "surrogateescape"))  # non-UTF-8 file names
    digest.update(inputs.encode())
    digest.update(repr(tuple(scopes)).encode())
    return digest.hexdigest()


def _inputs_digest(
    workspace: Workspace, contracts: list[HookContract], use_history: bool, options: Options
) -> str:
    """A digest of what findings depend on besides the files: config, contracts, the history
    git shows (HEAD, shallow boundary), options."""
    history = ""
    if use_history and workspace.repo is not None:
        history = workspace.repo.history_state()
    text = repr((workspace.config, contracts, history, options.select, use_history))
    return hashlib.sha256(text.encode()).hexdigest()


def _names_in(contracts: list[HookContract]) -> frozenset[str]:
    """Every identifier the contracts mention (hooks, fields, consumers, conditions, ...)."""
    return frozenset(re.findall(r"[A-Za-z_]\w*", repr(contracts))) if contracts else frozenset()


def _affected_since(
    state: AuditState,
    project: Project,
    keys: dict[str, str | OSError],
    cache: RecordCache,
    contract_names: frozenset[str],
) -> set[str] | None:
    """The classes to re-check since the model ``state`` describes, or None: all of them."""
    current = {p: k for p, k in keys.items() if isinstance(k, str)}
    if current.keys() != state.keys.keys():
        return None  # a file appeared, disappeared or became (un)readable
    before: dict[str, FileRecord] = {}
    after: dict[str, FileRecord] = {}
    for path, key in current.items():
        if key == state.keys[path]:
            continue
        record = project.files[path]
        old = cache.get((state.keys[path], path, record.module))
        if old is None:
            return None
        before[path], after[path] = old, record
    affected = affected_classes(project, before, after, contract_names)
    if affected is not None and before:
        affected.update(fq for fq, found in state.by_class.items()
                        if any(mentions_path(f, before.keys()) for f in found))
    return affected


def _merge(state: AuditState, fresh: list[Finding], rerun: set[str]) -> list[Finding]:
    """The last findings of the classes not re-checked, and the fresh ones."""
    kept = [f for fq, found in state.by_class.items() if fq not in rerun for f in found]
    return sorted([*kept, *fresh], key=Finding.sort_key)


def _state_of(
    inputs: str, keys: dict[str, str | OSError], findings: list[Finding], history_notes: list[str]
) -> AuditState:
    state = AuditState(inputs, {p: k for p, k in keys.items() if isinstance(k, str)},
                       history_notes=history_notes)
    for finding in findings:
        if rule_is_per_class(finding.code):
            state.by_class.setdefault(class_of(finding), []).append(finding)
    return state


def open_history(
    repo: Repo | None, cache: RecordCache | None = None, max_size: int = 4 * 1024 * 1024
) -> tuple[HistoryIndex | None, str | None]:
    if repo is None:
        return None, "not a git checkout: history evidence skipped"
    if not repo.has_head():
        return None, "the repository has no commits yet: history evidence skipped"
    from hookguard.git.history import HistoryIndex

    history = HistoryIndex(repo, cache, max_size)
    note = (
        "shallow clone: history evidence only covers the commits fetched "
        "(fetch more history, e.g. fetch-depth: 0, for complete evidence)"
        if history.shallow
        else None
    )
    return history, note


def once_per_file(root: Path, findings: list[Finding]) -> list[Finding]:
    """``findings`` less those read through a link to a folder of the checkout that the same
    rule reports at the same place of the real file: Limnoria's ``supybot -> src`` is read
    twice, so that ``import supybot.conf`` resolves, but each finding is one (first contact,
    round 19)."""
    linked = linked_folders(os.fspath(root), {f.path for f in findings})
    if not linked:
        return findings
    top = os.path.realpath(root)
    at = {(f.code, f.path, f.line, f.column) for f in findings}

    def twin(finding: Finding) -> bool:
        if not through_link(finding.path, linked):
            return False
        real = os.path.relpath(os.path.realpath(os.path.join(root, finding.path)), top)
        return (finding.code, Path(real).as_posix(), finding.line, finding.column) in at

    return [f for f in findings if not twin(f)]


def in_scope(path: str, scopes: Sequence[str]) -> bool:
    return any(not s or path == s or path.startswith(s + "/") for s in scopes)


__all__ = ["AuditResult", "Options", "Workspace", "audit", "run_rules"]
