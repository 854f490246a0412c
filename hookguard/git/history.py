"""History evidence: which methods a class once defined, and which commit removed or renamed them.

Cost is bounded by design: history is read for ancestor *files* (never per candidate method).
One ``git log --raw`` of the whole history (no pathspec: matching one against every tree of a
long history costs more than the walk) follows each file back through its renames; ``-U0``
patches of just the commits that modified one are scanned for removed ``def`` lines of the
candidate names; then one ``cat-file --batch`` reads the before/after blobs of just the
commits that removed a candidate.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Protocol

from hookguard import progress
from hookguard.git.blobs import BlobJob, class_qualnames, classes_of, parallel_map
from hookguard.git.changes import HookChange, pair_renames
from hookguard.git.repo import GitError, Repo
from hookguard.model.extract import parse_quietly
from hookguard.model.records import ClassRecord

__all__ = ["HistoryIndex", "HistoryStore", "HookChange", "pair_renames"]

# In a patch: a file's header line, a created file's mode line, or a removed ``def`` line
# (its name); ``[^\S\n]`` is whitespace within the line.
_PATCH_LINE = re.compile(  # each match starts at the newline before the line
    rb"\n(?:(diff --git[^\n]*)|new file mode"
    rb"|-[^\S\n]*(?:async[^\S\n]+)?def[^\S\n]+([A-Za-z_][A-Za-z0-9_]*)[^\S\n]*\()"
)
_BLAME_HEADER = re.compile(rb"^[0-9a-f]{40} \d+ \d+")
_MODIFIED_PER_WAVE = 2000  # commits whose patches are asked for while the walk goes on
_PATHS_PER_PATCH = 12  # paths per patch-writing process (see HistoryIndex._walk)
# One commit of the walk (``--format=%x1e%H%x1f%h%x1f%ct%x1f%P%x1f%s``, ``--raw -z``): its header,
# then each change: status (with a rename's score) and path, or old and new paths.
_RECORD_HEAD = re.compile(
    rb"([0-9a-f]+)\x1f([0-9a-f]+)\x1f([0-9]*)\x1f([0-9a-f ]*)\x1f([^\0]*)\0")
_RAW_CHANGE = re.compile(
    rb":[0-7]+ [0-7]+ [0-9a-f]+ [0-9a-f]+ (?:([RC])([0-9]*)\0([^\0]*)\0|([A-Z])[0-9]*\0)([^\0]*)\0")
_QUOTED = re.compile(rb'"((?:[^"\\]|\\.)*)"')
_ESCAPE = re.compile(rb"\\([0-7]{3}|.)", re.DOTALL)
_ESCAPES = {b"a": b"\a", b"b": b"\b", b"f": b"\f", b"n": b"\n", b"r": b"\r", b"t": b"\t",
            b"v": b"\v"}
_LOG_FORMAT = "--format=%x1e%H%x1f%h%x1f%ct%x1f%s"
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
    if any(name in klass.self_refs for klass in line.values()):
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
                if name in klass.self_refs:
                    return True
    return False


def _store_key(request: tuple[str, Mapping[str, set[str]], str, bool, str], boundary: str) -> str:
    path, wanted, module, _, content = request
    question = sorted((q, sorted(names)) for q, names in wanted.items())
    return f"lost:{boundary}:{path}:{content}:{module}:{question}"


@dataclass(frozen=True, slots=True)
class _Removal:
    commit: str
    short: str
    subject: str
    when: int
    old_path: str
    new_path: str
    name: str


class _Versions:
    """Old file versions of one batch: the object id of each ``rev:path`` read, and the
    classes parsed from each (object, module) pair; None where the outline ruled out every
    method asked about."""

    def __init__(self, ids: dict[str, str], blobs: dict[str, bytes]) -> None:
        self.ids = ids
        self.blobs = blobs
        self.parsed: dict[tuple[str, str, bool], dict[str, ClassRecord] | None] = {}

    def parse(self, jobs: Sequence[BlobJob], keys: Sequence[tuple[str, str, bool]]) -> None:
        self.parsed.update(zip(keys, parallel_map(classes_of, jobs), strict=True))

    def classes(self, spec: str, module: str, is_package: bool, *, full: bool) -> dict[
        str, ClassRecord
    ]:
        """The classes of the version ``spec`` names ({} when there is none). Unless
        ``full``, a version whose outline ruled out the methods asked about has none."""
        blob = self.ids.get(spec)
        if blob is None:
            return {}
        key = (blob, module, is_package)
        if key not in self.parsed or (full and self.parsed[key] is None):
            # Not foreseen by the batch: parse it fully now.
            self.parsed[key] = classes_of(BlobJob(spec, module, is_package, self.blobs[blob]))
        return self.parsed[key] or {}


class HistoryStore(Protocol):
    """Where answers are kept between runs (the record cache)."""

    def get_history(self, key: str) -> object | None: ...

    def put_history(self, key: str, value: object) -> None: ...


class HistoryIndex:
    """Answers "when did class X lose method m?" for many candidates with few git calls.

    Answers are stored by (file path, file content, question): a file's history only matters
    up to its current content, so an unchanged file never runs ``git log`` again.
    """

    def __init__(self, repo: Repo, store: HistoryStore | None = None) -> None:
        self.repo = repo
        self.store = store
        self.shallow = repo.is_shallow()
        self.boundary = repo.history_boundary()  # answers hold for this shallow boundary only
        self.errors: list[str] = []
        self.git_logs = 0
        self.blobs_parsed = 0  # history blobs parsed (one per distinct content and file)
        self._commit_patches: dict[str, bytes] = {}

    def lost_methods_many(
        self, requests: Sequence[tuple[str, Mapping[str, set[str]], str, bool, str]]
    ) -> dict[str, dict[tuple[str, str], HookChange]]:
        """:meth:`lost_methods` for many files (the last item of a request is the file's
        content key); stored answers are reused, the rest share one history walk and one
        parallel parse of the old versions."""
        answers: dict[str, dict[tuple[str, str], HookChange]] = {}
        missing: list[tuple[str, Mapping[str, set[str]], str, bool, str]] = []
        for request in requests:
            key = _store_key(request, self.boundary)
            stored = self.store.get_history(key) if self.store else None
            if isinstance(stored, dict):
                answers[request[0]] = stored
            else:
                missing.append(request)

        scanned = self._scan_many(
            {path: set().union(*wanted.values()) for path, wanted, *_ in missing}
        )
        versions = self._versions([(path, wanted, module, is_package, scanned.get(path, []))
                                   for path, wanted, module, is_package, _ in missing])
        for request in missing:
            path, wanted, module, is_package, content = request
            found = self.lost_methods(path, wanted, module, is_package, scanned.get(path, []),
                                      versions)
            answers[path] = found
            if self.store is not None and content and not any(
                e.startswith(f"{path}:") for e in self.errors
            ):
                self.store.put_history(_store_key(request, self.boundary), found)
        return answers

    def _versions(
        self, files: Sequence[tuple[str, Mapping[str, set[str]], str, bool, list[_Removal]]]
    ) -> _Versions:
        """The old versions the removals in ``files`` need, read in one batch and parsed in
        parallel: every version before a removal (as an outline first: see
        :mod:`hookguard.git.blobs`), then the version after each removal whose class had
        the method before it."""
        specs: list[str] = []
        for _, _, _, _, removals in files:
            for r in removals:
                specs += [f"{r.commit}^:{r.old_path}", f"{r.commit}:{r.new_path}"]
                if r.old_path != r.new_path:
                    specs.append(f"{r.commit}:{r.old_path}")
        ids, blobs = self.repo.read_blobs_by_id(list(dict.fromkeys(specs)))
        versions = _Versions(ids, blobs)

        def questions() -> Iterator[tuple[_Removal, str, bool, list[str]]]:
            for _, wanted, module, is_package, removals in files:
                for r in removals:
                    if r.old_path != r.new_path and f"{r.commit}:{r.old_path}" in ids:
                        continue  # a copy (see :meth:`lost_methods`): never parsed
                    asked = [q for q, names in wanted.items() if r.name in names]
                    if asked:
                        yield r, module, is_package, asked

        probes: dict[tuple[str, str, bool], set[tuple[str, str]]] = {}
        names: dict[tuple[str, str, bool], str] = {}
        for r, module, is_package, asked in questions():
            spec = f"{r.commit}^:{r.old_path}"
            blob = ids.get(spec)
            if blob is not None:
                key = (blob, module, is_package)
                names.setdefault(key, spec)
                probes.setdefault(key, set()).update(
                    (q.rsplit(".", 1)[-1], r.name) for q in asked)
        versions.parse([BlobJob(names[k], k[1], k[2], blobs[k[0]], frozenset(p))
                        for k, p in probes.items()], list(probes))
        self.blobs_parsed += len(probes)

        after: dict[tuple[str, str, bool], str] = {}
        for r, module, is_package, asked in questions():
            before = versions.parsed.get((ids.get(f"{r.commit}^:{r.old_path}", ""), module,
                                          is_package))
            spec = f"{r.commit}:{r.new_path}"
            blob = ids.get(spec)
            if before and blob is not None and any(
                q in before and r.name in before[q].methods for q in asked
            ) and versions.parsed.get((blob, module, is_package)) is None:
                after.setdefault((blob, module, is_package), spec)
        versions.parse([BlobJob(spec, k[1], k[2], blobs[k[0]]) for k, spec in after.items()],
                       list(after))
        self.blobs_parsed += len(after)
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
            if not open_classes:
                continue
            before = versions.classes(f"{removal.commit}^:{removal.old_path}", module,
                                      is_package, full=False)
            had = [q for q in open_classes
                   if q in before and removal.name in before[q].methods]
            if not had:
                continue
            after = versions.classes(f"{removal.commit}:{removal.new_path}", module,
                                     is_package, full=True)
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
                                                 removal.old_path),
                    refused=self._commit_names(removal.commit, removal.name, removal.old_path,
                                               b"+"),
                    when=removal.when,
                )
        return found

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
        quoted = re.escape(name.encode())
        member = re.compile(rb"^-.*\bself(?:\.\w+)+\." + quoted + rb"\(", re.MULTILINE)
        if member.search(patch):
            return True
        return self._commit_names(commit, name, path, b"-")

    def _commit_names(self, commit: str, name: str, path: str, sign: bytes) -> bool:
        """Whether ``commit`` removed (``sign`` b"-") or added (b"+") the string ``"name"``
        in a file other than ``path`` that has no method of that name: a dispatch by name
        dropped, or a validator that refuses the hook added."""
        patch = self._patch(commit)
        quoted = re.escape(name.encode())
        literal = re.compile(rb"^" + re.escape(sign) + rb".*(['\"])" + quoted + rb"\1",
                             re.MULTILINE)
        copy = re.compile(rb"^[-+ ]\s*(?:async\s+)?def\s+" + quoted + rb"\b", re.MULTILINE)
        own = b" a/" + path.encode() + b" "
        return any(  # a file with its own copy of the method holds a message, not a call
            literal.search(chunk) for chunk in patch.split(b"\ndiff --git")
            if own not in chunk.split(b"\n", 1)[0] + b" " and not copy.search(chunk)
        )

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
        before, after = f"{commit}^:{path}", f"{commit}:{path}"
        try:
            blobs = self.repo.read_blobs([before, after])
        except GitError:
            return False
        if before not in blobs or after not in blobs:
            return False
        try:
            had = qualname in class_qualnames(parse_quietly(blobs[before], path))
            has = qualname in class_qualnames(parse_quietly(blobs[after], path))
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return False
        return has and not had

    def written_after(
        self, path: str, start: int, end: int, when: int, change: str = ""
    ) -> bool:
        """Whether every committed line of ``path[start:end]`` is newer than ``when``, or was
        written by ``change`` (the commit that removed the hook) itself.

        Then the method was written after the hook it seems to override had gone, or by the
        change that removed it (a method moved down into a new subclass): a method that reuses
        an old name knowingly, not a forgotten override. Uncommitted lines prove nothing.
        """
        try:
            out = self.repo.git("blame", "--porcelain", "-L", f"{start},{end}", "--", path)
        except GitError:
            return False
        times: list[int] = []
        commit = b""
        for line in out.split(b"\n"):
            if _BLAME_HEADER.match(line):
                commit = line[:40]
            elif line.startswith(b"committer-time ") and commit.strip(b"0"):
                written = int(line.split()[1])
                sha = commit.decode("ascii")
                if change and (sha == change or (written == when and self._descends(sha, change))):
                    written = when + 1  # the change itself, or a commit on top of it that
                    # bears its second (a rebased series)
                times.append(written)
        return bool(times) and min(times) > when

    def _descends(self, commit: str, ancestor: str) -> bool:
        try:
            self.repo.git("merge-base", "--is-ancestor", ancestor, commit)
        except GitError:
            return False
        return True

    def _scan_many(self, names_by_path: Mapping[str, set[str]]) -> dict[str, list[_Removal]]:
        """Removed ``def`` lines of the wanted names in many files: one walk of the whole
        history, then patches of just the commits that modified those files.

        The walk (``git log -M --raw``, no pathspec) names every file each commit changed and
        every rename, so each file is followed back through its earlier names; walking back, a
        path stops belonging to a file where that file was created, so a file later
        re-created under a moved file's old name never takes the moved file's history.
        """
        if not names_by_path:
            return {}
        wanted = {n.encode() for names in names_by_path.values() for n in names}
        found: dict[str, list[_Removal]] = {p: [] for p in names_by_path}
        try:
            touches, bodies = self._walk(names_by_path)
        except GitError as exc:
            self.errors.append(f"history unavailable ({exc}); falling back to one file at a "
                               "time")
            return {p: self._scan(p, names_by_path[p]) for p in names_by_path}
        for touch in touches:  # newest first
            for diff in _read_patch(bodies.get(touch.commit, b""), wanted):
                owner = touch.owners.get(diff.new_path)
                if owner is None:
                    continue
                found[owner].extend(
                    _Removal(touch.commit, touch.short, touch.subject, touch.when,
                             diff.old_path, diff.new_path, name)
                    for name in diff.removed if name in names_by_path[owner])
        return found

    def _walk(
        self, names_by_path: Mapping[str, set[str]], wave_size: int = _MODIFIED_PER_WAVE,
        workers: int | None = None, group_size: int = _PATHS_PER_PATCH,
    ) -> tuple[list[_Touch], dict[str, bytes]]:
        """The commits that modified the files asked about (newest first), and their patches.

        A pathspec would make git match every tree entry of every commit against every path
        of it (most of a long walk's time), so the walk lists every commit's changes and the
        files asked about are picked here. Patches are written only for modifications (an
        added or deleted file never loses a method from a class that stays), a few sorted
        paths at a time, each process given only the commits that changed one of its paths,
        side by side on several cores while the walk goes on; a commit that renamed or
        retyped one of the files is written with just its own paths.
        """
        lineage = _Lineage({p.encode("utf-8", "surrogateescape"): p for p in names_by_path})
        cpus = max(1, workers if workers is not None else (os.cpu_count() or 1))
        touches: list[_Touch] = []
        wave: list[_Touch] = []
        progress.start("commits")
        self.git_logs += 1
        with ThreadPoolExecutor(max_workers=cpus) as pool:
            parts: list[Future[dict[str, bytes]]] = []

            def flush() -> None:
                parts.extend(pool.submit(self._patches, commits, paths)
                             for commits, paths in _patch_jobs(wave, group_size))
                wave.clear()

            for record in self.repo.git_records(
                "log", "--date-order", "-M", "--raw", "-z", "--no-color",
                "--format=%x1e%H%x1f%h%x1f%ct%x1f%P%x1f%s", separator=b"\x1e",
            ):
                progress.advance("commits")
                touch = _read_record(record, lineage)
                if touch is not None:
                    touches.append(touch)
                    if touch.paths:
                        wave.append(touch)
                        if len(wave) >= wave_size:
                            flush()
            flush()
            bodies: dict[str, bytes] = {}
            for part in parts:
                for commit, body in part.result().items():
                    bodies[commit] = bodies.get(commit, b"") + body
        progress.done("commits")
        return touches, bodies

    def _patches(self, commits: Sequence[str], paths: Sequence[str]) -> dict[str, bytes]:
        """Each commit's ``-U0`` patch for ``paths`` (read literally, whatever the paths)."""
        out = self.repo.git("--literal-pathspecs", "log", "--no-walk=unsorted", "--stdin",
                            *_PATCH, "-M", "--format=%x1e%H", "--", *paths,
                            input_="".join(f"{c}\n" for c in commits).encode())
        return {commit.decode(): body for commit, body in _bodies(out).items()}

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


@dataclass(frozen=True, slots=True)
class _Touch:
    """A commit of the walk that changed a file asked about."""

    commit: str
    short: str
    subject: str
    when: int
    owners: dict[str, str]  # a changed path (after the commit) -> the file asked about
    paths: tuple[str, ...]  # the paths its patch is written for; () when nothing can be lost
    plain: bool  # only modified in place: its patch can be written a path group at a time


class _Lineage:
    """Which file asked about each path belongs to, commit by commit, as the walk goes back
    (``--date-order``: a commit comes after all its children). Each commit hands its parents
    the paths as they were before it: a file created on a branch (an imported history's root
    commit, say) ends its path on that branch only, not on the main line beside it."""

    def __init__(self, head: dict[bytes, str]) -> None:
        self.head: dict[bytes, str] | None = head
        self.pending: dict[bytes, dict[bytes, str]] = {}  # commit -> its children's paths
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
    it changed none of them."""
    head = _RECORD_HEAD.match(record)
    if head is None:
        return None
    owner = lineage.at(head.group(1))
    mine: list[tuple[bytes, bytes, bytes, bytes]] = []  # status, score, old path, new path
    owners: dict[str, str] = {}

    def text(path: bytes) -> str:
        return path.decode("utf-8", "surrogateescape")

    if owner or lineage.renamed:
        for change in _RAW_CHANGE.finditer(record, head.end()):
            new = change.group(5)
            file = owner.get(new) or lineage.renamed.get(new)
            if file is not None:
                owners[text(new)] = file
                if change.group(1):
                    mine.append((change.group(1), change.group(2), change.group(3), new))
                else:
                    mine.append((change.group(4), b"", new, new))
    if not mine:
        lineage.hand_down(head.group(4), owner)
        return None

    paths: list[str] = []
    plain = True
    for status, score, old, new in mine:
        if status == b"M":
            paths.append(text(new))
        elif status == b"R" and score != b"100":  # renamed and edited
            paths += [text(old), text(new)]
            plain = False
    before = owner
    if any(status in (b"A", b"C", b"R") for status, *_ in mine):
        before = dict(owner)  # the paths before this commit, for its parents
        for status, _, _, new in mine:  # created here (a copy too): older commits are not its
            if status in (b"A", b"C"):
                before.pop(new, None)
                lineage.renamed.pop(new, None)
        for status, _, old, new in mine:
            if status == b"R":
                file = owners[text(new)]
                before.pop(new, None)
                before[old] = lineage.renamed[old] = file
    lineage.hand_down(head.group(4), before)
    return _Touch(head.group(1).decode(), head.group(2).decode(),
                  head.group(5).decode(errors="replace"), int(head.group(3) or 0), owners,
                  tuple(paths), plain)


def _patch_jobs(
    touches: Sequence[_Touch], group_size: int
) -> Iterator[tuple[list[str], list[str]]]:
    """(commits, paths) for each patch-writing process: a renaming commit with its own paths;
    the rest by runs of ``group_size`` sorted paths, each with the commits that changed one."""
    by_path: dict[str, list[str]] = {}
    for touch in touches:
        if not touch.plain:
            yield [touch.commit], list(dict.fromkeys(touch.paths))
            continue
        for path in touch.paths:
            by_path.setdefault(path, []).append(touch.commit)
    paths = sorted(by_path)
    for start in range(0, len(paths), max(1, group_size)):
        group = paths[start:start + group_size]
        yield list(dict.fromkeys(c for path in group for c in by_path[path])), group


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
    for chunk in out.split(b"\x1e")[1:]:
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


def _bodies(out: bytes) -> dict[bytes, bytes]:
    """``git log --format=%x1e%H -p`` output: each commit's patch text, from the newline
    before its first line."""
    bodies: dict[bytes, bytes] = {}
    for chunk in out.split(b"\x1e")[1:]:
        commit, newline, body = chunk.partition(b"\n")
        bodies[commit] = newline + body
    return bodies
