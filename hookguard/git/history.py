"""History evidence: which methods a class once defined, and which commit removed or renamed them.

Cost is bounded by design: one ``git log`` per ancestor *file* (never per candidate method),
scanning ``-U0`` patches for removed ``def`` lines of the candidate names only, then one
``cat-file --batch`` for the before/after blobs of just the commits that removed a candidate.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from hookguard.git.repo import GitError, Repo
from hookguard.model.extract import extract
from hookguard.model.records import ClassRecord, MethodRecord, ParamKind

_DEF = re.compile(rb"^-\s*(?:async\s+)?def\s+([A-Za-z_][A-Za-z0-9_]*)\s*\(")
_DIFF_HEADER = re.compile(rb"^diff --git a/(.*) b/(.*)$")
RENAME_THRESHOLD = 0.3


@dataclass(frozen=True, slots=True)
class HookChange:
    """A method that left a class: removed, or renamed to ``new``."""

    class_fq: str
    old: str
    new: str | None
    commit: str
    short: str
    subject: str
    path: str  # the file the class lived in at that commit

    @property
    def kind(self) -> str:
        return "renamed" if self.new else "removed"

    def describe(self) -> str:
        what = f"renamed to {self.new}" if self.new else "removed"
        return f"{what} in {self.short} ({self.subject})"


def method_similarity(
    old: MethodRecord, new: MethodRecord, before: ClassRecord, after: ClassRecord
) -> float:
    """How likely ``new`` is ``old`` under a new name: body, parameters and call sites."""
    old_lines = set(old.body_digest.split(",")) - {""}
    new_lines = set(new.body_digest.split(",")) - {""}
    body = len(old_lines & new_lines) / max(len(old_lines | new_lines), 1)
    old_params = {p.name for p in old.bound_params if p.kind is not ParamKind.VAR_KEYWORD}
    new_params = {p.name for p in new.bound_params if p.kind is not ParamKind.VAR_KEYWORD}
    params = (
        1.0
        if not old_params and not new_params
        else len(old_params & new_params) / len(old_params | new_params)
    )
    callers_old = {m.name for m in before.methods.values() if any(
        c.name == old.name and c.receiver in ("self", "cls") for c in m.calls)}
    callers_new = {m.name for m in after.methods.values() if any(
        c.name == new.name and c.receiver in ("self", "cls") for c in m.calls)}
    callers = 1.0 if callers_old & callers_new else 0.0
    return 0.5 * body + 0.2 * params + 0.5 * callers


def pair_renames(
    before: ClassRecord, after: ClassRecord, removed: Iterable[str]
) -> dict[str, str | None]:
    """For each removed method, the added method it most likely became (or None)."""
    added = [m for name, m in after.methods.items() if name not in before.methods]
    pairs: dict[str, str | None] = {}
    taken: set[str] = set()
    for name in removed:
        old = before.methods.get(name)
        if old is None:
            continue
        scored = sorted(
            ((method_similarity(old, new, before, after), new.name) for new in added
             if new.name not in taken),
            reverse=True,
        )
        if scored and scored[0][0] >= RENAME_THRESHOLD:
            pairs[name] = scored[0][1]
            taken.add(scored[0][1])
        else:
            pairs[name] = None
    return pairs


@dataclass(frozen=True, slots=True)
class _Removal:
    commit: str
    short: str
    subject: str
    old_path: str
    new_path: str
    name: str


class HistoryIndex:
    """Answers "when did class X lose method m?" for many candidates with few git calls."""

    def __init__(self, repo: Repo) -> None:
        self.repo = repo
        self.shallow = repo.is_shallow()
        self.errors: list[str] = []

    def lost_methods(
        self, path: str, wanted: Mapping[str, set[str]], module: str, is_package: bool
    ) -> dict[tuple[str, str], HookChange]:
        """``wanted`` maps a class qualname in ``path`` to candidate method names.

        Returns ``(qualname, name) -> HookChange`` for each candidate the class really lost.
        """
        names = set().union(*wanted.values()) if wanted else set()
        if not names:
            return {}
        removals = self._scan(path, names)
        if not removals:
            return {}
        # Blobs before and after each relevant commit, in one batch.
        specs: list[str] = []
        for r in removals:
            specs += [f"{r.commit}^:{r.old_path}", f"{r.commit}:{r.new_path}"]
        blobs = self.repo.read_blobs(list(dict.fromkeys(specs)))
        found: dict[tuple[str, str], HookChange] = {}
        parsed: dict[str, dict[str, ClassRecord]] = {}

        def classes(spec: str) -> dict[str, ClassRecord]:
            if spec not in parsed:
                data = blobs.get(spec)
                record = extract(spec, module, is_package, data) if data is not None else None
                parsed[spec] = {c.qualname: c for c in record.classes} if record else {}
            return parsed[spec]

        for removal in removals:  # newest first: the latest removal is the one in force
            before = classes(f"{removal.commit}^:{removal.old_path}")
            after = classes(f"{removal.commit}:{removal.new_path}")
            for qualname, candidates in wanted.items():
                key = (qualname, removal.name)
                if removal.name not in candidates or key in found:
                    continue
                old_class, new_class = before.get(qualname), after.get(qualname)
                if old_class is None or new_class is None:
                    continue
                if removal.name not in old_class.methods or removal.name in new_class.methods:
                    continue
                new_name = pair_renames(old_class, new_class, [removal.name]).get(removal.name)
                found[key] = HookChange(
                    class_fq=f"{module}.{qualname}" if module else qualname,
                    old=removal.name,
                    new=new_name,
                    commit=removal.commit,
                    short=removal.short,
                    subject=removal.subject,
                    path=removal.new_path,
                )
        return found

    def removal_commit(
        self, path: str, name: str, rev_range: str
    ) -> tuple[str, str, str] | None:
        """(sha, short, subject) of the newest commit in ``rev_range`` dropping ``def name``."""
        for removal in self._scan(path, {name}, rev_range):
            return removal.commit, removal.short, removal.subject
        return None

    def _scan(self, path: str, names: set[str], rev_range: str | None = None) -> list[_Removal]:
        follow = [] if rev_range else ["--follow"]
        revs = [rev_range] if rev_range else []
        try:
            out = self.repo.git(
                "log", "-p", "-U0", "--no-color", "--no-ext-diff", *follow,
                "--format=%x1e%H%x1f%h%x1f%s", *revs, "--", path,
            )
        except GitError as exc:
            self.errors.append(f"{path}: history unavailable ({exc})")
            return []
        wanted = {n.encode() for n in names}
        removals: list[_Removal] = []
        for chunk in out.split(b"\x1e")[1:]:
            header, _, patch = chunk.partition(b"\n")
            fields = header.split(b"\x1f")
            if len(fields) < 3:
                continue
            commit, short = fields[0].decode(), fields[1].decode()
            subject = fields[2].decode(errors="replace")
            old_path = new_path = path
            removed: list[bytes] = []
            for line in patch.split(b"\n"):
                if line.startswith(b"diff --git"):
                    match = _DIFF_HEADER.match(line)
                    if match:
                        old_path, new_path = match.group(1).decode(), match.group(2).decode()
                    continue
                match = _DEF.match(line)
                if match and match.group(1) in wanted:
                    removed.append(match.group(1))
            for name in dict.fromkeys(removed):
                removals.append(
                    _Removal(commit, short, subject, old_path, new_path, name.decode())
                )
        return removals
