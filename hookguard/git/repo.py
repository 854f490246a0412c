"""A thin, typed wrapper over the ``git`` command line.

Every call is read-only. Blobs are read through ``git cat-file --batch``: one process per
request, or one kept open for many (:class:`BlobReader`).

File names are bytes to git, and a committed name may hold any byte but NUL: a newline, a
space, bytes that are not UTF-8. Names travel as ``str`` decoded with ``surrogateescape``
(:func:`os.fsdecode`'s way: every byte comes back out unchanged), lists are read in their
NUL-separated forms (``-z``), and ``cat-file --batch`` reads NUL-terminated names where git
allows it (``-z``, git 2.38); its answers are matched against the name asked for, so no name
can pass for another answer (see :func:`_batch_header`).
"""

from __future__ import annotations

import contextlib
import fnmatch
import functools
import hashlib
import os
import re
import subprocess
import sys
import tempfile
import threading
from collections.abc import Generator, Iterable, Iterator, Sequence
from dataclasses import dataclass
from io import BytesIO
from pathlib import Path
from typing import IO


def _widen(pipe: IO[bytes]) -> None:
    """Give a pipe git writes much through a larger buffer where the system allows (Linux):
    fewer wake-ups on both sides (a third less system time reading history's versions)."""
    if sys.platform == "linux":
        import fcntl

        with contextlib.suppress(OSError):
            fcntl.fcntl(pipe.fileno(), fcntl.F_SETPIPE_SZ, 1 << 20)


class GitError(Exception):
    """A git command failed; ``str()`` is one line naming what and why."""


# Pathspec settings of the user's environment would change what our paths mean to git.
_ENV = {**{k: v for k, v in os.environ.items()
           if not (k.startswith("GIT_") and k.endswith("_PATHSPECS"))},
        "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"}


def _git(cwd: Path, args: Sequence[str], *, input_: bytes | None = None) -> bytes:
    try:
        proc = subprocess.run(
            ["git", *args], cwd=cwd, input=input_, capture_output=True, env=_ENV, check=False
        )
    except FileNotFoundError:
        raise GitError("git is not installed") from None
    if proc.returncode != 0:
        detail = proc.stderr.decode(errors="replace").strip().splitlines()
        raise GitError(detail[-1] if detail else f"git {args[0]} failed")
    return proc.stdout


@dataclass(frozen=True)
class TreeEntry:
    path: str
    blob: str


class Repo:
    def __init__(self, root: Path) -> None:
        self.root = root
        self._boundary: str | None = None
        self._stems: frozenset[str] | None = None  # see :meth:`deleted_module`

    @classmethod
    def discover(cls, path: Path) -> Repo | None:
        """The repository containing ``path``, or None when it is not in a git work tree."""
        start = path if path.is_dir() else path.parent
        try:
            top = os.fsdecode(_git(start, ["rev-parse", "--show-toplevel"]).rstrip(b"\n"))
        except (GitError, OSError):
            return None
        return cls(Path(top))

    def git(self, *args: str, input_: bytes | None = None) -> bytes:
        return _git(self.root, args, input_=input_)

    def git_records(self, *args: str, separator: bytes) -> Generator[bytes, None, None]:
        """The output of a git command cut into records, each starting with ``separator``
        (left out), as git writes them; GitError at the end when it fails. Closing the
        iterator early stops the command."""
        chunks = self.git_output(*args)
        try:
            yield from split_records(chunks, separator)
        finally:
            chunks.close()

    def git_output(self, *args: str) -> Generator[bytes, None, None]:
        """The output of a git command, chunk by chunk as the pipe holds it (up to 1 MiB a
        chunk); GitError at the end when it fails. Closing the iterator early stops it."""
        with tempfile.TemporaryFile() as errors:
            try:
                # GIT_FLUSH=0: git log flushes each commit to a pipe otherwise, one small
                # write (and read) per commit: a tenth of the system calls this way
                proc = subprocess.Popen(["git", *args], cwd=self.root, stdout=subprocess.PIPE,
                                        stderr=errors, env={**_ENV, "GIT_FLUSH": "0"})
            except FileNotFoundError:
                raise GitError("git is not installed") from None
            assert proc.stdout is not None
            _widen(proc.stdout)
            finished = False
            try:
                # One buffer, filled again and again (a fresh 1 MiB buffer a call would be
                # mapped and unmapped each time): a reader that waits long for the GIL still
                # takes what the pipe holds in one call.
                buffer = bytearray(1 << 20)
                view = memoryview(buffer)
                read = proc.stdout.raw.readinto  # type: ignore[attr-defined]
                while size := read(view):
                    yield bytes(view[:size])
                finished = True
            finally:
                view.release()
                if not finished:
                    proc.kill()
                proc.stdout.close()
                code = proc.wait()
            if code != 0:
                errors.seek(0)
                detail = errors.read().decode(errors="replace").strip().splitlines()
                raise GitError(detail[-1] if detail else f"git {args[0]} failed")

    def history_state(self) -> str:
        """What history evidence depends on besides the files: HEAD and
        :meth:`history_boundary`. Empty when there is no HEAD."""
        try:
            head = self.resolve("HEAD")
        except GitError:
            return ""
        return f"{head}:{self.history_boundary()}"

    def history_boundary(self) -> str:
        """A digest of the shallow boundary and grafts: ``git fetch --deepen`` changes the
        history a run sees without moving HEAD or changing a file. Read once per Repo."""
        if self._boundary is not None:
            return self._boundary
        digest = hashlib.sha1()
        try:
            names = self.git("rev-parse", "--git-path", "shallow", "--git-path", "info/grafts")
        except GitError:
            return ""
        for name in os.fsdecode(names).splitlines():
            with contextlib.suppress(OSError):  # no such file: not shallow, no grafts
                digest.update((self.root / name).read_bytes())
            digest.update(b"\0")
        self._boundary = digest.hexdigest()[:16]
        return self._boundary

    def is_shallow(self) -> bool:
        try:
            return self.git("rev-parse", "--is-shallow-repository").strip() == b"true"
        except GitError:
            return False

    def resolve(self, rev: str) -> str:
        """The commit sha of ``rev``; GitError when it does not name a commit here."""
        return self.git("rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}").decode().strip()

    def merge_base(self, a: str, b: str) -> str:
        return self.git("merge-base", a, b).decode().strip()

    def has_head(self) -> bool:
        try:
            self.resolve("HEAD")
        except GitError:
            return False
        return True

    def ls_files(self, pathspecs: Iterable[str]) -> list[str]:
        """Tracked and untracked-but-not-ignored files, honouring every ``.gitignore``."""
        out = self.git(
            "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", *pathspecs
        )
        return sorted({p for p in out.decode("utf-8", "surrogateescape").split("\0") if p})

    def ls_tree(self, rev: str) -> list[TreeEntry]:
        out = self.git("ls-tree", "-r", "-z", "--full-tree", rev)
        entries = []
        for item in out.decode("utf-8", "surrogateescape").split("\0"):
            if not item:
                continue
            meta, path = item.split("\t", 1)
            mode, kind, sha = meta.split()
            if kind == "blob" and mode != "120000":
                entries.append(TreeEntry(path, sha))
        return entries

    def ls_index(self) -> list[TreeEntry]:
        """The staged tree: what ``git commit`` would record now."""
        out = self.git("ls-files", "-z", "--stage")
        entries = []
        for item in out.decode("utf-8", "surrogateescape").split("\0"):
            if not item:
                continue
            meta, path = item.split("\t", 1)
            mode, sha, stage = meta.split()
            if stage == "0" and mode != "120000":
                entries.append(TreeEntry(path, sha))
        return entries

    def read_blobs(self, shas: Sequence[str]) -> dict[str, bytes]:
        """Contents of many blobs (or ``rev:path`` names) through one ``cat-file --batch``."""
        ids, blobs = self.read_blobs_by_id(shas)
        return {name: blobs[sha] for name, sha in ids.items()}

    def each_blob(
        self, names: Sequence[str], max_size: int
    ) -> Generator[tuple[str, bytes | None, int], None, None]:
        """Each named object's contents, one at a time as ``git cat-file --batch`` writes
        them (memory for one object, whatever their number), with its size: None for one
        that is missing (size -1) or over ``max_size`` (read past, never kept)."""
        if not names:
            return
        reader = BlobReader(self.root)
        try:
            yield from reader.read(names, max_size)
        finally:
            reader.close()

    def read_blobs_by_id(
        self, names: Sequence[str]
    ) -> tuple[dict[str, str], dict[str, bytes]]:
        """Many blobs (or ``rev:path`` names) through one ``cat-file --batch``: each name's
        object id, and each distinct object's contents once."""
        if not names:
            return {}, {}
        sent = _batch_names(self.root, names)
        out = self.git(*_batch_args(), input_=_batch_request(sent))
        stream = BytesIO(out)
        ids: dict[str, str] = {}
        blobs: dict[str, bytes] = {}
        for name, asked in zip(names, sent, strict=True):
            found = _batch_header(stream, asked)
            if found is None:
                continue
            sha, size = found
            ids[name] = sha
            data = stream.read(size)
            if len(data) != size or stream.read(1) != b"\n":
                raise GitError("git cat-file stopped early")
            blobs.setdefault(sha, data)
        return ids, blobs

    def deleted_module(self, stem: str) -> str | None:
        """``short (subject)`` of the commit that deleted the module at ``stem``
        (``pkg/sub/name``: its ``name.py`` or its ``name/__init__.py``), when ``HEAD``'s tree
        has no file or folder called ``name`` or ``name.<suffix>`` anywhere (a module in any
        form, a package, an extension or its source, wherever a build takes it from:
        enaml's ``enaml/src/funchelper.cpp`` builds ``enaml.core.funchelper``) and no
        ``.gitignore`` of ``HEAD`` may ignore it (:func:`may_ignore`: a module deleted to be
        generated, as a ``_version.py`` handed to setuptools-scm); None otherwise, when no
        commit deleted it (never committed: generated, built), or when git cannot tell. Only
        ``HEAD`` is read, so the answer changes with it alone."""
        name = stem.rpartition("/")[2]
        try:
            if self._stems is None:
                listing = os.fsdecode(self.git("ls-tree", "-r", "-t", "-z", "--name-only",
                                               "HEAD")).split("\0")
                self._stems = frozenset(e.rpartition("/")[2].split(".")[0] for e in listing)
            if name in self._stems:
                return None
            out = self.git("--literal-pathspecs", "log", "-1", "--diff-filter=D",
                           "--format=%h (%s)", "HEAD", "--", f"{stem}.py",
                           f"{stem}/__init__.py")
        except GitError:
            return None
        commit = out.decode(errors="replace").strip()
        if not commit:
            return None
        parts = stem.split("/")
        for depth in range(len(parts)):  # the ``.gitignore`` of each folder above it
            try:
                rules = self.git("cat-file", "blob",
                                 "HEAD:" + "/".join([*parts[:depth], ".gitignore"]))
            except GitError:
                continue  # (none there)
            below = "/".join(parts[depth:])
            if may_ignore(os.fsdecode(rules), (f"{below}.py", f"{below}/__init__.py")):
                return None
        return commit

    def removed_definition(self, path: str, name: str) -> str | None:
        """``short (subject)`` of the newest commit that added or removed a line of the file
        at ``path`` defining ``name`` at module level (``def name``, ``class name``, ``name =``,
        ``name:``), reading ``HEAD``'s history of that path; None when none did or git cannot
        tell. Asked about a name ``HEAD``'s file never spells, that commit removed it."""
        word = re.escape(name)
        pattern = (rf"^(async[[:space:]]+)?(def|class)[[:space:]]+{word}([^[:alnum:]_]|$)"
                   rf"|^{word}[[:space:]]*[:=]")  # (``-G`` reads an extended expression)
        try:
            out = self.git("--literal-pathspecs", "log", "-1", "--format=%h (%s)",
                           f"-G{pattern}", "HEAD", "--", path)
        except GitError:
            return None
        return out.decode(errors="replace").strip() or None

    def last_commit(self, rev_range: str, path: str) -> str:
        """``short (subject)`` of the newest commit in ``rev_range`` touching ``path``."""
        try:
            out = self.git("--literal-pathspecs", "log", "-1", "--format=%h (%s)", rev_range,
                           "--", path)
        except GitError:
            return ""
        return out.decode(errors="replace").strip()


def may_ignore(rules: str, paths: Iterable[str]) -> bool:
    """Whether a ``.gitignore`` holding ``rules`` may ignore one of ``paths`` (relative to its
    folder) or a folder above one: each pattern, its leading ``/`` and trailing ``/`` cut,
    matched with :func:`fnmatch.fnmatch` (whose ``*`` also crosses ``/``) against each path,
    each folder above it and their last parts. It answers yes more often than git (a
    negation ``!pattern`` is read as a pattern), never less: a yes only takes a proof away."""
    patterns = []
    for line in rules.splitlines():
        pattern = line.strip().lstrip("!").strip("/")
        if pattern and not pattern.startswith("#"):
            patterns.append(pattern)
    if not patterns:
        return False
    for path in paths:
        parts = path.split("/")
        for end in range(1, len(parts) + 1):
            candidates = ("/".join(parts[:end]), parts[end - 1])
            if any(fnmatch.fnmatch(c, p) for c in candidates for p in patterns):
                return True
    return False


def split_records(chunks: Iterable[bytes], separator: bytes) -> Iterator[bytes]:
    """Records, each starting with ``separator`` (left out), from output read in chunks."""
    pending = b""
    for chunk in chunks:
        records = (pending + chunk).split(separator)
        pending = records.pop()
        yield from (r for r in records if r)
    if pending:
        yield pending


class BlobReader:
    """One ``git cat-file --batch`` process kept open for many reads: each read after the
    first pays no start-up, and git's cache of delta bases carries over from one to the next
    (a tenth of git's time, reading history's versions a few hundred at a time)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.pid = os.getpid()  # (a forked child must not share the parent's pipes)
        self.proc = subprocess.Popen(["git", *_batch_args()], cwd=root, env=_ENV,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL)
        assert self.proc.stdout is not None
        _widen(self.proc.stdout)
        self.broken = False

    def read(
        self, names: Sequence[str], max_size: int
    ) -> Generator[tuple[str, bytes | None, int], None, None]:
        """As :meth:`Repo.each_blob`. Stopping early leaves the process unusable
        (``broken``): its output is no longer in step with the names."""
        assert self.proc.stdin is not None and self.proc.stdout is not None
        if self.broken:
            raise GitError("git cat-file was stopped early")
        stdin, stdout = self.proc.stdin, self.proc.stdout
        sent = _batch_names(self.root, names)
        request = _batch_request(sent)

        def feed() -> None:  # beside the reading: a long list would fill the pipe
            with contextlib.suppress(OSError):
                stdin.write(request)
                stdin.flush()

        writer = threading.Thread(target=feed, daemon=True)
        writer.start()
        done = 0
        try:
            for name, asked in zip(names, sent, strict=True):
                found = _batch_header(stdout, asked)
                if found is None:
                    done += 1
                    yield name, None, -1
                    continue
                size = found[1]
                kept = size <= max_size
                data = stdout.read(size) if kept else b""
                if kept and len(data) < size:
                    raise GitError("git cat-file stopped early")
                left = size + 1 - len(data)  # (and the newline after each object)
                while left > 0:  # past an object too large to keep, a chunk at a time
                    chunk = stdout.read(min(left, 1 << 20))
                    if not chunk:
                        raise GitError("git cat-file stopped early")
                    left -= len(chunk)
                done += 1
                yield name, data if kept else None, size
        finally:
            if done < len(names):
                self.broken = True
                self.proc.kill()  # (before joining: the writer may wait on a full pipe)
            writer.join()

    def close(self) -> None:
        proc = self.proc
        if proc.poll() is None:
            proc.kill()
        for pipe in (proc.stdin, proc.stdout):
            if pipe is not None:
                with contextlib.suppress(OSError):
                    pipe.close()
        proc.wait()


# ``cat-file --batch``'s answer for an object it found: ``<id> <type> <size>``.
_FOUND = re.compile(rb"([0-9a-f]{40}|[0-9a-f]{64}) [a-z]+ ([0-9]+)\n\Z")
# What a name that names no object is sent as: the null id, always "missing".
_NO_OBJECT = b"0" * 40


@functools.cache
def _nul_names() -> bool:
    """Whether this git's ``cat-file --batch`` takes ``-z`` (NUL-terminated names: 2.38)."""
    try:
        out = _git(Path(os.sep), ["version"])
    except (GitError, OSError):
        return False
    found = re.search(rb"(\d+)\.(\d+)", out)
    return found is not None and (int(found[1]), int(found[2])) >= (2, 38)


def _batch_args() -> list[str]:
    return ["cat-file", "--batch", "-z"] if _nul_names() else ["cat-file", "--batch"]


def _batch_request(sent: Sequence[bytes]) -> bytes:
    end = b"\0" if _nul_names() else b"\n"
    return b"".join(name + end for name in sent)


def _batch_names(root: Path, names: Sequence[str]) -> list[bytes]:
    """Each name as ``cat-file --batch`` is sent it: its bytes, or where those cannot travel
    on one line (a name with a newline, to a git without ``-z``) the object id it names
    (:func:`_resolve_paths`), or :data:`_NO_OBJECT` for one that names none."""
    sent = [name.encode("utf-8", "surrogateescape") for name in names]
    breaking = b"\0" if _nul_names() else b"\n"
    unsafe = [n for n, name in enumerate(sent) if breaking in name or b"\0" in name]
    if unsafe:
        ids = _resolve_paths(root, [sent[n] for n in unsafe])
        for n in unsafe:
            sent[n] = ids.get(sent[n], _NO_OBJECT)
    return sent


def _resolve_paths(root: Path, names: Sequence[bytes]) -> dict[bytes, bytes]:
    """The object ids of ``rev:path`` names, found in the ``ls-tree -z`` of each revision
    (one git command a revision, never one a name); a name without a NUL-free revision and
    path, or whose path the tree lacks, is left out."""
    wanted: dict[bytes, dict[bytes, bytes]] = {}  # rev -> path -> name
    for name in names:
        rev, colon, path = name.partition(b":")
        if colon and rev and path and b"\0" not in name and not rev.startswith(b"-"):
            wanted.setdefault(rev, {})[path] = name
    ids: dict[bytes, bytes] = {}
    for rev, paths in wanted.items():
        try:
            out = _git(root, ["ls-tree", "-r", "-z", "--full-tree", os.fsdecode(rev)])
        except GitError:
            continue
        for item in out.split(b"\0"):
            meta, tab, path = item.partition(b"\t")
            if tab and path in paths:
                ids[paths[path]] = meta.split()[2]
    return ids


def _batch_header(stream: IO[bytes], asked: bytes) -> tuple[str, int] | None:
    """The object id and size in ``cat-file --batch``'s answer to ``asked``, read from
    ``stream`` up to its contents; None when git answered that it names no object.

    Git's answer to a name it cannot find repeats the name (``<name> missing``), newlines and
    all, so the answer is read against the name asked for: a name that is itself the first
    line of a found object's answer (``x\\n<id> blob 10``) is read whole, never taken for one.
    A found object's answer is ``<id> <type> <size>``, and no name in that form names an
    object (no revision holds a space), so the two never meet."""
    line = stream.readline()
    if not line:
        raise GitError("git cat-file stopped early")
    first, newline, _ = asked.partition(b"\n")
    if newline and line == first + b"\n":  # the name's own first line: its "missing"
        rest = [stream.readline() for _ in range(asked.count(b"\n"))]
        line = line + b"".join(rest)
    if line in (asked + b" missing\n", asked + b" ambiguous\n"):
        return None
    found = _FOUND.match(line)
    if found is None:
        raise GitError(f"git cat-file answered out of step: {line[:80]!r}")
    return found[1].decode("ascii"), int(found[2])
