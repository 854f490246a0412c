"""Turn a set of source files into records: from the cache where it can, in parallel where it pays.

Worker processes use only :mod:`hookguard.model.extract` (stdlib ``ast``) and
:mod:`hookguard.model.wire` (msgspec), never libcst.
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
import sys
from collections.abc import Callable, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass
from pathlib import Path

from hookguard import progress
from hookguard.model import wire
from hookguard.model.cache import RecordCache
from hookguard.model.extract import extract
from hookguard.model.records import FileRecord
from hookguard.model.sources import (
    blob_sha,
    inside,
    linked_folders,
    module_names,
    through_link,
)

PARALLEL_THRESHOLD = 96  # below this many files to parse, a process pool costs more than it saves
_CHUNK = 24
_KEY_CHUNK = 1 << 20  # bytes hashed at a time for a content key


@dataclass
class LoadStats:
    files: int = 0
    parsed: int = 0
    cached: int = 0


@dataclass(frozen=True)
class _Job:
    path: str
    module: str
    is_package: bool
    key: str
    data: bytes | None  # None: read ``abspath`` in the worker (no ``abspath``: missing blob)
    abspath: str | None
    max_size: int
    blob: bool = False  # ``abspath`` may hold the blob ``key`` names: parsed only if it does
    root: str = ""  # the checkout ``abspath`` is in: a link may lead nowhere else


# A blob job's record when the file in the work tree is not that blob (read it from git).
_FROM_GIT = "\0read from git"


def _read_bounded(abspath: str, max_size: int, *, follow: bool = True) -> bytes | int:
    """A regular file's bytes, or its size when that is over ``max_size``: the size is taken
    (``fstat``) before anything is read, and at most ``max_size + 1`` bytes are ever read (a
    file that grows past the limit meanwhile is cut there and still over it). Never blocks on a
    pipe; a file that is not regular raises ``OSError``, as an unreadable one does."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)
    if not follow:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(abspath, flags)
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(errno.EINVAL, "not a regular file")
        if info.st_size > max_size:
            return info.st_size
        data = handle.read(max_size + 1)
    return len(data) if len(data) > max_size else data


def oversize_key(size: int, max_size: int) -> str:
    """The content key of a file over ``max_size``, which is never read: its record (a
    "skipped" error) depends on nothing but the two sizes. No git blob id looks like it."""
    return f"over-max-file-size:{max_size}:{size}"


def _worktree_copy(abspath: str, max_size: int) -> bytes | int | None:
    """A regular file's bytes (never through a link, never blocking on a pipe), its size when
    over ``max_size`` (not read), or None."""
    try:
        return _read_bounded(abspath, max_size, follow=False)
    except OSError:
        return None


def _within(job: _Job) -> str:
    """Where a work-tree job's file is read: where its link leads, when it is one (and that
    stays in the checkout: :func:`~hookguard.model.sources.inside`)."""
    assert job.abspath is not None
    if job.root and os.path.islink(job.abspath):
        return inside(job.root, job.abspath)
    return job.abspath


def _oversized(job: _Job, key: str, size: int) -> FileRecord:
    record = FileRecord(
        path=job.path,
        module=job.module,
        is_package=job.is_package,
        error=f"skipped: {size / 2**20:.1f} MiB is over max-file-size "
        f"({job.max_size / 2**20:.1f} MiB)",
    )
    record.content_key = key
    return record


def _run_job(job: _Job) -> FileRecord:
    """The record of ``job``'s bytes. Its ``content_key`` is the key of exactly the bytes parsed
    (read once, hashed and parsed from the same buffer); empty when nothing could be read."""
    data = job.data
    key = job.key
    if data is None and job.blob:
        copy = _worktree_copy(job.abspath, job.max_size) if job.abspath else None
        if not isinstance(copy, bytes) or blob_sha(copy) != key:
            # (one over max-file-size is not read: git says whether the blob is)
            return FileRecord(job.path, job.module, job.is_package, error=_FROM_GIT)
        data = copy
    if data is None:
        if job.abspath is None:
            return FileRecord(job.path, job.module, job.is_package,
                              error=f"cannot read git object {job.key}")
        try:
            read = _read_bounded(_within(job), job.max_size)
        except OSError as exc:
            return FileRecord(
                path=job.path,
                module=job.module,
                is_package=job.is_package,
                error=f"cannot read file: {exc.strerror or exc}",
            )
        if isinstance(read, int):  # over max-file-size, and not read: keyed as it was asked
            return _oversized(job, key, read)
        data = read
        key = blob_sha(data)
    if len(data) > job.max_size:
        return _oversized(job, key, len(data))
    record = extract(job.path, job.module, job.is_package, data)
    record.content_key = key
    return record


def _encoded_job(job: _Job) -> bytes:
    """:func:`_run_job` in a worker process: the record comes back in the cache's encoding,
    cheaper to send than a pickle, and its methods are decoded only where a run reads them."""
    return wire.encode(_run_job(job))


def _parse_all(
    jobs: Sequence[_Job], workers: int | None, pool: Executor | None = None
) -> list[FileRecord]:
    """The records of ``jobs``, in order: in worker processes when there are enough to pay,
    those of ``pool`` when given (processes already started), else a pool's of their own."""
    if not jobs:
        return []
    progress.start("files", total=len(jobs))
    cpus = workers if workers is not None else (os.cpu_count() or 1)
    if len(jobs) < PARALLEL_THRESHOLD or cpus < 2:
        return [_counted(_run_job(job)) for job in jobs]
    if pool is not None:
        return _parse_in(pool, jobs)
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    method = "fork" if sys.platform.startswith("linux") else None
    context = multiprocessing.get_context(method)
    with ProcessPoolExecutor(max_workers=cpus, mp_context=context) as own:
        return _parse_in(own, jobs)


def _parse_in(pool: Executor, jobs: Sequence[_Job]) -> list[FileRecord]:
    return [_counted(wire.decode(data))
            for data in pool.map(_encoded_job, jobs, chunksize=_CHUNK)]


def _counted(record: FileRecord) -> FileRecord:
    progress.advance("files")
    return record


def _streamed_key(abspath: str) -> str:
    """The git blob id of a regular file (a FIFO or a device never ends), read a chunk at a
    time: memory for one chunk, whatever its size. A file whose size changes while it is read
    gets a key no content has (its header's size is not the bytes'): it is parsed, and keyed,
    from what is read then."""
    fd = os.open(abspath, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(errno.EINVAL, "not a regular file")
        digest = hashlib.sha1(b"blob %d\0" % info.st_size)
        while chunk := handle.read(_KEY_CHUNK):
            digest.update(chunk)
        return digest.hexdigest()


def content_keys(
    root: Path, paths: Sequence[str], cache: RecordCache | None, max_size: int | None = None
) -> dict[str, str | OSError]:
    """The content key (git blob id) of each file: from its stat when the cache knows it,
    else by reading it (:func:`oversize_key` for one over ``max_size``, never read). A file
    that cannot be read maps to the error, and so does one that is a link leading out of the
    checkout (:func:`~hookguard.model.sources.inside`).

    The stat is taken before the read, so an edit during the read leaves a stat that no longer
    matches, and the next run reads the file again."""
    keys: dict[str, str | OSError] = {}
    base = os.fspath(root)  # plain strings: a Path per file costs more than the stat
    linked = linked_folders(base, paths)
    for path in paths:
        abspath = os.path.join(base, path)
        try:
            st = os.lstat(abspath)  # (a regular file's is its stat: no second call)
            if stat.S_ISLNK(st.st_mode) or (linked and through_link(path, linked)):
                abspath = inside(base, abspath)
                st = os.stat(abspath)
            key = cache.stat_key(path, st) if cache else None
            if key is None:
                if max_size is not None and st.st_size > max_size:
                    key = oversize_key(st.st_size, max_size)
                else:
                    key = _streamed_key(abspath)
                if cache:
                    cache.put_stat(path, st, key)
        except OSError as exc:
            keys[path] = exc
            continue
        keys[path] = key
    return keys


def load_worktree(
    root: Path,
    paths: Sequence[str],
    cache: RecordCache | None,
    max_size: int,
    workers: int | None = None,
    keys: dict[str, str | OSError] | None = None,
    pool: Executor | None = None,
) -> tuple[list[FileRecord], LoadStats]:
    """Records for files on disk; unchanged files (same stat or same content) come from cache.
    ``pool``: worker processes already started, to parse in (see :func:`_parse_all`)."""
    stats = LoadStats(files=len(paths))
    modules = module_names(paths)
    if keys is None:
        keys = content_keys(root, paths, cache, max_size)
    records: list[FileRecord | None] = []
    jobs: list[_Job] = []
    slots: list[int] = []
    for path in paths:
        module, is_package = modules[path]
        key = keys[path]
        if isinstance(key, OSError):
            records.append(
                FileRecord(path, module, is_package, error=f"cannot read file: {key.strerror}")
            )
            continue
        record = cache.get((key, path, module)) if cache else None
        if record is not None:
            stats.cached += 1
            records.append(record)
            continue
        slots.append(len(records))
        records.append(None)
        jobs.append(_Job(path, module, is_package, key, None, os.path.join(root, path),
                         max_size, root=os.fspath(root)))
    return _finish(records, jobs, slots, cache, stats, workers, pool)


def load_trees(
    trees: Sequence[Sequence[tuple[str, str]]],
    read: Callable[[Sequence[str]], dict[str, bytes]],
    cache: RecordCache | None,
    max_size: int,
    workers: int | None = None,
    worktree: tuple[Path, int] | None = None,
) -> list[tuple[list[FileRecord], LoadStats]]:
    """Records for the ``(path, blob sha)`` entries of several git trees (a change's base and
    head); blobs are read only when needed, and what no cache holds is parsed in one pass
    (one process pool for both trees), each blob a tree shares with an earlier one once.

    ``worktree``: a checkout, and which of ``trees`` it holds (the head, checked out): the
    workers read its files in place of that tree's blobs, each checked to be the blob (no
    blob then travels from git to the workers); a file that is not is read from git after."""
    memo: dict[tuple[str, str, str], FileRecord] = {}
    wanted: dict[tuple[str, str, str], int] = {}  # key -> its job
    pending: list[tuple[str, str, str, bool]] = []  # a job's path, sha, module, is_package
    plans: list[tuple[list[FileRecord | None], list[tuple[int, int]], LoadStats]] = []
    for entries in trees:
        stats = LoadStats(files=len(entries))
        modules = module_names(p for p, _ in entries)
        records: list[FileRecord | None] = []
        slots: list[tuple[int, int]] = []  # (slot, job)
        for path, sha in entries:
            module, is_package = modules[path]
            key = (sha, path, module)
            record = memo.get(key) or (cache.get(key) if cache else None)
            if record is not None:
                stats.cached += 1
                memo[key] = record
                records.append(record)
                continue
            if key in wanted:  # an earlier tree's: parsed once, for both
                stats.cached += 1
            else:
                wanted[key] = len(pending)
                pending.append((path, sha, module, is_package))
                stats.parsed += 1
            slots.append((len(records), wanted[key]))
            records.append(None)
        plans.append((records, slots, stats))
    checked_out = set(trees[worktree[1]]) if worktree is not None else set()
    blobs = read([sha for path, sha, _, _ in pending if (path, sha) not in checked_out])
    jobs = [_Job(path, module, pkg, sha, None, os.path.join(worktree[0], path), max_size,
                 blob=True) if worktree is not None and (path, sha) in checked_out
            else _Job(path, module, pkg, sha, blobs.get(sha), None, max_size)
            for path, sha, module, pkg in pending]
    parsed = _parse_all(jobs, workers)
    elsewhere = [n for n, record in enumerate(parsed) if record.error == _FROM_GIT]
    if elsewhere:  # files of the work tree that are not the head's (edited, not committed)
        blobs = read([pending[n][1] for n in elsewhere])
        from_git = [_Job(path, module, pkg, sha, blobs.get(sha), None, max_size)
                    for path, sha, module, pkg in (pending[n] for n in elsewhere)]
        for n, fetched, record in zip(elsewhere, from_git, _parse_all(from_git, workers),
                                      strict=True):
            jobs[n], parsed[n] = fetched, record
    _keep(jobs, parsed, cache)
    results: list[tuple[list[FileRecord], LoadStats]] = []
    for records, slots, stats in plans:
        for slot, job in slots:
            records[slot] = parsed[job]
        results.append(([r for r in records if r is not None], stats))
    return results


def _keep(jobs: Sequence[_Job], records: Sequence[FileRecord], cache: RecordCache | None) -> None:
    """Put the records parsed for ``jobs`` in the cache, under the key of the bytes each was
    built from."""
    if cache is None:
        return
    for job, record in zip(jobs, records, strict=True):
        if not record.content_key:  # unreadable: nothing to key it by, never cached
            cache.changed_during_run(job.path)
            continue
        if record.content_key != job.key:
            # The file changed between hashing and parsing: the record is kept under the key
            # of the bytes it was built from, and this run's results are not kept.
            cache.changed_during_run(job.path)
        cache.put((record.content_key, job.path, job.module), record)


def _finish(
    records: list[FileRecord | None],
    jobs: list[_Job],
    slots: list[int],
    cache: RecordCache | None,
    stats: LoadStats,
    workers: int | None,
    pool: Executor | None,
) -> tuple[list[FileRecord], LoadStats]:
    parsed = _parse_all(jobs, workers, pool)
    _keep(jobs, parsed, cache)
    for slot, record in zip(slots, parsed, strict=True):
        records[slot] = record
    stats.parsed = len(jobs)
    return [r for r in records if r is not None], stats
