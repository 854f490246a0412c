"""History evidence: which methods a class once defined, and which commit removed or renamed them.

Cost is bounded by design: history is read for ancestor *files* (never per candidate method),
scanning ``-U0`` patches for removed ``def`` lines of the candidate names only, then one
``cat-file --batch`` for the before/after blobs of just the commits that removed a candidate.
All ancestor files share one history walk (``git log -p -U0 -M -- <files>``), with earlier
names of renamed files included.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
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

_DIFF_HEADER = re.compile(rb"^diff --git a/(.*) b/(.*)$")
# In a patch: a file's header line, a created file's mode line, or a removed ``def`` line
# (its name); ``[^\S\n]`` is whitespace within the line.
_PATCH_LINE = re.compile(  # each match starts at the newline before the line
    rb"\n(?:(diff --git[^\n]*)|new file mode"
    rb"|-[^\S\n]*(?:async[^\S\n]+)?def[^\S\n]+([A-Za-z_][A-Za-z0-9_]*)[^\S\n]*\()"
)
_BLAME_HEADER = re.compile(rb"^[0-9a-f]{40} \d+ \d+")
_PATHS_PER_CALL = 500
_COMMITS_PER_CHUNK = 1500
_PATHS_PER_PATCH = 12  # paths per patch-writing process (see HistoryIndex._log_patches)
# Pathspec magic and wildcards: git would not read such a path literally; one command then.
_PATHSPEC_MAGIC = re.compile(rb"^:|[*?\[\\]")
_PATHSPEC_SETTINGS = ("GIT_GLOB_PATHSPECS", "GIT_NOGLOB_PATHSPECS", "GIT_ICASE_PATHSPECS",
                      "GIT_LITERAL_PATHSPECS")
_RAW = re.compile(  # a commit's id, or one change: status and path
    rb"\x1e([0-9a-f]+)\0|:[0-7]+ [0-7]+ [0-9a-f]+ [0-9a-f]+ ([A-Z])[0-9]*\0([^\0]*)\0")
_LOG_FORMAT = "--format=%x1e%H%x1f%h%x1f%ct%x1f%s"


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
                patch = self.repo.git("show", "--format=", "-U0", "--no-color", "--no-ext-diff",
                                      commit, "--", "*.py")
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

    def _previous_names(self, paths: Iterable[str]) -> dict[str, list[str]]:
        """Every name each path had, newest first, following renames back (each path on its
        own: the answer for one never depends on which others are asked about)."""
        lineages = {p: [p] for p in paths}
        if not lineages:
            return lineages
        out = self._renames()
        if out is None:
            return lineages
        renames: list[tuple[str, str]] = []  # (old, new), newest first
        for chunk in out.split(b"\x1e")[1:]:
            fields = [f for f in chunk.strip(b"\n\0").split(b"\0") if f]
            for index in range(0, len(fields) - 2, 3):
                status, old, new = fields[index: index + 3]
                if status.startswith(b"R"):
                    renames.append((old.decode(errors="surrogateescape"),
                                    new.decode(errors="surrogateescape")))
        for lineage in lineages.values():
            for before, after in renames:
                if after == lineage[-1] and before not in lineage:
                    lineage.append(before)
        return lineages

    def _renames(self) -> bytes | None:
        """Every rename in the history, newest first (stored per HEAD: one walk per commit)."""
        try:
            head = self.repo.resolve("HEAD")
        except GitError:
            head = ""
        key = f"renames:{head}"
        stored = self.store.get_history(key) if self.store is not None and head else None
        if isinstance(stored, bytes):
            return stored
        try:
            out = self.repo.git("log", "-M", "--diff-filter=R", "--name-status", "-z",
                                "--format=%x1e")
        except GitError as exc:
            self.errors.append(f"history: renames unavailable ({exc})")
            return None
        if self.store is not None and head:
            self.store.put_history(key, out)
        return out

    def _scan_many(self, names_by_path: Mapping[str, set[str]]) -> dict[str, list[_Removal]]:
        """Removed ``def`` lines of the wanted names in many files, in few history walks.

        Earlier names of each file (found through renames) are walked too, so the history of a
        moved base class is complete; rename commits are diffed as renames, not as deletions.
        Walking back, a path stops belonging to a file where that file was created, so a file
        later re-created under a moved file's old name never takes the moved file's history.
        """
        if not names_by_path:
            return {}
        lineages = self._previous_names(names_by_path)
        wanted = {n.encode() for names in names_by_path.values() for n in names}
        found: dict[str, list[_Removal]] = {p: [] for p in names_by_path}
        progress.start("commits")
        for group in _batches(lineages):
            pathspec = sorted({name for path in group for name in lineages[path]})
            self.git_logs += 1
            try:
                out = self._log_patches(pathspec)
            except GitError as exc:
                self.errors.append(f"history unavailable ({exc}); falling back to one file "
                                   "at a time")
                return {p: self._scan(p, names_by_path[p]) for p in names_by_path}
            owner = {path: path for path in group}  # a path, as of the commit being read
            for commit in _parse_commits(out, wanted):  # newest first
                progress.advance("commits")
                for diff in commit.files:
                    current = owner.get(diff.new_path)
                    if current is None:
                        continue
                    for name in diff.removed:
                        if name in names_by_path[current]:
                            found[current].append(commit.removal(diff, name))
                for diff in commit.files:  # step back to before this commit
                    if diff.old_path != diff.new_path and diff.new_path in owner:
                        owner[diff.old_path] = owner.pop(diff.new_path)
                    elif diff.created:
                        owner.pop(diff.new_path, None)
        progress.done("commits")
        return found

    def _log_patches(
        self, pathspec: Sequence[str], chunk_size: int = _COMMITS_PER_CHUNK,
        workers: int | None = None, group_size: int = _PATHS_PER_PATCH,
    ) -> bytes:
        """``git log -p -U0 -M -- <pathspec>``, the same bytes for a third of git's work.

        One walk lists the commits: history simplification makes that list depend on the
        whole pathspec, so it stays one walk, and it is cheap (a commit's first changed path
        settles it). Writing a commit's patch is not: git matches every entry of every tree it
        compares against every path of the pathspec, most of its time on a long one. So:

        - while the walk goes on, each chunk of its commits is listed raw *without* a pathspec
          (``diff-tree --stdin --raw``: only the trees that differ are read), and the files of
          the pathspec each commit changed are picked here;
        - the patches are written a few sorted paths at a time (``git log --no-walk``, as the
          single command writes them, so the user's diff settings apply alike), each process
          given only the commits that changed one of its paths, side by side on several cores;
        - a commit whose changes could pair as a rename (a deletion and an addition among the
          paths), or that changed anything but plain modifications, additions and deletions of
          the paths themselves, is written with the whole pathspec, as the walk would.

        Joined in the walk's order (a commit's files in path order, which is git's order for
        a diff without renames), the output is the same bytes as the single command's.
        """
        patch = ("-p", "-U0", "-M", "--no-color", "--no-ext-diff")
        cpus = max(1, workers if workers is not None else (os.cpu_count() or 1))
        paths = sorted(p.encode("utf-8", "surrogateescape") for p in pathspec)
        if not paths or any(_PATHSPEC_MAGIC.search(p) for p in paths) or any(
            os.environ.get(name) for name in _PATHSPEC_SETTINGS
        ):  # git would not read every path literally: the single command
            return self.repo.git("log", *patch, _LOG_FORMAT, "--", *pathspec)
        position = {path: index for index, path in enumerate(paths)}

        def changed(chunk: list[bytes]) -> bytes:
            return self.repo.git("diff-tree", "--stdin", "--root", "-r", "--raw", "-z",
                                 "--no-renames", "--no-abbrev", "--format=%x1e%H",
                                 input_=b"\n".join(chunk) + b"\n")

        def patches(commits: list[bytes], group: Sequence[bytes]) -> dict[bytes, bytes]:
            out = self.repo.git("log", "--no-walk=unsorted", "--stdin", *patch,
                                "--format=%x1e%H", "--",
                                *(p.decode("utf-8", "surrogateescape") for p in group),
                                input_=b"\n".join(commits) + b"\n")
            return _bodies(out)

        def wave(chunk: list[bytes]) -> dict[bytes, bytes]:
            """The patches of a run of the walk's commits, by commit."""
            touched = _raw_changes(changed(chunk))
            whole: list[bytes] = []  # commits written with the whole pathspec
            by_path: dict[int, list[bytes]] = {}  # path index -> commits changing it
            for commit in chunk:
                mine = [(status, path) for status, path in touched.get(commit, ())
                        if path in position or _under(path, position)]
                if not mine:
                    continue
                statuses = {status for status, _ in mine}
                if (not statuses <= {b"M", b"A", b"D"} or {b"A", b"D"} <= statuses
                        or any(path not in position for _, path in mine)):
                    whole.append(commit)
                    continue
                for _, path in mine:
                    by_path.setdefault(position[path], []).append(commit)
            rank = {commit: n for n, commit in enumerate(chunk)}
            parts = [patches(whole, paths)] if whole else []
            for group in _path_groups(by_path, group_size):  # in path order
                commits = sorted({c for index in group for c in by_path[index]},
                                 key=rank.__getitem__)
                parts.append(patches(commits, [paths[index] for index in group]))
            return {commit: b"".join(part[commit] for part in parts if commit in part)
                    for commit in chunk}

        headers: list[bytes] = []
        with ThreadPoolExecutor(max_workers=cpus) as pool:
            waves: list[Future[dict[bytes, bytes]]] = []
            chunk: list[bytes] = []
            for line in self.repo.git_lines("log", "--format=%H%x1f%h%x1f%ct%x1f%s", "--",
                                            *pathspec):
                headers.append(line)
                chunk.append(line.split(b"\x1f", 1)[0])
                if len(chunk) >= chunk_size:
                    waves.append(pool.submit(wave, chunk))
                    chunk = []
            if chunk:
                waves.append(pool.submit(wave, chunk))
            bodies: dict[bytes, bytes] = {}
            for done in waves:
                bodies.update(done.result())
        return b"".join(
            b"\x1e" + line + (b"\n\n" + body if body else b"\n")
            for line in headers
            for body in (bodies[line.split(b"\x1f", 1)[0]],)
        )

    def _scan(self, path: str, names: set[str], rev_range: str | None = None) -> list[_Removal]:
        self.git_logs += 1
        follow = [] if rev_range else ["--follow"]
        revs = [rev_range] if rev_range else []
        try:
            out = self.repo.git(
                "log", "-p", "-U0", "--no-color", "--no-ext-diff", *follow,
                _LOG_FORMAT, *revs, "--", path,
            )
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


def _parse_commits(out: bytes, wanted: set[bytes]) -> Iterator[_Commit]:
    """``git log -p -U0`` output, newest commit first: each file's paths, whether the commit
    created it, and the ``def <wanted>`` lines it removed. Only the lines that can matter are
    visited (one regular expression over each commit's patch, from the newline ending its
    header): a patch's other lines start with ``+``, ``-``, a space, ``@`` or ``\\``, never
    with a header's words."""
    for chunk in out.split(b"\x1e")[1:]:
        end = chunk.find(b"\n")
        fields = (chunk if end == -1 else chunk[:end]).split(b"\x1f")
        if len(fields) < 4:
            continue
        files: list[_FileDiff] = []
        old_path = new_path = ""
        created = False
        removed: dict[str, None] = {}
        for line in _PATCH_LINE.finditer(chunk, len(chunk) if end == -1 else end):
            name = line.group(2)
            if name is not None:
                if name in wanted:
                    removed[name.decode()] = None
            elif line.group(1) is not None:
                match = _DIFF_HEADER.match(line.group(1))
                if match:
                    if old_path or new_path:
                        files.append(_FileDiff(old_path, new_path, created, tuple(removed)))
                    old_path, new_path = match.group(1).decode(), match.group(2).decode()
                    created, removed = False, {}
            else:
                created = True
        if old_path or new_path:
            files.append(_FileDiff(old_path, new_path, created, tuple(removed)))
        yield _Commit(fields[0].decode(), fields[1].decode(), fields[3].decode(errors="replace"),
                      int(fields[2] or 0), tuple(files))


def _parse_log(out: bytes, wanted: set[bytes]) -> Iterator[_Removal]:
    """Removals of ``def <wanted>`` in ``git log -p -U0`` output, newest commit first."""
    for commit in _parse_commits(out, wanted):
        for diff in commit.files:
            for name in diff.removed:
                yield commit.removal(diff, name)


def _raw_changes(out: bytes) -> dict[bytes, list[tuple[bytes, bytes]]]:
    """``diff-tree --stdin --raw -z --no-renames --format=%x1e%H`` output: each commit's
    (status, path) changes, in git's order."""
    changes: dict[bytes, list[tuple[bytes, bytes]]] = {}
    current: list[tuple[bytes, bytes]] = []
    for match in _RAW.finditer(out):
        if match.group(1) is not None:
            current = changes.setdefault(match.group(1), [])
        else:
            current.append((match.group(2), match.group(3)))
    return changes


def _under(path: bytes, paths: Mapping[bytes, int]) -> bool:
    """Whether a directory above ``path`` is in ``paths`` (git's pathspec matches it too)."""
    slash = path.find(b"/")
    while slash != -1:
        if path[:slash] in paths:
            return True
        slash = path.find(b"/", slash + 1)
    return False


def _bodies(out: bytes) -> dict[bytes, bytes]:
    """``git log --format=%x1e%H -p`` output: each commit's patch text."""
    bodies: dict[bytes, bytes] = {}
    for chunk in out.split(b"\x1e")[1:]:
        commit, _, body = chunk.partition(b"\n")
        bodies[commit] = body[1:] if body.startswith(b"\n") else body
    return bodies


def _path_groups(by_path: Mapping[int, list[bytes]], size: int) -> Iterator[list[int]]:
    """Runs of at most ``size`` consecutive paths (in sorted order) that some commit changed."""
    indexes = sorted(by_path)
    for start in range(0, len(indexes), max(1, size)):
        yield indexes[start:start + size]


def _batches(lineages: Mapping[str, list[str]]) -> Iterator[list[str]]:
    """The paths in groups whose names (with their earlier ones) fill one ``git log`` call;
    a path never shares a call with only part of its own names."""
    group: list[str] = []
    size = 0
    for path in sorted(lineages):
        names = len(lineages[path])
        if group and size + names > _PATHS_PER_CALL:
            yield group
            group, size = [], 0
        group.append(path)
        size += names
    if group:
        yield group
