"""A warm run is a cold run (issue 24, item 1): whatever the cache holds, a run's findings are
the ones ``--no-cache`` gives for the same checkout, configuration and history."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from hookguard.engine import Options, audit
from tests.conftest import GitRepo


@pytest.fixture(autouse=True)
def private_key_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("HOOKGUARD_CACHE_DIR", raising=False)


def _verdict(root: Path, use_cache: bool) -> list[tuple[str, str, int, str, str]]:
    result = audit([root], Options(use_cache=use_cache, workers=1))
    return [(f.code, f.path, f.line, str(f.severity), f.message) for f in result.findings]


BASE = """
class Base:
    def run(self):
        self.hook(1)

    def hook(self, x):
        pass
"""
RENAMED = BASE.replace("self.hook(1)", "self.new_hook(1)").replace("def hook", "def new_hook")
SUB = """
from pkg.base import Base

class Sub(Base):
    def hook(self, x):
        return x
"""


def test_a_commit_that_leaves_the_files_as_they_were_is_seen(
    git_repo: Callable[..., GitRepo],
) -> None:
    """The rename is made in the working tree and audited, then committed: the files are the
    same bytes, the history is not. The history answer of the first run (no rename in HEAD's
    history) used to be reused for the second (``All checks passed!``)."""
    repo = git_repo()
    repo.commit("init", {"pkg/__init__.py": "", "pkg/base.py": BASE, "pkg/sub.py": SUB})
    assert _verdict(repo.root, True) == _verdict(repo.root, False) == []
    repo.write({"pkg/base.py": RENAMED})
    assert _verdict(repo.root, True) == _verdict(repo.root, False)
    repo.commit("rename the hook")
    cold = _verdict(repo.root, False)
    assert [code for code, *_ in cold] == ["HG001"]
    assert _verdict(repo.root, True) == cold


def test_switching_branches_back_and_forth(git_repo: Callable[..., GitRepo]) -> None:
    repo = git_repo()
    repo.commit("init", {"pkg/__init__.py": "", "pkg/base.py": BASE, "pkg/sub.py": SUB})
    repo.git("branch", "old")
    repo.commit("rename the hook", {"pkg/base.py": RENAMED})
    for branch in ("main", "old", "main", "old"):
        repo.git("checkout", "-q", branch)
        assert _verdict(repo.root, True) == _verdict(repo.root, False)
