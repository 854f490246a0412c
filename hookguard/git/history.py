"""History evidence: which methods a class once defined, and which commit removed or renamed them.

Cost is bounded by design: history is read for ancestor *files* (never per candidate method).
One ``git log --raw`` of the whole history (no pathspec: matching one against every tree of a
long history costs more than the walk) follows each file back through its renames; each
version of a file that walk names is read once, and its ``def`` statements of the candidate
names counted under each top-level class (no commit is diffed); then one ``cat-file --batch``
reads the before/after versions of just the commits after which a class has fewer of them,
and those are outlined, and extracted only where the class may have lost the method.
"""

from __future__ import annotations

import os
import re
import secrets
import sys
import threading
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Executor, Future
from dataclasses import dataclass
from queue import SimpleQueue
from typing import TYPE_CHECKING, Protocol, TypeVar

import msgspec

from hookguard import progress
from hookguard.git.blobs import (
    PARALLEL_THRESHOLD,
    BlobJob,
    DefOwners,
    DefScan,
    class_bases,
    class_methods,
    class_segment,
    classes_of,
    close_readers,
    methods_naming,
    newer_grammar_possible,
    outline_of,
    scan_defs,
)
from hookguard.git.changes import (
    HookChange,
    dropped_dispatch,
    enclosing_def,
    forwarded_member_call,
    framework_path,
    pair_renames,
    renamed_dispatch,
)
from hookguard.git.repo import GitError, Repo, split_records
from hookguard.model.extract import parse_quietly
from hookguard.model.records import ClassRecord

if TYPE_CHECKING:
    from concurrent.futures import ProcessPoolExecutor

__all__ = ["HistoryIndex", "HistoryStore", "HookChange", "pair_renames"]

# In a patch: a file's header line, a created file's mode line, or a removed ``def`` line
# (its name); ``[^\S\n]`` is whitespace within the line.
_PATCH_LINE = re.compile(  # each match starts at the newline before the line
    rb"\n(?:(diff --git[^\n]*)|new file mode"
    rb"|-[^\S\n]*(?:async[^\S\n]+)?def[^\S\n]+([A-Za-z_][A-Za-z0-9_]*)[^\S\n]*\()"
)
_BLAME_HEADER = re.compile(rb"^[0-9a-f]{40} \d+ \d+")
# An added line that refuses or deprecates: ``raise ...``, ``warnings.warn(...)``,
# ``rank_zero_deprecation(...)``, ``deprecate(...)``.
_REFUSAL = re.compile(rb"^\+.*(?:\braise\b|warn\w*\(|deprecat\w*\()", re.MULTILINE)
_PAST_CHUNK = 64  # versions read per ``cat-file --batch`` by past_classes
_BLOBS_PER_JOB = 400  # versions read per worker job (see HistoryIndex._read_defs)
# One commit of the walk (``%H%x1f%ct%x1f%P%x1f%s`` after the mark, ``--raw -z``): its header,
# then each change: the old and new objects, status (with a rename's score) and path, or old
# and new paths.
_RECORD_HEAD = re.compile(rb"([0-9a-f]+)\x1f([0-9]*)\x1f([0-9a-f ]*)\x1f([^\0]*)\0")
_RAW_CHANGE = re.compile(
    rb":[0-7]+ [0-7]+ ([0-9a-f]+) ([0-9a-f]+) "
    rb"(?:([RC])([0-9]*)\0([^\0]*)\0|([A-Z])[0-9]*\0)([^\0]*)\0")
_QUOTED = re.compile(rb'"((?:[^"\\]|\\.)*)"')
_ESCAPE = re.compile(rb"\\([0-7]{3}|.)", re.DOTALL)
_ESCAPES = {b"a": b"\a", b"b": b"\b", b"f": b"\f", b"n": b"\n", b"r": b"\r", b"t": b"\t",
            b"v": b"\v"}
# Where a commit's record starts in git's output: 0x1e and a nonce drawn for this process.
# Commit messages, file names and file contents come from the checkout and may hold any
# byte, 0x1e too; none can hold a nonce nobody knew when they were written.
_MARK = "%x1e" + secrets.token_hex(16)
_SEPARATOR = _MARK.replace("%x1e", "\x1e").encode()
_LOG_FORMAT = f"--format={_MARK}%H%x1f%h%x1f%ct%x1f%s"
# The whole-history walk (see HistoryIndex._scan_many): one record per commit.
_WALK = ("log", "--date-order", "-M", "--raw", "-z", "--no-abbrev", "--no-color",
         f"--format={_MARK}%H%x1f%ct%x1f%P%x1f%s")
# How every patch is written, whatever the user's diff settings: what ``_read_patch`` reads.
_PATCH = ("-p", "-U0", "--no-color", "--no-ext-diff", "--src-prefix=a/", "--dst-prefix=b/")


def _called_in_line(classes: dict[str, ClassRecord], qualname: str, name: str) -> bool:
    """Whether a ``self.name`` lookup in that file could reach ``classes[qualname]``'s
    definition: from the class itself, from its bases in the file (a template method calling
    the hook), or from its subclasses in the file that do not define ``name`` again. A sibling
    that calls its own ``name`` proves nothing about this one."""
    own = classes.get(qualname)
    if own is None:
        return False
    by_name = {c.name: c for c in classes.values()}

    def bases(klass: ClassRecord) -> list[ClassRecord]:
        names = (b.rsplit(".", 1)[-1] for b in klass.bases)
        return [by_name[n] for n in names if n in by_name]

    line = {id(own): own}
    pending = [own]
    while pending:  # the class and its ancestors in the file
        for base in bases(pending.pop()):
            if id(base) not in line:
                line[id(base)] = base
                pending.append(base)
    if any(klass.calls_on_self(name) for klass in line.values()):
        return True
    below = {id(own)}
    grew = True
    while grew:  # subclasses in the file that inherit this definition
        grew = False
        for klass in classes.values():
            if id(klass) not in below and name not in klass.methods and any(
                id(b) in below for b in bases(klass)
            ):
                below.add(id(klass))
                grew = True
                if klass.calls_on_self(name):
                    return True
    return False


def _store_key(request: tuple[str, Mapping[str, set[str]], str, bool, str], state: str) -> str:
    """Where the answer to ``request`` is stored. ``state`` is the history it was read from
    (HEAD and the shallow boundary, :meth:`Repo.history_state`): the same file content has
    another history after a commit (the commit that renames a hook leaves the working tree
    as it was), so an answer never outlives the HEAD it was walked from."""
    path, wanted, module, _, content = request
    question = sorted((q, sorted(names)) for q, names in wanted.items())
    return f"lost:{state}:{path}:{content}:{module}:{question}"


_ANSWER_ENCODER = msgspec.msgpack.Encoder()
_ANSWER_DECODER = msgspec.msgpack.Decoder(dict[tuple[str, str], HookChange])


def _encode_answer(answer: dict[tuple[str, str], HookChange]) -> bytes | None:
    """``answer`` for the store, or None where it cannot be held (a path that is not UTF-8)."""
    try:
        return _ANSWER_ENCODER.encode(answer)
    except (TypeError, ValueError, msgspec.EncodeError):
        return None


def _decode_answer(stored: bytes) -> dict[tuple[str, str], HookChange] | None:
    """A stored answer, or None where the bytes are not one (then it is asked again)."""
    try:
        return _ANSWER_DECODER.decode(stored)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None


@dataclass(frozen=True, slots=True)
class _Removal:
    commit: str
    short: str
    subject: str
    when: int
    old_path: str
    new_path: str
    name: str


_In = TypeVar("_In")
_Out = TypeVar("_Out")


class _Workers:
    """The worker processes of one history batch (the versions' reading, then outlining and
    extraction), started on first need and shared: one pool, not one per step."""

    def __init__(self, workers: int | None = None) -> None:
        self.cpus = workers if workers is not None else (os.cpu_count() or 1)
        self.pool: ProcessPoolExecutor | None = None

    def submit(self, function: Callable[[_In], _Out], item: _In) -> Future[_Out]:
        if self.pool is None:
            # (imported here: ``concurrent.futures.process`` brings multiprocessing, pickle
            # and sockets, 40 ms a run that never reads history in parallel would pay)
            import multiprocessing
            from concurrent.futures import ProcessPoolExecutor

            method = "fork" if sys.platform.startswith("linux") else None
            self.pool = ProcessPoolExecutor(max_workers=self.cpus,
                                            mp_context=multiprocessing.get_context(method))
        return self.pool.submit(function, item)

    def start(self) -> None:
        """Start the worker processes now (a pool that forks starts them all at its first
        task), when more than one core is there to use."""
        if self.cpus > 1:
            self.submit(_nothing, None).result()

    def map(self, function: Callable[[_In], _Out], items: Sequence[_In]) -> list[_Out]:
        """``function`` over ``items``, in the workers when there are enough to pay."""
        if len(items) < PARALLEL_THRESHOLD or self.cpus < 2:
            return [function(item) for item in items]
        chunk = max(1, min(4, len(items) // (2 * self.cpus)))  # (a few items a task)
        futures = [self.submit(_apply_all, (function, items[i:i + chunk]))
                   for i in range(0, len(items), chunk)]
        return [out for future in futures for out in future.result()]

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown(cancel_futures=True)
            self.pool = None


def _nothing(_: object) -> None:
    """A task that starts a pool's workers."""


def _apply_all(job: tuple[Callable[[_In], _Out], Sequence[_In]]) -> list[_Out]:
    function, items = job
    return [function(item) for item in items]


class _Versions:
    """Old file versions of one batch: the object id of each ``rev:path`` read, each blob's
    outline (a superset of the (class, method) pairs it defines, None where it cannot be
    read), and the classes extracted from each (object, module) pair."""

    def __init__(self, ids: dict[str, str], blobs: dict[str, bytes],
                 workers: _Workers) -> None:
        self.ids = ids
        self.blobs = blobs
        self.workers = workers
        self.outlines: dict[str, set[tuple[str, str]] | None] = {}
        self.commits: list[str] = []  # the commits whose versions were extracted
        self.parsed: dict[tuple[str, str, bool], dict[str, ClassRecord]] = {}

    def outline(self, specs: Iterable[str]) -> None:
        """Outline the versions ``specs`` name, in parallel."""
        blobs = list(dict.fromkeys(blob for spec in specs if (blob := self.ids.get(spec))
                                   and blob not in self.outlines))
        jobs = [BlobJob(blob, "", False, self.blobs[blob]) for blob in blobs]
        self.outlines.update(zip(blobs, self.workers.map(outline_of, jobs), strict=True))

    def may_define(self, spec: str, pairs: Sequence[tuple[str, str]], *, every: bool = False
                   ) -> bool:
        """Whether the version ``spec`` names may define any (``every``: all) of ``pairs``;
        a version that is not there defines none, one that cannot be outlined may."""
        blob = self.ids.get(spec)
        if blob is None:
            return False
        if blob not in self.outlines:
            self.outline([spec])
        found = self.outlines[blob]
        if found is None:
            return True
        return all(p in found for p in pairs) if every else any(p in found for p in pairs)

    def extract(self, versions: Iterable[tuple[str, str, bool, int]]) -> None:
        """Extract the classes of the (spec, module, is_package, commit time or a later one)
        versions, in parallel."""
        jobs: dict[tuple[str, str, bool], BlobJob] = {}
        for spec, module, is_package, when in versions:
            blob = self.ids.get(spec)
            key = (blob or "", module, is_package)
            if blob is not None and key not in self.parsed and key not in jobs:
                jobs[key] = BlobJob(spec, module, is_package, self.blobs[blob], when=when)
        found = self.workers.map(classes_of, list(jobs.values()))
        self.parsed.update((key, classes or {}) for key, classes in zip(jobs, found, strict=True))

    def classes(self, spec: str, module: str, is_package: bool, when: int) -> dict[
        str, ClassRecord
    ]:
        """The classes of the version ``spec`` names ({} when there is none)."""
        blob = self.ids.get(spec)
        if blob is None:
            return {}
        key = (blob, module, is_package)
        if key not in self.parsed:  # not foreseen by the batch
            self.extract([(spec, module, is_package, when)])
        return self.parsed[key]


class HistoryStore(Protocol):
    """Where answers are kept between runs (the record cache): bytes by key, encoded here."""

    def get_history(self, key: str) -> bytes | None: ...

    def put_history(self, key: str, value: bytes | None) -> None: ...

    def holds_history(self, prefix: str) -> bool: ...


class HistoryIndex:
    """Answers "when did class X lose method m?" for many candidates with few git calls.

    Answers are stored by (HEAD and shallow boundary, file path, file content, question): an
    unchanged file at an unchanged HEAD never runs ``git log`` again; a new commit walks again.
    """

    def __init__(self, repo: Repo, store: HistoryStore | None = None,
                 max_size: int = 4 * 1024 * 1024) -> None:
        self.repo = repo
        self.max_size = max_size  # old versions larger than this are not read
        self.store = store
        self.shallow = repo.is_shallow()
        self.boundary = repo.history_boundary()
        self.state = repo.history_state()  # answers hold for this HEAD and boundary only
        self.errors: list[str] = []
        self.git_logs = 0
        self.blobs_parsed = 0  # history blobs parsed (one per distinct content and file)
        self._commit_patches: dict[str, bytes] = {}
        self._blames: dict[tuple[str, int, int], list[tuple[str, int]]] = {}
        self._workers: _Workers | None = None  # the current batch's (lost_methods_many)
        self._prefetched: _Prefetch | None = None
        # past_classes' parses, by text and by (path, blob, class, word): one run's candidates
        # share files
        self._past_parsed: dict[bytes, dict[str, ClassRecord]] = {}
        self._past_by_blob: dict[tuple[str, str, str, str | None, bool],
                                 dict[str, ClassRecord]] = {}
        self._moves: dict[str, tuple[bool, bool]] = {}  # moved_in's answers, by path
        # _timeline's answers: candidates of one class family ask about the same files
        self._timelines: dict[tuple[tuple[str, ...], int, bool], list[
            tuple[str, dict[str, str]]]] = {}
        # _touched's logs, by names and limit; _follow_source's answers, by commit and name
        self._logs: dict[tuple[frozenset[str], int], list[tuple[str, dict[str, str]]]] = {}
        self._times: dict[str, int] = {}  # each commit _touched listed: its committer time
        self._sources: dict[tuple[str, str], str | None] = {}

    def prefetch(self, workers: int | None = None) -> Executor | None:
        """Start the whole-history walk's ``git log`` now, when nothing is stored (a cold
        run, which will walk history as soon as the rules ask), and return the worker
        processes the walk will use, started (``workers`` of them, default: one per core;
        None for one core, or when nothing is prefetched).

        Called before the checkout is parsed, and the parse done in those processes: git
        walks history beside the parse, the model's building and the rules, where otherwise
        the walk would start with the rules and half the machine would wait on it. The
        processes are forked before the thread that reads git's output exists, never beside
        it. The output waits in memory (26 MB for sympy's 62,658 commits) for
        :meth:`lost_methods_many`; :meth:`close` stops an unused walk."""
        if self._prefetched is None and not (
            self.store and self.store.holds_history(f"lost:{self.state}:")
        ):
            if self._workers is None:
                self._workers = _Workers(workers)
                self._workers.start()
            self._prefetched = _Prefetch(self.repo, _WALK)
        return self._workers.pool if self._workers is not None else None

    def close(self) -> None:
        """Stop a prefetched walk nothing read, and its workers."""
        if self._prefetched is not None:
            self._prefetched.cancel()
            self._prefetched = None
        if self._workers is not None:
            self._workers.close()
            self._workers = None

    def lost_methods_many(
        self, requests: Sequence[tuple[str, Mapping[str, set[str]], str, bool, str]]
    ) -> dict[str, dict[tuple[str, str], HookChange]]:
        """:meth:`lost_methods` for many files (the last item of a request is the file's
        content key); stored answers are reused, the rest share one history walk and one
        parallel parse of the old versions."""
        answers: dict[str, dict[tuple[str, str], HookChange]] = {}
        missing: list[tuple[str, Mapping[str, set[str]], str, bool, str]] = []
        for request in requests:
            key = _store_key(request, self.state)
            stored = self.store.get_history(key) if self.store else None
            answer = _decode_answer(stored) if stored is not None else None
            if answer is not None:
                answers[request[0]] = answer
            else:
                missing.append(request)

        if self._workers is None:  # (else started by prefetch)
            self._workers = _Workers()
        try:
            scanned = self._scan_many(
                {path: set().union(*wanted.values()) for path, wanted, *_ in missing},
                {path: wanted for path, wanted, *_ in missing},
            )
            versions = self._versions([(path, wanted, module, is_package,
                                         scanned.get(path, []))
                                       for path, wanted, module, is_package, _ in missing])
        finally:
            self._workers.close()
            self._workers = None
        self._prefetch_patches(versions.commits)  # (each verified loss reads its commit's)
        for request in missing:
            path, wanted, module, is_package, content = request
            found = self.lost_methods(path, wanted, module, is_package, scanned.get(path, []),
                                      versions)
            answers[path] = found
            if self.store is not None and content and not any(
                e.startswith(f"{path}:") for e in self.errors
            ):
                self.store.put_history(_store_key(request, self.state),
                                       _encode_answer(found))
        return answers

    def _versions(
        self, files: Sequence[tuple[str, Mapping[str, set[str]], str, bool, list[_Removal]]]
    ) -> _Versions:
        """The old versions the removals in ``files`` need, read in one batch. Each step
        rules out what it can before the next, costlier one (see :meth:`lost_methods`): the
        versions before the removals are outlined, then the versions after those whose
        class may have had the method, and only where the class may have lost it are both
        extracted; each step in parallel."""
        specs: list[str] = []
        for _, _, _, _, removals in files:
            for r in removals:
                specs += [f"{r.commit}^:{r.old_path}", f"{r.commit}:{r.new_path}"]
                if r.old_path != r.new_path:
                    specs.append(f"{r.commit}:{r.old_path}")
        ids, blobs = self.repo.read_blobs_by_id(list(dict.fromkeys(specs)))
        versions = _Versions(ids, blobs, self._workers or _Workers())
        events: list[tuple[_Removal, str, bool, list[str]]] = []
        for _, wanted, module, is_package, removals in files:
            for r in removals:
                if r.old_path != r.new_path and f"{r.commit}:{r.old_path}" in ids:
                    continue  # a copy (see :meth:`lost_methods`): never parsed
                asked = [q for q, names in wanted.items() if r.name in names]
                if asked:
                    events.append((r, module, is_package, asked))
        versions.outline(f"{r.commit}^:{r.old_path}" for r, *_ in events)
        maybe = [(r, module, is_package, had) for r, module, is_package, asked in events
                 if (had := _may_have(versions, r, asked))]
        versions.outline(f"{r.commit}:{r.new_path}" for r, *_ in maybe)
        kept = [(r, module, is_package) for r, module, is_package, had in maybe
                if not _may_keep(versions, r, had)]
        versions.commits = [r.commit for r, _, _ in kept]
        versions.extract(
            version
            for r, module, is_package in kept
            for version in ((f"{r.commit}^:{r.old_path}", module, is_package, r.when),
                            (f"{r.commit}:{r.new_path}", module, is_package, r.when))
        )
        self.blobs_parsed += len(versions.parsed)
        return versions

    def lost_methods(
        self,
        path: str,
        wanted: Mapping[str, set[str]],
        module: str,
        is_package: bool,
        removals: list[_Removal] | None = None,
        versions: _Versions | None = None,
    ) -> dict[tuple[str, str], HookChange]:
        """``wanted`` maps a class qualname in ``path`` to candidate method names.

        Returns ``(qualname, name) -> HookChange`` for each candidate the class really lost.
        ``removals`` are the file's scanned removals when a batch scan already has them;
        ``versions`` the old versions a batch has already read and parsed.
        """
        names = set().union(*wanted.values()) if wanted else set()
        if not names:
            return {}
        if removals is None:
            removals = self._scan(path, names)
        if not removals:
            return {}
        if versions is None:
            versions = self._versions([(path, wanted, module, is_package, removals)])
        ids = versions.ids
        found: dict[tuple[str, str], HookChange] = {}
        pairings: dict[tuple[str, str], dict[str, str | None]] = {}

        for removal in removals:  # newest first: the latest removal is the one in force
            if removal.old_path != removal.new_path and (
                f"{removal.commit}:{removal.old_path}" in ids
            ):
                continue  # ``--follow`` stepped onto a copy: the class never lost anything
            # Only the classes still without an answer for this name; the blobs are parsed
            # only when one is left, the after-blob only when a class had the method before.
            open_classes = [q for q, candidates in wanted.items()
                            if removal.name in candidates and (q, removal.name) not in found]
            maybe = _may_have(versions, removal, open_classes)
            if not maybe or _may_keep(versions, removal, maybe):
                continue
            before = versions.classes(f"{removal.commit}^:{removal.old_path}", module,
                                      is_package, removal.when)
            had = [q for q in maybe if q in before and removal.name in before[q].methods]
            if not had:
                continue
            after = versions.classes(f"{removal.commit}:{removal.new_path}", module,
                                     is_package, removal.when)
            for qualname in had:
                key = (qualname, removal.name)
                old_class, new_class = before[qualname], after.get(qualname)
                if new_class is None or removal.name in new_class.methods:
                    continue
                pairing = pairings.get((removal.commit, qualname))
                if pairing is None:
                    lost = [m for m in old_class.methods if m not in new_class.methods]
                    pairing = pair_renames(old_class, new_class, lost)
                    pairings[(removal.commit, qualname)] = pairing
                found[key] = HookChange(
                    class_fq=f"{module}.{qualname}" if module else qualname,
                    old=removal.name,
                    new=pairing.get(removal.name),
                    commit=removal.commit,
                    short=removal.short,
                    subject=removal.subject,
                    path=removal.new_path,
                    was_called=_called_in_line(before, qualname, removal.name)
                    or self._commit_dropped_call(removal.commit, removal.name,
                                                 removal.old_path)
                    or self._commit_renamed_dispatch(removal.commit, removal.name,
                                                     pairing.get(removal.name)),
                    refused=self._commit_names(removal.commit, removal.name, removal.old_path,
                                               b"+"),
                    when=removal.when,
                )
        return found

    def _prefetch_patches(self, commits: Iterable[str]) -> None:
        """What :meth:`_patch` gives for each of ``commits``, through one git command."""
        wanted = [c for c in dict.fromkeys(commits) if c not in self._commit_patches]
        if len(wanted) < 2:
            return
        try:
            out = self.repo.git("log", "--no-walk=unsorted", "--stdin", f"--format={_MARK}%H",
                                *_PATCH, "--", "*.py",
                                input_="".join(f"{c}\n" for c in wanted).encode())
        except GitError:
            return  # each is asked alone, as before
        for chunk in out.split(_SEPARATOR)[1:]:
            commit, _, body = chunk.partition(b"\n")
            self._commit_patches[commit.decode()] = body.lstrip(b"\n")

    def _patch(self, commit: str) -> bytes:
        """``commit``'s Python changes, without context, read once."""
        patch = self._commit_patches.get(commit)
        if patch is None:
            try:
                patch = self.repo.git("show", "--format=", *_PATCH, commit, "--", "*.py")
            except GitError:
                patch = b""
            self._commit_patches[commit] = patch
        return patch

    def _commit_dropped_call(self, commit: str, name: str, path: str) -> bool:
        """Whether ``commit`` deleted a call of ``name`` through an object the framework holds
        (``self.policy.name(``: its own code calling the hook, not a user of a public method),
        or, in a file other than ``path`` (the hook's own, where it would be a deprecation
        message), the name as a string (a dispatch by name: ``call_hook(m, "name")``). Direct
        ``self.name(`` calls count only within the class's line (:func:`_called_in_line`)."""
        patch = self._patch(commit)
        def enclosing(old: bytes, line: int) -> bytes | None:
            return self._enclosing_def(commit, old, line)

        if forwarded_member_call(patch, name, enclosing) or dropped_dispatch(
                patch, name, enclosing):
            return True
        return self._commit_names(commit, name, path, b"-")

    def _enclosing_def(self, commit: str, path: bytes, line: int) -> bytes | None:
        """The name of the innermost ``def`` around ``line`` of ``path`` before ``commit``."""
        return enclosing_def(self.repo, f"{commit}^", path, line)

    def _commit_renamed_dispatch(self, commit: str, name: str, new: str | None) -> bool:
        """Whether ``commit``, which renamed the hook ``name`` to ``new``, renamed a dispatch
        of it (:func:`~hookguard.git.changes.renamed_dispatch`)."""
        return bool(new) and renamed_dispatch(self._patch(commit), name, new or "")

    def _commit_names(self, commit: str, name: str, path: str, sign: bytes) -> bool:
        """Whether ``commit`` removed (``sign`` b"-") or added (b"+") the string ``"name"``
        in a file other than ``path`` that has no method of that name: a dispatch by name
        dropped, or a validator that refuses the hook added (with the string, the same hunk
        adds a ``raise`` or a warning: a lookup that still calls the hook refuses nothing)."""
        patch = self._patch(commit)
        quoted = re.escape(name.encode())
        other = b"+" if sign == b"-" else b"-"
        literal = re.compile(rb"^" + re.escape(sign) + rb".*(['\"])" + quoted + rb"\1",
                             re.MULTILINE)
        kept = re.compile(rb"^" + re.escape(other) + rb".*(['\"])" + quoted + rb"\1",
                          re.MULTILINE)
        copy = re.compile(rb"^[-+ ]\s*(?:async\s+)?def\s+" + quoted + rb"\b", re.MULTILINE)
        own = os.fsencode(path)  # (a name that is not UTF-8 is its bytes)
        for chunk in patch.split(b"\ndiff --git"):
            paths = _header_paths(b"diff --git" + chunk.split(b"\n", 1)[0]) or ()
            if own in paths or copy.search(chunk):
                continue  # a file with its own copy of the method holds a message, not a call
            if sign == b"-" and (any(not framework_path(p) for p in paths)
                                 or kept.search(chunk)):
                # A test's lookup is a user of an API method, not the framework dispatching a
                # hook; a line the commit only moved or re-indented still names it (ibis's
                # ``getattr(con, "current_database", None)``: first contact, round 11).
                continue
            if sign == b"-" and literal.search(chunk):
                return True
            if sign == b"+" and any(literal.search(hunk) and _REFUSAL.search(hunk)
                                    for hunk in chunk.split(b"\n@@")):
                return True  # a refusal or a deprecation notice for it, not a lookup that
                # still calls it (``getattr(self.backend, "before_fork", None)``, round 15)
        return False

    def removal_commit(
        self, path: str, name: str, rev_range: str
    ) -> tuple[str, str, str] | None:
        """(sha, short, subject) of the newest commit in ``rev_range`` dropping ``def name``."""
        for removal in self._scan(path, {name}, rev_range):
            return removal.commit, removal.short, removal.subject
        return None

    def class_added_by(self, path: str, qualname: str, commit: str) -> bool:
        """Whether ``commit`` itself added class ``qualname`` to ``path`` (the file was there
        before without it, and has it after): a class the change that removed a hook wrote,
        knowing the hook was gone (a method moved down into a new subclass)."""
        around = self._methods_around(path, qualname, commit)
        return around is not None and around[1] is not None and around[0] is None

    def gave_method(self, path: str, qualname: str, name: str, commit: str) -> bool:
        """Whether ``commit`` gave class ``qualname`` of ``path`` its method ``name``: the class
        is new there, or had no such method before it. A method the commit that removed the
        hook from a base moved down into the class, with no line of its own changed: ldap3's
        ``Reader.search``, whose ``class Reader(Cursor):`` line the commit moved above it
        (first contact, round 22). It never overrode that hook."""
        around = self._methods_around(path, qualname, commit)
        if around is None:
            return False
        had, has = around
        return has is not None and name in has and (had is None or name not in had)

    def _methods_around(self, path: str, qualname: str, commit: str
                        ) -> tuple[set[str] | None, set[str] | None] | None:
        """Class ``qualname``'s method names in ``path`` before ``commit`` and at it (None
        for a side without the class), or None where either file is missing or unreadable."""
        blobs = self._around(path, commit)
        if blobs is None:
            return None
        try:
            return (class_methods(parse_quietly(blobs[0], path)).get(qualname),
                    class_methods(parse_quietly(blobs[1], path)).get(qualname))
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None

    def lacked_method(self, path: str, qualname: str, name: str, bases: Iterable[str],
                      commit: str) -> bool:
        """Whether class ``qualname`` of ``path`` (with ``bases`` now, dotted as written) had
        no method ``name`` just before ``commit`` (the commit that removed the hook), the file
        being there: the class is newer, or got the method later, whatever the age of the
        method's lines. It was not written for the hook: pyroute2's
        ``AsyncMPTCP.endpoint``, whose lines belonged to the sync ``MPTCP(SyncAPI)`` while
        the hook existed and came under the hook's owner when a later commit renamed and
        re-based their class (round 35). A class of that file then with the same bases
        (by their last parts) and the method may be this one under an older name: no
        proof. A file not there proves nothing."""
        before = f"{commit}^:{path}"
        try:
            blob = self.repo.read_blobs([before]).get(before)
        except GitError:
            return False
        if blob is None:
            return False
        try:
            tree = parse_quietly(blob, path)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return False
        methods, then = class_methods(tree), class_bases(tree)
        if name in methods.get(qualname, ()):
            return False
        now = {b.rpartition(".")[2] for b in bases}
        return not any(name in own and {b.rpartition(".")[2] for b in then.get(other, ())} == now
                       for other, own in methods.items())

    def gave_base(self, path: str, qualname: str, base: str, commit: str) -> bool:
        """Whether ``commit`` gave class ``qualname`` of ``path`` the base ``base`` (a dotted
        name as the class spells it, or its last part), which it did not have before: the
        commit that removed a hook and moved the class onto a framework's base, as pykeen's
        ``GenericTestCase(unittest_templates.GenericTestCase[T])`` (first contact, round 18).
        The hook moved into that base with its callers."""
        blobs = self._around(path, commit)
        if blobs is None:
            return False
        try:
            had = class_bases(parse_quietly(blobs[0], path)).get(qualname, set())
            has = class_bases(parse_quietly(blobs[1], path)).get(qualname, set())
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return False
        short = base.rpartition(".")[2]
        return any(name == base or name.rpartition(".")[2] == short for name in has - had)

    def _around(self, path: str, commit: str) -> tuple[bytes, bytes] | None:
        """``path`` before ``commit`` and at it, or None where either is missing."""
        before, after = f"{commit}^:{path}", f"{commit}:{path}"
        try:
            blobs = self.repo.read_blobs([before, after])
        except GitError:
            return None
        if before not in blobs or after not in blobs:
            return None
        return blobs[before], blobs[after]

    def written_after(
        self, path: str, start: int, end: int, when: int, change: str = ""
    ) -> bool:
        """Whether every committed line of ``path[start:end]`` is newer than ``when``, or was
        written by ``change`` (the commit that removed the hook) itself.

        Then the method was written after the hook it seems to override had gone, or by the
        change that removed it (a method moved down into a new subclass): a method that reuses
        an old name knowingly, not a forgotten override. Uncommitted lines prove nothing.
        """
        times: list[int] = []
        for sha, written in dict(self._blame(path, start, end)).items():
            if not sha.strip("0"):
                continue  # uncommitted
            if change and (sha == change or (written == when and self._descends(sha, change))):
                written = when + 1  # the change itself, or a commit on top of it that bears
                # its second (a rebased series)
            times.append(written)
        return bool(times) and min(times) > when

    def wrote_line(self, path: str, line: int, change: str,
                   within: tuple[int, int] | None = None) -> bool:
        """Whether ``path``'s committed ``line`` was last written by ``change`` (the commit that
        removed the hook): a method whose ``def`` that commit wrote, under this name, was named
        knowingly (qtile's ``cmd_add`` renamed ``add`` in the commit that took ``add`` off the
        base, first contact, round 4). ``within``: the lines of the method around it, blamed
        once for this and :meth:`written_after`."""
        start, end = within if within is not None and within[0] <= line <= within[1] else (
            line, line)
        lines = self._blame(path, start, end)
        index = line - start
        return 0 <= index < len(lines) and lines[index][0] == change

    def _blame(self, path: str, start: int, end: int) -> list[tuple[str, int]]:
        """Each line of ``path[start:end]`` as (commit, its committer time), from one ``git
        blame`` kept for the run; nothing where git cannot blame them."""
        key = (path, start, end)
        found = self._blames.get(key)
        if found is not None:
            return found
        try:
            out = self.repo.git("blame", "--porcelain", "-L", f"{start},{end}", "--", path)
        except GitError:
            out = b""
        when: dict[str, int] = {}  # (a commit's times come with its first line only)
        shas: list[str] = []
        for raw in out.split(b"\n"):
            if _BLAME_HEADER.match(raw):
                shas.append(raw[:40].decode("ascii"))
            elif raw.startswith(b"committer-time ") and shas:
                when[shas[-1]] = int(raw.split()[1])
        found = self._blames[key] = [(sha, when.get(sha, 0)) for sha in shas]
        return found

    def past_classes(
        self, wanted: Mapping[str, Collection[str]], limit: int = 60, follow: bool = False,
        naming: str | None = None,
    ) -> Iterator[dict[str, dict[str, ClassRecord]]]:
        """The classes ``wanted`` (qualnames by path) at each of the newest ``limit`` commits
        that touched any of those files, newest first, by path and qualname; a class a
        version lacks (or a file over the size limit) is absent from its entry. With
        ``follow``, each file is followed back through its renames (``git log --follow``):
        its entry holds what the file held under its name at that commit. With ``naming``,
        each class holds only the methods whose text holds that word (the rest of a large
        class is not parsed). Each version's
        top-level class is cut out of the file and parsed alone, once per distinct text
        (commits to the rest of the file cost one search), else the whole version, repaired
        as newer Python only where its commit is recent enough to hold any; nothing is
        imported."""
        paths = list(wanted)
        key = (tuple(paths), limit, follow)
        timeline = self._timelines.get(key)
        if timeline is None:
            try:
                timeline = self._timelines[key] = self._timeline(paths, limit, follow)
            except GitError:
                return
        parsed = self._past_parsed  # (kept for the run: candidates share files)
        by_blob = self._past_by_blob

        def classes(path: str, sha: str, data: bytes, top: str, when: int
                    ) -> dict[str, ClassRecord]:
            # (a file read whole is repaired as newer Python only where its commit is recent
            # enough to hold any: newer_grammar_possible, as the HG001 history reads)
            repairable = newer_grammar_possible(when)
            known = by_blob.get((path, sha, top, naming, repairable))
            if known is None:
                known = by_blob[(path, sha, top, naming, repairable)] = read(
                    path, data, top, repairable)
            return known

        def read(path: str, data: bytes, top: str, repairable: bool
                 ) -> dict[str, ClassRecord]:
            segment = class_segment(data, top)
            if segment is not None and naming is not None:
                reduced = methods_naming(segment, naming)
                if reduced is not None:
                    key = (b"r" + path.encode("utf-8", "surrogateescape") + b"\0"
                           + naming.encode() + b"\0" + reduced)
                    found = parsed.get(key)
                    if found is None:
                        self.blobs_parsed += 1
                        found = parsed[key] = classes_of(BlobJob(
                            path, "", path.endswith("__init__.py"), reduced, repair=False)) or {}
                    if found:
                        return found  # (else it did not parse alone: the whole class)
            key = (b"s" if repairable else b"o") + path.encode("utf-8", "surrogateescape") + (
                b"\0" + (segment if segment is not None else b"f" + data))
            found = parsed.get(key)
            if found is None:
                self.blobs_parsed += 1
                job = BlobJob(path, "", path.endswith("__init__.py"),
                              segment if segment is not None else data,
                              repair=segment is None and repairable)
                found = parsed[key] = classes_of(job) or {}
                if segment is not None and not found:  # (cut short: read the whole file)
                    found = parsed[key] = classes_of(BlobJob(
                        path, "", path.endswith("__init__.py"), data, repair=repairable)) or {}
            return found

        ids: dict[str, str] = {}
        blobs: dict[str, bytes] = {}
        for index, (commit, where) in enumerate(timeline):
            if index % _PAST_CHUNK == 0:  # (a chunk of versions per ``cat-file --batch``:
                # a reader that stops early, at a drift found, reads no more)
                try:
                    ids, blobs = self.repo.read_blobs_by_id(
                        [f"{c}:{w.get(path, path)}"
                         for c, w in timeline[index:index + _PAST_CHUNK] for path in paths])
                except GitError:
                    return
            version: dict[str, dict[str, ClassRecord]] = {}
            for path in paths:
                name = f"{commit}:{where.get(path, path)}"
                sha = ids.get(name)
                if sha is None or len(blobs[sha]) > self.max_size:
                    continue
                version[path] = {
                    qualname: record
                    for top in dict.fromkeys(q.split(".", 1)[0] for q in wanted[path])
                    for qualname, record in classes(path, sha, blobs[sha], top,
                                                    self._times.get(commit, 0)).items()
                    if qualname in wanted[path]}
            yield version

    def moved_in(self, path: str, *, ever: bool = False) -> bool:
        """Whether the commit that first added ``path`` (as git's pathspec sees it; ``ever``:
        any commit that added it) renamed or copied another file there: its life before is
        under another name."""
        known = self._moves.get(path)
        if known is None:
            known = self._moves[path] = self._read_moves(path)
        first, any_ = known
        return any_ if ever else first

    def _read_moves(self, path: str) -> tuple[bool, bool]:
        """Whether the first commit that added ``path`` moved a file there, and whether any
        did (both, where git fails: the history is then followed, the safe side)."""
        try:
            added = self.repo.git("--literal-pathspecs", "log", "--format=%H",
                                  "--diff-filter=A", "--", path).split()
            target = os.fsencode(path)
            moved: list[bool] = []  # newest first, as the log lists them
            for commit in added:
                shown = self.repo.git("show", "-M", "-C", "--name-status", "--format=",
                                      commit.decode("ascii", "replace"))
                moved.append(any(line[:1] in (b"R", b"C") and line.rsplit(b"\t", 1)[-1] == target
                                 for line in shown.split(b"\n")))
        except GitError:
            return True, True
        return bool(moved) and moved[-1], any(moved)

    def _timeline(
        self, paths: Sequence[str], limit: int, follow: bool
    ) -> list[tuple[str, dict[str, str]]]:
        """The newest ``limit`` commits touching ``paths``, newest first (git's order), each
        with the path each file had at it: followed back through its renames when ``follow``
        (:meth:`_lineage`: what ``git log --follow`` of each file names), else the path as it
        is.

        Following costs plain logs of the files' names (git prunes the side branches that
        left a file as it was; ``--follow`` cannot, and walks every commit): the log of the
        paths shows where a file was created; where that commit moved another file there,
        the log is read again with the old name too, until no new name turns up."""
        probe: dict[str, None] = dict.fromkeys(paths)
        log = self._touched(list(probe), limit)
        lineages: dict[str, dict[str, str]] = {}  # path -> commit -> its name at that commit
        while follow:
            lineages, chains = {}, []
            for path in paths:
                lineage, chain = self._lineage(path, log)
                if lineage:
                    lineages[path] = lineage
                    chains += chain
            if all(name in probe for name in chains):
                break
            probe.update(dict.fromkeys(chains))
            log = self._touched(list(probe), limit)
        # the names the files had at the commits listed (not a name only probed for), as
        # ``git log --follow`` would list them
        names = dict.fromkeys([*paths, *(n for lineage in lineages.values()
                                          for n in lineage.values())])
        if names.keys() != probe.keys():
            log = self._touched(list(names), limit)
        commits = [commit for commit, _ in log]
        timeline: list[tuple[str, dict[str, str]]] = []
        # each file's name at a commit: the name at its nearest commit of its own at or
        # before it (between two of them the file kept the older one's name)
        pending = {path: [i for i, c in enumerate(commits) if c in lineage]
                   for path, lineage in lineages.items()}
        at = dict.fromkeys(pending, 0)  # each file's next own commit (an index in pending)
        for index, commit in enumerate(commits):
            where: dict[str, str] = {}
            for path, own in pending.items():
                while at[path] < len(own) and own[at[path]] < index:
                    at[path] += 1
                if at[path] < len(own):
                    where[path] = lineages[path][commits[own[at[path]]]]
            timeline.append((commit, where))
        return timeline

    def _touched(self, names: Sequence[str], limit: int) -> list[tuple[str, dict[str, str]]]:
        """``git log -n<limit> -- names``: the newest ``limit`` commits touching any of
        ``names``, newest first (git's order), each with the status (``A``, ``M``, ``D``...,
        renames not paired) of each of those names it changed against its parent (none for a
        merge). Read once per set of names."""
        key = (frozenset(names), limit)
        known = self._logs.get(key)
        if known is not None:
            return known
        out = self.repo.git("--literal-pathspecs", "log", f"--format={_MARK}%H %ct", "--root",
                            "--name-status", "--no-renames", "-z", f"-n{limit}", "--",
                            *names)
        log: list[tuple[str, dict[str, str]]] = []
        for record in out.split(_SEPARATOR)[1:]:
            head, _, listed = record.partition(b"\0")
            commit, _, when = head.decode("ascii", "replace").partition(" ")
            self._times[commit] = int(when) if when.isdigit() else 0
            fields = listed.lstrip(b"\n").split(b"\0")  # status, name, status, name...
            log.append((commit, {
                os.fsdecode(fields[i + 1]): fields[i].decode("ascii", "replace")
                for i in range(0, len(fields) - 1, 2)}))
        self._logs[key] = log
        return log

    def _lineage(self, path: str, log: Sequence[tuple[str, dict[str, str]]]
                 ) -> tuple[dict[str, str], list[str]]:
        """What ``git log --follow -- path`` names ``path`` at each commit of ``log`` (the
        log of its names, :meth:`_touched`) that touched the file, and the names it had,
        newest first; nothing where it never had another name.

        As ``--follow`` does, the file keeps its name back to a commit that created it,
        where git's rename detection for ``--follow`` (:meth:`_follow_source`) finds the file
        it came from; older commits are followed under that file's name. Only a file some
        commit moved into place (:meth:`moved_in`) is followed."""
        lineage: dict[str, str] = {}
        chain = [path]
        for commit, changed in log:
            status = changed.get(chain[-1])
            if status is None:
                continue
            lineage[commit] = chain[-1]
            source = self._follow_source(commit, chain[-1]) if status == "A" else None
            if source is not None:
                if len(chain) == 1 and not self.moved_in(path, ever=True):
                    return {}, []
                chain.append(source)
        return (lineage, chain) if len(chain) > 1 else ({}, [])

    def _follow_source(self, commit: str, name: str) -> str | None:
        """The file ``git log --follow -- name`` continues with at ``commit``, which created
        ``name`` (git's own rename detection for ``--follow``, on that commit alone), or
        None where it found none there."""
        key = (commit, name)
        if key in self._sources:
            return self._sources[key]
        out = self.repo.git("--literal-pathspecs", "log", "--follow", "-n1", "--name-status",
                            "-z", f"--format={_MARK}%H", commit, "--", name)
        source: str | None = None
        for record in out.split(_SEPARATOR)[1:]:
            head, _, listed = record.partition(b"\0")
            fields = listed.lstrip(b"\n").split(b"\0")
            if (head.decode("ascii", "replace") == commit and len(fields) >= 3
                    and fields[0][:1] in (b"R", b"C") and fields[2] == os.fsencode(name)):
                source = os.fsdecode(fields[1])
        self._sources[key] = source
        return source

    def _descends(self, commit: str, ancestor: str) -> bool:
        try:
            self.repo.git("merge-base", "--is-ancestor", ancestor, commit)
        except GitError:
            return False
        return True

    def _scan_many(
        self, names_by_path: Mapping[str, set[str]],
        classes_by_path: Mapping[str, Mapping[str, set[str]]] | None = None,
    ) -> dict[str, list[_Removal]]:
        """The commits that may have taken a wanted method from a class of each file, newest
        first: one walk of the whole history, then each version of the files read once.

        The walk (``git log -M --raw``, no pathspec: matching one against every tree of a
        long history costs more than the walk) names every file each commit changed and
        every rename, so each file is followed back through its earlier names; walking back, a
        path stops belonging to a file where that file was created, so a file later
        re-created under a moved file's old name never takes the moved file's history. Each
        version the commits that modified a file left is read for its ``def`` statements
        of the wanted names (:func:`~hookguard.git.blobs.def_owners`, in worker processes);
        a commit after which fewer of them stand under the top-level class of one asked about
        that name (``classes_by_path``: each file's classes by qualname, with the names asked
        of each; any class when not given), or outside classes, may have removed, renamed or
        moved a method, and is a removal for :meth:`lost_methods` to verify. A signature
        edited or a method moved within its class is none.
        """
        if not names_by_path:
            return {}
        found: dict[str, list[_Removal]] = {p: [] for p in names_by_path}
        try:
            touches, short, owners = self._walk(names_by_path)
        except GitError as exc:
            self.errors.append(f"history unavailable ({exc}); falling back to one file at a "
                               "time")
            return {p: self._scan(p, names_by_path[p]) for p in names_by_path}
        tops: dict[str, dict[bytes, set[bytes]]] = {}  # file -> name -> classes asking it
        for path, classes in (classes_by_path or {}).items():
            by_name = tops[path] = {}
            for qualname, asked in classes.items():
                for wanted in asked:
                    by_name.setdefault(wanted.encode(), {b""}).add(
                        qualname.split(".", 1)[0].encode())
        for touch in touches:  # newest first
            for file, old_path, new_path, old_blob, new_blob in touch.changes:
                before, after = owners.get((file, old_blob)), owners.get((file, new_blob))
                if before is None or after is None:
                    continue  # a version not read (see _DefReader): no evidence either way
                asking = tops.get(file)
                for name, counts in before.items():
                    heads = asking.get(name) if asking is not None else None
                    kept = after.get(name, {})
                    if any(count > kept.get(head, 0) for head, count in counts.items()
                           if heads is None or head in heads):
                        found[file].append(_Removal(touch.commit, touch.commit[:short],
                                                    touch.subject, touch.when, old_path,
                                                    new_path, name.decode()))
        return found

    def _walk(
        self, names_by_path: Mapping[str, set[str]], workers: int | None = None,
        per_job: int = _BLOBS_PER_JOB,
    ) -> tuple[list[_Touch], int, dict[tuple[str, str], DefOwners]]:
        """The commits that modified the files asked about (newest first); the length of an
        abbreviated commit id in this repository; and the def statements of the wanted names
        in each version of each file those commits left, read in worker processes while the
        walk goes on (:class:`_DefReader`)."""
        lineage = _Lineage({p.encode("utf-8", "surrogateescape"): p for p in names_by_path})
        pool = self._workers if self._workers is not None and workers is None else (
            _Workers(workers))
        reader = _DefReader(os.fspath(self.repo.root), names_by_path, self.max_size, pool,
                            per_job)
        touches: list[_Touch] = []
        progress.start("commits")
        self.git_logs += 1
        try:
            prefetched, self._prefetched = self._prefetched, None
            records = (prefetched.records() if prefetched is not None
                       else self.repo.git_records(*_WALK, separator=_SEPARATOR))
            for record in records:
                progress.advance("commits")
                touch = _read_record(record, lineage)
                if touch is not None:
                    touches.append(touch)
                    reader.add(touch)
            owners, unread = reader.results()
        finally:
            close_readers()  # (this process's: a short history is read without workers)
            if pool is not self._workers:
                pool.close()
            progress.done("commits")
        for file, (blob, size) in unread.items():
            self.errors.append(
                f"{file}: history unavailable (git object {blob} is missing: a partial or "
                "damaged clone)" if size < 0 else
                f"{file}: history skips versions over max-file-size ({blob}: "
                f"{size / 2**20:.1f} MiB)")
        short = len(self.repo.git("rev-parse", "--short", "HEAD").strip()) if touches else 7
        return touches, short, owners

    def _scan(self, path: str, names: set[str], rev_range: str | None = None) -> list[_Removal]:
        self.git_logs += 1
        follow = [] if rev_range else ["--follow"]
        revs = [rev_range] if rev_range else []
        try:
            out = self.repo.git("--literal-pathspecs", "log", *_PATCH, *follow, _LOG_FORMAT,
                                *revs, "--", path)
        except GitError as exc:
            self.errors.append(f"{path}: history unavailable ({exc})")
            return []
        return list(_parse_log(out, {n.encode() for n in names}))


def _may_have(versions: _Versions, removal: _Removal, classes: Sequence[str]) -> list[str]:
    """Those of ``classes`` that may have had the removed method before the removal (by the
    version's outline)."""
    before = f"{removal.commit}^:{removal.old_path}"
    return [q for q in classes
            if versions.may_define(before, [(q.rsplit(".", 1)[-1], removal.name)])]


def _may_keep(versions: _Versions, removal: _Removal, classes: Sequence[str]) -> bool:
    """Whether every one of ``classes`` may still define the method after the removal (the
    outline pairs it with a class of that name: a signature edited, a method moved within
    its class). Then the commit is not read as a loss: the outline's superset only ever
    hides one (a method dropped while a nested function of its name stays)."""
    after = f"{removal.commit}:{removal.new_path}"
    if after not in versions.ids:
        return True  # the file is gone: its classes lost nothing (they went with it)
    return versions.may_define(after, [(q.rsplit(".", 1)[-1], removal.name) for q in classes],
                               every=True)


@dataclass(frozen=True, slots=True)
class _FileDiff:
    old_path: str
    new_path: str
    created: bool
    removed: tuple[str, ...]  # wanted ``def`` names on removed lines


@dataclass(frozen=True, slots=True)
class _Commit:
    commit: str
    short: str
    subject: str
    when: int
    files: tuple[_FileDiff, ...]

    def removal(self, diff: _FileDiff, name: str) -> _Removal:
        return _Removal(self.commit, self.short, self.subject, self.when, diff.old_path,
                        diff.new_path, name)


class _Prefetch:
    """A git command's records, its output read into memory by a thread as git writes it."""

    def __init__(self, repo: Repo, args: Sequence[str]) -> None:
        self.queue: SimpleQueue[bytes | GitError | None] = SimpleQueue()
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._read, args=(repo, args), daemon=True)
        self.thread.start()

    def _read(self, repo: Repo, args: Sequence[str]) -> None:
        chunks = repo.git_output(*args)  # (whole chunks: the thread needs the GIL rarely)
        try:
            for chunk in chunks:
                if self.stopped.is_set():
                    break
                self.queue.put(chunk)
            self.queue.put(None)
        except GitError as exc:
            self.queue.put(exc)
        except BaseException as exc:  # never leave the walk waiting for an end that won't come
            self.queue.put(GitError(f"reading git's output failed: {exc!r}"))
            raise
        finally:
            chunks.close()  # (stopped early: ends git)

    def records(self) -> Iterator[bytes]:
        return split_records(self._chunks(), _SEPARATOR)

    def _chunks(self) -> Iterator[bytes]:
        while (item := self.queue.get()) is not None:
            if isinstance(item, GitError):
                raise item
            yield item

    def cancel(self) -> None:
        self.stopped.set()
        self.thread.join()


@dataclass(frozen=True, slots=True)
class _Touch:
    """A commit of the walk that modified a file asked about."""

    commit: str
    subject: str
    when: int
    # (the file asked about, its old and new paths, its old and new objects), each change
    changes: tuple[tuple[str, str, str, str, str], ...]


class _DefReader:
    """Reads :func:`~hookguard.git.blobs.def_owners` of each version the walk's commits left
    (each version of each file once), a job of ``per_job`` versions at a time in worker
    processes as the walk goes on; a history with fewer versions is read in this process."""

    def __init__(self, root: str, names_by_path: Mapping[str, set[str]], max_size: int,
                 workers: _Workers, per_job: int) -> None:
        self.root, self.max_size, self.per_job = root, max_size, per_job
        self.names = {p: frozenset(n.encode() for n in names) for p, names in
                      names_by_path.items()}
        self.workers = workers
        self.pending: dict[str, list[str]] = {}  # file -> versions not yet asked for
        self.count = 0
        self.seen: set[tuple[str, str]] = set()
        self.jobs: list[tuple[list[str], Future[list[tuple[str, DefOwners | int]]]]] = []

    def add(self, touch: _Touch) -> None:
        for file, _, _, old_blob, new_blob in touch.changes:
            for blob in (new_blob, old_blob):
                if (file, blob) not in self.seen:
                    self.seen.add((file, blob))
                    pending = self.pending.setdefault(file, [])
                    pending.append(blob)
                    self.count += 1
                    if len(pending) >= self.per_job and self.workers.cpus > 1:
                        # A long run of one file's versions: git reads each from the one
                        # before it (deltas), so a job holds a file's run, not a mix.
                        self._submit(self._job([file]))

    def _job(self, files: Sequence[str]) -> tuple[list[str], DefScan]:
        """A job for the pending versions of ``files``, a file's together."""
        tables = {file: n for n, file in enumerate(files)}
        order = [(file, blob) for file in files for blob in self.pending.pop(file)]
        self.count -= len(order)
        job = DefScan(self.root, tuple((blob, tables[file]) for file, blob in order),
                      tuple(self.names[file] for file in files), self.max_size)
        return [file for file, _ in order], job

    def _submit(self, job: tuple[list[str], DefScan]) -> None:
        self.jobs.append((job[0], self.workers.submit(scan_defs, job[1])))

    def results(self) -> tuple[dict[tuple[str, str], DefOwners], dict[str, tuple[str, int]]]:
        """Each (file, version)'s defs, and for each file a version not read (missing: size
        -1, or over the size limit) and its size."""
        done: list[tuple[list[str], list[tuple[str, DefOwners | int]]]] = []
        if self.pending and ((not self.jobs and self.count < self.per_job)
                             or self.workers.cpus < 2):  # a short history: no worker
            files, job = self._job(list(self.pending))
            done.append((files, scan_defs(job)))
        group: list[str] = []
        size = 0
        for file in list(self.pending):  # the rest, in jobs of whole files
            group.append(file)
            size += len(self.pending[file])
            if size >= self.per_job:
                self._submit(self._job(group))
                group, size = [], 0
        if group:
            self._submit(self._job(group))
        done += [(files, future.result()) for files, future in self.jobs]
        owners: dict[tuple[str, str], DefOwners] = {}
        unread: dict[str, tuple[str, int]] = {}
        for files, answers in done:
            for file, (blob, found) in zip(files, answers, strict=True):
                if isinstance(found, int):
                    unread.setdefault(file, (blob, found))
                else:
                    owners[(file, blob)] = found
        return owners, unread


class _Lineage:
    """Which file asked about each path belongs to, commit by commit, as the walk goes back
    (``--date-order``: a commit comes after all its children). Each commit hands its parents
    the paths as they were before it: a file created on a branch (an imported history's root
    commit, say) ends its path on that branch only, not on the main line beside it."""

    def __init__(self, head: dict[bytes, str]) -> None:
        self.head: dict[bytes, str] | None = head
        self.pending: dict[bytes, dict[bytes, str]] = {}  # commit -> its children's paths
        self.known = set(head)  # every path any commit's paths ever held (a quick filter)
        # Earlier names of the files, on every branch: merges are not diffed, so a branch
        # merged after a file was renamed beside it reaches its commits under the old name.
        self.renamed: dict[bytes, str] = {}

    def at(self, commit: bytes) -> dict[bytes, str]:
        """The paths as of ``commit`` (the first commit of the walk: the head's)."""
        if self.head is not None:
            owner, self.head = self.head, None
            return owner
        return self.pending.pop(commit, {})

    def hand_down(self, parents: bytes, owner: dict[bytes, str]) -> None:
        for parent in parents.split():
            held = self.pending.get(parent)
            if held is None or held is owner:
                self.pending[parent] = owner
            else:  # children that disagree (a branch renamed a file): either's paths
                self.pending[parent] = {**owner, **held}


def _read_record(record: bytes, lineage: _Lineage) -> _Touch | None:
    """One commit of the walk, newest first: what it did to the files asked about. None when
    it modified none of them (it may still have created or renamed one)."""
    head = _RECORD_HEAD.match(record)
    if head is None:
        return None
    owner = lineage.at(head.group(1))
    mine: list[tuple[bytes, bytes, bytes, bytes, bytes, bytes, str]] = []
    if (owner or lineage.renamed) and not lineage.known.isdisjoint(
        record[head.end():].split(b"\0")  # (most commits change none of the paths)
    ):  # (status, score, old and new path, old and new object, file)
        for change in _RAW_CHANGE.finditer(record, head.end()):
            new = change.group(7)
            file = owner.get(new) or lineage.renamed.get(new)
            if file is not None:
                if change.group(3):
                    mine.append((change.group(3), change.group(4), change.group(5), new,
                                 change.group(1), change.group(2), file))
                else:
                    mine.append((change.group(6), b"", new, new, change.group(1),
                                 change.group(2), file))
    before = owner
    if any(status in (b"A", b"C", b"R") for status, *_ in mine):
        before = dict(owner)  # the paths before this commit, for its parents
        for status, _, _, new, _, _, _ in mine:  # created here (a copy too): older commits
            if status in (b"A", b"C"):  # are not its
                before.pop(new, None)
                lineage.renamed.pop(new, None)
        for status, _, old, new, _, _, file in mine:
            if status == b"R":
                before.pop(new, None)
                before[old] = lineage.renamed[old] = file
                lineage.known.add(old)
    lineage.hand_down(head.group(3), before)

    def text(path: bytes) -> str:
        return path.decode("utf-8", "surrogateescape")

    changes = tuple(
        (file, text(old), text(new), old_blob.decode(), new_blob.decode())
        for status, score, old, new, old_blob, new_blob, file in mine
        if status == b"M" or (status == b"R" and score != b"100")  # edited, not just moved
    )
    if not changes:
        return None
    return _Touch(head.group(1).decode(), head.group(4).decode(errors="replace"),
                  int(head.group(2) or 0), changes)


def _unquote(text: bytes) -> bytes:
    """A path as git quotes it in a patch header (C style), unquoted."""
    def one(match: re.Match[bytes]) -> bytes:
        code = match.group(1)
        return bytes([int(code, 8) & 0xFF]) if len(code) == 3 else _ESCAPES.get(code, code)
    return _ESCAPE.sub(one, text)


def _header_paths(line: bytes) -> tuple[bytes, bytes] | None:
    """The old and new paths of a ``diff --git a/old b/new`` line, either side quoted."""
    rest = line[len(b"diff --git "):]
    sides: list[bytes] = []
    for _ in range(2):
        quoted = _QUOTED.match(rest)
        if quoted is not None:
            sides.append(_unquote(quoted.group(1)))
            rest = rest[quoted.end() + 1:]
        elif not sides and b' "' in rest:  # unquoted old path, quoted new one
            old, _, rest = rest.rpartition(b' "')
            sides.append(old)
            rest = b'"' + rest
        elif not sides:  # both unquoted: equal halves when the path kept its name
            half = (len(rest) - 1) // 2
            if rest[half:half + 1] == b" " and rest[2:half] == rest[half + 3:]:
                return rest[2:half], rest[half + 3:]
            old, sep, new = rest.partition(b" b/")
            if not sep:
                return None
            return old[2:], new
        else:
            sides.append(rest)
    old, new = sides
    if not (old.startswith(b"a/") and new.startswith(b"b/")):
        return None
    return old[2:], new[2:]


def _read_patch(text: bytes, wanted: set[bytes], start: int = 0) -> list[_FileDiff]:
    """The files of a ``-U0`` patch from ``text[start]`` (a newline: see ``_PATCH_LINE``):
    each one's paths, whether the patch created it, and the ``def <wanted>`` lines it
    removed. Only the lines that can matter are visited: a patch's other lines start with
    ``+``, ``-``, a space, ``@`` or ``\\``, never with a header's words."""
    files: list[_FileDiff] = []
    paths: tuple[bytes, bytes] | None = None
    created = False
    removed: dict[str, None] = {}
    for line in _PATCH_LINE.finditer(text, start):
        name = line.group(2)
        if name is not None:
            if name in wanted and paths is not None:
                removed[name.decode()] = None
        elif line.group(1) is not None:
            if paths is not None:
                files.append(_file_diff(paths, created, removed))
            paths, created, removed = _header_paths(line.group(1)), False, {}
        else:
            created = True
    if paths is not None:
        files.append(_file_diff(paths, created, removed))
    return files


def _file_diff(paths: tuple[bytes, bytes], created: bool, removed: dict[str, None]) -> _FileDiff:
    old, new = (p.decode("utf-8", "surrogateescape") for p in paths)
    return _FileDiff(old, new, created, tuple(removed))


def _parse_commits(out: bytes, wanted: set[bytes]) -> Iterator[_Commit]:
    """``git log -p -U0`` output, newest commit first: each commit's files (see
    :func:`_read_patch`)."""
    for chunk in out.split(_SEPARATOR)[1:]:
        end = chunk.find(b"\n")
        fields = (chunk if end == -1 else chunk[:end]).split(b"\x1f")
        if len(fields) < 4:
            continue
        files = _read_patch(chunk, wanted, len(chunk) if end == -1 else end)
        yield _Commit(fields[0].decode(), fields[1].decode(), fields[3].decode(errors="replace"),
                      int(fields[2] or 0), tuple(files))


def _parse_log(out: bytes, wanted: set[bytes]) -> Iterator[_Removal]:
    """Removals of ``def <wanted>`` in ``git log -p -U0`` output, newest commit first."""
    for commit in _parse_commits(out, wanted):
        for diff in commit.files:
            for name in diff.removed:
                yield commit.removal(diff, name)
