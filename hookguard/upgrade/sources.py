"""Where a version of a package comes from, read as bytes: never imported, never executed.

A version is found, in this order, in

1. the ``--source`` paths: a wheel (``.whl``), an sdist (``.tar.gz``, ``.tgz``, ``.tar``) or a
   directory (a source tree, or a folder holding the distribution's ``*.dist-info``);
2. the environment: the ``*.dist-info`` of the distribution on the ``sys.path`` of the
   interpreter named by ``--python`` (asked with ``-c``, nothing imported) or of the one running
   hookguard, read through its ``RECORD`` (``top_level.txt`` names the import packages);
3. the download cache, outside the checkout (``$HOOKGUARD_CACHE_DIR/packages`` or
   ``$XDG_CACHE_HOME/hookguard/packages``, ``~/.cache/...``);
4. with ``--download`` only: ``pip download --no-deps --only-binary=:all:`` into that cache, then
   the cache again. Wheels only: preparing an sdist's metadata runs its build backend.

Wheels and sdists are read in memory, member by member; nothing is extracted. Each file is
read up to ``max_size`` bytes (a larger one is kept as its size, and its record says so), and
a whole distribution up to :data:`MAX_FILES` files and :data:`MAX_BYTES` bytes of Python:
an archive cannot make hookguard write anything or read without end. Member names that are
absolute or climb out (``..``) are skipped.

Only the distribution's import packages are kept (``top_level.txt`` where there is one; else
every package or module at the import root, less ``tests``, ``docs``, ``examples`` and the
like), named by their path from the import root: the root of a wheel or of a site-packages
folder; in a source tree, the folder holding the packages (``src/`` in a src layout).
"""

from __future__ import annotations

import csv
import email.parser
import hashlib
import io
import json
import os
import re
import stat
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from hookguard.errors import UsageError
from hookguard.model.sources import blob_sha

if TYPE_CHECKING:
    from hookguard.model.cache import RecordCache

MAX_FILES = 100_000
MAX_BYTES = 1 << 30  # of .py source in one distribution
_META_LIMIT = 1 << 20  # METADATA, PKG-INFO, RECORD, top_level.txt ...
_RECORD_LIMIT = 64 << 20
# Top-level folders of a source tree or wheel that are no import package of the distribution.
_NOT_PACKAGES = frozenset({
    "test", "tests", "doc", "docs", "example", "examples", "benchmark", "benchmarks",
    "script", "scripts", "tools", "build", "dist", "ci", "setup", "conftest", "noxfile",
    "tasks", "fabfile", "manage",
})
_SKIPPED_DIRS = frozenset({
    ".git", ".hg", ".svn", "__pycache__", "node_modules", ".tox", ".nox", ".venv", "venv",
    ".mypy_cache", ".ruff_cache", ".pytest_cache", "build", "dist", ".eggs",
})
_SPEC_NAME = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$")
_SPEC_VERSION = re.compile(r"^[A-Za-z0-9][A-Za-z0-9.+!_-]*$")


def normalize_name(name: str) -> str:
    """PEP 503: ``Foo_Bar.baz`` and ``foo-bar-baz`` are one distribution."""
    return re.sub(r"[-_.]+", "-", name).lower()


def canonical_version(version: str) -> str:
    """A version for comparison: ``v4.46.0`` and ``4.46`` are one (PEP 440 pads releases
    with zeros); case and ``-``/``_`` separators do not matter."""
    text = version.strip().lower()
    text = text[1:] if text.startswith("v") else text
    match = re.match(r"^(\d+(?:\.\d+)*)(.*)$", text)
    if not match:
        return text
    release = [int(p) for p in match.group(1).split(".")]
    while len(release) > 1 and release[-1] == 0:
        release.pop()
    rest = re.sub(r"[-_]", ".", match.group(2))
    return ".".join(map(str, release)) + rest


def parse_spec(spec: str) -> tuple[str, str]:
    """``transformers==4.46.0`` -> ("transformers", "4.46.0"); anything else is a usage error."""
    name, sep, version = spec.partition("==")
    name, version = name.strip(), version.strip()
    if not sep or not _SPEC_NAME.match(name) or not _SPEC_VERSION.match(version):
        raise UsageError(f"bad package spec {spec!r}: write PACKAGE==VERSION "
                         "(for example transformers==4.46.0)")
    return name, version


@dataclass
class Distribution:
    """One version of a distribution: its import packages' Python files, as bytes."""

    name: str
    version: str
    origin: str  # where it was read: "wheel /path/x.whl", "environment /site-packages"
    # path from the import root (``transformers/trainer.py``) -> its bytes, or its size when
    # over the size limit (never read); a wheel listed in the cache reads a member when asked
    files: Mapping[str, bytes | int] = field(default_factory=dict)
    tops: tuple[str, ...] = ()  # the import packages (and top-level modules) kept
    # path -> content key (git blob id) where known without reading the file (a cached
    # wheel listing); any other file's is computed from its bytes
    blobs: dict[str, str] = field(default_factory=dict)

    def label(self) -> str:
        return f"{self.name} {self.version}"


class _Reader:
    """Counts what a distribution's files cost: :data:`MAX_FILES`, :data:`MAX_BYTES`."""

    def __init__(self, where: str) -> None:
        self.where = where
        self.count = 0
        self.total = 0

    def take(self, size: int) -> None:
        self.count += 1
        self.total += size
        if self.count > MAX_FILES or self.total > MAX_BYTES:
            raise UsageError(f"{self.where}: over {MAX_FILES} Python files or "
                             f"{MAX_BYTES >> 20} MiB of them: not read")


def _safe_member(name: str) -> str | None:
    """A member name as a relative posix path, or None for one that is absolute, climbs out,
    or is odd (backslashes, empty parts)."""
    if not name or name.startswith("/") or "\\" in name or "\0" in name:
        return None
    parts = name.split("/")
    if any(p in ("", ".", "..") for p in parts[:-1]) or parts[-1] in ("", ".", ".."):
        return None
    return name


def _headers(data: bytes) -> dict[str, str]:
    """The header fields of a METADATA or PKG-INFO file (RFC 822)."""
    text = data[:_META_LIMIT].decode("utf-8", errors="replace")
    message = email.parser.HeaderParser().parsestr(text)
    return {k.lower(): str(v).strip() for k, v in message.items()}


def _importable(path: str) -> bool:
    """``a/b/c.py`` whose folders and module are identifiers: a module Python can import."""
    parts = path[:-3].split("/")
    return all(p.isidentifier() for p in parts)


def _top(path: str) -> str:
    first = path.split("/", 1)[0]
    return first[:-3] if first.endswith(".py") else first


def _keep(files: Mapping[str, bytes | int], top_level: Sequence[str]) -> tuple[
        dict[str, bytes | int], tuple[str, ...]]:
    """The files of the distribution's import packages, and those packages: the names
    ``top_level.txt`` lists, else every one found less :data:`_NOT_PACKAGES`."""
    found = {_top(p) for p in files if _importable(p)}
    listed = {t.strip().split("/")[0] for t in top_level if t.strip()}
    if listed:
        tops = sorted(found & listed)
    else:
        tops = sorted(t for t in found if t.lower() not in _NOT_PACKAGES)
    kept = {p: d for p, d in files.items() if _top(p) in tops and _importable(p)}
    return kept, tuple(tops)


# -- wheels --------------------------------------------------------------------------------
def read_wheel(path: Path, max_size: int) -> Distribution:
    where = str(path)
    try:
        archive = zipfile.ZipFile(path)
    except (OSError, zipfile.BadZipFile, ValueError) as exc:
        raise UsageError(f"{where}: not a readable wheel ({exc})") from None
    with archive:
        try:
            return _read_wheel(archive, where, max_size)
        except (OSError, zipfile.BadZipFile, ValueError, EOFError, RuntimeError) as exc:
            raise UsageError(f"{where}: not a readable wheel ({exc})") from None


def _read_wheel(archive: zipfile.ZipFile, where: str, max_size: int,
                names: dict[str, str] | None = None) -> Distribution:
    """The wheel's distribution; ``names``, when given, gets each kept file's member name."""
    members = archive.infolist()
    infos = sorted({m.filename.split("/", 1)[0] for m in members
                    if m.filename.split("/", 1)[0].endswith(".dist-info")
                    and m.filename.endswith("/METADATA")})
    if len(infos) != 1:
        raise UsageError(f"{where}: not a readable wheel (no single *.dist-info/METADATA)")
    info_dir = infos[0]

    def small(name: str) -> bytes | None:
        try:
            member = archive.getinfo(name)
        except KeyError:
            return None
        if member.file_size > _META_LIMIT:
            return None
        with archive.open(member) as handle:
            return handle.read(_META_LIMIT)

    metadata = _headers(small(f"{info_dir}/METADATA") or b"")
    name, version = metadata.get("name", ""), metadata.get("version", "")
    if not name or not version:
        raise UsageError(f"{where}: not a readable wheel (METADATA has no Name or Version)")
    top_level = (small(f"{info_dir}/top_level.txt") or b"").decode("utf-8", "replace")
    data_dir = info_dir[: -len(".dist-info")] + ".data/"
    reader = _Reader(where)
    files: dict[str, bytes | int] = {}
    for member in members:
        rel = _safe_member(member.filename)
        if rel is None or member.is_dir() or not rel.endswith(".py"):
            continue
        if rel.startswith(data_dir):
            rest = rel[len(data_dir):]
            scheme, _, rel = rest.partition("/")
            if scheme not in ("purelib", "platlib") or not rel:
                continue  # scripts, headers, data: no import package
        elif rel.startswith(info_dir + "/"):
            continue
        if member.file_size > max_size:
            files[rel] = member.file_size
            continue
        with archive.open(member) as handle:
            data = handle.read(max_size + 1)
        reader.take(len(data))
        files[rel] = data if len(data) <= max_size else len(data)
        if names is not None:
            names[rel] = member.filename
    kept, tops = _keep(files, top_level.splitlines())
    return Distribution(name, version, f"wheel {where}", kept, tops)


class _WheelMembers(Mapping[str, "bytes | int"]):
    """The kept files of a wheel whose listing the cache holds: each member is decompressed
    when first asked, from the wheel's bytes read once (those the listing was found for)."""

    def __init__(self, where: str, archive: zipfile.ZipFile, members: dict[str, str | int],
                 max_size: int) -> None:
        self._where = where
        self._archive = archive
        self._members = members  # path -> member name, or size when over max_size
        self._max_size = max_size
        self._read: dict[str, bytes | int] = {}

    def __getitem__(self, path: str) -> bytes | int:
        found = self._read.get(path)
        if found is not None:
            return found
        entry = self._members[path]
        if isinstance(entry, int):
            return entry
        try:
            with self._archive.open(entry) as handle:
                data = handle.read(self._max_size + 1)
        except (OSError, zipfile.BadZipFile, ValueError, EOFError, RuntimeError,
                KeyError) as exc:
            raise UsageError(f"{self._where}: not a readable wheel ({exc})") from None
        value = data if len(data) <= self._max_size else len(data)
        self._read[path] = value
        return value

    def __iter__(self) -> Iterator[str]:
        return iter(self._members)

    def __len__(self) -> int:
        return len(self._members)


_LISTING = "wheel-listing-1:"


def _listing(dist: Distribution, names: Mapping[str, str]) -> bytes:
    files = {p: [d if isinstance(d, int) else names[p], dist.blobs.get(p)]
             for p, d in dist.files.items()}
    return json.dumps({"name": dist.name, "version": dist.version, "tops": list(dist.tops),
                       "files": files}, sort_keys=True).encode()


def _from_listing(data: bytes) -> tuple[str, str, tuple[str, ...], dict[str, str | int],
                                        dict[str, str]] | None:
    """(name, version, tops, path -> member name or size, path -> blob id) of a listing the
    cache held (signed: anything else in it is a bug, and read as a miss)."""
    try:
        listing = json.loads(data)
        name, version, tops, files = (listing["name"], listing["version"], listing["tops"],
                                      listing["files"])
    except (ValueError, TypeError, KeyError):
        return None
    if not (isinstance(name, str) and isinstance(version, str) and isinstance(tops, list)
            and all(isinstance(t, str) for t in tops) and isinstance(files, dict)):
        return None
    members: dict[str, str | int] = {}
    blobs: dict[str, str] = {}
    for path, entry in files.items():
        if not (isinstance(entry, list) and len(entry) == 2):
            return None
        member, blob = entry
        if isinstance(member, int) and blob is None:
            members[path] = member
        elif isinstance(member, str) and isinstance(blob, str):
            members[path] = member
            blobs[path] = blob
        else:
            return None
    return name, version, tuple(tops), members, blobs


def read_wheel_cached(path: Path, max_size: int, cache: RecordCache) -> Distribution:
    """:func:`read_wheel`, with the wheel's listing (its kept files, each one's member name and
    blob id) kept in ``cache`` under the SHA-256 of the wheel's bytes: a wheel read before is
    not decompressed again; each member is, when first asked (:class:`_WheelMembers`)."""
    where = str(path)
    try:
        blob = _read_regular_file(path)
        archive = zipfile.ZipFile(io.BytesIO(blob))
    except (OSError, zipfile.BadZipFile, ValueError) as exc:
        raise UsageError(f"{where}: not a readable wheel ({exc})") from None
    key = f"{_LISTING}{hashlib.sha256(blob).hexdigest()}:{max_size}"
    stored = cache.get_history(key)
    listing = _from_listing(stored) if stored is not None else None
    if listing is not None:
        name, version, tops, members, blobs = listing
        return Distribution(name, version, f"wheel {where}",
                            _WheelMembers(where, archive, members, max_size), tops, blobs)
    names: dict[str, str] = {}
    try:
        dist = _read_wheel(archive, where, max_size, names)
    except (OSError, zipfile.BadZipFile, ValueError, EOFError, RuntimeError) as exc:
        raise UsageError(f"{where}: not a readable wheel ({exc})") from None
    dist.blobs = {p: blob_sha(d) for p, d in dist.files.items() if isinstance(d, bytes)}
    cache.put_history(key, _listing(dist, names))
    return dist


def _read_regular_file(path: Path) -> bytes:
    """The bytes of the regular file ``path`` (never a pipe: that would block)."""
    with open(path, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            raise OSError(f"{path}: not a regular file")
        return handle.read()


def _wheel_name_version(path: Path) -> tuple[str, str] | None:
    """(name, version) from a wheel's file name (``name-version(-build)?-py-abi-plat.whl``)."""
    parts = path.name[: -len(".whl")].split("-")
    return (parts[0], parts[1]) if len(parts) >= 5 else None


# -- sdists and source trees ---------------------------------------------------------------
_ARCHIVES = (".tar.gz", ".tgz", ".tar.bz2", ".tar.xz", ".tar")


def _is_sdist(path: Path) -> bool:
    return path.name.lower().endswith(_ARCHIVES)


def read_sdist(path: Path, max_size: int) -> Distribution:
    where = str(path)
    reader = _Reader(where)
    files: dict[str, bytes | int] = {}
    meta: dict[str, bytes] = {}
    try:
        with tarfile.open(path, "r:*") as archive:
            for member in archive:  # streamed: one pass, nothing extracted
                rel = _safe_member(member.name)
                if rel is None or not member.isreg() or "/" not in rel:
                    continue
                rel = rel.split("/", 1)[1]  # under the sdist's own folder
                name = rel.rsplit("/", 1)[-1]
                wanted_meta = rel == "PKG-INFO" or (
                    name in ("PKG-INFO", "top_level.txt") and ".egg-info/" in rel
                    and rel.count("/") <= 2) or rel == "pyproject.toml"
                if wanted_meta and member.size <= _META_LIMIT:
                    handle = archive.extractfile(member)
                    if handle is not None:
                        meta[rel] = handle.read(_META_LIMIT)
                    continue
                if not rel.endswith(".py"):
                    continue
                if member.size > max_size:
                    files[rel] = member.size
                    continue
                handle = archive.extractfile(member)
                if handle is None:
                    continue
                data = handle.read(max_size + 1)
                reader.take(len(data))
                files[rel] = data if len(data) <= max_size else len(data)
    except (OSError, tarfile.TarError, EOFError, ValueError, zipfile.BadZipFile) as exc:
        raise UsageError(f"{where}: not a readable sdist ({exc})") from None
    return _source_tree(where, "sdist", files, meta)


def _source_tree(where: str, kind: str, files: dict[str, bytes | int],
                 meta: Mapping[str, bytes]) -> Distribution:
    """A distribution from a source tree's files (paths from the tree's root) and metadata."""
    name = version = ""
    for rel in sorted(meta, key=lambda r: (r.count("/"), r)):
        if rel.endswith("PKG-INFO"):
            headers = _headers(meta[rel])
            name = name or headers.get("name", "")
            version = version or headers.get("version", "")
    if (not name or not version) and "pyproject.toml" in meta:
        project = _pyproject_project(meta["pyproject.toml"])
        name = name or str(project.get("name", ""))
        dynamic = project.get("dynamic", [])
        if not version and not (isinstance(dynamic, list) and "version" in dynamic):
            version = str(project.get("version", ""))
    top_level: list[str] = []
    for rel, data in sorted(meta.items()):
        if rel.endswith("top_level.txt"):
            top_level = data.decode("utf-8", "replace").splitlines()
            break
    root = _import_root(files, top_level)
    below = {p[len(root):]: d for p, d in files.items() if p.startswith(root)}
    kept, tops = _keep(below, top_level)
    return Distribution(name, version, f"{kind} {where}", kept, tops)


def _pyproject_project(data: bytes) -> dict[str, object]:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on 3.10 only
        import tomli as tomllib  # type: ignore[import-not-found,unused-ignore]
    try:
        parsed = tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return {}
    project = parsed.get("project")
    return project if isinstance(project, dict) else {}


def _import_root(files: Mapping[str, bytes | int], top_level: Sequence[str]) -> str:
    """The folder (``""``, ``src/``, ``lib/``...) holding a source tree's import packages: the
    shallowest one holding a listed top-level name (``pkg/__init__.py`` or ``pkg.py``), else
    ``src/`` when it holds a package, else the root."""
    names = [t.strip() for t in top_level if t.strip()]
    if names:
        best: str | None = None
        for path in files:
            parts = path.split("/")
            for depth in range(len(parts)):
                here = parts[depth]
                if (here in names and depth + 1 < len(parts)) or (
                        depth == len(parts) - 1 and here[:-3] in names):
                    root = "/".join(parts[:depth])
                    root = f"{root}/" if root else ""
                    if best is None or root.count("/") < best.count("/"):
                        best = root
                    break
        if best is not None:
            return best
    if any(p.startswith("src/") and p.count("/") >= 2 and p.endswith("/__init__.py")
           for p in files):
        return "src/"
    return ""


def read_directory(path: Path, name: str, max_size: int) -> Distribution:
    """A directory: a site-packages-like folder holding the distribution's ``*.dist-info``,
    or a source tree (an unpacked sdist, a checkout of the package)."""
    where = str(path)
    if not path.is_dir():
        raise UsageError(f"{where}: no such directory")
    installed = _find_dist_info([str(path)], name)
    if installed is not None:
        return _read_installed(installed, max_size)
    reader = _Reader(where)
    files: dict[str, bytes | int] = {}
    meta: dict[str, bytes] = {}
    for rel in _walk(path):
        full = os.path.join(path, rel)
        base = rel.rsplit("/", 1)[-1]
        if rel in ("PKG-INFO", "pyproject.toml") or (
                base in ("PKG-INFO", "top_level.txt") and ".egg-info/" in rel
                and rel.count("/") <= 2):
            data = _read_file(full, _META_LIMIT)
            if isinstance(data, bytes):
                meta[rel] = data
            continue
        if rel.endswith(".py"):
            read = _read_file(full, max_size)
            if read is None:
                continue
            if isinstance(read, bytes):
                reader.take(len(read))
            files[rel] = read
    return _source_tree(where, "directory", files, meta)


def _walk(root: Path) -> Iterator[str]:
    """Relative posix paths of the files under ``root``: links not followed, caches, version
    control and virtual environments left out."""
    for current, dirs, names in os.walk(root, followlinks=False):
        rel_dir = os.path.relpath(current, root)
        prefix = "" if rel_dir == "." else Path(rel_dir).as_posix() + "/"
        dirs[:] = sorted(d for d in dirs if d not in _SKIPPED_DIRS
                         and not os.path.exists(os.path.join(current, d, "pyvenv.cfg")))
        for file_name in sorted(names):
            yield prefix + file_name


def _read_file(path: str, limit: int) -> bytes | int | None:
    """A regular file's bytes, its size when over ``limit`` (not read), or None (unreadable,
    not a regular file). Never blocks on a pipe."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    try:
        with os.fdopen(fd, "rb") as handle:
            info = os.fstat(handle.fileno())
            if not stat.S_ISREG(info.st_mode):
                return None
            if info.st_size > limit:
                return info.st_size
            data = handle.read(limit + 1)
    except OSError:
        return None
    return data if len(data) <= limit else len(data)


# -- the environment -----------------------------------------------------------------------
@dataclass(frozen=True)
class _Installed:
    site: str  # the sys.path folder holding it
    info: str  # its *.dist-info folder name
    name: str
    version: str


def search_path(python: str | None) -> list[str]:
    """The ``sys.path`` of ``python`` (asked with ``-c``; the package is never imported), or of
    the interpreter running hookguard when None."""
    if python is None:
        return [p for p in sys.path if p]
    try:  # from an empty folder: ``-c`` puts the current one first on sys.path, and a
        # checkout's own ``json.py`` must not be what ``import json`` runs
        with tempfile.TemporaryDirectory(prefix="hookguard-python-") as empty:
            done = subprocess.run(
                [python, "-c", "import json, sys; print(json.dumps(sys.path))"],
                capture_output=True, timeout=60, check=False, stdin=subprocess.DEVNULL,
                cwd=empty)
    except (OSError, subprocess.SubprocessError) as exc:
        raise UsageError(f"cannot run --python {python}: {exc}") from None
    try:
        found = json.loads(done.stdout.decode("utf-8", "replace").strip().splitlines()[-1])
    except (ValueError, IndexError):
        found = None
    if done.returncode != 0 or not isinstance(found, list):
        raise UsageError(f"--python {python} did not print its sys.path (exit {done.returncode})")
    return [p for p in found if isinstance(p, str) and p]


def _find_dist_info(folders: Iterable[str], name: str) -> _Installed | None:
    """The first ``*.dist-info`` of distribution ``name`` on ``folders`` (as import finds it)."""
    wanted = normalize_name(name)
    for folder in folders:
        try:
            entries = sorted(os.listdir(folder))
        except OSError:
            continue
        for entry in entries:
            if not entry.endswith(".dist-info"):
                continue
            stem = entry[: -len(".dist-info")]
            dist, _, _ = stem.partition("-")
            if normalize_name(dist) != wanted:
                continue
            data = _read_file(os.path.join(folder, entry, "METADATA"), _META_LIMIT)
            headers = _headers(data) if isinstance(data, bytes) else {}
            if normalize_name(headers.get("name", dist)) != wanted:
                continue
            version = headers.get("version") or stem.partition("-")[2]
            return _Installed(folder, entry, headers.get("name", dist), version)
    return None


def _listed_tops(lines: Iterable[str]) -> tuple[str, ...]:
    """The import names a ``top_level.txt`` lists."""
    return tuple(sorted({t.strip().split("/")[0] for t in lines
                         if t.strip() and t.strip().split("/")[0].isidentifier()}))


def _read_installed(found: _Installed, max_size: int) -> Distribution:
    info_dir = os.path.join(found.site, found.info)
    where = f"{found.site}"
    record = _read_file(os.path.join(info_dir, "RECORD"), _RECORD_LIMIT)
    top_data = _read_file(os.path.join(info_dir, "top_level.txt"), _META_LIMIT)
    top_level = (top_data.decode("utf-8", "replace").splitlines()
                 if isinstance(top_data, bytes) else [])
    paths: list[str] = []
    if isinstance(record, bytes):
        for row in csv.reader(io.StringIO(record.decode("utf-8", "replace"))):
            rel = _safe_member(row[0].replace("\\", "/")) if row else None
            if rel is not None and rel.endswith(".py") and not rel.startswith(found.info + "/"):
                paths.append(rel)
    editable = _editable_dir(info_dir)
    if editable is not None and not any(not _top(p).startswith("__editable__")
                                        for p in paths):
        tree = read_directory(Path(editable), found.name, max_size)
        return Distribution(found.name, found.version,
                            f"environment {where} (editable: {editable})", tree.files, tree.tops)
    if not paths:  # no RECORD: the folders top_level.txt names
        for top in top_level:
            top = top.strip()
            if not top.isidentifier():
                continue
            if os.path.isfile(os.path.join(found.site, top + ".py")):
                paths.append(top + ".py")
            elif os.path.isdir(os.path.join(found.site, top)):
                paths.extend(f"{top}/{rel}" for rel in _walk(Path(found.site) / top)
                             if rel.endswith(".py"))
    reader = _Reader(where)
    files: dict[str, bytes | int] = {}
    for rel in paths:
        read = _read_file(os.path.join(found.site, rel), max_size)
        if read is None:
            continue
        if isinstance(read, bytes):
            reader.take(len(read))
        files[rel] = read
    kept, tops = _keep(files, top_level)
    return Distribution(found.name, found.version, f"environment {where}", kept, tops)


def _editable_dir(info_dir: str) -> str | None:
    """The source folder of an editable install (``direct_url.json``), or None."""
    data = _read_file(os.path.join(info_dir, "direct_url.json"), _META_LIMIT)
    if not isinstance(data, bytes):
        return None
    try:
        direct = json.loads(data)
    except ValueError:
        return None
    if not isinstance(direct, dict):
        return None
    dir_info = direct.get("dir_info")
    url = direct.get("url")
    if not (isinstance(dir_info, dict) and dir_info.get("editable") and isinstance(url, str)
            and url.startswith("file://")):
        return None
    from urllib.parse import unquote, urlparse

    return unquote(urlparse(url).path) or None


# -- finding a version ---------------------------------------------------------------------
def cache_folder() -> Path:
    """Where downloaded distributions are kept: outside any checkout."""
    moved = os.environ.get("HOOKGUARD_CACHE_DIR")
    if moved:
        return Path(moved).absolute() / "packages"
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base).absolute() / "hookguard" / "packages"


#: The package caches' config digest: what a package file's record is made of (the same for
#: an installed file and one of a wheel: :func:`hookguard.upgrade.package.package_record`).
PACKAGE_CACHE_VERSION = "environment-1"


def open_package_cache(name: str, version: str, checkout: Path, notes: list[str]
                       ) -> RecordCache | None:
    """The signed cache of the records of ``name`` ``version`` (``records/NAME-VERSION/``
    beside :func:`cache_folder`), or None with a note where it cannot be (inside the checkout,
    not writable)."""
    from hookguard.model.cache import RecordCache

    label = f"{normalize_name(name)}-{version}" if name else "unowned"
    label = re.sub(r"[^A-Za-z0-9._+-]", "_", label)[:120] or "unowned"
    root = cache_folder() / "records"
    try:
        if root.resolve().is_relative_to(checkout.resolve()):
            notes.append(f"the package cache {root} lies inside the checkout: package "
                         "files are not cached (set HOOKGUARD_CACHE_DIR outside it)")
            return None
        root.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        notes.append(f"cannot make the package cache {root}: {exc.strerror or exc}")
        return None
    return RecordCache(root / label, PACKAGE_CACHE_VERSION, checkout)


@dataclass
class Locator:
    """Finds versions of the distribution ``name`` (see the module's documentation)."""

    name: str
    sources: Sequence[Path] = ()
    python: str | None = None
    download: bool = False
    checkout: Path | None = None  # the download cache must lie outside it
    max_size: int = 4 * 1024 * 1024
    use_cache: bool = False  # keep wheel listings and package records (outside the checkout)
    notes: list[str] = field(default_factory=list)
    _path: list[str] | None = field(default=None, repr=False)
    _read: dict[str, Distribution] = field(default_factory=dict, repr=False)
    _caches: dict[str, RecordCache | None] = field(default_factory=dict, repr=False)

    def cache(self, version: str) -> RecordCache | None:
        """The package cache of ``version`` (``""``: the wheel listings), opened once."""
        if not self.use_cache or self.checkout is None:
            return None
        if version not in self._caches:
            cache = open_package_cache(self.name, version or "wheels", self.checkout,
                                       self.notes)
            if cache is None:
                self.use_cache = False
            self._caches[version] = cache
        return self._caches[version]

    def save_caches(self) -> None:
        """Write what the caches gained; their notes join :attr:`notes`."""
        for cache in self._caches.values():
            if cache is not None:
                cache.save()
                self.notes.extend(cache.warnings)
                cache.warnings.clear()

    def installed(self) -> _Installed | None:
        if self._path is None:
            self._path = search_path(self.python)
        return _find_dist_info(self._path, self.name)

    def interpreter(self) -> str:
        return self.python or sys.executable

    def _source(self, path: Path) -> Distribution:
        key = str(path)
        if key not in self._read:
            if path.is_dir():
                dist = read_directory(path, self.name, self.max_size)
            elif not path.exists():
                raise UsageError(f"--source {path}: no such file or directory")
            elif path.name.lower().endswith(".whl"):
                listings = self.cache("")
                dist = (read_wheel(path, self.max_size) if listings is None
                        else read_wheel_cached(path, self.max_size, listings))
            elif _is_sdist(path):
                dist = read_sdist(path, self.max_size)
            else:
                raise UsageError(f"--source {path}: not a wheel (.whl), an sdist (.tar.gz) "
                                 "or a directory")
            if not dist.version:
                raise UsageError(f"--source {path}: its version cannot be read (no PKG-INFO, "
                                 "*.dist-info or static [project] version)")
            if dist.name and normalize_name(dist.name) != normalize_name(self.name):
                raise UsageError(f"--source {path} holds {dist.name}, not {self.name}")
            if not dist.name:
                dist.name = self.name
            self._read[key] = dist
        return self._read[key]

    def check_sources(self, versions: Sequence[str]) -> None:
        """Every ``--source`` must be one of ``versions``: anything else is a mistake."""
        wanted = {canonical_version(v) for v in versions}
        for path in self.sources:
            dist = self._source(path)
            if canonical_version(dist.version) not in wanted:
                raise UsageError(f"--source {path} holds {dist.label()}, which is neither "
                                 + " nor ".join(versions))

    def find(self, version: str) -> Distribution:
        """The distribution at ``version``, or a usage error saying where it was looked for."""
        wanted = canonical_version(version)
        for path in self.sources:
            dist = self._source(path)
            if canonical_version(dist.version) == wanted:
                return dist
        found = self.installed()
        if found is not None and canonical_version(found.version) == wanted:
            return _read_installed(found, self.max_size)
        folder = self._cache()
        cached = self._cached(folder, wanted)
        if cached is None and self.download:
            self._download(folder, version)
            cached = self._cached(folder, wanted)
        if cached is not None:
            return self._source(cached)
        where = f"installed: {found.version}" if found is not None else "not installed"
        raise UsageError(
            f"{self.name} {version} not found (--source: {len(self.sources)} given; "
            f"environment of {self.interpreter()}: {where}; cache {folder}): give it with "
            "--source WHEEL|SDIST|DIR, or pass --download")

    def find_installed(self) -> Distribution:
        found = self.installed()
        if found is None:
            raise UsageError(f"{self.name} is not installed for {self.interpreter()}: give the "
                             "version upgraded from with --from VERSION")
        return _read_installed(found, self.max_size)

    def import_names(self) -> tuple[str, ...] | None:
        """The distribution's import packages where they can be told without downloading or
        reading its files: the installed ``*.dist-info``'s ``top_level.txt`` (else its
        ``RECORD``), else a wheel of it in the package cache; None when neither is there."""
        found = self.installed()
        if found is not None:
            info_dir = os.path.join(found.site, found.info)
            listed = _read_file(os.path.join(info_dir, "top_level.txt"), _META_LIMIT)
            if isinstance(listed, bytes):
                tops = _listed_tops(listed.decode("utf-8", "replace").splitlines())
                if tops:
                    return tops
            record = _read_file(os.path.join(info_dir, "RECORD"), _RECORD_LIMIT)
            if isinstance(record, bytes):
                paths = [row[0] for row in csv.reader(io.StringIO(
                    record.decode("utf-8", "replace"))) if row]
                tops = tuple(sorted({_top(p) for p in paths
                                     if p.endswith(".py") and _importable(p)}))
                if tops:
                    return tops
        folder = cache_folder()
        if not folder.is_dir():
            return None
        wanted = normalize_name(self.name)
        for path in sorted(folder.glob("*.whl")):
            named = _wheel_name_version(path)
            if named is None or normalize_name(named[0]) != wanted:
                continue
            try:
                with zipfile.ZipFile(path) as archive:
                    names = archive.namelist()
                    listed_name = next((n for n in names if n.count("/") == 1
                                        and n.endswith(".dist-info/top_level.txt")), None)
                    if listed_name is not None and archive.getinfo(
                            listed_name).file_size <= _META_LIMIT:
                        tops = _listed_tops(archive.read(listed_name).decode(
                            "utf-8", "replace").splitlines())
                        if tops:
                            return tops
                    tops = tuple(sorted({_top(n) for n in names
                                         if n.endswith(".py") and _importable(n)}))
                    if tops:
                        return tops
            except (OSError, zipfile.BadZipFile, ValueError, EOFError, RuntimeError):
                continue
        return None

    def _cache(self) -> Path:
        folder = cache_folder()
        if self.checkout is not None and folder.resolve().is_relative_to(
                self.checkout.resolve()):
            raise UsageError(f"the package cache {folder} lies inside the checkout: set "
                             "HOOKGUARD_CACHE_DIR to a folder outside it")
        return folder

    def _cached(self, folder: Path, wanted: str) -> Path | None:
        if not folder.is_dir():
            return None
        for path in sorted(folder.glob("*.whl")):
            named = _wheel_name_version(path)
            if named is not None and normalize_name(named[0]) == normalize_name(self.name) and (
                    canonical_version(named[1]) == wanted):
                return path
        return None

    def _download(self, folder: Path, version: str) -> None:
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise UsageError(f"cannot make the package cache {folder}: {exc}") from None
        command = [self.interpreter(), "-m", "pip", "download", "--no-deps",
                   "--only-binary=:all:", "--quiet", "--dest", str(folder),
                   f"{self.name}=={version}"]
        try:
            done = subprocess.run(command, capture_output=True, timeout=900, check=False,
                                  stdin=subprocess.DEVNULL)
        except (OSError, subprocess.SubprocessError) as exc:
            raise UsageError(f"pip download {self.name}=={version} failed: {exc}") from None
        if done.returncode != 0:
            lines = done.stderr.decode("utf-8", "replace").strip().splitlines()
            last = lines[-1] if lines else f"exit {done.returncode}"
            raise UsageError(f"pip download {self.name}=={version} failed (wheels only): {last}")


def module_of(path: str) -> tuple[str, bool]:
    """(module, is_package) of a file named from its import root."""
    parts = PurePosixPath(path[:-3]).parts
    if parts[-1] == "__init__":
        return ".".join(parts[:-1]), True
    return ".".join(parts), False


__all__ = [
    "Distribution",
    "Locator",
    "cache_folder",
    "canonical_version",
    "module_of",
    "normalize_name",
    "open_package_cache",
    "parse_spec",
    "read_directory",
    "read_sdist",
    "read_wheel",
    "read_wheel_cached",
    "search_path",
]
