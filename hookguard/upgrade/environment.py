"""Installed packages as part of an audit's model: read as bytes, never imported.

``hookguard audit --python PATH`` (by default the active virtual environment, ``VIRTUAL_ENV``)
reads the source of the installed packages that the checkout's classes subclass, so that an
MRO through ``transformers.Trainer`` or ``lightning.LightningModule`` is known and the rules
can prove what they prove inside the checkout. Lazily:

- the checkout's bases that resolve to nothing in the checkout (``External`` nodes) name
  modules (``fw.core.Base``: ``fw``, ``fw.core``); each is looked up on the environment's
  search folders as the import system would find its source (a regular package's folder, a
  module file, a namespace package's folders in order), and read;
- what a name resolves to through the modules read (imports, aliases, star imports, a lazy
  module's ``if TYPE_CHECKING:`` imports) is followed, and so are the bases of every class
  read, across distributions, until nothing new is named, within :data:`MAX_FILES` files and
  :data:`MAX_BYTES` bytes; past that, a note, and the bases not read stay unknown.

The search folders come without running anything of the environment: for a virtual
environment (a ``pyvenv.cfg`` beside or above the interpreter), its ``site-packages`` folders
and the path lines of their ``.pth`` files (read as text; a line that would run code,
``import ...``, is skipped) and setuptools' editable finders' ``MAPPING`` (read with
:func:`ast.literal_eval`). Any other interpreter is asked for ``site.getsitepackages()`` with
``-I -S`` (no ``site`` initialisation, so no ``.pth`` file, ``sitecustomize`` or package code
runs; no current directory or ``PYTHON*`` variable on its path), from an empty folder.

Each file's record is cached outside the checkout (:func:`hookguard.upgrade.sources.cache_folder`,
``records/NAME-VERSION/``), keyed by the distribution that installed it, its version, and the
file's content hash (its git blob id, with its path and module name), in a signed
:class:`~hookguard.model.cache.RecordCache`. Installed files are hostile input: a file over
``max-file-size``, one that does not parse or is not a regular file is a note naming it, its
classes stay unknown, and nothing of it is ever an input error of the checkout.

The package classes join the model as classes of the project (as ``hookguard upgrade`` puts
a version beside the checkout), are never reported on, and change nothing the checkout's own
model says about its files: the model's input errors are the checkout's alone. A package whose
top-level name the checkout defines itself is not read (the checkout's copy is what its imports
name).
"""

from __future__ import annotations

import ast
import csv
import hashlib
import io
import os
import subprocess
import tempfile
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from hookguard.errors import UsageError
from hookguard.model.extract import extract
from hookguard.model.project import ClassInfo, External, Project
from hookguard.model.records import FileRecord
from hookguard.model.sources import blob_sha
from hookguard.upgrade.package import package_record, resolve_dotted
from hookguard.upgrade.sources import _read_file, normalize_name, open_package_cache

if TYPE_CHECKING:
    from hookguard.findings import Finding
    from hookguard.model.cache import RecordCache

#: At most this many installed files are read for one audit, and this many bytes of them.
MAX_FILES = 2_000
MAX_BYTES = 128 << 20
#: Rounds of "read what the files read name" before the closure stops.
MAX_ROUNDS = 64
_META_LIMIT = 1 << 20
_RECORD_LIMIT = 64 << 20
_PTH_LIMIT = 64 << 10
_PTH_FILES = 256  # .pth files read per folder
_FOLDERS = 64  # search folders at most
_READS_KEY = "environment-reads:"


# -- where the installed packages are ----------------------------------------------------------
@dataclass(frozen=True)
class Environment:
    """The folders an interpreter imports installed packages from, in order."""

    python: str  # as given (an interpreter, or a virtual environment's folder)
    folders: tuple[str, ...]
    # import name -> the folder holding it, from setuptools' editable finders
    editable: tuple[tuple[str, str], ...] = ()

    def describe(self) -> str:
        return self.python


def active_environment() -> str | None:
    """The active virtual environment's folder (``VIRTUAL_ENV``), or None."""
    found = os.environ.get("VIRTUAL_ENV", "").strip()
    return found or None


def _venv_root(python: Path) -> Path | None:
    """The virtual environment ``python`` belongs to (a folder holding ``pyvenv.cfg``: the
    path itself, its parent, or its grandparent), or None. Links are not resolved: a venv's
    ``bin/python`` is a link to the base interpreter."""
    for candidate in (python, python.parent, python.parent.parent):
        if (candidate / "pyvenv.cfg").is_file():
            return candidate
    return None


def _pyvenv(root: Path) -> dict[str, str]:
    data = _read_file(str(root / "pyvenv.cfg"), _META_LIMIT)
    values: dict[str, str] = {}
    if isinstance(data, bytes):
        for line in data.decode("utf-8", "replace").splitlines():
            key, sep, value = line.partition("=")
            if sep:
                values[key.strip().lower()] = value.strip()
    return values


def _venv_folders(root: Path) -> list[str]:
    config = _pyvenv(root)
    version = config.get("version_info") or config.get("version") or ""
    short = ".".join(version.split(".")[:2])
    found: list[str] = []
    for lib in ("lib", "lib64", "Lib"):
        base = root / lib
        if lib == "Lib":
            candidates = [base / "site-packages"]
        else:
            try:
                names = sorted(os.listdir(base))
            except OSError:
                names = []
            pythons = [n for n in names if n.startswith("python")]
            if short and f"python{short}" in pythons:
                pythons = [f"python{short}"]
            candidates = [base / n / "site-packages" for n in pythons]
        for folder in candidates:
            if folder.is_dir():
                real = os.path.realpath(folder)
                if real not in {os.path.realpath(f) for f in found}:
                    found.append(str(folder))
    if config.get("include-system-site-packages", "").lower() == "true":
        home = config.get("home", "")
        if home:
            found.extend(_base_folders(Path(home).parent, short))
    return found


def _base_folders(prefix: Path, short: str) -> list[str]:
    """The site folders of a base installation at ``prefix`` (as ``site.getsitepackages``
    lists them, Debian's ``dist-packages`` included), for ``include-system-site-packages``."""
    found = []
    for pattern in (f"lib/python{short}/site-packages", f"lib/python{short}/dist-packages",
                    "lib/python3/dist-packages", f"local/lib/python{short}/dist-packages",
                    "Lib/site-packages"):
        folder = prefix / pattern
        if folder.is_dir():
            found.append(str(folder))
    return found


def _asked_folders(python: str) -> list[str]:
    """``site.getsitepackages()`` of an interpreter that is no virtual environment, asked with
    ``-I -S`` from an empty folder: only the standard library runs (no ``site`` initialisation,
    no ``.pth`` file, no ``sitecustomize``, no current directory or ``PYTHON*`` variable)."""
    code = "import json, site; print(json.dumps(site.getsitepackages()))"
    try:
        with tempfile.TemporaryDirectory(prefix="hookguard-python-") as empty:
            done = subprocess.run([python, "-I", "-S", "-c", code], capture_output=True,
                                  timeout=60, check=False, stdin=subprocess.DEVNULL, cwd=empty)
    except (OSError, subprocess.SubprocessError) as exc:
        raise UsageError(f"cannot run --python {python}: {exc}") from None
    try:
        found = json_list(done.stdout)
    except ValueError:
        found = None
    if done.returncode != 0 or found is None:
        raise UsageError(f"--python {python} did not print its site-packages folders "
                         f"(exit {done.returncode})")
    return [p for p in found if os.path.isdir(p)]


def json_list(data: bytes) -> list[str] | None:
    import json

    lines = data.decode("utf-8", "replace").strip().splitlines()
    if not lines:
        raise ValueError("no output")
    value = json.loads(lines[-1])
    return [p for p in value if isinstance(p, str) and p] if isinstance(value, list) else None


def find_environment(python: str) -> Environment:
    """The environment of ``python``: an interpreter, or a virtual environment's folder."""
    given = Path(python).absolute()
    if not given.exists():
        raise UsageError(f"--python {python}: no such file or directory")
    root = _venv_root(given)
    if root is not None:
        folders = _venv_folders(root)
    elif given.is_dir():
        raise UsageError(f"--python {python}: a folder without pyvenv.cfg (give the "
                         "interpreter, or a virtual environment's folder)")
    else:
        folders = _asked_folders(str(given))
    return _with_path_files(python, folders)


def _with_path_files(python: str, folders: Sequence[str]) -> Environment:
    """The folders, each followed by the folders its ``.pth`` files add (as ``site`` adds
    them, without running a line: ``import`` lines are skipped), and the editable finders'
    mappings."""
    ordered: list[str] = []
    editable: dict[str, str] = {}

    def add(folder: str) -> None:
        if len(ordered) < _FOLDERS and folder not in ordered and os.path.isdir(folder):
            ordered.append(folder)

    for folder in folders:
        add(folder)
        try:
            names = sorted(os.listdir(folder))
        except OSError:
            continue
        for name in [n for n in names if n.endswith(".pth")][:_PTH_FILES]:
            data = _read_file(os.path.join(folder, name), _PTH_LIMIT)
            if not isinstance(data, bytes):
                continue
            for line in data.decode("utf-8", "replace").splitlines():
                line = line.rstrip()
                if not line or line.startswith("#") or line.startswith(("import ", "import\t")):
                    continue
                add(os.path.normpath(os.path.join(folder, line)))
        for name in names:
            if name.startswith("__editable__") and name.endswith("_finder.py"):
                editable.update(_finder_mapping(os.path.join(folder, name)))
    return Environment(python, tuple(ordered), tuple(sorted(editable.items())))


def _finder_mapping(path: str) -> dict[str, str]:
    """The ``MAPPING`` literal of a setuptools editable finder (import name -> folder), read
    with :func:`ast.literal_eval`; nothing of the file runs."""
    data = _read_file(path, _META_LIMIT)
    if not isinstance(data, bytes):
        return {}
    try:
        tree = ast.parse(data)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, assigned = node.targets[0], node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            target, assigned = node.target, node.value
        else:
            continue
        if isinstance(target, ast.Name) and target.id == "MAPPING":
            try:
                value = ast.literal_eval(assigned)
            except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
                return {}
            if isinstance(value, dict):
                return {k: v for k, v in value.items() if isinstance(k, str)
                        and k.isidentifier() and isinstance(v, str) and os.path.isabs(v)}
    return {}


# -- which distribution installed a top-level name --------------------------------------------
@dataclass
class _Owners:
    """Which ``*.dist-info`` of a search folder claims a top-level import name
    (``top_level.txt``, else ``RECORD``). Name and version come from the folder's name, as
    installers write it (``fw-1.0.dist-info``). The distribution named like the import name
    is asked first; the others, all at once, only when it does not claim it."""

    infos: dict[str, list[str]] = field(default_factory=dict)  # folder -> its *.dist-info
    tops: dict[tuple[str, str], frozenset[str]] = field(default_factory=dict)

    def of(self, folder: str, top: str) -> tuple[str, str] | None:
        if folder not in self.infos:
            try:
                self.infos[folder] = sorted(n for n in os.listdir(folder)
                                            if n.endswith(".dist-info"))
            except OSError:
                self.infos[folder] = []
        infos = self.infos[folder]
        wanted = normalize_name(top)
        first = [i for i in infos if normalize_name(i.partition("-")[0]) == wanted]
        for info in [*first, *(i for i in infos if i not in first)]:
            if top in self._claimed(folder, info):
                stem = info[: -len(".dist-info")]
                name, _, version = stem.partition("-")
                return name, version
        return None

    def _claimed(self, folder: str, info: str) -> frozenset[str]:
        key = (folder, info)
        if key not in self.tops:
            self.tops[key] = _claims(os.path.join(folder, info))
        return self.tops[key]


def _claims(where: str) -> frozenset[str]:
    """The top-level import names a ``*.dist-info`` folder claims."""
    tops: set[str] = set()
    listed = _read_file(os.path.join(where, "top_level.txt"), _META_LIMIT)
    if isinstance(listed, bytes):
        tops = {t.strip().split("/")[0] for t in listed.decode("utf-8", "replace")
                .splitlines() if t.strip()}
    if not tops:
        record = _read_file(os.path.join(where, "RECORD"), _RECORD_LIMIT)
        if isinstance(record, bytes):
            for row in csv.reader(io.StringIO(record.decode("utf-8", "replace"))):
                if row and row[0].endswith(".py") and not row[0].startswith(".."):
                    first = row[0].split("/", 1)[0]
                    tops.add(first[:-3] if first.endswith(".py") else first)
    return frozenset(t for t in tops if t.isidentifier())


# -- reading, lazily --------------------------------------------------------------------------
@dataclass(frozen=True)
class _Located:
    path: str  # from the import root: ``fw/core.py``
    file: str  # where it is on disk
    is_package: bool
    folder: str  # the search folder (or editable folder's parent) it was found in


class InstalledPackages:
    """The installed packages an audit reads: what the checkout's bases need, cached."""

    def __init__(self, environment: Environment, checkout: Path, max_size: int,
                 use_cache: bool = True) -> None:
        self.environment = environment
        self.checkout = checkout
        self.max_size = max_size
        self.use_cache = use_cache
        self.notes: list[str] = []
        self.records: dict[str, FileRecord] = {}  # path -> record of the files read
        self.files: dict[str, str] = {}  # path -> where it is on disk
        self.owners: dict[str, tuple[str, str]] = {}  # path -> (distribution, version)
        self.reads: list[str] = []  # the files on disk read, in order
        self._located: dict[str, _Located | None] = {}
        self._owners = _Owners()
        self._caches: dict[tuple[str, str], RecordCache | None] = {}
        self._bytes = 0
        self._over = False
        self._blocked: frozenset[str] = frozenset()  # top-level names the checkout defines

    # -- the closure ------------------------------------------------------------------------
    def extend(self, checkout: Project, records: Sequence[FileRecord],
               aliases: Mapping[str, str]) -> tuple[Project, frozenset[str]]:
        """The model of the checkout's ``records`` with the installed files its bases need,
        and the checkout's own classes (the only ones to report on). ``checkout`` is the model
        of ``records`` alone; it is returned as is when no installed file is needed."""
        own = frozenset(checkout.classes)
        self._blocked = frozenset(m.split(".")[0] for m in checkout.modules) | frozenset(
            r.path.split("/")[0].removesuffix(".py") for r in records)
        taken = {r.path for r in records}
        names = {base.name for info in checkout.classes.values()
                 for written, base in zip(info.record.bases, checkout.bases(info), strict=False)
                 if isinstance(base, External) and written != "?"}
        self._close(names)
        extra = [r for p, r in sorted(self.records.items()) if p not in taken]
        self._finish_caches()
        if not extra:
            return checkout, own
        combined = Project.build([*records, *extra], aliases)
        # The checkout's model keeps its own input errors: an installed file is never one.
        combined.errors = list(checkout.errors)
        return combined, own

    def _close(self, names: Collection[str]) -> None:
        for _ in range(MAX_ROUNDS):
            project = Project.build(self.records.values())
            wanted: set[str] = set()
            for name in names:
                if not isinstance(resolve_dotted(project, name), ClassInfo):
                    wanted |= self._chase(name, set())
            for info in project.classes.values():
                for written, base in zip(info.record.bases, project.bases(info), strict=False):
                    if isinstance(base, External) and written != "?":
                        wanted |= self._chase(base.name, set())
                        wanted |= self._chase_in(info.file, written, set())
            if not self._load(wanted) or self._over:
                return

    def _chase(self, dotted: str, seen: set[str]) -> set[str]:
        """The modules the lookup of ``dotted`` reads, through the re-exports of the modules
        read so far (as :meth:`hookguard.upgrade.package.PackageVersion._chase`)."""
        if dotted in seen or len(seen) > 256:
            return set()
        seen.add(dotted)
        parts = dotted.split(".")
        found = {".".join(parts[:cut]) for cut in range(1, len(parts) + 1)}
        for cut in range(len(parts) - 1, 0, -1):
            located = self._located.get(".".join(parts[:cut]))
            record = self.records.get(located.path) if located is not None else None
            if record is None:
                continue
            found |= self._chase_in(record, ".".join(parts[cut:]), seen)
            break
        return found

    def _chase_in(self, record: FileRecord, dotted: str, seen: set[str]) -> set[str]:
        head, _, rest = dotted.partition(".")
        tail = f".{rest}" if rest else ""
        found: set[str] = set()
        if head in record.imports:
            found |= self._chase(record.imports[head] + tail, seen)
        elif head in record.aliases:
            if record.aliases[head].partition(".")[0] != head:
                found |= self._chase_in(record, record.aliases[head] + tail, seen)
        else:
            for star in record.star_imports:
                found |= self._chase(f"{star}.{dotted}", seen)
        return found

    def _locate(self, module: str) -> _Located | None:
        """Where the source of ``module`` is installed, as the import system finds it (source
        files only: an extension module is not read), or None."""
        if module in self._located:
            return self._located[module]
        found: _Located | None = None
        parts = module.split(".")
        if all(p.isidentifier() for p in parts) and parts[0] not in self._blocked:
            found = self._find(parts)
        self._located[module] = found
        return found

    def _find(self, parts: list[str]) -> _Located | None:
        """As the path finder looks ``parts`` up: the first folder holding the top-level name
        as a regular package or a module wins; else an editable install's folder; else the
        folders holding it as a namespace package's portions, in order."""
        top, rest = parts[0], parts[1:]
        regular: tuple[str, str] | None = None
        portions: list[tuple[str, str]] = []  # (the top's folder or file stem, search folder)
        for folder in self.environment.folders:
            here = os.path.join(folder, top)
            if os.path.isfile(os.path.join(here, "__init__.py")) or os.path.isfile(here + ".py"):
                regular = (here, folder)
                break
            if os.path.isdir(here):
                portions.append((here, folder))
        editable = dict(self.environment.editable).get(top)
        if regular is not None:
            roots = [regular]
        elif editable is not None:
            roots = [(editable.removesuffix(".py"), os.path.dirname(editable))]
        else:
            roots = portions
        rel = "/".join(parts)
        for base, folder in roots:
            target = os.path.join(base, *rest)
            if os.path.isfile(os.path.join(target, "__init__.py")):
                return _Located(f"{rel}/__init__.py", os.path.join(target, "__init__.py"),
                                True, folder)
            if os.path.isfile(target + ".py"):
                return _Located(f"{rel}.py", target + ".py", False, folder)
        return None

    def _load(self, modules: Iterable[str]) -> bool:
        added = False
        for module in sorted(set(modules)):
            located = self._locate(module)
            if located is None or located.path in self.records or located.path in self.files:
                continue
            if len(self.files) >= MAX_FILES or self._bytes >= MAX_BYTES:
                if not self._over:
                    self._over = True
                    self.notes.append(
                        f"installed packages ({self.environment.describe()}): stopped after "
                        f"{len(self.files)} file{'s' * (len(self.files) != 1)}, "
                        f"{self._bytes >> 20} MiB; the bases not read "
                        "stay unknown")
                return added
            self.files[located.path] = located.file
            self.reads.append(located.file)
            record = self._record(located, module)
            if record is not None:
                self.records[located.path] = record
                added = True
        return added

    def _record(self, located: _Located, module: str) -> FileRecord | None:
        data = _read_file(located.file, self.max_size)
        if data is None:
            self.notes.append(f"installed file {located.file}: not a readable regular file; "
                              "its classes stay unknown")
            return None
        if isinstance(data, int):
            self.notes.append(f"installed file {located.file}: {data / 2**20:.1f} MiB is over "
                              "max-file-size; its classes stay unknown")
            return None
        self._bytes += len(data)
        top = located.path.split("/", 1)[0].removesuffix(".py")
        owner = self._owners.of(located.folder, top) or ("", "")
        self.owners[located.path] = owner
        record = package_record(located.path, module, located.is_package, data,
                                blob_sha(data), self._cache(owner), extract)
        if record.error is not None:
            where = f"{located.file}:{record.error_line}" if record.error_line else located.file
            self.notes.append(f"installed file {where} was not analysed ({record.error}); "
                              "its classes stay unknown")
            return None
        return record

    # -- the cache ----------------------------------------------------------------------------
    def _cache(self, owner: tuple[str, str]) -> RecordCache | None:
        if not self.use_cache:
            return None
        if owner not in self._caches:
            self._caches[owner] = self._open_cache(owner)
        return self._caches[owner]

    def _open_cache(self, owner: tuple[str, str]) -> RecordCache | None:
        cache = open_package_cache(*owner, self.checkout, self.notes)
        if cache is None:
            self.use_cache = False
        return cache

    def _finish_caches(self) -> None:
        for cache in self._caches.values():
            if cache is not None:
                cache.save()
                self.notes.extend(cache.warnings)
                cache.warnings.clear()

    # -- the audit's own cache: what the last run read ---------------------------------------
    def _reads_key(self) -> str:
        text = repr((self.environment.folders, self.environment.editable))
        return _READS_KEY + hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()

    def fingerprint(self, reads: Sequence[str] | None = None) -> str:
        """A digest of what the installed packages can change in a result: the search folders
        and their entries (a distribution installed, upgraded or removed), the ``.pth`` files,
        and each file read (``reads``, default this run's) and its folder, by stat."""
        digest = hashlib.sha256(repr((self.environment.folders,
                                      self.environment.editable)).encode("utf-8",
                                                                         "surrogateescape"))
        for folder in self.environment.folders:
            try:
                names = sorted(os.listdir(folder))
            except OSError:
                names = []
            digest.update(("\0".join([folder, *names]) + "\n").encode("utf-8",
                                                                      "surrogateescape"))
            for name in names:
                if name.endswith(".pth"):
                    data = _read_file(os.path.join(folder, name), _PTH_LIMIT)
                    digest.update(data if isinstance(data, bytes) else b"?")
        for path in sorted(set(self.reads if reads is None else reads)):
            for item in (path, os.path.dirname(path)):
                try:
                    st = os.stat(item)
                    stamp = f"{item}\0{st.st_size}\0{st.st_mtime_ns}\0{st.st_ino}\n"
                except OSError:
                    stamp = f"{item}\0missing\n"
                digest.update(stamp.encode("utf-8", "surrogateescape"))
        return digest.hexdigest()

    def last_reads(self, cache: RecordCache | None) -> list[str]:
        """The installed files the last audit with this cache read (for :meth:`fingerprint`)."""
        stored = cache.get_history(self._reads_key()) if cache is not None else None
        return stored.decode("utf-8", "surrogateescape").split("\0") if stored else []

    def remember_reads(self, cache: RecordCache | None) -> None:
        if cache is not None:
            cache.put_history(self._reads_key(),
                              "\0".join(self.reads).encode("utf-8", "surrogateescape"))

    # -- findings -----------------------------------------------------------------------------
    def located(self, path: str) -> str | None:
        """Where the installed file the model names ``path`` is on disk, or None."""
        return self.files.get(path)

    def translate(self, findings: Iterable[Finding]) -> list[Finding]:
        """Findings about the checkout only: a location in an installed file leaves
        ``related`` (the reports point into the checkout) for ``evidence.installed``, with
        where the file is and the distribution that installed it."""
        kept: list[Finding] = []
        for finding in findings:
            if finding.path in self.files:
                continue  # (never: the rules run on the checkout's classes only)
            outside = [r for r in finding.related if r.path in self.files]
            if not outside:
                kept.append(finding)
                continue
            installed = [{"path": self.files[r.path], "module_path": r.path, "line": r.line,
                          "distribution": self.owners.get(r.path, ("", ""))[0],
                          "version": self.owners.get(r.path, ("", ""))[1],
                          "message": r.message} for r in outside]
            evidence = dict(finding.evidence)
            evidence["installed"] = installed
            message = finding.message
            for item in installed:  # (fw/core.py:8) -> (fw/core.py:8, installed fw 1.0)
                label = " ".join(str(item[k]) for k in ("distribution", "version") if item[k])
                spot = f"({item['module_path']}:{item['line']})"
                message = message.replace(spot, f"{spot[:-1]}, installed {label})" if label
                                          else f"{spot[:-1]}, installed)")
            kept.append(replace(finding, message=message, related=[
                r for r in finding.related if r.path not in self.files], evidence=evidence))
        return kept


def open_installed(python: str, checkout: Path, max_size: int, use_cache: bool = True
                   ) -> InstalledPackages:
    """The installed packages of ``python`` (an interpreter or a virtual environment's
    folder), ready to be read for an audit of ``checkout``; a usage error for a bad path."""
    return InstalledPackages(find_environment(python), checkout, max_size, use_cache)


def iter_notes(notes: Iterable[str], limit: int = 8) -> Iterator[str]:
    """At most ``limit`` notes, then one that counts the rest."""
    notes = list(dict.fromkeys(notes))
    yield from notes[:limit]
    if len(notes) > limit:
        yield f"and {len(notes) - limit} more notes about installed files"


__all__ = ["Environment", "InstalledPackages", "active_environment", "find_environment",
           "open_installed"]
