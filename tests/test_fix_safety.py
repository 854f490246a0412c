"""Issue 11, case 9 (and 6.3): ``hookguard fix`` is safe to interrupt and to race. A family
is written whole or not at all; an interrupted run is completed by the next one; a file edited
while ``fix`` runs is refused, not reverted; it never writes outside the checkout, through a
symbolic link, or to a read-only file or directory; it keeps the whitespace it does not touch.
Real repositories, real ``fix`` runs; a crash is a real SIGKILL or the state one leaves."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from hookguard.engine import Options, audit
from hookguard.fix import fix_findings
from hookguard.fix.apply import FileResult, fix_file, journal_path, write_files
from hookguard.fix.plan import plan_fixes
from tests.conftest import GitRepo

BASE_V1 = """
class Base:
    def run(self):
        self.setup()

    def setup(self):
        self.started = True
"""
CHILD = """
from pkg.base import Base


class Child(Base):
    def setup(self):
        self.ready = True
"""
GRAND = """
from pkg.child import Child


class Grand(Child):
    def setup(self):
        super().setup()
"""


@pytest.fixture
def family(tmp_path: Path) -> Iterator[GitRepo]:
    """Base.setup renamed to prepare: Child.setup (pkg/) and Grand.setup (pkg/sub/), which
    overrides it, must be renamed together."""
    repo = GitRepo(tmp_path / "repo")
    repo.commit("base", {"pkg/__init__.py": "", "pkg/base.py": BASE_V1, "pkg/child.py": CHILD,
                         "pkg/sub/__init__.py": "", "pkg/sub/grand.py": GRAND})
    repo.commit("Rename setup to prepare", {"pkg/base.py": BASE_V1.replace("setup", "prepare")})
    yield repo
    for path in (repo.root / "pkg", repo.root / "pkg" / "sub"):
        path.chmod(0o755)  # let pytest remove it


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and ".git" not in p.parts}


def _fix(root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "hookguard", "fix", "--no-cache"], cwd=root,
                          capture_output=True, text=True, timeout=300)


def _expected(repo: GitRepo, tmp_path: Path) -> dict[str, bytes]:
    """The tree a complete, uninterrupted fix produces (in a clone)."""
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(repo.root), str(clone)], check=True)
    assert _fix(clone).returncode == 0
    fixed = _files(clone)
    assert b"def prepare" in fixed["pkg/child.py"] and b"def prepare" in fixed["pkg/sub/grand.py"]
    return fixed


def _results(root: Path) -> list[FileResult]:
    result = audit([root], Options(use_cache=False))
    fixes, _ = plan_fixes(result.findings, result.project)
    by_file: dict[str, list] = {}
    for fix in fixes:
        by_file.setdefault(fix.path, []).append(fix)
    out = []
    for rel, items in sorted(by_file.items()):
        _, file_result = fix_file(root, rel, items)
        assert file_result is not None and file_result.changed
        out.append(file_result)
    assert [r.path for r in out] == ["pkg/child.py", "pkg/sub/grand.py"]
    return out


def test_read_only_directory_is_a_clear_error_and_nothing_is_written(family: GitRepo) -> None:
    """Case 6.3: it failed after some files were already rewritten (or, as root, wrote)."""
    before = _files(family.root)
    (family.root / "pkg" / "sub").chmod(0o555)
    out = _fix(family.root)
    assert out.returncode == 2, out.stderr
    errors = [line for line in out.stderr.splitlines() if "error" in line]
    assert errors == [f"hookguard: error: cannot write {family.root / 'pkg' / 'sub'}: the "
                      "directory is read-only; nothing was changed"]
    assert "Traceback" not in out.stderr
    assert _files(family.root) == before
    assert not journal_path(family.root).exists()


def test_read_only_file_is_refused_with_its_family(family: GitRepo) -> None:
    before = _files(family.root)
    grand = family.root / "pkg" / "sub" / "grand.py"
    grand.chmod(0o444)
    out = _fix(family.root)
    assert out.returncode == 1
    assert "pkg/sub/grand.py is read-only" in out.stdout
    assert _files(family.root) == before  # Child.setup is not renamed without Grand.setup
    assert stat.S_IMODE(grand.stat().st_mode) == 0o444


def test_never_writes_through_a_symbolic_link(family: GitRepo, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "grand.py").write_text((family.root / "pkg/sub/grand.py").read_text())
    (family.root / "pkg/sub/grand.py").unlink()
    (family.root / "pkg/sub/grand.py").symlink_to(outside / "grand.py")
    before = _files(outside)
    out = _fix(family.root)
    # A link that leads out of the checkout is not even read (issue 24): nothing of it is in the
    # model, so nothing is written through it.
    assert "pkg/sub/grand.py is a symbolic link" not in out.stdout
    assert _files(outside) == before
    assert (family.root / "pkg/sub/grand.py").is_symlink()


def test_never_writes_through_a_linked_directory(family: GitRepo, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    (family.root / "pkg/sub").rename(outside)
    (family.root / "pkg/sub").symlink_to(outside)
    before = _files(outside)
    _fix(family.root)
    assert _files(outside) == before  # (the linked folder leads out: never read, never written)


def test_an_edit_made_while_fix_runs_is_refused_not_reverted(family: GitRepo) -> None:
    results = _results(family.root)
    grand = family.root / "pkg/sub/grand.py"
    edited = grand.read_text() + "\n# edited while fix was running\n"
    grand.write_text(edited)  # after fix read it, before it writes
    skipped = write_files(family.root, results, [{"pkg/child.py", "pkg/sub/grand.py"}])
    assert set(skipped) == {"pkg/child.py", "pkg/sub/grand.py"}
    assert "pkg/sub/grand.py changed while fix ran" in skipped["pkg/child.py"]
    assert grand.read_text() == edited
    assert b"def setup" in (family.root / "pkg/child.py").read_bytes()
    assert sorted(p.name for p in grand.parent.iterdir()) == ["__init__.py", "grand.py"]
    assert not journal_path(family.root).exists()


def test_fix_findings_reports_the_refusal(family: GitRepo) -> None:
    result = audit([family.root], Options(use_cache=False))
    report = fix_findings(family.root, result.findings, project=result.project)
    assert [o.status for o in report.outcomes] == ["fixed", "fixed"]
    assert b"def prepare" in (family.root / "pkg/sub/grand.py").read_bytes()


def test_interrupted_during_the_renames_is_completed_by_the_next_run(
    family: GitRepo, tmp_path: Path
) -> None:
    expected = _expected(family, tmp_path)
    results = _results(family.root)
    from hookguard.fix.apply import _digest, _stage, _write_journal

    journal = journal_path(family.root)
    entries = []
    for result in results:
        temp = _stage(family.root / result.path, result.after, 0o644)
        entries.append({"path": result.path, "temp": temp.name,
                        "before": _digest(result.before), "after": _digest(result.after)})
    _write_journal(journal, {"version": 1, "state": "renaming", "entries": entries})
    first = family.root / "pkg/child.py"
    os.replace(first.parent / entries[0]["temp"], first)  # killed after the first rename
    out = _fix(family.root)
    assert "completed an interrupted fix: 1 file written as that run planned" in out.stderr
    assert "fixed HG001" not in out.stdout  # nothing left to rename
    assert "Traceback" not in out.stderr
    assert _files(family.root) == expected
    assert not journal.exists()


def test_interrupted_while_staging_changes_nothing(family: GitRepo, tmp_path: Path) -> None:
    expected = _expected(family, tmp_path)
    results = _results(family.root)
    from hookguard.fix.apply import _digest, _stage, _write_journal

    temp = _stage(family.root / results[0].path, results[0].after, 0o644)
    _write_journal(journal_path(family.root), {"version": 1, "state": "staging", "entries": [
        {"path": results[0].path, "temp": temp.name, "before": _digest(results[0].before),
         "after": _digest(results[0].after)}]})
    out = _fix(family.root)
    assert "removed what an interrupted fix had staged" in out.stderr
    assert _files(family.root) == expected


@pytest.mark.parametrize("delay", [0.8, 1.6])
def test_sigkill_at_any_moment_then_rerun_gives_the_whole_fix(
    family: GitRepo, tmp_path: Path, delay: float
) -> None:
    expected = _expected(family, tmp_path)
    proc = subprocess.Popen([sys.executable, "-m", "hookguard", "fix", "--no-cache"],
                            cwd=family.root, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    time.sleep(delay)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    child = (family.root / "pkg/child.py").read_bytes()
    grand = (family.root / "pkg/sub/grand.py").read_bytes()
    if not journal_path(family.root).exists():  # no run in progress: never half-renamed
        assert (b"def prepare" in child) == (b"def prepare" in grand)
    assert "Traceback" not in _fix(family.root).stderr
    assert _files(family.root) == expected


def test_planted_journal_cannot_move_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A journal naming a file outside the checkout, even where fix keeps its journal (for a
    checkout without .git, a per-user directory): ignored. (A journal in the work tree is
    never read at all: tests/test_write_safety.py.)"""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    root = tmp_path / "checkout"
    root.mkdir()
    victim = tmp_path / "victim.py"
    victim.write_text("original\n")
    (root / ".victim.py.hgfix-0123456789abcdef").write_text("payload\n")
    journal = journal_path(root, create=True)
    assert journal is not None and not journal.is_relative_to(root)
    journal.write_text('{"version": 1, "state": "renaming", "entries": [{"path": '
                       '"../victim.py", "temp": ".victim.py.hgfix-0123456789abcdef", '
                       '"before": "x", "after": "y"}]}')
    from hookguard.fix.apply import recover

    notes = recover(root)
    assert victim.read_text() == "original\n"
    assert any("cannot vouch for" in n for n in notes)
    assert not journal.exists()


def test_mixed_tabs_and_spaces_keep_every_blank_line(tmp_path: Path) -> None:
    """Case 9: on a file mixing tabs and spaces, fix deleted unrelated blank lines."""
    root = tmp_path / "repo"
    root.mkdir()
    (root / "hooks.toml").write_text('[[hook]]\nclass = "base.Base"\nmethod = "new"\n'
                                     'renamed_from = ["old"]\n')
    (root / "base.py").write_text("class Base:\n    def new(self):\n        pass\n")
    source = ("from base import Base\n\nclass C(Base):\n\tdef old(self):\n\t\tx = 1\n\n"
              "        \n\t\treturn x\n\n\tdef other(self):\n\t\tpass\n\n\n\n    # trailing\n")
    (root / "c.py").write_text(source)
    out = subprocess.run([sys.executable, "-m", "hookguard", "fix", "--no-cache", "--contracts",
                          "hooks.toml"], cwd=root, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert (root / "c.py").read_text() == source.replace("def old(", "def new(")


def test_diff_still_shows_the_fix_of_a_read_only_file(family: GitRepo) -> None:
    """--diff writes nothing, so a read-only file is no reason to hide its fix."""
    grand = family.root / "pkg" / "sub" / "grand.py"
    grand.chmod(0o444)
    out = subprocess.run([sys.executable, "-m", "hookguard", "fix", "--no-cache", "--diff"],
                         cwd=family.root, capture_output=True, text=True, timeout=300)
    assert "+++ b/pkg/sub/grand.py" in out.stdout and "+    def prepare(self):" in out.stdout
    assert b"def setup" in grand.read_bytes()


def test_never_writes_through_a_symbolic_link_inside_the_checkout(family: GitRepo) -> None:
    """A link that stays inside the checkout is read (its file is audited), and still never
    written through: the family is refused whole."""
    inside = family.root / "vendored"
    inside.mkdir()
    (inside / "grand.py").write_text((family.root / "pkg/sub/grand.py").read_text())
    (family.root / "pkg/sub/grand.py").unlink()
    (family.root / "pkg/sub/grand.py").symlink_to(inside / "grand.py")
    before = (inside / "grand.py").read_bytes()
    out = _fix(family.root)
    assert "pkg/sub/grand.py is a symbolic link" in out.stdout, out.stdout
    assert (inside / "grand.py").read_bytes() == before
    assert b"def setup" in (family.root / "pkg/child.py").read_bytes()
