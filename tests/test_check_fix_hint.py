"""A blocked commit says how to fix it (issue 26, item 10): when ``check --staged`` fails on
findings ``fix`` can fix, one line points to ``hookguard fix --staged`` (and, under pre-commit,
to the manual-stage ``hookguard-fix`` hook); following it lets the commit through."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from tests.conftest import GitRepo

BASE = ("class Manager:\n    def __init__(self):\n        self.build_tables()\n\n"
        "    def build_tables(self):\n        self.tables = []\n")
CHILD = ("from core.manager import Manager\n\n\nclass SparseManager(Manager):\n"
         "    def build_tables(self):\n        self.tables = [1]\n")
HINT = ("hookguard: to fix what it can, run: hookguard fix --staged; then git add the fixed "
        "files and commit again")


def hookguard(root: Path, *args: str, env: dict[str, str] | None = None
              ) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("PRE_COMMIT")}
    return subprocess.run([sys.executable, "-m", "hookguard", *args, "--no-cache"], cwd=root,
                          capture_output=True, text=True, check=False,
                          env={**environ, **(env or {})})


def renamed(git_repo: Callable[..., GitRepo]) -> GitRepo:
    """A repository whose staged change renames the hook an override elsewhere overrides."""
    repo = git_repo()
    repo.commit("Add manager", {"core/__init__.py": "", "core/manager.py": BASE,
                                "plugins/__init__.py": "", "plugins/sparse.py": CHILD})
    repo.write({"core/manager.py": BASE.replace("build_tables", "prepare_tables")})
    repo.git("add", "core/manager.py")
    return repo


def test_blocked_commit_points_to_fix_staged(git_repo: Callable[..., GitRepo]) -> None:
    repo = renamed(git_repo)
    proc = hookguard(repo.root, "check", "--staged", "--format", "plain")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "plugins/sparse.py:5:5: HG001" in proc.stdout
    lines = proc.stderr.splitlines()
    assert lines.count(HINT) == 1, proc.stderr
    assert lines[-1] == HINT and lines[-2].startswith("hookguard check (staged tree vs HEAD)")
    # Doing what it says lets the commit through.
    fixed = hookguard(repo.root, "fix", "--staged")
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    repo.git("add", "plugins/sparse.py")
    again = hookguard(repo.root, "check", "--staged")
    assert again.returncode == 0, again.stdout + again.stderr
    assert "fix --staged" not in again.stderr


def test_under_pre_commit_it_names_the_manual_hook(git_repo: Callable[..., GitRepo]) -> None:
    repo = renamed(git_repo)
    proc = hookguard(repo.root, "check", "--staged", env={"PRE_COMMIT": "1"})
    assert proc.returncode == 1
    assert ("hookguard: to fix what it can, run: hookguard fix --staged (or: pre-commit run "
            "--hook-stage manual hookguard-fix); then git add the fixed files and commit "
            "again") in proc.stderr.splitlines()


def test_every_format_keeps_stdout_clean(git_repo: Callable[..., GitRepo]) -> None:
    repo = renamed(git_repo)
    proc = hookguard(repo.root, "check", "--staged", "--format", "json")
    assert proc.returncode == 1
    assert json.loads(proc.stdout)["findings"], proc.stderr  # the line is on stderr
    assert HINT in proc.stderr.splitlines()
    rich = hookguard(repo.root, "check", "--staged", "--format", "rich")
    assert HINT in rich.stderr.splitlines() and "fix --staged" not in rich.stdout


def test_no_pointer_where_it_would_not_help(git_repo: Callable[..., GitRepo]) -> None:
    repo = renamed(git_repo)
    # --exit-zero: nothing is blocked; --base: fix --staged is not what fixes a range
    quiet = hookguard(repo.root, "check", "--staged", "--exit-zero")
    assert quiet.returncode == 0 and "fix --staged" not in quiet.stderr
    repo.git("commit", "-q", "-m", "Rename")
    ranged = hookguard(repo.root, "check", "--base", "HEAD~1")
    assert ranged.returncode == 1 and "fix --staged" not in ranged.stderr
    # A file that does not parse fails the check, but fix cannot mend it.
    (repo.root / "core" / "broken.py").write_text("def f(:\n")
    repo.git("add", "core/broken.py")
    broken = hookguard(repo.root, "check", "--staged")
    assert broken.returncode == 1, broken.stdout + broken.stderr
    assert "input problem: syntax error" in broken.stdout
    assert "fix --staged" not in broken.stderr
    # A passing check says nothing of it either.
    repo.git("rm", "-q", "--cached", "core/broken.py")
    clean = hookguard(repo.root, "check", "--staged")
    assert clean.returncode == 0 and "fix --staged" not in clean.stderr
