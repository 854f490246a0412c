"""The pinned versions of a tree's dependencies, and which of them a change moves.

Read from the bytes of git blobs (:func:`tree_pins`): never the work tree, never executing
anything. The files read:

- ``requirements*.txt``, ``*-requirements.txt``, ``constraints*.txt`` and any ``.txt`` in a
  ``requirements/`` folder, with the files they name by ``-r``/``--requirement`` and
  ``-c``/``--constraint`` (relative to the naming file, inside the repository; a URL is not
  fetched): ``name==version`` (or ``===``) is a pin, anything else a requirement without one;
- ``pyproject.toml``: PEP 621 ``[project] dependencies`` and ``optional-dependencies``,
  PEP 735 ``[dependency-groups]``, ``[tool.uv]`` ``constraint-dependencies`` and
  ``override-dependencies``, and poetry's ``[tool.poetry.dependencies]`` (also
  ``dev-dependencies`` and ``group.*.dependencies``), where a bare version (``"1.2.3"``) or
  ``==`` is a pin and ``^``, ``~``, ranges and wildcards are not;
- ``uv.lock``, ``poetry.lock`` (each ``[[package]]`` from a package index; git, path,
  directory and URL sources are left out) and ``Pipfile.lock`` (``default`` and ``develop``).

Every file is hostile input: at most :data:`MAX_BYTES` bytes for a lock file and
:data:`MAX_TEXT_BYTES` for another (a larger one is a note and left out), :data:`MAX_TOTAL` in
all, at most :data:`MAX_FILES` files and :data:`MAX_DEPTH` levels of ``-r``; TOML through
``tomllib`` (``tomli`` on 3.10) after a linear pass that refuses a key of very many dotted
parts, JSON through ``json``; a file that does not parse, or a line that is no requirement,
is one note naming the file and line, and the rest is read on. Names are compared as PEP 503
normalises them, versions as :func:`~hookguard.upgrade.sources.canonical_version` does.
"""

from __future__ import annotations

import json
import posixpath
import re
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from hookguard.contracts.reader import MAX_KEY_PARTS, _long_key
from hookguard.upgrade.sources import canonical_version, normalize_name

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - 3.10
    import tomli as tomllib  # type: ignore[import-not-found,unused-ignore]

if TYPE_CHECKING:
    from hookguard.git.repo import Repo, TreeEntry

MAX_BYTES = 16 << 20  # of one lock file (a large uv.lock is a few MiB)
MAX_TEXT_BYTES = 2 << 20  # of a requirements file or pyproject.toml (most are a few KiB)
MAX_TOTAL = 64 << 20  # of all the files of one tree
MAX_FILES = 256  # read in one tree, includes counted
MAX_DEPTH = 16  # of -r/-c includes
MAX_NOTES = 20  # about one tree's files

LOCKS = ("uv.lock", "poetry.lock", "Pipfile.lock")
_SKIPPED_DIRS = frozenset({
    ".git", "node_modules", ".venv", "venv", "site-packages", ".tox", ".nox", "__pypackages__",
})
_NAME = re.compile(r"([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)")
_VERSION = re.compile(r"^[A-Za-z0-9][A-Za-z0-9.+!_-]*$")
_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
_CLAUSE = re.compile(r"^(===|==|!=|~=|<=|>=|<|>)\s*(\S+)$")
_OPTION = re.compile(r"\s--?[A-Za-z]")  # ``foo==1 --hash=sha256:...``: per-requirement options
_INCLUDE = re.compile(r"^(?:--requirement|--constraint)(?:\s*=\s*|\s+)(\S.*)$"
                      r"|^-[rc]\s*(\S.*)$")


@dataclass(frozen=True)
class Pin:
    """One requirement of a package in one file: its version when pinned exactly."""

    name: str  # PEP 503 normalised
    shown: str  # as written
    version: str | None  # the exact version, or None when the requirement does not pin one
    spec: str  # what it requires, as written (``==4.46.0``, ``>=4.45``, ``^1.2``)
    path: str
    line: int
    key: str  # where in the file (section and marker): the same key in two trees is one pin

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}"


@dataclass
class TreePins:
    """The requirements of one tree, what was read, and what could not be."""

    pins: list[Pin] = field(default_factory=list)
    files: dict[str, str] = field(default_factory=dict)  # path read -> its blob id
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class PinChange:
    """A package whose pinned version a change moves: from ``old`` to ``new``."""

    name: str  # normalised
    shown: str  # as the head writes it
    old: str
    new: str
    where: tuple[str, ...]  # ``path:line`` of the head's pins of ``new``

    def label(self) -> str:
        return f"{self.shown} {self.old} -> {self.new}"


# -- which files --------------------------------------------------------------------------------
def is_manifest(path: str) -> bool:
    """A file whose name says it holds requirements, a pyproject.toml or a lock file."""
    parts = path.split("/")
    if any(p in _SKIPPED_DIRS for p in parts[:-1]):
        return False
    name = parts[-1]
    if name in LOCKS or name == "pyproject.toml":
        return True
    lower = name.lower()
    if not lower.endswith(".txt"):
        return False
    return ("requirements" in lower or "constraints" in lower
            or (len(parts) > 1 and parts[-2].lower() in ("requirements", "reqs")))


def tree_pins(repo: Repo, entries: Sequence[TreeEntry]) -> TreePins:
    """Every manifest of the tree (and what its ``-r``/``-c`` lines name), read from git."""
    blobs = {e.path: e.blob for e in entries}
    wanted = sorted(p for p in blobs if is_manifest(p))

    def read(paths: Sequence[str]) -> dict[str, bytes | None]:
        got: dict[str, bytes | None] = dict.fromkeys(paths)
        for path, (_name, data, _size) in zip(
                paths, repo.each_blob([blobs[p] for p in paths], MAX_BYTES), strict=False):
            got[path] = data
        return got

    return read_pins(wanted, blobs, read)


def read_pins(paths: Sequence[str], blobs: Mapping[str, str],
              read: Callable[[Sequence[str]], Mapping[str, bytes | None]]) -> TreePins:
    """The pins of ``paths`` and of the files their includes name (read with ``read``: a list
    of paths -> each path's bytes, None when over :data:`MAX_BYTES` or unreadable)."""
    out = TreePins()
    queue: list[tuple[str, str, int]] = [(p, "", 0) for p in paths[:MAX_FILES]]
    if len(paths) > MAX_FILES:
        out.notes.append(f"dependencies: {len(paths)} requirement and lock files; the first "
                         f"{MAX_FILES} read")
    seen: set[str] = set()
    total = 0
    while queue:
        batch = [item for item in queue if item[0] not in seen]
        queue = []
        paths_now = list(dict.fromkeys(p for p, _, _ in batch))
        if not paths_now:
            break
        room = MAX_FILES - len(seen)
        if room <= 0:
            _note(out, f"dependencies: over {MAX_FILES} files to read; "
                       f"{', '.join(paths_now[:3])} not read")
            break
        if len(paths_now) > room:
            _note(out, f"dependencies: over {MAX_FILES} files to read; "
                       f"{', '.join(paths_now[room:room + 3])} not read")
            paths_now = paths_now[:room]
        contents = read(paths_now)
        by_path = {p: (kind, depth) for p, kind, depth in reversed(batch)}
        for path in paths_now:
            seen.add(path)
            out.files[path] = blobs[path]
            kind, depth = by_path[path]
            data = contents.get(path)
            lock = kind != "requirements" and path.rsplit("/", 1)[-1] in LOCKS
            limit = MAX_BYTES if lock else MAX_TEXT_BYTES
            if data is None or len(data) > limit:
                _note(out, f"{path}: over {limit >> 20} MiB or unreadable: not read")
                continue
            total += len(data)
            if total > MAX_TOTAL:
                _note(out, f"{path}: over {MAX_TOTAL >> 20} MiB of requirement and lock files "
                           "in all: not read")
                continue
            pins, includes, notes = parse_file(path, data, kind)
            out.pins.extend(pins)
            for note in notes:
                _note(out, note)
            for target, line in includes:
                resolved = _included(path, target)
                if resolved is None:
                    _note(out, f"{path}:{line}: {_shorten(target, 80)} is outside the "
                               "repository or a URL: not read")
                elif resolved not in blobs:
                    _note(out, f"{path}:{line}: {_shorten(target, 80)} is not in the tree: "
                               "not read")
                elif depth + 1 > MAX_DEPTH:
                    _note(out, f"{path}:{line}: includes nested over {MAX_DEPTH} deep: "
                               f"{target} not read")
                elif resolved not in seen:
                    queue.append((resolved, "requirements", depth + 1))
    return out


def _note(out: TreePins, note: str) -> None:
    if len(out.notes) < MAX_NOTES:
        out.notes.append(_shorten(note))
    elif len(out.notes) == MAX_NOTES:
        out.notes.append("dependencies: more notes about requirement files left out")


def _included(path: str, target: str) -> str | None:
    if "://" in target or target.startswith("/") or "\\" in target:
        return None
    joined = posixpath.normpath(posixpath.join(posixpath.dirname(path), target))
    if joined.startswith("../") or joined == ".." or joined.startswith("/"):
        return None
    return joined


def parse_file(path: str, data: bytes, kind: str = "") -> tuple[
        list[Pin], list[tuple[str, int]], list[str]]:
    """(pins, includes as (target, line), notes) of one file, by its name (or ``kind``
    ``requirements``, for a file an include names)."""
    name = path.rsplit("/", 1)[-1]
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        return [], [], [f"{path}:{line}: not UTF-8: not read"]
    if name == "pyproject.toml" and kind != "requirements":
        pins, notes = parse_pyproject(path, text)
        return pins, [], notes
    if name == "uv.lock" and kind != "requirements":
        pins, notes = parse_uv_lock(path, text)
        return pins, [], notes
    if name == "poetry.lock" and kind != "requirements":
        pins, notes = parse_poetry_lock(path, text)
        return pins, [], notes
    if name == "Pipfile.lock" and kind != "requirements":
        pins, notes = parse_pipfile_lock(path, text)
        return pins, [], notes
    return parse_requirements(path, text)


# -- PEP 508 strings ----------------------------------------------------------------------------
def parse_requirement(text: str, path: str, line: int, key: str) -> Pin | str | None:
    """A :class:`Pin` of a PEP 508 requirement string, None for one that names no package
    on an index (a URL, a path), or a note (str) for one that cannot be read."""
    text = text.strip()
    if text.startswith((".", "/", "~")) or _URL.match(text):
        return None  # a path or a URL (``git+https://...``): no version on an index
    found = _NAME.match(text)
    if not found:
        return f"{path}:{line}: not a requirement: {_shorten(text, 60)!r}"
    shown = found.group(1)
    rest = text[found.end():].lstrip()
    if rest.startswith("["):
        close = rest.find("]")
        if close < 0:
            return f"{path}:{line}: not a requirement (unclosed extras): {_shorten(text, 60)!r}"
        rest = rest[close + 1:].lstrip()
    if rest.startswith("@"):
        return None  # a direct reference (``pkg @ https://...``): no version on an index
    spec, _, marker = rest.partition(";")
    spec = spec.strip()
    if spec.startswith("(") and spec.endswith(")"):
        spec = spec[1:-1].strip()
    version: str | None = None
    if spec:
        for clause in (c.strip() for c in spec.split(",")):
            matched = _CLAUSE.match(clause)
            if not matched:
                return f"{path}:{line}: not a requirement: {_shorten(text, 60)!r}"
            op, value = matched.groups()
            if op in ("==", "===") and "*" not in value and _VERSION.match(value):
                version = value
    return Pin(normalize_name(shown), shown, version, spec or "any version", path, line,
               f"{key};{' '.join(marker.split())}")


# -- requirements files -------------------------------------------------------------------------
def _logical_lines(text: str) -> Iterator[tuple[int, str]]:
    """(first line number, line) with ``\\`` continuations joined and comments removed."""
    pending: list[str] = []
    start = 0
    for number, raw in enumerate(text.splitlines(), 1):
        if not pending:
            start = number
        line = re.sub(r"(^|\s)#.*$", "", raw)
        if line.endswith("\\"):
            pending.append(line[:-1])
            continue
        pending.append(line)
        joined = " ".join(pending).strip()
        pending = []
        if joined:
            yield start, joined
    if pending and " ".join(pending).strip():
        yield start, " ".join(pending).strip()


def parse_requirements(path: str, text: str) -> tuple[
        list[Pin], list[tuple[str, int]], list[str]]:
    """A pip requirements (or constraints) file: its pins, the files it includes (``-r``,
    ``-c``) and notes."""
    pins: list[Pin] = []
    includes: list[tuple[str, int]] = []
    notes: list[str] = []
    for line, logical in _logical_lines(text):
        if logical.startswith("-"):
            include = _INCLUDE.match(logical)
            if include:
                includes.append(((include.group(1) or include.group(2)).strip(), line))
            continue  # -e, --index-url, -f, --hash ...: no pin
        cut = _OPTION.search(logical)
        if cut:
            logical = logical[: cut.start()]
        if "${" in logical:
            notes.append(f"{path}:{line}: an environment variable in a requirement: not read")
            continue
        found = parse_requirement(logical, path, line, "requirements")
        if isinstance(found, Pin):
            pins.append(found)
        elif isinstance(found, str):
            notes.append(found)
    return pins, includes, notes


# -- TOML -------------------------------------------------------------------------------------
def _load_toml(path: str, text: str) -> tuple[dict[str, Any] | None, str | None]:
    long_key = _long_key(text)  # (the contract reader's linear pass)
    if long_key is not None:
        return None, f"{path}:{long_key}: a key of over {MAX_KEY_PARTS} dotted parts: not read"
    try:
        return tomllib.loads(text), None
    except tomllib.TOMLDecodeError as exc:
        line = getattr(exc, "lineno", None)
        if not isinstance(line, int):
            found = re.search(r"at line (\d+)", str(exc))
            line = int(found.group(1)) if found else 1
        message = getattr(exc, "msg", None) or re.sub(r"\s*\(at line.*\)$", "", str(exc))
        return None, f"{path}:{line}: invalid TOML ({message}): not read"
    except RecursionError:
        return None, f"{path}:1: invalid TOML (nested too deeply): not read"


_QUOTED = re.compile(r'"((?:[^"\\\n]|\\.)*)"')
_TOML_KEY = re.compile(r'^[ \t]*"?([A-Za-z0-9._-]+)"?[ \t]*=', re.M)
_LOCK_NAME = re.compile(r'^name = "([^"\n]*)"', re.M)
_JSON_KEY = re.compile(r'^[ \t]*"((?:[^"\\\n]|\\.)*)"[ \t]*:[ \t]*\{', re.M)


class _Lines:
    """The lines where ``pattern``'s first group occurs in ``text``, found in one pass
    (a file of many packages is never searched once per package)."""

    def __init__(self, text: str, *patterns: re.Pattern[str]) -> None:
        self.found: dict[str, list[int]] = {}
        for pattern in patterns:
            line, pos = 1, 0
            for match in pattern.finditer(text):
                line += text.count("\n", pos, match.start())
                pos = match.start()
                self.found.setdefault(match.group(1), []).append(line)

    def line(self, key: str, nth: int = 0) -> int:
        lines = self.found.get(key)
        return (lines[nth] if nth < len(lines) else lines[-1]) if lines else 1


def _poetry_version(value: object) -> str | None:
    """The exact version of a poetry constraint (``"1.2.3"``, ``"==1.2.3"``), or None."""
    if not isinstance(value, str):
        return None
    text = value.strip()
    text = text[2:].strip() if text.startswith("==") else text
    return text if _VERSION.match(text) and "*" not in text else None


def parse_pyproject(path: str, text: str) -> tuple[list[Pin], list[str]]:
    data, problem = _load_toml(path, text)
    if data is None:
        return [], [problem or f"{path}:1: not read"]
    lines = _Lines(text, _QUOTED, _TOML_KEY)
    pins: list[Pin] = []
    notes: list[str] = []

    def pep508(items: object, key: str) -> None:
        if not isinstance(items, list):
            return
        for item in items:
            if not isinstance(item, str):
                continue  # ``{include-group = "..."}`` in dependency-groups
            found = parse_requirement(item, path, lines.line(item), key)
            if isinstance(found, Pin):
                pins.append(found)
            elif isinstance(found, str):
                notes.append(found)

    project = data.get("project")
    if isinstance(project, dict):
        pep508(project.get("dependencies"), "project.dependencies")
        optional = project.get("optional-dependencies")
        if isinstance(optional, dict):
            for extra, items in optional.items():
                pep508(items, f"project.optional-dependencies.{extra}")
    groups = data.get("dependency-groups")
    if isinstance(groups, dict):
        for group, items in groups.items():
            pep508(items, f"dependency-groups.{group}")
    tool = data.get("tool")
    tool = tool if isinstance(tool, dict) else {}
    uv = tool.get("uv")
    if isinstance(uv, dict):
        for key in ("constraint-dependencies", "override-dependencies"):
            pep508(uv.get(key), f"tool.uv.{key}")
    poetry = tool.get("poetry")
    if isinstance(poetry, dict):
        tables: list[tuple[str, object]] = [
            ("tool.poetry.dependencies", poetry.get("dependencies")),
            ("tool.poetry.dev-dependencies", poetry.get("dev-dependencies"))]
        poetry_groups = poetry.get("group")
        if isinstance(poetry_groups, dict):
            tables.extend((f"tool.poetry.group.{g}.dependencies", t.get("dependencies"))
                          for g, t in poetry_groups.items() if isinstance(t, dict))
        for key, table in tables:
            if isinstance(table, dict):
                pins.extend(_poetry_pins(path, key, table, lines))
    return pins, notes


def _poetry_pins(path: str, key: str, table: Mapping[str, object], lines: _Lines
                 ) -> Iterator[Pin]:
    for shown, value in table.items():
        if not isinstance(shown, str) or shown.lower() == "python" or not _NAME.fullmatch(
                shown):
            continue
        constraints = value if isinstance(value, list) else [value]
        for index, constraint in enumerate(constraints):
            marker = ""
            if isinstance(constraint, dict):
                if any(k in constraint for k in ("git", "path", "url")):
                    break  # not from an index
                marker = str(constraint.get("markers", "")) + str(constraint.get("python", ""))
                constraint = constraint.get("version")
            if not isinstance(constraint, str):
                continue
            line = lines.line(shown)
            yield Pin(normalize_name(shown), shown, _poetry_version(constraint),
                      constraint.strip() or "any version", path, line,
                      f"{key}.{index};{marker}")


def _lock_pins(path: str, text: str, index_source: Callable[[object], bool]
               ) -> tuple[list[Pin], list[str]]:
    data, problem = _load_toml(path, text)
    if data is None:
        return [], [problem or f"{path}:1: not read"]
    listed = data.get("package")
    if not isinstance(listed, list):
        return [], []
    packages = [p for p in listed if isinstance(p, dict)]
    lines = _Lines(text, _LOCK_NAME)
    pins: list[Pin] = []
    notes: list[str] = []
    seen: dict[str, int] = {}
    for package in packages:
        shown, version = package.get("name"), package.get("version")
        if not isinstance(shown, str) or not _NAME.fullmatch(shown):
            if shown is not None:
                notes.append(f"{path}: a [[package]] with the name {_shorten(str(shown), 40)!r}:"
                             " left out")
            continue
        count = seen[shown] = seen.get(shown, 0) + 1
        line = lines.line(shown, count - 1)
        if not index_source(package.get("source")):
            continue
        if not isinstance(version, str) or not _VERSION.match(version):
            notes.append(f"{path}:{line}: {shown} has no version: left out")
            continue
        pins.append(Pin(normalize_name(shown), shown, version, f"=={version}", path, line,
                        f"lock.{count}"))
    return pins, notes


def _uv_index(source: object) -> bool:
    return source is None or (isinstance(source, dict) and "registry" in source)


def _poetry_index(source: object) -> bool:
    return source is None or (isinstance(source, dict) and source.get("type") == "legacy")


def parse_uv_lock(path: str, text: str) -> tuple[list[Pin], list[str]]:
    return _lock_pins(path, text, _uv_index)


def parse_poetry_lock(path: str, text: str) -> tuple[list[Pin], list[str]]:
    return _lock_pins(path, text, _poetry_index)


def parse_pipfile_lock(path: str, text: str) -> tuple[list[Pin], list[str]]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        return [], [f"{path}:{exc.lineno}: invalid JSON ({exc.msg}): not read"]
    except (ValueError, RecursionError):
        return [], [f"{path}:1: invalid JSON: not read"]
    if not isinstance(data, dict):
        return [], [f"{path}:1: not a Pipfile.lock (no object at the top): not read"]
    lines = _Lines(text, _JSON_KEY)
    pins: list[Pin] = []
    notes: list[str] = []
    for section in ("default", "develop"):
        table = data.get(section)
        if not isinstance(table, dict):
            continue
        for shown, entry in table.items():
            if not isinstance(shown, str) or not _NAME.fullmatch(shown) or not isinstance(
                    entry, dict):
                continue
            if any(k in entry for k in ("git", "path", "file", "editable")):
                continue
            line = lines.line(shown)
            version = entry.get("version")
            if not isinstance(version, str):
                continue
            spec = version.strip()
            exact = spec[2:].strip() if spec.startswith("==") and not spec.startswith(
                "===") else spec[3:].strip() if spec.startswith("===") else None
            if exact is not None and (not _VERSION.match(exact) or "*" in exact):
                exact = None
            pins.append(Pin(normalize_name(shown), shown, exact, spec or "any version", path,
                            line, f"Pipfile.lock.{section};{entry.get('markers', '')}"))
    return pins, notes


# -- comparing two trees ------------------------------------------------------------------------
@dataclass
class Comparison:
    changes: list[PinChange] = field(default_factory=list)
    unpinned: list[str] = field(default_factory=list)  # notes: changed, but not pinned
    added: list[str] = field(default_factory=list)  # names newly pinned (nothing to compare)


def compare(base: Iterable[Pin], head: Iterable[Pin]) -> Comparison:
    """The packages whose pinned version differs between ``base`` and ``head``; and notes
    for those whose requirement changed without an exact pin on the head's side."""
    before: dict[str, list[Pin]] = {}
    after: dict[str, list[Pin]] = {}
    for pin in base:
        before.setdefault(pin.name, []).append(pin)
    for pin in head:
        after.setdefault(pin.name, []).append(pin)
    result = Comparison()
    for name in sorted(after):
        now = after[name]
        was = before.get(name, [])
        now_pinned = [p for p in now if p.version]
        was_pinned = [p for p in was if p.version]
        now_versions = {canonical_version(p.version or ""): p for p in now_pinned}
        was_versions = {canonical_version(p.version or ""): p for p in was_pinned}
        if not now_pinned:
            specs_before = {(p.path, p.key, p.spec) for p in was}
            moved = [p for p in now if (p.path, p.key, p.spec) not in specs_before]
            if moved and was:
                first = moved[0]
                previous = next((p.spec for p in was if p.path == first.path
                                 and p.key == first.key), None) or was[0].spec
                result.unpinned.append(_shorten(
                    f"{first.shown}: {first.where} requires {first.spec} (was {previous}), "
                    "no exact version: which version is installed cannot be known from it, so "
                    "the upgrade check cannot run (pin it, or commit a lock file)"))
            continue
        if now_versions.keys() == was_versions.keys():
            continue
        if not was_pinned:
            result.added.append(name)
            continue
        pairs: dict[tuple[str, str], list[str]] = {}
        keyed = {(p.path, p.key): p for p in was_pinned}
        for pin in now_pinned:
            old = keyed.get((pin.path, pin.key))
            if old is not None and canonical_version(old.version or "") != canonical_version(
                    pin.version or ""):
                pairs.setdefault((old.version or "", pin.version or ""), []).append(pin.where)
        paired = {canonical_version(new) for _, new in pairs}
        gone = [v for v in was_versions if v not in now_versions]
        for version, pin in now_versions.items():
            if version in was_versions or version in paired:
                continue
            olds = gone or list(was_versions)
            if len(olds) == 1 or gone:
                old_version = was_versions[sorted(olds)[0]].version or ""
                pairs.setdefault((old_version, pin.version or ""), []).append(pin.where)
        for (old_version, new_version), where in sorted(pairs.items()):
            result.changes.append(PinChange(name, now[0].shown, old_version, new_version,
                                            tuple(dict.fromkeys(where))))
    return result


def _shorten(text: str, limit: int = 240) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


__all__ = [
    "LOCKS",
    "MAX_BYTES",
    "MAX_TEXT_BYTES",
    "MAX_TOTAL",
    "Comparison",
    "Pin",
    "PinChange",
    "TreePins",
    "compare",
    "is_manifest",
    "parse_file",
    "parse_pipfile_lock",
    "parse_poetry_lock",
    "parse_pyproject",
    "parse_requirement",
    "parse_requirements",
    "parse_uv_lock",
    "read_pins",
    "tree_pins",
]
