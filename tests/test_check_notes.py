"""``hookguard check`` notes name real hook changes only: not pytest test methods, not a
method moved up to a parent class (issue 13, item 8)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from tests.conftest import GitRepo

TESTS = """
class TestBase:
    def test_one(self):
        assert True

    def test_two(self):
        assert True


class TestChild(TestBase):
    def test_three(self):
        assert True
"""
FAMILY = """
class Root:
    pass


class Base(Root):
    def run(self):
        self.step()

    def step(self):
        pass

    def helper(self):
        return 1


class Sub(Base):
    def step(self):
        pass
"""
MOVED_UP = """
class Root:
    def helper(self):
        return 1


class Base(Root):
    def run(self):
        self.step()

    def step(self):
        pass


class Sub(Base):
    def step(self):
        pass
"""


def check_staged(root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "hookguard", "check", "--staged", "--no-cache"],
                          cwd=root, capture_output=True, text=True, check=False)


def stage(repo: GitRepo, files: dict[str, str]) -> None:
    repo.write(files)
    repo.git("add", "-A")


def test_removed_test_methods_are_not_hook_changes(git_repo: Callable[..., GitRepo]) -> None:
    repo = git_repo()
    repo.commit("tests", {"tests/test_x.py": TESTS})
    stage(repo, {"tests/test_x.py": TESTS.replace(
        "    def test_one(self):\n        assert True\n\n", "")})
    proc = check_staged(repo.root)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "hook change" not in proc.stdout


def test_moved_up_method_is_not_removed(git_repo: Callable[..., GitRepo]) -> None:
    repo = git_repo()
    repo.commit("family", {"fam.py": FAMILY})
    stage(repo, {"fam.py": MOVED_UP})
    proc = check_staged(repo.root)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "hook change" not in proc.stdout


def test_a_real_hook_rename_is_still_a_note(git_repo: Callable[..., GitRepo]) -> None:
    repo = git_repo()
    repo.commit("family", {"fam.py": FAMILY})
    stage(repo, {"fam.py": FAMILY.replace("self.step()", "self.do_step()").replace(
        "    def step(self):\n        pass\n\n    def helper", "    def do_step(self):\n"
        "        pass\n\n    def helper")})
    proc = check_staged(repo.root)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "note: hook change: fam.Base.step renamed to do_step" in proc.stdout
    assert "fam.py:17:5: HG001" in proc.stdout
