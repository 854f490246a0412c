"""Read, fix, diff and write the files the findings point at: all of a family or nothing.

Writing is a small transaction, safe to interrupt and to race:

1. every file to change is checked first: a regular file inside the checkout, reached through
   no symbolic link, writable (a read-only file is refused, never rewritten);
2. a journal names every file of the run with the hashes of its old and new contents, and
   every new content is staged next to its file (``.name.hgfix-xxxxxxxxxxxxxxxx``, a random
   name only the journal knows) and synced;
3. just before the renames, each file is read again: a file edited since ``fix`` read it is
   refused with its whole family (nothing of that rename is written);
4. the staged files replace the originals (``os.replace``), the journal goes.

A run killed during 2 leaves nothing changed (the next run removes the staged files); killed
during 4, the next ``fix`` completes the renames the journal names (:func:`recover`), so a
family is never left half-renamed. A directory that cannot be written is a clear error before
any file changes.

The journal decides what the next run writes, so it is kept where the checkout's contents
cannot put one (:func:`journal_path`):

* in a git work tree, in git's directory for that work tree, the path ``git rev-parse
  --git-path hookguard-fix-journal.json`` names: ``.git/`` of a plain clone,
  ``.git/worktrees/NAME/`` of a linked worktree, ``.git/modules/NAME/`` of a submodule's
  superproject. Should git name a place inside the work tree that is not its ``.git``
  directory (a ``.git`` file pointing into the checkout), that journal is never read and the
  per-user directory below is used instead;
* without a git repository (an unpacked archive, a copy), in a private per-user directory
  outside the checkout, ``$XDG_STATE_HOME/hookguard/fix-journals/`` (``~/.local/state/...``
  when that is not set), one file per checkout named by a hash of its resolved path. The
  directory is created mode 0700 and used only while it is a directory of this user that
  nobody else can write: anyone who can write there could already write the user's files.
  A stale journal of a checkout that was deleted and replaced at the same path cannot act
  on the new one: it names staged files by random names the new checkout does not hold.
  When no such directory can be had (no home directory: it is never created), ``fix`` writes
  without a journal: a run killed during 4 may leave a family half-renamed and its staged
  files behind (hidden, named ``.*.hgfix-*``, never acted on); any failure ``fix`` survives
  removes them.

A journal in the work tree, ``.hookguard-fix-journal.json`` at its root where hookguard once
kept it without ``.git/``, or one that git's directory would hold inside the work tree, is
never read, moved or removed: the next ``fix`` says, in one note, that it ignored it. (A
commit could plant one with a hidden staged file, and a ``fix`` in a linked worktree, a
submodule or an unpacked archive used to "complete" it, replacing a reviewed file with the
hidden content.)

libcst reproduces a file byte for byte except, rarely, blank lines in a file that mixes tabs
and spaces; then only the lines the fix changed are carried over onto the original bytes, so
whitespace the fix does not touch is kept.
"""

from __future__ import annotations

import ast
import contextlib
import difflib
import hashlib
import json
import os
import re
import secrets
import stat
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import libcst as cst

from hookguard.errors import UsageError
from hookguard.findings import Finding
from hookguard.fix.codemods import find_def, fix_module
from hookguard.fix.plan import (
    Fix,
    Outcome,
    OverrideFix,
    PortFix,
    RenameFix,
    plan_fixes,
    plan_overrides,
)

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
    # What ``--unsafe-fixes`` would change on top of ``files`` (before: as ``files`` leave
    # each file), when the unsafe fixes were held back.
    held_files: list[FileResult] = field(default_factory=list)

    @property
    def refused(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.status == "refused"]

    @property
    def fixed(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.status == "fixed"]

    @property
    def held(self) -> list[Outcome]:
        """Unsafe fixes held back (they apply under ``--unsafe-fixes``)."""
        return [o for o in self.outcomes if o.status == "held"]

    def diff(self) -> str:
        """The patch of what ``fix`` writes (or would write). A file with an unsafe fix in it
        is preceded by one ``# unsafe fix: ...`` line per unsafe fix, which ``git apply`` and
        ``patch`` read as commentary."""
        out: list[str] = []
        for result in self.files:
            text = result.diff()
            if not text:
                continue
            out.extend(f"# unsafe fix: {_mark(o)}\n" for o in self.outcomes
                       if o.unsafe and o.status == "fixed" and o.path == result.path)
            out.append(text)
        return "".join(out)

    def held_diff(self) -> str:
        """The unsafe fixes held back, as a patch on top of :meth:`diff` with every line
        commented out (``# ``): shown, never applied by ``git apply``."""
        texts = [f.diff() for f in self.held_files]
        if not any(texts):
            return ""
        lines = ["# unsafe fixes held back; hookguard fix --unsafe-fixes would also apply:\n"]
        lines.extend(f"# unsafe fix: {_mark(o)}\n" for o in self.held)
        for text in texts:
            lines.extend(f"# {line}" if line.strip() else "#\n"
                         for line in text.splitlines(keepends=True))
        return "".join(lines)


def _mark(outcome: Outcome) -> str:
    from hookguard.report.escape import printable, safe_path

    text = f"{safe_path(outcome.path)}:{outcome.line} {outcome.code}: {outcome.message}"
    return printable(text)


@dataclass
class _Context:
    """What every file's transform shares: the base ``def`` of each port, read once; where
    ``@override`` comes from; the checkout's module names."""

    root: Path
    project: Project | None = None
    override_from: str = "typing_extensions"
    bases: dict[tuple[str, int], tuple[cst.Module, cst.FunctionDef] | str] = field(
        default_factory=dict)
    modules: dict[str, cst.Module | str] = field(default_factory=dict)
    # A file's result depends only on its fixes: the safe pass after a held-back port does
    # not parse again a file whose fixes it shares with the first pass.
    done: dict[tuple[str, tuple[int, ...]], tuple[list[Outcome], FileResult | None]] = field(
        default_factory=dict)

    @property
    def first_party(self) -> frozenset[str]:
        if self.project is None:
            return frozenset()
        return frozenset(m.split(".")[0] for m in self.project.modules if m)

    def base_def(self, fix: PortFix) -> tuple[cst.Module, cst.FunctionDef] | str:
        key = (fix.base_path, fix.base_line)
        if key not in self.bases:
            module = self.modules.get(fix.base_path)
            if module is None:
                module = _parse(self.root, fix.base_path)
                self.modules[fix.base_path] = module
            self.bases[key] = module if isinstance(module, str) else find_def(
                module, fix.base_line, fix.base_cls, fix.new)
        return self.bases[key]


def _parse(root: Path, rel: str) -> cst.Module | str:
    unsafe = unsafe_target(root, rel, write=False)
    if unsafe is not None:
        return unsafe
    try:
        return cst.parse_module((root / rel).read_bytes())
    except OSError as exc:
        return f"cannot read {rel}: {exc.strerror or exc}"
    except cst.ParserSyntaxError as exc:
        return f"libcst cannot parse {rel} (line {exc.raw_line})"


Group = tuple[str, int, str]
_Results = dict[str, tuple[list[Outcome], "FileResult | None"]]


def fix_findings(
    root: Path,
    findings: Iterable[Finding],
    *,
    write: bool = True,
    project: Project | None = None,
    unsafe: bool = False,
    add_override: str | None = None,
    scopes: Sequence[str] = ("",),
) -> FixReport:
    """Fix what can be fixed among ``findings`` (paths relative to ``root``).

    Every file is parsed once and all of its fixes applied in one transform. With ``write``,
    changed files are replaced atomically; without it nothing is written (see
    :meth:`FixReport.diff`). A fix that cannot be applied safely is refused with a reason; the
    other fixes still happen. With the audit's ``project``, a rename also renames the
    overrides and ``self`` references of the class's descendants, all or nothing.

    A rename the base's calls could not bind is an unsafe fix, a port of the base's signature
    (:class:`~hookguard.fix.plan.PortFix`): applied with ``unsafe``, otherwise held back, and
    shown by :meth:`FixReport.held_diff`. ``add_override`` (``typing`` or
    ``typing_extensions``) also adds ``@override`` from that module to every method under
    ``scopes`` proven to override a hook (:func:`~hookguard.fix.plan.plan_overrides`).
    """
    fixes, refused = plan_fixes(findings, project, ports=project is not None)
    if add_override and project is not None:
        fixes.extend(plan_overrides(project, scopes, fixes))
    context = _Context(root, project, add_override or "typing_extensions")
    risky = {f.group for f in fixes if isinstance(f, PortFix)}
    by_file, results, excluded = _apply_all(root, fixes, write, context)
    held: list[Outcome] = []
    held_files: list[FileResult] = []
    if risky and not unsafe:
        full = results
        for fix in fixes:
            if fix.group not in risky or not isinstance(fix, RenameFix) or fix.follows:
                continue
            if fix.group in excluded:
                held.append(fix.outcome("refused", excluded[fix.group]))
                continue
            for fixed, outcome in zip(by_file[fix.path], full[fix.path][0], strict=True):
                if fixed is fix:
                    held.append(replace(outcome, status="held", unsafe=True)
                                if outcome.status == "fixed" else outcome)
        safe = [f for f in fixes if f.group not in risky
                and not (isinstance(f, OverrideFix) and f.after in risky)]
        by_file, results, excluded = _apply_all(root, safe, write, context)
        for rel, (_, result) in sorted(full.items()):
            if result is None or not result.changed:
                continue
            now = results.get(rel, ([], None))[1]
            base = now.after if now is not None else result.before
            if base != result.after:
                held_files.append(FileResult(rel, base, result.after, result.encoding))
    report = FixReport(outcomes=[*refused, *held], held_files=held_files)
    for fix in fixes:
        if (fix.group in excluded and isinstance(fix, RenameFix) and not fix.follows
                and (unsafe or fix.group not in risky)):
            report.outcomes.append(fix.outcome("refused", excluded[fix.group]))
    changed = {rel: result for rel, (_, result) in results.items()
               if result is not None and result.changed}
    skipped: dict[str, str] = {}  # file -> why it was not written (changed under us)
    if write and changed:
        skipped = write_files(root, list(changed.values()), _families(by_file, changed))
    for rel, (outcomes, result) in results.items():
        if rel in skipped:
            outcomes = [f.outcome("refused", skipped[rel]) if o.status == "fixed" else o
                        for f, o in zip(by_file[rel], outcomes, strict=True)]
            assert result is not None
            result = FileResult(rel, result.before, result.before, result.encoding)
        report.outcomes.extend(
            replace(o, unsafe=True) if f.group in risky and o.status == "fixed" else o
            for f, o in zip(by_file[rel], outcomes, strict=True) if o.message)
        if result is not None:
            report.files.append(result)
    report.outcomes.sort(key=lambda o: (o.path, o.line, o.code))
    return report


def _apply_all(
    root: Path, fixes: Sequence[Fix], write: bool, context: _Context
) -> tuple[dict[str, list[Fix]], _Results, dict[Group, str]]:
    """Every fix applied in memory, a group all or nothing: a group with a refused fix is
    planned again without it (an ``@override`` waiting for a rename goes with it)."""
    sizes = Counter(f.group for f in fixes)
    excluded: dict[Group, str] = {}
    while True:
        active = [f for f in fixes if f.group not in excluded
                  and not (isinstance(f, OverrideFix) and f.after in excluded)]
        by_file: dict[str, list[Fix]] = {}
        for fix in active:
            by_file.setdefault(fix.path, []).append(fix)
        results: _Results = {}
        for rel, items in sorted(by_file.items()):
            key = (rel, tuple(id(f) for f in items))
            if key not in context.done:
                context.done[key] = fix_file(root, rel, items, write=write, context=context)
            results[rel] = context.done[key]
        more: dict[Group, str] = {}
        for rel, (outcomes, _) in results.items():
            for fix, outcome in zip(by_file[rel], outcomes, strict=True):
                if outcome.status == "refused" and sizes[fix.group] > 1:
                    more.setdefault(fix.group, _group_reason(fix, outcome))
        if not more:
            return by_file, results, excluded
        excluded.update(more)  # a group is all or nothing: plan again without it


def _families(
    by_file: dict[str, list[Fix]], changed: dict[str, FileResult]
) -> list[set[str]]:
    """The changed files in sets that must be written together: files linked by a fix group
    (a rename and the overrides and references that follow it)."""
    parent = {rel: rel for rel in changed}

    def find(rel: str) -> str:
        while parent[rel] != rel:
            parent[rel] = parent[parent[rel]]
            rel = parent[rel]
        return rel

    first: dict[object, str] = {}
    for rel in changed:
        for fix in by_file.get(rel, ()):
            other = first.setdefault(fix.group, rel)
            parent[find(rel)] = find(other)
    families: dict[str, set[str]] = {}
    for rel in changed:
        families.setdefault(find(rel), set()).add(rel)
    return list(families.values())


def _group_reason(fix: Fix, outcome: Outcome) -> str:
    if not isinstance(fix, RenameFix) or not fix.follows:
        return outcome.message
    what = "its subclass" if not fix.refs_only else "its descendant"
    return (
        f"{what} {fix.cls} ({fix.path}:{fix.line}) cannot follow the rename: "
        f"{outcome.message}"
    )


def fix_file(
    root: Path, rel: str, fixes: Sequence[Fix], *, write: bool = True,
    context: _Context | None = None,
) -> tuple[list[Outcome], FileResult | None]:
    """Apply ``fixes`` to ``rel`` in memory. With ``write`` (the result will be written) a
    read-only file is refused; a link or a file outside the checkout always is."""

    def refuse_all(reason: str) -> tuple[list[Outcome], None]:
        return [f.outcome("refused", reason) for f in fixes], None

    unsafe = unsafe_target(root, rel, write=write)
    if unsafe is not None:
        return refuse_all(unsafe)
    try:
        before = (root / rel).read_bytes()
    except OSError as exc:
        return refuse_all(f"cannot read {rel}: {exc.strerror or exc}")
    try:
        module = cst.parse_module(before)
    except cst.ParserSyntaxError as exc:
        return refuse_all(f"libcst cannot parse {rel} (line {exc.raw_line}): fix by hand")
    context = context or _Context(root)
    bases = {(f.base_path, f.base_line): context.base_def(f)
             for f in fixes if isinstance(f, PortFix)}
    record = context.project.files.get(rel) if context.project is not None else None
    new_module, outcomes = fix_module(
        module, fixes, bases, context.override_from, context.first_party,
        record.module if record is not None else "",
        record.is_package if record is not None else False,
    )
    after = new_module.bytes
    if after != before and module.bytes != before:
        # libcst did not reproduce the file exactly (blank lines in a file mixing tabs and
        # spaces): carry only the changed lines over onto the original bytes.
        carried = carry_over(before, module.bytes, after)
        if carried is None:
            return refuse_all(f"libcst cannot reproduce {rel} exactly (mixed tabs and "
                              "spaces?) and the fix touches what it changes: fix by hand")
        after = carried
    if after != before:
        try:
            ast.parse(after, filename=rel)
        except SyntaxError as exc:  # pragma: no cover - a bug in a codemod
            return refuse_all(f"the fixed file would not parse ({exc.msg}); nothing written")
    return outcomes, FileResult(rel, before, after, module.encoding)


def carry_over(original: bytes, roundtrip: bytes, changed: bytes) -> bytes | None:
    """Apply the line edits that turn ``roundtrip`` into ``changed`` to ``original``, where
    ``roundtrip`` is ``original`` as a tool reproduced it (some whitespace lost). None when an
    edit touches a line the reproduction did not keep as it was."""
    source = original.splitlines(keepends=True)
    before = roundtrip.splitlines(keepends=True)
    after = changed.splitlines(keepends=True)
    kept: dict[int, int] = {}  # line of ``before`` -> the same line in ``source``
    matcher = difflib.SequenceMatcher(None, source, before, autojunk=False)
    for tag, i1, _, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            kept.update((j1 + k, i1 + k) for k in range(j2 - j1))
    out: list[bytes] = []
    position = 0
    edits = difflib.SequenceMatcher(None, before, after, autojunk=False).get_opcodes()
    for tag, j1, j2, k1, k2 in edits:
        if tag == "equal":
            continue
        if j2 > j1:
            lines = [kept.get(j) for j in range(j1, j2)]
            if any(line is None for line in lines):
                return None
            start, end = lines[0], lines[-1]
            assert start is not None and end is not None
            if end - start != j2 - j1 - 1:
                return None  # the replaced lines are not contiguous in the original
            end += 1
        elif j1 in kept:
            start = end = kept[j1]
        elif j1 - 1 in kept:
            start = end = kept[j1 - 1] + 1
        else:
            return None
        if start < position:
            return None
        out.extend(source[position:start])
        out.extend(after[k1:k2])
        position = end
    out.extend(source[position:])
    return b"".join(out)


# -- writing: all of a family or nothing -----------------------------------------------------
class FixAborted(UsageError):
    """Nothing could be written (a directory that is not writable): exit 2, nothing changed."""


_STAGED = re.compile(r"\.(.+)\.hgfix-[0-9a-f]{16}")


def unsafe_target(root: Path, rel: str, *, write: bool = True) -> str | None:
    """Why ``fix`` must not write ``rel`` (``write=False``: not even show a diff of it), or
    None."""
    path = root / rel
    real_root = os.path.realpath(root)
    if os.path.realpath(path) != os.path.join(real_root, *Path(rel).parts):
        if os.path.islink(path):
            return f"{rel} is a symbolic link: fix by hand"
        return f"{rel} is reached through a symbolic link: fix by hand"
    try:
        info = os.lstat(path)
    except OSError as exc:
        return f"cannot read {rel}: {exc.strerror or exc}"
    if not stat.S_ISREG(info.st_mode):
        return f"{rel} is not a regular file"
    if write and (not info.st_mode & stat.S_IWUSR or not os.access(path, os.W_OK)):
        return f"{rel} is read-only: fix by hand, or make it writable"
    return None


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


JOURNAL_NAME = "hookguard-fix-journal.json"
WORK_TREE_JOURNAL = ".hookguard-fix-journal.json"  # where it once was without .git/
_JOURNAL_LIMIT = 16 << 20  # bytes: a journal names the files of one run


def _inside(path: str, directory: str) -> bool:
    return path == directory or path.startswith(directory.rstrip(os.sep) + os.sep)


def _git_journal(root: Path) -> tuple[Path | None, Path | None]:
    """(the journal in git's directory, a journal place git names that is refused); both None
    when ``root`` is not the top of a git work tree."""
    from hookguard.git.repo import GitError, Repo

    try:
        out = Repo(root).git("rev-parse", "--show-toplevel", "--git-path", JOURNAL_NAME)
    except (GitError, OSError):
        return None, None
    lines = os.fsdecode(out).split("\n")
    if len(lines) != 3 or lines[2] != "":
        return None, None  # a path holding a newline: not worth guessing
    real_root = os.path.realpath(root)
    if os.path.realpath(lines[0]) != real_root:
        return None, None  # a folder inside a repository, not a work tree's top
    path = root / lines[1]  # relative to root, where git ran, or absolute
    real = os.path.realpath(path.parent)
    dot_git = os.path.join(real_root, ".git")
    if _inside(real, real_root) and not (
        os.path.isdir(dot_git) and not os.path.islink(dot_git)
        and _inside(real, os.path.realpath(dot_git))
    ):
        return None, path  # in the work tree's files: a checkout can hold one
    return path, None


def _user_journal(root: Path, *, create: bool = False) -> Path | None:
    """The journal of a checkout without git, in a per-user directory outside it; None when
    there is no private one (``create``: make it, mode 0700)."""
    base = os.environ.get("XDG_STATE_HOME", "")
    if not os.path.isabs(base):
        try:
            home = Path.home()
        except (RuntimeError, KeyError):
            return None
        if not home.is_absolute() or not home.is_dir():
            return None  # a home that does not exist is not made up
        base = os.path.join(home, ".local", "state")
    directory = Path(base) / "hookguard" / "fix-journals"
    if create:
        try:
            directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        except OSError:
            return None
    try:
        info = os.lstat(directory)
    except OSError:
        return None
    if (not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid()
            or info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)):
        return None
    key = hashlib.sha256(os.fsencode(os.path.realpath(root))).hexdigest()[:32]
    return directory / f"{key}.json"


def journal_path(root: Path, *, create: bool = False) -> Path | None:
    """Where ``fix`` keeps the journal of the checkout at ``root``: in git's directory, else in
    a private per-user directory (``create``: making it); None when neither can be had. See
    the module's docstring."""
    trusted, _ = _git_journal(root)
    return trusted if trusted is not None else _user_journal(root, create=create)


def _keep(path: Path | None, journal: dict[str, Any]) -> None:
    if path is not None:  # no journal can be kept: see the module's docstring
        _write_journal(path, journal)


def _write_journal(path: Path, journal: dict[str, Any]) -> None:
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(8)}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "w") as handle:
            json.dump(journal, handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)  # replaces a link, never writes through one
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _stage(path: Path, data: bytes, mode: int) -> Path:
    staged = path.with_name(f".{path.name}.hgfix-{secrets.token_hex(8)}")
    fd = os.open(staged, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(staged, mode)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(staged)
        raise
    return staged


def write_files(root: Path, files: Sequence[FileResult], families: Sequence[set[str]]
                ) -> dict[str, str]:
    """Write ``files`` (all changed) family by family, all or nothing; the files left alone
    because they changed since ``fix`` read them, with the reason. Raises
    :class:`FixAborted`, having changed nothing, when something cannot be written."""
    by_path = {f.path: f for f in files}
    journal_file = journal_path(root, create=True)
    entries: list[dict[str, str]] = []
    staged: list[Path] = []
    journal: dict[str, Any] = {"version": 1, "state": "staging", "entries": entries,
                               "root": os.path.realpath(root)}
    directories = {(root / f.path).parent for f in files}
    if journal_file is not None:
        directories.add(journal_file.parent)
    for directory in sorted(directories):
        # Also as root, who may write anywhere: a directory without write permission is
        # read-only to ``fix`` (and would fail part-way for anyone else).
        if not os.stat(directory).st_mode & stat.S_IWUSR or not os.access(directory, os.W_OK):
            raise FixAborted(f"cannot write {directory}: the directory is read-only; "
                             "nothing was changed")
    try:
        _keep(journal_file, journal)
        for result in files:
            unsafe = unsafe_target(root, result.path)
            if unsafe is not None:  # became unsafe since it was read
                raise OSError(0, unsafe)
            target = root / result.path
            mode = stat.S_IMODE(target.stat().st_mode)
            temp = _stage(target, result.after, mode)
            staged.append(temp)
            entries.append({"path": result.path, "temp": temp.name,
                            "before": _digest(result.before), "after": _digest(result.after)})
            _keep(journal_file, journal)
        journal["state"] = "renaming"
        _keep(journal_file, journal)
    except BaseException as exc:  # an error, or Ctrl-C: nothing was renamed yet
        for temp in staged:
            with contextlib.suppress(OSError):
                os.unlink(temp)
        if journal_file is not None:
            with contextlib.suppress(OSError):
                os.unlink(journal_file)
        if not isinstance(exc, OSError):
            raise
        where = exc.filename or (journal_file.parent if journal_file else root)
        raise FixAborted(f"cannot write {where}: {exc.strerror or exc}; nothing was changed"
                         ) from None
    temps = {entry["path"]: root / Path(entry["path"]).parent / entry["temp"]
             for entry in entries}
    skipped: dict[str, str] = {}
    for family in families:
        moved = sorted(rel for rel in family
                       if _read(root / rel) != by_path[rel].before)
        if moved:
            reason = (f"{', '.join(moved)} changed while fix ran: nothing of this fix was "
                      "written; run fix again")
            for rel in family:
                skipped[rel] = reason
                with contextlib.suppress(OSError):
                    os.unlink(temps[rel])
            continue
        for rel in sorted(family):
            try:
                os.replace(temps[rel], root / rel)
            except OSError as exc:  # the journal stays: the next run completes the fix
                if journal_file is None:  # nothing can complete it: leave nothing staged
                    for temp in temps.values():
                        with contextlib.suppress(OSError):
                            os.unlink(temp)
                    raise UsageError(f"cannot replace {rel}: {exc.strerror or exc}; the "
                                     "files renamed before it stay renamed") from None
                raise UsageError(
                    f"cannot replace {rel}: {exc.strerror or exc}; run hookguard fix again to "
                    f"complete this fix (journal: {journal_file})"
                ) from None
    if journal_file is not None:
        os.unlink(journal_file)
    return skipped


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return None


def _read_journal(path: Path) -> dict[str, Any] | None:
    """The journal at ``path`` (a regular file, reached without following a link at its name),
    None when there is none; ValueError when it cannot be read as one."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ValueError(str(exc)) from None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode) or info.st_size > _JOURNAL_LIMIT:
            raise ValueError("not a regular file of a sensible size")
        journal = json.loads(handle.read(_JOURNAL_LIMIT + 1))
    if not isinstance(journal, dict):
        raise ValueError("not a journal")
    return journal


def recover(root: Path) -> list[str]:
    """Finish what an interrupted ``fix`` left (see the module's docstring); one note per thing
    done. Only the journal :func:`journal_path` names is read: a journal in the work tree is
    ignored with a note, never read, acted on or removed. A journal naming anything outside
    the checkout, or not written by ``fix``, is removed without acting on it."""
    journal_file, refused = _git_journal(root)
    notes = [f"ignored the fix journal {path}: it is in the work tree, where a commit can put "
             "one, and hookguard never acts on it (remove it)"
             for path in (root / WORK_TREE_JOURNAL, refused)
             if path is not None and os.path.lexists(path)]
    if journal_file is None:
        journal_file = _user_journal(root)
    if journal_file is None:
        return notes
    try:
        journal = _read_journal(journal_file)
        if journal is None:
            return notes
        state = journal["state"]
        entries = [(str(e["path"]), str(e["temp"]), str(e["before"]), str(e["after"]))
                   for e in journal["entries"]]
    except (OSError, ValueError, KeyError, TypeError):
        entries, state = [], "unreadable"
    completed = 0
    for rel, temp_name, before, after in entries:
        match = _STAGED.fullmatch(temp_name)
        if match is None or match.group(1) != Path(rel).name or unsafe_target(root, rel):
            notes.append(f"{journal_file}: ignored an entry for {rel!r} it cannot vouch for")
            continue
        target = root / rel
        temp = target.parent / temp_name
        staged = _read(temp) if temp.is_file() and not temp.is_symlink() else None
        if staged is None:
            continue
        current = _read(target)
        if state == "renaming" and _digest(staged) == after and current is not None and (
            _digest(current) == before
        ):
            os.replace(temp, target)
            completed += 1
            continue
        if state == "renaming" and current is not None and _digest(current) not in (
            before, after
        ):
            notes.append(f"{rel}: changed since an interrupted fix; left as it is")
        with contextlib.suppress(OSError):
            os.unlink(temp)
    with contextlib.suppress(OSError):
        os.unlink(journal_file)
    if completed:
        notes.append(f"completed an interrupted fix: {completed} "
                     f"file{'s' * (completed != 1)} written as that run planned")
    elif state == "staging" and entries:
        notes.append("removed what an interrupted fix had staged; no file had been changed")
    return notes
