"""A persistent cache of file records, keyed by content, hookguard version and config.

The cache lives in ``.hookguard_cache/`` at the repository root (tagged with ``CACHEDIR.TAG``).
It is MessagePack decoded by msgspec into the record types: loading it only ever builds data
(strings, numbers, tuples, the record dataclasses), so a cache file cannot run code, whoever
wrote it. It could still lie (a record forged under a real file's blob id would hide a
finding), so every file is signed with a secret the checkout cannot hold
(:mod:`hookguard.model.cache_secret`), and a file whose signature does not verify is rebuilt: a
cache can make a run faster, never different. The records' encoding is :mod:`hookguard.model.wire`'s
(a field added to a record needs no code here: the schema digest in the stamp changes with the
source, and older files are rebuilt).

Every file starts with a version line; then a stamp (hookguard version, digest of its own
source, config digest), the body's size and an HMAC-SHA256 of stamp and body. Anything in doubt
(unreadable, truncated, corrupt, another build, another key, a body that does not decode into
the types) is rebuilt, with one note per run. Writes are atomic (temp file + rename), so
concurrent runs that share the folder each see a whole file, and the last writer wins. A cache
folder that is a symbolic link, leaves the checkout or is tracked by git in any form (files, a
gitlink: committed by someone) is never read nor written, with a note.

Nothing in it depends on where the checkout is or who runs it: records are keyed by (git blob id,
path relative to the root, module), history answers by HEAD, commit ids and content, results by
content keys and settings. A cache restored into a fresh clone at another path, under another
user, is used as is where both runs sign with the same secret (``HOOKGUARD_CACHE_KEY``, passed by
the CI workflow); only the stat shortcut misses there (mtime, ctime
and inode differ), and the files are hashed instead. ``HOOKGUARD_CACHE_STATS=1`` prints one line
per run on stderr with what the cache answered (:meth:`RecordCache.stats_line`).
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import os
import stat
import subprocess
import sys
import tempfile
import time
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec

from hookguard import __version__
from hookguard.model import wire
from hookguard.model.cache_secret import NoCacheKey, cache_key
from hookguard.model.records import FileRecord

CACHE_DIR_NAME = ".hookguard_cache"
_MAGIC = b"HOOKGUARD-CACHE-3 msgpack\n"
_TAG = (
    "Signature: 8a477f597d28d172789f06886806bc55\n"
    "# This file is a cache directory tag created by hookguard.\n"
    "# For information about cache directory tags see https://bford.info/cachedir/\n"
)

RecordKey = tuple[str, str, str]  # (content key, path, module)
_SHARDS = 16  # records files: a one-file change rewrites one of them
# (mtime_ns, ctime_ns, inode, size, content key): ``touch -r`` restores the mtime, not the ctime.
StatEntry = tuple[int, int, int, int, str]
# A file changed this recently may change again within the same timestamp tick, unseen by its
# stat: its stat is not kept (git's "racy clean" rule), so the next run hashes it again.
_RACY_NS = 2_000_000_000
STATS_ENV = "HOOKGUARD_CACHE_STATS"  # set (not "0"): one line of cache counters on stderr a run


def encoded(make: Callable[[], bytes]) -> bytes | None:
    """What ``make`` encodes, or None where it cannot be held (a file name that is not UTF-8
    is a string MessagePack cannot carry): such an answer is simply not kept, and the next
    run computes it again, as a cold run would."""
    try:
        return make()
    except (TypeError, ValueError, msgspec.EncodeError):  # (UnicodeEncodeError: ValueError)
        return None


def _shard_of(key: RecordKey) -> int:
    return zlib.crc32(key[1].encode("utf-8", "surrogateescape")) % _SHARDS


def build_digest() -> str:
    """Changes whenever hookguard's own code changes (records, extractor, history, rules):
    cached records, history answers and results of another build are never trusted. CI keys
    its saved caches by it (``action.yml``), so a cache of another build is never restored."""
    package = Path(__file__).resolve().parent.parent
    digest = hashlib.sha1()
    for source in sorted(package.rglob("*.py")):
        if "runtime" not in source.parts:
            digest.update(source.read_bytes())
    return digest.hexdigest()[:12]


_RECORDS_DECODER = msgspec.msgpack.Decoder(
    list[tuple[str, str, str, wire.FileWire]]  # type: ignore[valid-type]
)


class _Header(msgspec.Struct, array_like=True, gc=False):
    """What precedes the body (after the version line and the header's length): the body is
    decoded straight from the file's buffer, never copied."""

    stamp: str  # hookguard version, source digest, config digest
    mac: bytes  # HMAC-SHA256 of stamp and body, with the cache key
    size: int  # bytes in the body


class _Index(msgspec.Struct, array_like=True, gc=False):
    """The index's answers are bytes, each encoded by its owner (the history, the engine, the
    incremental state): the cache is a layer below them, a store of verified bytes by key."""

    stats: dict[str, StatEntry]
    history: dict[str, bytes]
    results: dict[str, bytes]
    state: bytes | None


_HEADER_DECODER = msgspec.msgpack.Decoder(_Header)
_INDEX_DECODER = msgspec.msgpack.Decoder(_Index)


def _shard_body(kept: dict[RecordKey, FileRecord]) -> Callable[[], object]:
    return lambda: [(*key, wire.to_wire(record)) for key, record in kept.items()]


# -- the folder ---------------------------------------------------------------------------------
def unsafe_cache_dir(directory: Path) -> str | None:
    """Why ``directory`` must not be used as the cache, or None."""
    if directory.is_symlink():
        return "is a symbolic link"
    if not os.path.lexists(directory):
        return None
    if not directory.is_dir():
        return "is not a directory"
    if directory.resolve() != directory.parent.resolve() / directory.name:
        return "leaves the checkout"
    if _tracked_by_git(directory):
        return "is tracked by git (a committed cache, or a submodule, is never trusted)"
    return None


def _tracked_by_git(directory: Path) -> bool:
    """Whether git tracks ``directory`` (a folder at a repository's root) in any form: files
    under it, or the folder itself as a gitlink (a submodule).

    The index is scanned for the folder's name first (index versions 2 and 3 store whole
    paths), which costs well under a millisecond; only a hit, or an index that cannot be
    scanned (version 4, a linked worktree), asks ``git ls-files``."""
    git = directory.parent / ".git"
    if not os.path.lexists(git):
        return False
    if git.is_dir() and not git.is_symlink():
        try:
            index = _read_regular(git / "index")
        except FileNotFoundError:
            return False
        except OSError:
            index = b""
        scannable = index[:4] == b"DIRC" and int.from_bytes(index[4:8], "big") in (2, 3)
        name = directory.name.encode()
        if scannable and name + b"/" not in index and name + b"\0" not in index:
            return False
    try:
        tracked = subprocess.run(
            ["git", "ls-files", "-z", "--", directory.name], cwd=directory.parent,
            capture_output=True, timeout=30, check=False,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return False
    return bool(tracked)


def _read_regular(file: Path) -> bytes:
    """The bytes of ``file`` if it is a regular file; never follows a symbolic link or blocks
    on a FIFO."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    fd = os.open(file, flags)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(0, "not a regular file")
        with os.fdopen(fd, "rb", closefd=False) as handle:
            return handle.read()
    finally:
        os.close(fd)


def _create_once(path: Path, text: str) -> None:
    """Write ``path`` unless something (a file, a link, anything) is already there."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0),
                     0o644)
    except FileExistsError:
        return
    with os.fdopen(fd, "w") as handle:
        handle.write(text)


class RecordCache:
    """Two kinds of files: a small index (file stats, history answers, the last results) read
    on every run, and the records in shards, read only when some file changed."""

    def __init__(self, directory: Path, config_digest: str, checkout: Path | None = None) -> None:
        """``checkout``: the root audited (default: the folder holding ``directory``); the
        cache key must not lie inside it."""
        self.directory = directory
        self.index_file = directory / f"index-{config_digest}.msgpack"
        self.digest = config_digest
        self._dirty_shards: set[int] = set()
        self.stamp = f"{__version__}:{build_digest()}:{config_digest}"
        self.warnings: list[str] = []
        self._records: dict[RecordKey, FileRecord] | None = None  # loaded on first use
        self._stats: dict[str, StatEntry] = {}
        self._used: set[RecordKey] = set()
        self._history: dict[str, bytes] = {}
        self._history_used: set[str] = set()
        self._results: dict[str, bytes] = {}
        self._state: bytes | None = None
        self._index_loaded = False  # read on first use: ``check`` never needs it
        self._index_dirty = False
        self._unstable = False  # a file changed while this run read it
        self._doubted = False
        self._started_ns = time.time_ns()
        # What the cache answered this run (HOOKGUARD_CACHE_STATS); counted where answers are
        # served, so a hit is a record, stat, history answer or result really taken from here.
        self.record_hits = self.record_misses = self.records_stored = 0
        self.stat_hits = self.stat_misses = 0
        self.history_hits = self.history_misses = 0
        self.result_hit: bool | None = None  # None: no result was asked for
        self._key = b""
        problem = unsafe_cache_dir(directory)
        if problem is not None:
            problem = f"{directory}: {problem}; the cache is not used (remove it)"
        else:
            try:
                self._key = cache_key(checkout if checkout is not None else directory.parent)
            except NoCacheKey as exc:
                problem = f"{exc}; the cache is not used"
        self.enabled = problem is None
        if problem is not None:
            self.warnings.append(problem)
            self._records = {}
            self._index_loaded = True

    def distrust(self, why: str) -> None:
        """Read nothing from here this run (``why``: what was found wrong); what the run
        makes replaces what is stored."""
        self.warnings.append(f"{self.directory}: cache {why}; rebuilt")
        self._records = {}
        self._index_loaded = self._index_dirty = True

    def _mac(self, body: bytes | memoryview) -> bytes:
        signed = hmac.new(self._key, self.stamp.encode("utf-8", "surrogateescape") + b"\0",
                          hashlib.sha256)
        signed.update(body)
        return signed.digest()

    def _load_index(self) -> None:
        """Read the index (stats, history answers, the last result and state) once, when a
        run first asks for any of them: a run that asks for none (``check``, whose history
        questions are about its own range) never reads it, however large a restored one is."""
        self._index_loaded = True
        index = self._read(self.index_file, _INDEX_DECODER)
        if isinstance(index, _Index):
            self._stats = index.stats
            self._history = dict(index.history)
            self._results = dict(index.results)
            self._state = index.state

    # -- reading ----------------------------------------------------------------------------
    def _doubt(self, file: Path, why: str) -> None:
        if not self._doubted:  # one note a run, however many files are in doubt
            self._doubted = True
            self.warnings.append(f"{file}: cache {why}; rebuilding")

    def _read(self, file: Path, decoder: msgspec.msgpack.Decoder[Any]) -> Any:
        """The body of ``file`` decoded with ``decoder`` (stamp and checksum checked), or
        None."""
        try:
            blob = _read_regular(file)
        except FileNotFoundError:
            return None
        except OSError as exc:
            self._doubt(file, f"unreadable ({exc.strerror or exc})")
            return None
        start = len(_MAGIC) + 4
        if not blob.startswith(_MAGIC) or len(blob) < start:
            self._doubt(file, "is corrupt or from another version")
            return None
        body_at = start + int.from_bytes(blob[len(_MAGIC):start], "big")
        view = memoryview(blob)
        try:
            header = _HEADER_DECODER.decode(view[start:body_at])
        except (msgspec.DecodeError, msgspec.ValidationError):
            self._doubt(file, "is corrupt")
            return None
        if header.stamp != self.stamp:
            self._doubt(file, f"from hookguard {header.stamp}")
            return None
        body = view[body_at:]
        if len(body) != header.size:
            self._doubt(file, "is truncated")
            return None
        if not hmac.compare_digest(self._mac(body), header.mac):
            self._doubt(file, "is not signed with this machine's cache key (restored from "
                              "elsewhere without HOOKGUARD_CACHE_KEY, damaged or forged)")
            return None
        try:
            return decoder.decode(body)
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            self._doubt(file, f"does not decode ({exc})")
            return None

    def shard_file(self, shard: int) -> Path:
        return self.directory / f"records-{self.digest}-{shard:x}.msgpack"

    def _all_records(self) -> dict[RecordKey, FileRecord]:
        if self._records is None:
            self._records = {}
            for shard in range(_SHARDS):
                loaded = self._read(self.shard_file(shard), _RECORDS_DECODER)
                if loaded is not None:
                    for content, path, module, encoded in loaded:
                        self._records[(content, path, module)] = wire.from_wire(encoded)
        return self._records

    def get(self, key: RecordKey) -> FileRecord | None:
        record = self._all_records().get(key)
        if record is not None:
            self._used.add(key)
            self.record_hits += 1
        else:
            self.record_misses += 1
        return record

    def get_history(self, key: str) -> bytes | None:
        """A history answer stored under ``key`` (see :class:`HistoryIndex`), or None."""
        if not self._index_loaded:
            self._load_index()
        value = self._history.get(key)
        if value is not None:
            self._history_used.add(key)
            self.history_hits += 1
        else:
            self.history_misses += 1
        return value

    def holds_history(self, prefix: str) -> bool:
        """Whether any history answer is stored under a key starting with ``prefix`` (none: a
        cold cache for that history, which will be walked)."""
        if not self._index_loaded:
            self._load_index()
        return any(key.startswith(prefix) for key in self._history)

    def get_result(self, key: str) -> bytes | None:
        """The whole result of a run whose inputs hash to ``key``, or None."""
        if not self._index_loaded:
            self._load_index()
        value = self._results.get(key)
        self.result_hit = value is not None
        return value

    def get_state(self) -> bytes | None:
        """What the last full model looked like (see :mod:`hookguard.incremental`), or None."""
        if not self._index_loaded:
            self._load_index()
        return self._state

    def stat_key(self, path: str, st: os.stat_result) -> str | None:
        """The content key of ``path`` if its stat is exactly the one recorded with it."""
        if not self._index_loaded:
            self._load_index()
        entry = self._stats.get(path)
        if entry is not None and entry[:4] == (
            st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_size
        ):
            self.stat_hits += 1
            return entry[4]
        self.stat_misses += 1
        return None

    # -- writing ----------------------------------------------------------------------------
    def put(self, key: RecordKey, record: FileRecord) -> None:
        self._all_records()[key] = record
        self._used.add(key)
        self.records_stored += 1
        self._dirty_shards.add(_shard_of(key))

    def put_stat(self, path: str, st: os.stat_result, content_key: str) -> None:
        """Remember that ``path`` with stat ``st`` holds ``content_key`` (read and hashed after
        the stat was taken)."""
        if not self._index_loaded:
            self._load_index()
        if max(st.st_mtime_ns, st.st_ctime_ns) >= self._started_ns - _RACY_NS:
            if self._stats.pop(path, None) is not None:
                self._index_dirty = True
            return
        entry = (st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_size, content_key)
        if self._stats.get(path) != entry:
            self._stats[path] = entry
            self._index_dirty = True

    def changed_during_run(self, path: str) -> None:
        """``path`` changed while this run read it: its stat is forgotten, and this run's
        results and state (built from a mix of contents) are not kept."""
        if not self._index_loaded:
            self._load_index()
        self._unstable = True
        if self._stats.pop(path, None) is not None:
            self._index_dirty = True

    def put_history(self, key: str, value: bytes | None) -> None:
        if value is None:
            return
        if not self._index_loaded:
            self._load_index()
        self._history[key] = value
        self._history_used.add(key)
        self._index_dirty = True

    def put_result(self, key: str, value: bytes | None) -> None:
        if self._unstable or value is None:
            return
        if not self._index_loaded:
            self._load_index()
        self._results = {key: value}  # only the latest: it answers "nothing changed"
        self._index_dirty = True

    def put_state(self, value: bytes | None) -> None:
        if self._unstable or value is None:
            return
        if not self._index_loaded:
            self._load_index()
        self._state = value
        self._index_dirty = True

    def stats_line(self) -> str:
        """What the cache answered this run, in one line."""
        result = {None: "not asked", True: "reused", False: "not reused"}[self.result_hit]
        state = "" if self.enabled else " (cache not used)"
        return (
            f"hookguard: cache{state}: records {self.record_hits} hit, {self.record_misses} "
            f"missed, {self.records_stored} stored; file stats {self.stat_hits} hit, "
            f"{self.stat_misses} missed; history answers {self.history_hits} hit, "
            f"{self.history_misses} missed; last result {result}"
        )

    def save(self) -> None:
        """Write what changed; with ``HOOKGUARD_CACHE_STATS`` set, print :meth:`stats_line`."""
        self._save()
        if os.environ.get(STATS_ENV, "0") not in ("", "0"):
            print(self.stats_line(), file=sys.stderr, flush=True)

    def _save(self) -> None:
        if not self.enabled:
            return
        if self._dirty_shards and self._records is not None:
            # Rewrite only the shards that gained records. Each keeps what this run used, plus
            # as many older entries again (other revisions, e.g. the base of a ``check``).
            shards: dict[int, dict[RecordKey, FileRecord]] = {s: {} for s in self._dirty_shards}
            older: dict[int, list[RecordKey]] = {s: [] for s in self._dirty_shards}
            for key in self._records:
                shard = _shard_of(key)
                if shard in shards:
                    if key in self._used:
                        shards[shard][key] = self._records[key]
                    else:
                        older[shard].append(key)
            for shard, kept in shards.items():
                for key in older[shard][: len(kept) + 8]:
                    kept[key] = self._records[key]
                self._write(self.shard_file(shard), _shard_body(kept))
        if self._index_dirty:
            history = {k: self._history[k] for k in self._history_used}
            index = _Index(self._stats, history, self._results, self._state)
            self._write(self.index_file, lambda: index)
            for old in self.directory.glob("*.pickle"):  # the format before this one
                with contextlib.suppress(OSError):
                    old.unlink()

    def _write(self, file: Path, content: Callable[[], object]) -> None:
        try:
            body = wire.ENCODER.encode(content())
        except (TypeError, ValueError, msgspec.EncodeError) as exc:  # a value it cannot hold
            self.warnings.append(f"{file}: cannot write cache ({exc})")
            return
        header = wire.ENCODER.encode(_Header(self.stamp, self._mac(body), len(body)))
        try:
            if self.directory.is_symlink():  # appeared during the run
                self.warnings.append(f"{self.directory}: is a symbolic link; not written")
                self.enabled = False
                return
            self.directory.mkdir(exist_ok=True)
            if self.directory.resolve() != self.directory.parent.resolve() / self.directory.name:
                self.enabled = False
                return
            _create_once(self.directory / "CACHEDIR.TAG", _TAG)
            _create_once(self.directory / ".gitignore", "*\n")
            fd, tmp = tempfile.mkstemp(dir=self.directory, prefix=f".{file.stem}-", suffix=".tmp")
            try:
                with os.fdopen(fd, "wb") as handle:
                    handle.write(_MAGIC + len(header).to_bytes(4, "big") + header)
                    handle.write(body)
                os.replace(tmp, file)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
                raise
        except OSError as exc:
            self.warnings.append(f"{self.directory}: cannot write cache ({exc.strerror or exc})")
