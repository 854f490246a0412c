"""A persistent cache of file records, keyed by content, hookguard version and config.

The cache lives in ``.hookguard_cache/`` at the repository root (tagged with ``CACHEDIR.TAG``).
It is a pickle, so it is signed: an HMAC under a per-user key that never lives in the checkout.
A file a pull request planted, a corrupt file or one from another version is rebuilt with a
warning and never unpickled. Writes are atomic (temp file + rename), so concurrent runs that
share the folder each see a whole file, and the last writer wins.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import pickle
import secrets
import tempfile
import zlib
from pathlib import Path
from typing import Any

from hookguard import __version__
from hookguard.model.records import FileRecord, blob_pickling

CACHE_DIR_NAME = ".hookguard_cache"
_MAGIC = b"HOOKGUARD-CACHE-1\n"
_TAG = (
    "Signature: 8a477f597d28d172789f06886806bc55\n"
    "# This file is a cache directory tag created by hookguard.\n"
    "# For information about cache directory tags see https://bford.info/cachedir/\n"
)

RecordKey = tuple[str, str, str]  # (content key, path, module)
_SHARDS = 16  # records files: a one-file change rewrites one of them, and pickling stays small


def _shard_of(key: RecordKey) -> int:
    return zlib.crc32(key[1].encode()) % _SHARDS
StatEntry = tuple[int, int, str]  # (mtime_ns, size, content key)


def _schema_digest() -> str:
    """Changes whenever hookguard's own code changes (records, extractor, history, rules):
    cached records, history answers and results of another build are never trusted."""
    package = Path(__file__).resolve().parent.parent
    digest = hashlib.sha1()
    for source in sorted(package.rglob("*.py")):
        if "runtime" not in source.parts:
            digest.update(source.read_bytes())
    return digest.hexdigest()[:12]


def _user_key() -> bytes | None:
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "hookguard"
    path = base / "cache-key"
    try:
        return path.read_bytes()
    except OSError:
        pass
    try:
        base.mkdir(parents=True, exist_ok=True)
        key = secrets.token_bytes(32)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as handle:
            handle.write(key)
        return key
    except FileExistsError:
        return path.read_bytes()
    except OSError:
        return None


class RecordCache:
    """Two signed files: a small index (file stats, history answers, the last results) read on
    every run, and the records, read only when some file changed."""

    def __init__(self, directory: Path, config_digest: str) -> None:
        self.directory = directory
        self.index_file = directory / f"index-{config_digest}.pickle"
        self.digest = config_digest
        self._dirty_shards: set[int] = set()
        self.stamp = f"{__version__}:{_schema_digest()}:{config_digest}"
        self.warnings: list[str] = []
        self._records: dict[RecordKey, FileRecord] | None = None  # loaded on first use
        self._stats: dict[str, StatEntry] = {}
        self._used: set[RecordKey] = set()
        self._history: dict[str, object] = {}
        self._history_used: set[str] = set()
        self._results: dict[str, object] = {}
        self._state: object | None = None
        self._index_dirty = False
        self._key = _user_key()
        if self._key is None:
            self.warnings.append("cache disabled: no user cache directory for the signing key")
            self._records = {}
        else:
            index = self._read(self.index_file)
            if index is not None:
                self._stats, self._history, self._results, self._state = index

    # -- reading ----------------------------------------------------------------------------
    def _read(self, file: Path) -> Any:
        """The signed payload of ``file`` (stamp checked), or None with a warning."""
        try:
            blob = file.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:
            self.warnings.append(f"{file}: cache unreadable ({exc.strerror}); rebuilding")
            return None
        assert self._key is not None
        head = blob[: len(_MAGIC)]
        digest = blob[len(_MAGIC) : len(_MAGIC) + 32]
        payload = blob[len(_MAGIC) + 32 :]
        expected = hmac.new(self._key, payload, hashlib.sha256).digest()
        if head != _MAGIC or not hmac.compare_digest(digest, expected):
            self.warnings.append(
                f"{file}: cache is corrupt or was not written by this user; rebuilding"
            )
            return None
        try:
            stamp, content = pickle.loads(payload)
        except Exception as exc:  # a signed payload that fails to load: treat as corrupt
            self.warnings.append(f"{file}: cache unreadable ({exc}); rebuilding")
            return None
        if stamp != self.stamp:
            self.warnings.append(f"{file}: cache from hookguard {stamp}; rebuilding")
            return None
        return content

    def shard_file(self, shard: int) -> Path:
        return self.directory / f"records-{self.digest}-{shard:x}.pickle"

    def _all_records(self) -> dict[RecordKey, FileRecord]:
        if self._records is None:
            self._records = {}
            for shard in range(_SHARDS):
                loaded = self._read(self.shard_file(shard))
                if isinstance(loaded, dict):
                    self._records.update(loaded)
        return self._records

    def get(self, key: RecordKey) -> FileRecord | None:
        record = self._all_records().get(key)
        if record is not None:
            self._used.add(key)
        return record

    def get_history(self, key: str) -> object | None:
        """A history answer stored under ``key`` (see :class:`HistoryIndex`), or None."""
        value = self._history.get(key)
        if value is not None:
            self._history_used.add(key)
        return value

    def get_result(self, key: str) -> object | None:
        """The whole result of a run whose inputs hash to ``key``, or None."""
        return self._results.get(key)

    def get_state(self) -> object | None:
        """What the last full model looked like (see :mod:`hookguard.incremental`), or None."""
        return self._state

    def stat_key(self, path: str, mtime_ns: int, size: int) -> str | None:
        entry = self._stats.get(path)
        if entry is not None and entry[0] == mtime_ns and entry[1] == size:
            return entry[2]
        return None

    # -- writing ----------------------------------------------------------------------------
    def put(self, key: RecordKey, record: FileRecord) -> None:
        self._all_records()[key] = record
        self._used.add(key)
        self._dirty_shards.add(_shard_of(key))

    def put_stat(self, path: str, mtime_ns: int, size: int, content_key: str) -> None:
        if self._stats.get(path) != (mtime_ns, size, content_key):
            self._stats[path] = (mtime_ns, size, content_key)
            self._index_dirty = True

    def put_history(self, key: str, value: object) -> None:
        self._history[key] = value
        self._history_used.add(key)
        self._index_dirty = True

    def put_result(self, key: str, value: object) -> None:
        self._results = {key: value}  # only the latest: it answers "nothing changed"
        self._index_dirty = True

    def put_state(self, value: object) -> None:
        self._state = value
        self._index_dirty = True

    def save(self) -> None:
        if self._key is None:
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
                self._write(self.shard_file(shard), kept)
        if self._index_dirty:
            history = {k: self._history[k] for k in self._history_used}
            self._write(self.index_file, (self._stats, history, self._results, self._state))

    def _write(self, file: Path, content: object) -> None:
        assert self._key is not None
        with blob_pickling():
            payload = pickle.dumps((self.stamp, content), protocol=pickle.HIGHEST_PROTOCOL)
        digest = hmac.new(self._key, payload, hashlib.sha256).digest()
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            tag = self.directory / "CACHEDIR.TAG"
            if not tag.exists():
                tag.write_text(_TAG)
                (self.directory / ".gitignore").write_text("*\n")
            fd, tmp = tempfile.mkstemp(dir=self.directory, prefix=f".{file.stem}-", suffix=".tmp")
            with os.fdopen(fd, "wb") as handle:
                handle.write(_MAGIC + digest + payload)
            os.replace(tmp, file)
        except OSError as exc:
            self.warnings.append(f"{self.directory}: cannot write cache ({exc.strerror})")
