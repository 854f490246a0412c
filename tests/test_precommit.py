"""The real ``pre-commit`` tool, installed from PyPI, running this checkout's hook."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import GIT_ENV, ROOT, GitRepo

pytestmark = pytest.mark.skipif(
    shutil.which("pre-commit", path=str(Path(sys.executable).parent) + os.pathsep
                 + os.environ.get("PATH", "")) is None,
    reason="the pre-commit tool is not installed (pip install '.[test]')",
)

BASE = "class Manager:\n    def __init__(self):\n        self.build_tables()\n\n" \
       "    def build_tables(self):\n        self.tables = []\n"
CHILD = "from core.manager import Manager\n\n\nclass SparseManager(Manager):\n" \
        "    def build_tables(self):\n        self.tables = [1]\n"


def test_staged_rename_fails_the_commit(
    git_repo: Callable[..., GitRepo], tmp_path: Path
) -> None:
    try:
        rev = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True,
                             text=True, check=True).stdout.strip()
    except subprocess.CalledProcessError:
        pytest.skip("this checkout is not a git repository with commits")
    if not (ROOT / ".pre-commit-hooks.yaml").exists():
        pytest.fail(".pre-commit-hooks.yaml is missing")
    repo = git_repo()
    repo.commit("Add manager", {"core/__init__.py": "", "core/manager.py": BASE,
                                "plugins/__init__.py": "", "plugins/sparse.py": CHILD})
    repo.write({".pre-commit-config.yaml":
                f"repos:\n- repo: {ROOT}\n  rev: {rev}\n  hooks:\n  - id: hookguard\n"})
    repo.git("add", ".pre-commit-config.yaml")
    repo.git("commit", "-q", "-m", "Add pre-commit config")
    env = {**os.environ, **GIT_ENV, "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home")}
    bindir = str(Path(sys.executable).parent)
    env["PATH"] = bindir + os.pathsep + env.get("PATH", "")
    subprocess.run(["pre-commit", "install"], cwd=repo.root, env=env, check=True,
                   capture_output=True)
    repo.write({"core/manager.py": BASE.replace("build_tables", "prepare_tables")})
    repo.git("add", "core/manager.py")
    commit = subprocess.run(["git", "commit", "-m", "Rename build_tables"], cwd=repo.root,
                            env=env, capture_output=True, text=True)
    output = commit.stdout + commit.stderr
    assert commit.returncode != 0, output
    assert "plugins/sparse.py" in output and "prepare_tables" in output
    assert repo.git("log", "--format=%s", "-1").strip() == "Add pre-commit config"
    # Staging the subclass fix too lets the commit through.
    repo.write({"plugins/sparse.py": CHILD.replace("build_tables", "prepare_tables")})
    repo.git("add", "plugins/sparse.py")
    ok = subprocess.run(["git", "commit", "-m", "Rename build_tables"], cwd=repo.root, env=env,
                        capture_output=True, text=True)
    assert ok.returncode == 0, ok.stdout + ok.stderr


def readme_hook_config() -> str:
    """The ``.pre-commit-config.yaml`` block of the README's pre-commit paragraph."""
    text = (ROOT / "README.md").read_text()
    section = text[text.index("As a pre-commit hook"):]
    start = section.index("```yaml\n") + len("```yaml\n")
    return section[start:section.index("```", start)]


def test_readme_snippet_is_true(git_repo: Callable[..., GitRepo], tmp_path: Path) -> None:
    """The README's snippet, as written, blocks the rename; ``fix --staged`` then repairs it
    and the commit goes through. It names no tag (none exists) and no network repository."""
    config = readme_hook_config()
    assert "rev:" not in config and "repo: local" in config
    for tag in ("v0.1.0", "v0.1"):
        assert subprocess.run(["git", "rev-parse", "-q", "--verify", f"refs/tags/{tag}"],
                              cwd=ROOT, capture_output=True).returncode != 0
    repo = git_repo()
    repo.commit("Add manager", {"core/__init__.py": "", "core/manager.py": BASE,
                                "plugins/__init__.py": "", "plugins/sparse.py": CHILD,
                                ".pre-commit-config.yaml": config})
    env = {**os.environ, **GIT_ENV, "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home")}
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    subprocess.run(["pre-commit", "install"], cwd=repo.root, env=env, check=True,
                   capture_output=True)
    repo.write({"core/manager.py": BASE.replace("build_tables", "prepare_tables")})
    repo.git("add", "core/manager.py")
    blocked = subprocess.run(["git", "commit", "-m", "Rename"], cwd=repo.root, env=env,
                             capture_output=True, text=True)
    assert blocked.returncode != 0 and "plugins/sparse.py" in blocked.stdout + blocked.stderr
    fixed = subprocess.run(["hookguard", "fix", "--staged"], cwd=repo.root, env=env,
                           capture_output=True, text=True)
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    repo.git("add", "plugins/sparse.py")
    ok = subprocess.run(["git", "commit", "-m", "Rename"], cwd=repo.root, env=env,
                        capture_output=True, text=True)
    assert ok.returncode == 0, ok.stdout + ok.stderr
