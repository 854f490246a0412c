"""One version of a package as hookguard records, parsed lazily: only what the checkout needs.

A framework can hold thousands of files (transformers: over 2,500), and the checkout subclasses
a handful of its classes. A version's files are parsed on demand, with hookguard's own
extractor (:func:`hookguard.model.extract.extract`, module names from the package layout):

- every module on the way to a name the checkout's classes subclass (``transformers`` and
  ``transformers.trainer`` for ``transformers.trainer.Trainer``), and again for what that name
  resolves to through the package's re-exports (``transformers.Trainer`` is imported from
  ``transformers.trainer`` by ``transformers/__init__.py``);
- the modules of the bases of every class parsed, and the targets of their star imports,
  until nothing new is named;
- later (:meth:`PackageVersion.mentioning`), every file whose bytes hold the name of a hook
  that changed: what the package says about that name anywhere (a lookup by name, a call
  through another object) is part of the proof.

A file both versions hold unchanged is parsed once, and both models share its record.
"""

from __future__ import annotations

import ast
import hashlib
import json
import re
from collections.abc import Callable, Collection, Iterable, Iterator
from typing import TYPE_CHECKING

from hookguard.errors import UsageError
from hookguard.model.extract import dotted_name, extract, parse_quietly, resolve_relative
from hookguard.model.project import ClassInfo, External, Node, Project
from hookguard.model.records import FileRecord
from hookguard.model.sources import blob_sha
from hookguard.upgrade.sources import Distribution, module_of

if TYPE_CHECKING:
    from hookguard.model.cache import RecordCache

#: Rounds of "parse what the parsed files name" before the closure stops (a deep chain of
#: re-exports and bases ends long before this).
MAX_ROUNDS = 64


def resolve_dotted(project: Project, dotted: str) -> Node:
    """What the fully qualified ``dotted`` names in ``project``, through re-exports
    (``transformers.Trainer`` -> ``transformers.trainer.Trainer``)."""
    info = project.classes.get(dotted)
    if info is not None:
        return info
    parts = dotted.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        record = project.modules.get(".".join(parts[:cut]))
        if record is not None:
            return project.resolve_name(record, ".".join(parts[cut:]))
    return External(dotted)


def _static_exports(record: FileRecord, data: bytes) -> None:
    """Add to a package ``__init__``'s imports the names its ``if TYPE_CHECKING:`` block
    imports however deep (``try: ... else: from .trainer import Trainer``): what a lazy module
    (transformers' ``_LazyModule``) exports at run time, written out for static readers. Only
    names the record does not bind already; never a star import, never from an ``except``
    branch (a stand-in for a missing dependency: ``from .utils.dummy_pt_objects import *``)."""
    try:
        tree = parse_quietly(data, record.path)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return
    for stmt in tree.body:
        if isinstance(stmt, ast.If) and (dotted_name(stmt.test) or "").rsplit(".", 1)[
                -1] == "TYPE_CHECKING":
            for node in _statements(stmt.body):
                if isinstance(node, ast.ImportFrom):
                    target = (resolve_relative(record.module, True, node.level, node.module)
                              if node.level else node.module or "")
                    for alias in node.names:
                        if alias.name != "*" and target:
                            record.imports.setdefault(alias.asname or alias.name,
                                                      f"{target}.{alias.name}")


def _statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """The statements of ``body`` and of the blocks nested in it, but ``except`` branches."""
    for stmt in body:
        yield stmt
        if isinstance(stmt, (ast.If, ast.For, ast.While)):
            yield from _statements(stmt.body)
            yield from _statements(stmt.orelse)
        elif isinstance(stmt, ast.With):
            yield from _statements(stmt.body)
        elif isinstance(stmt, ast.Try):
            yield from _statements(stmt.body)
            yield from _statements(stmt.orelse)
            yield from _statements(stmt.finalbody)


def package_record(path: str, module: str, is_package: bool, data: bytes | Callable[[], bytes],
                   content_key: str, cache: RecordCache | None,
                   parse: Callable[[str, str, bool, bytes], FileRecord] = extract) -> FileRecord:
    """The record of a package's file (installed, or of a version ``upgrade`` reads), from
    ``cache`` where it holds one for ``(content_key, path, module)``; else parsed with
    ``parse`` (``data``: the bytes, or how to read them) and put there."""
    key = (content_key, path, module)
    record = cache.get(key) if cache is not None else None
    if record is not None:
        return record
    if callable(data):
        data = data()
    try:
        record = parse(path, module, is_package, data)
    except (RecursionError, MemoryError, ValueError) as exc:  # pragma: no cover
        record = FileRecord(path, module, is_package,
                            error=f"cannot be read ({type(exc).__name__})")
    record.content_key = content_key
    if is_package and record.error is None and b"TYPE_CHECKING" in data:
        _static_exports(record, data)
    if cache is not None:
        cache.put(key, record)
    return record


class PackageVersion:
    """The files of one version, and the records parsed so far (from ``cache`` where it holds
    them: :func:`package_record`)."""

    def __init__(self, dist: Distribution, memo: dict[tuple[str, str], FileRecord],
                 cache: RecordCache | None = None) -> None:
        self.dist = dist
        self.modules: dict[str, str] = {}  # module -> path
        for path in sorted(dist.files):
            module, _ = module_of(path)
            self.modules.setdefault(module, path)
        self.records: dict[str, FileRecord] = {}
        self._memo = memo  # (path, blob id) -> record, shared by the versions
        self._cache = cache
        self._occurs: dict[str, set[str]] = {}  # name -> the files holding it as a word
        self._content: str | None = None

    @property
    def version(self) -> str:
        return self.dist.version

    def load(self, paths: Iterable[str]) -> bool:
        """Parse ``paths`` (those not parsed yet, and in this version); whether any was."""
        added = False
        for path in sorted(set(paths)):
            if path in self.records or path not in self.dist.files:
                continue
            module, is_package = module_of(path)
            blob = self.dist.blobs.get(path)
            data = self.dist.files[path] if blob is None else None
            if isinstance(data, int):
                record = FileRecord(path, module, is_package,
                                    error=f"skipped: {data / 2**20:.1f} MiB is over "
                                          "max-file-size")
            else:
                if blob is None:
                    assert data is not None
                    blob = blob_sha(data)
                key = (path, blob)
                found = self._memo.get(key)
                if found is None:
                    found = package_record(path, module, is_package,
                                           data if data is not None else self._bytes(path),
                                           blob, self._cache, extract)
                    self._memo[key] = found
                record = found
            self.records[path] = record
            added = True
        return added

    def _bytes(self, path: str) -> Callable[[], bytes]:
        def read() -> bytes:
            data = self.dist.files[path]
            if isinstance(data, int):  # pragma: no cover - the listing said it was not
                raise UsageError(f"{self.dist.origin}: {path} changed while read")
            return data
        return read

    def paths_of(self, dotted: str) -> set[str]:
        """The files of the modules on the way to ``dotted`` (``a``, ``a.b``, ``a.b.c``)."""
        parts = dotted.split(".")
        found = set()
        for cut in range(1, len(parts) + 1):
            path = self.modules.get(".".join(parts[:cut]))
            if path is not None:
                found.add(path)
        return found

    def project(self) -> Project:
        return Project.build(self.records.values())

    def close(self, names: Collection[str]) -> None:
        """Parse what resolving ``names`` (fully qualified, as the checkout writes them) and
        the bases of every class parsed need, until nothing new is named."""
        tops = set(self.dist.tops)
        for _ in range(MAX_ROUNDS):
            wanted: set[str] = set()
            project = self.project()
            for name in names:
                if not isinstance(resolve_dotted(project, name), ClassInfo):
                    wanted |= self._chase(name, set())
            for info in project.classes.values():
                for written, base in zip(info.record.bases, project.bases(info), strict=False):
                    if isinstance(base, External) and written != "?":
                        if base.name.split(".")[0] in tops:
                            wanted |= self._chase(base.name, set())
                        wanted |= self._chase_in(info.file, written, set())
            if not self.load(wanted):
                return

    def _chase(self, dotted: str, seen: set[str]) -> set[str]:
        """The files the lookup of ``dotted`` reads, followed through the re-exports of the
        modules already parsed (imports, aliases, star imports), as the model follows them."""
        if dotted in seen or len(seen) > 256:
            return set()
        seen.add(dotted)
        found = self.paths_of(dotted)
        parts = dotted.split(".")
        for cut in range(len(parts) - 1, 0, -1):
            path = self.modules.get(".".join(parts[:cut]))
            record = self.records.get(path) if path is not None else None
            if record is None:
                continue
            found |= self._chase_in(record, ".".join(parts[cut:]), seen)
            break
        return found

    def _chase_in(self, record: FileRecord, dotted: str, seen: set[str]) -> set[str]:
        """The files the lookup of ``dotted``, as written in ``record``'s module, reads."""
        head, _, rest = dotted.partition(".")
        tail = f".{rest}" if rest else ""
        found: set[str] = set()
        if head in record.imports:
            found |= self._chase(record.imports[head] + tail, seen)
        elif head in record.aliases:
            found |= self._chase_in(record, record.aliases[head] + tail, seen) if (
                record.aliases[head].partition(".")[0] != head) else set()
        else:
            for star in record.star_imports:
                found |= self._chase(f"{star}.{dotted}", seen)
        return found

    def occurrences(self, names: Collection[str]) -> dict[str, set[str]]:
        """For each of ``names``: the files (parsed or not) whose bytes hold it as a word.

        Each name's answer is kept: in memory, and in the version's cache under the version's
        content (:meth:`_fingerprint`), so a warm run decompresses nothing to answer it."""
        found: dict[str, set[str]] = {}
        missing: list[str] = []
        for name in dict.fromkeys(names):
            known = self._occurs.get(name)
            if known is None and self._cache is not None:
                stored = self._cache.get_history(f"{_OCCURS}{self._fingerprint()}:{name}")
                if stored is not None:
                    known = self._occurs[name] = set(json.loads(stored))
            if known is None:
                missing.append(name)
            else:
                found[name] = known
        if missing:
            scanned: dict[str, set[str]] = {name: set() for name in missing}
            pattern = re.compile(rb"\b(?:" + b"|".join(
                re.escape(n.encode()) for n in sorted(missing, key=len, reverse=True)) + rb")\b")
            words = [n.encode() for n in missing]
            for path, data in self.dist.files.items():
                if isinstance(data, bytes) and any(w in data for w in words):
                    for match in set(pattern.findall(data)):
                        scanned[match.decode()].add(path)
            for name, paths in scanned.items():
                self._occurs[name] = found[name] = paths
                if self._cache is not None:
                    self._cache.put_history(f"{_OCCURS}{self._fingerprint()}:{name}",
                                            json.dumps(sorted(paths)).encode())
        return found

    def answer(self, question: str, compute: Callable[[], object],
               content: str | None = None) -> object:
        """``compute()``'s answer (JSON data) to ``question`` about this version's content (or
        about ``content``, one file's blob id), kept in the version's cache: asked again, on
        the same content, it is read back."""
        key = f"{_ANSWER}{content or self._fingerprint()}:{question}"
        if self._cache is not None:
            stored = self._cache.get_history(key)
            if stored is not None:
                return json.loads(stored)
        found = compute()
        if self._cache is not None:
            self._cache.put_history(key, json.dumps(found, sort_keys=True).encode())
        return found

    def _fingerprint(self) -> str:
        """The version's content: each file's path and blob id (from the wheel's listing where
        the cache holds one, else hashed from its bytes), or size when it is over the limit."""
        if self._content is None:
            digest = hashlib.sha256()
            for path in sorted(self.dist.files):
                blob = self.dist.blobs.get(path)
                if blob is None:
                    data = self.dist.files[path]
                    blob = blob_sha(data) if isinstance(data, bytes) else f"size {data}"
                digest.update(f"{path}\0{blob}\n".encode())
            self._content = digest.hexdigest()
        return self._content


_OCCURS = "occurs-1:"  # occurs-1:<version content>:<name> -> the paths, as JSON
_ANSWER = "version-answer-1:"  # version-answer-1:<version content>:<question> -> JSON


__all__ = ["PackageVersion", "package_record", "resolve_dotted"]
