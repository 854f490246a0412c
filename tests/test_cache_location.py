"""Where the cache lives, as the README says: ``.hookguard_cache/`` at the repository root,
ignored by git on its own; ``--no-cache`` writes nothing; ``HOOKGUARD_CACHE_DIR`` moves it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import GitRepo

CODE = ("class A:\n    def f(self):\n        self.g(1)\n\n    def g(self, x): ...\n\n\n"
        "class B(A):\n    def g(self): ...\n")
# CODE's first version: the base's call fitted B.g, until the hook gained ``x`` (a drift,
# with the history that shows it: an override no call ever fitted is only a warning)
FITTED = CODE.replace("self.g(1)", "self.g()").replace("def g(self, x)", "def g(self)")


def drifted(repo: GitRepo) -> None:
    repo.commit("add", {"m.py": FITTED})
    repo.commit("g takes x", {"m.py": CODE})


def audit(root: Path, *args: str, env: dict[str, str] | None = None) -> list[str]:
    proc = subprocess.run([sys.executable, "-m", "hookguard", "audit", "--format", "json", *args],
                          cwd=root, capture_output=True, text=True, check=False,
                          env={**os.environ, **(env or {})})
    assert proc.returncode == 1, proc.stderr
    return [f["code"] for f in json.loads(proc.stdout)["findings"]]


def test_cache_folder_ignores_itself(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "r")
    drifted(repo)
    env = {k: v for k, v in os.environ.items() if k != "HOOKGUARD_CACHE_DIR"}
    assert audit(repo.root, "--no-cache", env=env) == ["HG002"]
    assert not (repo.root / ".hookguard_cache").exists()
    assert audit(repo.root, env=env) == ["HG002"]
    cache = repo.root / ".hookguard_cache"
    assert (cache / ".gitignore").read_text() == "*\n"
    tag = (cache / "CACHEDIR.TAG").read_text()
    assert tag.startswith("Signature: 8a477f597d28d172789f06886806bc55")
    assert repo.git("status", "--porcelain") == ""  # nothing to commit, no .gitignore entry


def test_hookguard_cache_dir_moves_it(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "r")
    drifted(repo)
    moved = tmp_path / "shared" / "caches"
    env = {"HOOKGUARD_CACHE_DIR": str(moved)}
    assert audit(repo.root, env=env) == ["HG002"]
    assert audit(repo.root, env=env) == ["HG002"]  # warm
    assert not (repo.root / ".hookguard_cache").exists()
    (folder,) = moved.iterdir()
    assert folder.name.startswith("r-") and (folder / "CACHEDIR.TAG").exists()
    assert any(p.name.startswith("records-") for p in folder.iterdir())
