"""``check --base``: the dependencies a change moves, each checked as ``upgrade`` checks one.

A Renovate or Dependabot pull request changes a pin (``requirements.txt``, a constraints
file, ``pyproject.toml``, ``uv.lock``, ``poetry.lock``, ``Pipfile.lock``: read from git by
:mod:`hookguard.upgrade.pins`) and no Python file, so the gate alone sees nothing. For each
package whose pinned version the change moves, and that a class of the head's checkout
subclasses, the upgrade check (:func:`hookguard.upgrade.check.check_versions`) runs from the
base's version to the head's, on the head's files; its findings join the gate's.

Which packages a class of the checkout subclasses: the bases of the checkout's classes that
lie outside it (``torch.nn.Module``) name import packages (``torch``); a distribution's import
packages are read from its installed ``*.dist-info`` or a wheel of it in the package cache
(:meth:`~hookguard.upgrade.sources.Locator.import_names`), else guessed from its name
(``typing-extensions`` -> ``typing_extensions``, and a few well-known others: ``PyYAML`` ->
``yaml``). Where a base's package is claimed by no pinned name and a changed package's import
names are unknown, its new version is downloaded to read them. A package nobody subclasses is
named in a note, never downloaded for the check.

Both versions come as ``upgrade --download`` gets them: the environment, the package cache,
then ``pip download --no-deps --only-binary=:all:`` into the cache (pip's own settings apply:
``PIP_INDEX_URL``, ``PIP_FIND_LINKS``, ``PIP_NO_INDEX``...). A version that cannot be had is
an input problem at the pin's line (``dependency not checked: ...``): it fails the run (exit
1) as a file that cannot be analysed does, never a silent pass.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from hookguard.errors import UsageError
from hookguard.findings import Finding, InputError
from hookguard.model.project import External, Project
from hookguard.upgrade.pins import Comparison, Pin, PinChange, compare, is_manifest, tree_pins
from hookguard.upgrade.sources import Locator, normalize_name

if TYPE_CHECKING:
    from hookguard.config import Config
    from hookguard.git.repo import Repo
    from hookguard.model.records import FileRecord

#: What an input problem of a dependency that could not be checked starts with.
NOT_CHECKED = "dependency not checked"
_IDENTIFY = 20  # downloads to learn a changed package's import names, at most
_SHOWN = 10  # per-package notes

#: Distributions whose import package is not their name (the guess for all others).
KNOWN_IMPORTS: dict[str, tuple[str, ...]] = {
    "pyyaml": ("yaml", "_yaml"),
    "scikit-learn": ("sklearn",),
    "scikit-image": ("skimage",),
    "pillow": ("PIL",),
    "beautifulsoup4": ("bs4",),
    "opencv-python": ("cv2",),
    "opencv-python-headless": ("cv2",),
    "opencv-contrib-python": ("cv2",),
    "protobuf": ("google",),
    "python-dateutil": ("dateutil",),
    "djangorestframework": ("rest_framework",),
    "attrs": ("attr", "attrs"),
    "pyjwt": ("jwt",),
    "pyzmq": ("zmq",),
    "pycryptodome": ("Crypto",),
    "pyopenssl": ("OpenSSL",),
    "websocket-client": ("websocket",),
    "python-multipart": ("multipart",),
    "faiss-cpu": ("faiss",),
    "faiss-gpu": ("faiss",),
    "setuptools": ("setuptools", "pkg_resources", "_distutils_hack"),
    "pymongo": ("pymongo", "bson", "gridfs"),
    "tensorflow-cpu": ("tensorflow",),
    "tensorflow-gpu": ("tensorflow",),
    "torch-geometric": ("torch_geometric",),
    "msgpack-python": ("msgpack",),
    "mysqlclient": ("MySQLdb",),
    "psycopg2-binary": ("psycopg2",),
    "google-api-python-client": ("googleapiclient",),
}


def guessed_imports(name: str) -> tuple[str, ...]:
    """The import packages a distribution of this name most likely has."""
    normal = normalize_name(name)
    if normal in KNOWN_IMPORTS:
        return KNOWN_IMPORTS[normal]
    guesses = [normal.replace("-", "_")]
    for prefix in ("python-", "py-"):
        if normal.startswith(prefix):
            guesses.append(normal[len(prefix):].replace("-", "_"))
    if normal.endswith("-python"):
        guesses.append(normal[: -len("-python")].replace("-", "_"))
    if normal.startswith("google-cloud-"):
        guesses.append("google")
    return tuple(dict.fromkeys(guesses))


def external_tops(checkout: Project, own: set[str] | None = None) -> set[str]:
    """The import packages outside the checkout (and outside the standard library) whose
    classes the checkout's classes subclass."""
    stdlib = set(getattr(sys, "stdlib_module_names", ())) | {"builtins", "__future__"}
    tops: set[str] = set()
    for info in checkout.classes.values():
        if own is not None and info.file.path not in own:
            continue
        for node in checkout.mro(info):
            if isinstance(node, External) and "." in node.name:
                top = node.name.split(".", 1)[0]
                if top not in stdlib:
                    tops.add(top)
    return tops


@dataclass
class DependencyCheck:
    """What became of one dependency change."""

    change: PinChange
    status: str  # "checked", "not subclassed", "not checked", "unknown"
    reason: str = ""
    findings: int = 0
    upgrade: dict[str, object] | None = None

    def to_json(self) -> dict[str, object]:
        return {"package": self.change.shown, "from": self.change.old, "to": self.change.new,
                "where": list(self.change.where), "status": self.status,
                "reason": self.reason, "findings": self.findings, "upgrade": self.upgrade}


@dataclass
class DependencyResult:
    findings: list[Finding] = field(default_factory=list)
    problems: list[InputError] = field(default_factory=list)  # changes that went unchecked
    notes: list[str] = field(default_factory=list)
    checks: list[DependencyCheck] = field(default_factory=list)
    seconds: float = 0.0

    def to_json(self) -> list[dict[str, object]]:
        return [c.to_json() for c in self.checks]

    def summary(self) -> str:
        """``; 1 dependency change not checked``, or nothing."""
        missed = len(self.problems)
        return (f"; {missed} dependency change{'s' * (missed != 1)} not checked"
                if missed else "")


def check_dependencies(
    repo: Repo,
    base: str,
    head: str,
    config: Config,
    records: Sequence[FileRecord],
    checkout: Project,
    select: Sequence[str] = (),
    python: str | None = None,
) -> DependencyResult:
    """The dependency changes from the tree of commit ``base`` to that of ``head``, and for
    each that a class of ``checkout`` (the head's model, of ``records``) subclasses, the
    upgrade check's findings."""
    started = time.perf_counter()
    result = DependencyResult()
    base_entries, head_entries = repo.ls_tree(base), repo.ls_tree(head)
    before = {e.path: e.blob for e in base_entries if is_manifest(e.path)}
    after = {e.path: e.blob for e in head_entries if is_manifest(e.path)}
    if not before and not after:
        return result
    base_pins = tree_pins(repo, base_entries)
    head_pins = tree_pins(repo, head_entries)
    if base_pins.files == head_pins.files:
        return result  # no requirement or lock file changed
    result.notes.extend(head_pins.notes)
    comparison = compare(base_pins.pins, head_pins.pins)
    result.notes.extend(comparison.unpinned[:_SHOWN])
    if len(comparison.unpinned) > _SHOWN:
        result.notes.append(f"dependencies: and {len(comparison.unpinned) - _SHOWN} more "
                            "requirements changed without an exact version")
    if comparison.added:
        names = comparison.added
        result.notes.append(
            f"dependencies: {len(names)} package{'s' * (len(names) != 1)} newly pinned, with "
            f"no pinned version before to compare with: {', '.join(names[:5])}"
            + (f" and {len(names) - 5} more" if len(names) > 5 else ""))
    if comparison.changes:
        _check_changes(result, comparison, head_pins.pins, repo.root, config, records,
                       checkout, select, python)
    result.seconds = time.perf_counter() - started
    return result


def _check_changes(result: DependencyResult, comparison: Comparison, head_pins: Sequence[Pin],
                   root: Path, config: Config, records: Sequence[FileRecord],
                   checkout: Project, select: Sequence[str], python: str | None) -> None:
    from hookguard import progress

    own = {r.path for r in records}
    tops = external_tops(checkout, own)
    changes = comparison.changes
    locators = {c.name: Locator(c.name, (), python, True, root, config.max_file_size)
                for c in changes}
    imports: dict[str, tuple[str, ...]] = {}
    known: set[str] = set()
    for change in changes:
        found = locators[change.name].import_names() if tops else None
        if found:
            known.add(change.name)
        imports[change.name] = found or guessed_imports(change.name)
    claimed = {t for names in imports.values() for t in names}
    claimed |= {t for pin in head_pins for t in guessed_imports(pin.name)}
    unclaimed = tops - claimed
    checks: dict[tuple[str, str, str], DependencyCheck] = {}
    # A base from a package no pinned name accounts for: read the import names of the changed
    # packages that may provide it (their new version is downloaded for that).
    identified = 0
    for change in changes:
        if not unclaimed or change.name in known or set(imports[change.name]) & tops:
            continue
        if identified >= _IDENTIFY:
            checks[_key(change)] = DependencyCheck(
                change, "unknown", f"over {_IDENTIFY} packages to identify: its import names "
                "were not read")
            continue
        identified += 1
        try:
            with progress.phase("reading the package"):
                dist = locators[change.name].find(change.new)
        except UsageError as exc:
            checks[_key(change)] = DependencyCheck(
                change, "unknown", f"its import names cannot be read ({exc}); the checkout "
                f"subclasses classes of {', '.join(sorted(unclaimed))}, which no pinned name "
                "provides")
            continue
        imports[change.name] = dist.tops
        known.add(change.name)
        unclaimed -= set(dist.tops)
    from hookguard.upgrade.check import check_versions, find_versions

    seen: set[tuple[str, str]] = set()
    for change in changes:
        key = _key(change)
        if key in checks:
            continue
        if not set(imports[change.name]) & tops:
            checks[key] = DependencyCheck(change, "not subclassed",
                                          "no class of the checkout subclasses a class of it")
            continue
        locator = locators[change.name]
        try:
            with progress.phase("reading the package"):
                old, new = find_versions(locator, change.new, change.old)
        except UsageError as exc:
            checks[key] = DependencyCheck(change, "not checked", str(exc))
            path, _, line = change.where[0].rpartition(":")
            result.problems.append(InputError(
                path, int(line) if line.isdigit() else 1,
                f"{NOT_CHECKED}: {change.label()}: {exc}"))
            continue
        upgrade = check_versions(root, config, records, change.shown, old, new)
        reported = [f for f in upgrade.findings if not select or f.code in select]
        if not upgrade.subclasses:
            checks[key] = DependencyCheck(change, "not subclassed",
                                          "no class of the checkout subclasses a class of it",
                                          upgrade=upgrade.to_json())
            continue
        checks[key] = DependencyCheck(change, "checked", findings=len(reported),
                                      upgrade=upgrade.to_json())
        where = ", ".join(change.where[:2])
        for finding in reported:
            if (finding.fingerprint, finding.message) in seen:
                continue
            seen.add((finding.fingerprint, finding.message))
            evidence = {**finding.evidence, "dependency": {
                "package": change.shown, "from": change.old, "to": change.new,
                "where": list(change.where)}}
            result.findings.append(replace(
                finding, evidence=evidence,
                message=f"{finding.message} [{change.label()}, {where}]"))
        result.notes.extend(n for n in upgrade.notes
                            if not n.startswith("no class in the checkout"))
    result.checks = [checks[_key(c)] for c in changes]
    result.notes.extend(_notes(result.checks))


def _key(change: PinChange) -> tuple[str, str, str]:
    return change.name, change.old, change.new


def _notes(checks: Sequence[DependencyCheck]) -> list[str]:
    """One line per dependency change: what was checked, and what was not and why."""
    notes: list[str] = []
    for check in checks[:_SHOWN]:
        change = check.change
        head = f"dependency {change.label()} ({change.where[0]})"
        if check.status == "checked":
            subclasses = (check.upgrade or {}).get("subclasses")
            count = len(subclasses) if isinstance(subclasses, list) else 0
            notes.append(f"{head}: checked the overrides of {count} "
                         f"class{'es' * (count != 1)}: {check.findings} "
                         f"finding{'s' * (check.findings != 1)}")
        elif check.status == "not subclassed":
            notes.append(f"{head}: {check.reason}; not checked")
        elif check.status == "unknown":
            notes.append(f"{head}: could not tell whether the checkout subclasses it: "
                         f"{check.reason}")
        # "not checked": an input problem says it
    if len(checks) > _SHOWN:
        notes.append(f"and {len(checks) - _SHOWN} more dependency changes (JSON output: "
                     "dependencies)")
    return [_shorten(n) for n in notes]


def _shorten(text: str, limit: int = 400) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


__all__ = [
    "KNOWN_IMPORTS",
    "NOT_CHECKED",
    "DependencyCheck",
    "DependencyResult",
    "check_dependencies",
    "external_tops",
    "guessed_imports",
]
