"""Read, fix, diff and atomically write the files the findings point at."""

from __future__ import annotations

import ast
import contextlib
import difflib
import os
import stat
import tempfile
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import libcst as cst

from hookguard.findings import Finding
from hookguard.fix.codemods import fix_module
from hookguard.fix.plan import Fix, Outcome, RenameFix, plan_fixes

if TYPE_CHECKING:
    from hookguard.model.project import Project


@dataclass
class FileResult:
    path: str  # posix, relative to the root
    before: bytes
    after: bytes
    encoding: str = "utf-8"

    @property
    def changed(self) -> bool:
        return self.before != self.after

    def diff(self) -> str:
        """A unified diff with ``a/`` and ``b/`` headers ('' when nothing changed)."""
        if not self.changed:
            return ""
        old = self.before.decode(self.encoding, errors="replace").splitlines(keepends=True)
        new = self.after.decode(self.encoding, errors="replace").splitlines(keepends=True)
        lines = difflib.unified_diff(old, new, f"a/{self.path}", f"b/{self.path}")
        return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"
                       for line in lines)


@dataclass
class FixReport:
    outcomes: list[Outcome] = field(default_factory=list)
    files: list[FileResult] = field(default_factory=list)

    @property
    def refused(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.status == "refused"]

    @property
    def fixed(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.status == "fixed"]

    def diff(self) -> str:
        return "".join(f.diff() for f in self.files)


def fix_findings(
    root: Path,
    findings: Iterable[Finding],
    *,
    write: bool = True,
    project: Project | None = None,
) -> FixReport:
    """Fix what can be fixed among ``findings`` (paths relative to ``root``).

    Every file is parsed once and all of its fixes applied in one transform. With ``write``,
    changed files are replaced atomically; without it nothing is written (see
    :meth:`FixReport.diff`). A fix that cannot be applied safely is refused with a reason; the
    other fixes still happen. With the audit's ``project``, a rename also renames the
    overrides and ``self`` references of the class's descendants, all or nothing.
    """
    fixes, refused = plan_fixes(findings, project)
    sizes = Counter(f.group for f in fixes)
    excluded: dict[tuple[str, int, str], str] = {}
    while True:
        active = [f for f in fixes if f.group not in excluded]
        by_file: dict[str, list[Fix]] = {}
        for fix in active:
            by_file.setdefault(fix.path, []).append(fix)
        results = {rel: fix_file(root, rel, items) for rel, items in sorted(by_file.items())}
        more: dict[tuple[str, int, str], str] = {}
        for rel, (outcomes, _) in results.items():
            for fix, outcome in zip(by_file[rel], outcomes, strict=True):
                if outcome.status == "refused" and sizes[fix.group] > 1:
                    more.setdefault(fix.group, _group_reason(fix, outcome))
        if not more:
            break
        excluded.update(more)  # a group is all or nothing: plan again without it
    report = FixReport(outcomes=list(refused))
    for fix in fixes:
        if fix.group in excluded and isinstance(fix, RenameFix) and not fix.follows:
            report.outcomes.append(fix.outcome("refused", excluded[fix.group]))
    for rel, (outcomes, result) in results.items():
        report.outcomes.extend(o for o in outcomes if o.message)
        if result is None:
            continue
        report.files.append(result)
        if write and result.changed:
            write_atomic(root / rel, result.after)
    report.outcomes.sort(key=lambda o: (o.path, o.line, o.code))
    return report


def _group_reason(fix: Fix, outcome: Outcome) -> str:
    if not isinstance(fix, RenameFix) or not fix.follows:
        return outcome.message
    what = "its subclass" if not fix.refs_only else "its descendant"
    return (
        f"{what} {fix.cls} ({fix.path}:{fix.line}) cannot follow the rename: "
        f"{outcome.message}"
    )


def fix_file(root: Path, rel: str, fixes: Sequence[Fix]) -> tuple[list[Outcome], FileResult | None]:
    def refuse_all(reason: str) -> tuple[list[Outcome], None]:
        return [f.outcome("refused", reason) for f in fixes], None

    try:
        before = (root / rel).read_bytes()
    except OSError as exc:
        return refuse_all(f"cannot read {rel}: {exc.strerror or exc}")
    try:
        module = cst.parse_module(before)
    except cst.ParserSyntaxError as exc:
        return refuse_all(f"libcst cannot parse {rel} (line {exc.raw_line}): fix by hand")
    new_module, outcomes = fix_module(module, fixes)
    after = new_module.bytes
    if after != before:
        try:
            ast.parse(after, filename=rel)
        except SyntaxError as exc:  # pragma: no cover - a bug in a codemod
            return refuse_all(f"the fixed file would not parse ({exc.msg}); nothing written")
    return outcomes, FileResult(rel, before, after, module.encoding)


def write_atomic(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` atomically, keeping its permission bits."""
    target = Path(os.path.realpath(path))
    mode = stat.S_IMODE(target.stat().st_mode)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".hgfix")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
