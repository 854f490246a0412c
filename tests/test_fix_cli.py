"""``hookguard fix`` as the command line runs it: the rename the drift rule would reject,
``--staged`` after the pre-commit hook blocked a commit, ``--select``, ``--no-history`` and the
``--diff`` exit code. Real git repositories; the real CLI in a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from tests.conftest import GIT_ENV, GitRepo

BASE = """
class Base:
    def run(self):
        self.setup()

    def setup(self):
        self.ready = True
"""
CHILD = """
from pkg.base import Base


class Child(Base):
    def setup(self):
        self.ready = False
"""


def hookguard(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "hookguard", *args], cwd=cwd,
                          capture_output=True, text=True, check=False,
                          env={**os.environ, **GIT_ENV})


def renamed_repo(git_repo: Callable[..., GitRepo], new_base: str) -> GitRepo:
    repo = git_repo()
    repo.commit("Add base", {"pkg/__init__.py": "", "pkg/base.py": BASE, "pkg/child.py": CHILD})
    repo.commit("Rename setup to prepare", {"pkg/base.py": new_base})
    return repo


def findings(root: Path, *args: str) -> list[dict[str, object]]:
    proc = hookguard(root, "audit", "--format", "json", "--no-cache", *args)
    result: list[dict[str, object]] = json.loads(proc.stdout)["findings"]
    return result


def test_rename_adds_the_keywords_the_base_passes(git_repo: Callable[..., GitRepo]) -> None:
    repo = renamed_repo(git_repo, BASE.replace("self.setup()", "self.prepare(verbose=True)")
                        .replace("def setup(self)", "def prepare(self, verbose=False)"))
    assert [f["code"] for f in findings(repo.root)] == ["HG001"]
    proc = hookguard(repo.root, "fix", "--no-cache")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    text = (repo.root / "pkg/child.py").read_text()
    assert "    def prepare(self, *, verbose=None):\n" in text, text
    assert findings(repo.root) == []  # no HG002 on the renamed override


def test_rename_that_the_drift_rule_would_reject_is_held_back_as_unsafe(
    git_repo: Callable[..., GitRepo]
) -> None:
    """The plain rename would crash; the port of the base's signature is an unsafe fix, held
    back without ``--unsafe-fixes`` (``tests/test_fix_kinds.py`` applies it)."""
    repo = renamed_repo(git_repo, BASE.replace("self.setup()", "self.prepare(1, 2)")
                        .replace("def setup(self)", "def prepare(self, a, b)"))
    before = (repo.root / "pkg/child.py").read_text()
    proc = hookguard(repo.root, "fix", "--no-cache")
    assert proc.returncode == 1
    assert (
        "pkg/child.py:5: held back HG001 (unsafe fix, use --unsafe-fixes): renamed Child.setup "
        "to prepare, with the signature of Base.prepare: prepare(self, a, b), since Base.run "
        "calls self.prepare(...) (pkg/base.py:3), which Child.setup(self) cannot accept (takes "
        "0 positional arguments but 2 were given)"
    ) in proc.stdout, proc.stdout
    assert "1 fix held back as unsafe (use --unsafe-fixes)" in proc.stderr
    assert (repo.root / "pkg/child.py").read_text() == before
    explain = hookguard(repo.root, "explain", "HG001").stdout
    assert "would turn a dead override into a TypeError" in " ".join(explain.split())
    diff = hookguard(repo.root, "fix", "--diff", "--no-cache")
    assert diff.returncode == 0  # nothing it would change without --unsafe-fixes ...
    assert "# -    def setup(self):\n# +    def prepare(self, a, b):\n" in diff.stdout
    assert all(line.startswith("#") for line in diff.stdout.splitlines())  # ... shown only


def test_override_decorator_without_a_base_hook_says_so(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "r")
    repo.commit("add", {"m.py": "from typing_extensions import override\n\n\nclass B:\n"
                                "    def f(self): ...\n\n\nclass C(B):\n    @override\n"
                                "    def g(self): ...\n"})
    proc = hookguard(repo.root, "fix", "--no-cache")
    assert proc.returncode == 1
    assert ("m.py:10: refused HG001: @override, but no base class defines g: remove @override, "
            "or rename the method to the hook it was meant to override") in proc.stdout
    assert "removed, not renamed" not in proc.stdout


def test_select_and_no_history(git_repo: Callable[..., GitRepo]) -> None:
    repo = renamed_repo(git_repo, BASE.replace("setup", "prepare"))
    assert hookguard(repo.root, "fix", "--select", "HG0001").returncode == 2
    only_drift = hookguard(repo.root, "fix", "--no-cache", "--select", "HG002")
    assert only_drift.returncode == 0 and only_drift.stdout == ""
    no_history = hookguard(repo.root, "fix", "--no-cache", "--no-history")
    assert no_history.returncode == 0 and "def setup" in (repo.root / "pkg/child.py").read_text()
    fixed = hookguard(repo.root, "fix", "--no-cache", "--select", "stale-override")
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert "def prepare(self)" in (repo.root / "pkg/child.py").read_text()


def test_fix_staged_fixes_what_the_pre_commit_hook_found(
    git_repo: Callable[..., GitRepo]
) -> None:
    repo = git_repo()
    repo.commit("Add base", {"pkg/__init__.py": "", "pkg/base.py": BASE, "pkg/child.py": CHILD})
    repo.write({"pkg/base.py": BASE.replace("setup", "prepare")})
    repo.git("add", "pkg/base.py")
    blocked = hookguard(repo.root, "check", "--staged", "--no-cache")
    assert blocked.returncode == 1 and "pkg/child.py" in blocked.stdout
    # The rename is not in the history yet: a plain audit has no evidence of it.
    assert findings(repo.root) == []
    proc = hookguard(repo.root, "fix", "--staged", "--no-cache")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "pkg/child.py:5: fixed HG001: renamed Child.setup to prepare" in proc.stdout
    assert "git add pkg/child.py" in proc.stderr
    assert "def prepare(self)" in (repo.root / "pkg/child.py").read_text()
    repo.git("add", "pkg/child.py")
    assert hookguard(repo.root, "check", "--staged", "--no-cache").returncode == 0


def test_status_lines_escape_hostile_names(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "r")
    code = ("class A:\n    def f(self):\n        self.g(x=1)\n\n    def g(self, x=None): ...\n\n\n"
            "class B(A):\n    def g(self): ...\n")
    repo.commit("add", {"::error title=x::\x1b[31m.py": code})
    proc = hookguard(repo.root, "fix", "--no-cache")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == ("./::error title=x::\\x1b[31m.py:9: fixed HG002: added keyword-only "
                           "parameter x=None to B.g\n")
