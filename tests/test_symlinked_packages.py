"""Links to folders inside the checkout are followed (issue 26, item 8): the package under the
link is parsed under the link's own module name, as Python imports it. Links that lead out of
the checkout, or into its git directory, are not followed, and a loop of links ends."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from hookguard.config import Config
from hookguard.engine import Options, audit
from hookguard.findings import Severity
from hookguard.git.repo import Repo
from hookguard.model.sources import WorktreeSnapshot
from tests.conftest import GitRepo, write_tree

BASE = """
class Base:
    def run(self):
        self.hook(1, scale=2)

    def hook(self, x, scale=1):
        return x
"""

# Two ways to name the linked package's class: both resolved only through the link.
IMPL = """
from app.shared.base import Base
from app.shared import base as b2


class Impl(Base):
    def hook(self, x):
        return x


class Impl2(b2.Base):
    pass
"""

FILES = {"libs/shared/__init__.py": "", "libs/shared/base.py": BASE,
         "app/__init__.py": "", "app/impl.py": IMPL}


def _link(root: Path, link: str, target: str) -> None:
    os.symlink(target, root / link, target_is_directory=True)


def _cli(root: Path, *args: str) -> tuple[int, dict[str, object]]:
    proc = subprocess.run(
        [sys.executable, "-m", "hookguard", "audit", "--no-cache", "--format", "json", *args],
        cwd=root, capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode in (0, 1), proc.stderr
    report: dict[str, object] = json.loads(proc.stdout)
    return proc.returncode, report


def _listed(root: Path) -> list[str]:
    return WorktreeSnapshot(root, Repo.discover(root), Config()).paths()


def _checkout(make: Callable[..., GitRepo], commit_link: bool = True) -> GitRepo:
    repo = make()
    repo.write(FILES)
    _link(repo.root, "app/shared", "../libs/shared")
    if commit_link:
        repo.commit("init")
    else:
        repo.git("add", "libs", "app/__init__.py", "app/impl.py")
        repo.git("commit", "-q", "-m", "init")
    return repo


@pytest.mark.parametrize("commit_link", [True, False], ids=["tracked", "untracked"])
def test_a_linked_package_resolves_under_the_links_name(
    git_repo: Callable[..., GitRepo], commit_link: bool
) -> None:
    repo = _checkout(git_repo, commit_link)
    # git lists the link as one entry: the files under it are listed under the link's path
    assert "app/shared" in repo.git("ls-files", "--cached", "--others", "--exclude-standard")
    assert _listed(repo.root) == [
        "app/__init__.py", "app/impl.py", "app/shared/__init__.py", "app/shared/base.py",
        "libs/shared/__init__.py", "libs/shared/base.py",
    ]
    code, report = _cli(repo.root)
    assert report["errors"] == []  # before: two "cannot resolve base class" problems
    findings = report["findings"]
    assert isinstance(findings, list)
    assert [(f["path"], f["code"], f["symbol"]) for f in findings] == [
        ("app/impl.py", "HG002", "app.impl.Impl.hook")
    ]
    # the base's call is found in the package under its link's name
    assert "Base.run (app/shared/base.py:3)" in findings[0]["message"]
    assert code == 1


def test_a_linked_package_without_git(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "plain", FILES)
    _link(root, "app/shared", "../libs/shared")
    result = audit([root], Options(use_cache=False))
    assert result.errors == []
    assert [f.symbol for f in result.findings] == ["app.impl.Impl.hook"]
    assert "app/shared/base.py" in _listed(root)


def test_the_cache_and_a_warm_run_agree(git_repo: Callable[..., GitRepo]) -> None:
    repo = _checkout(git_repo)
    cold = audit([repo.root], Options())
    warm = audit([repo.root], Options())
    assert [f.symbol for f in cold.findings] == [f.symbol for f in warm.findings] == [
        "app.impl.Impl.hook"
    ]
    assert cold.errors == warm.errors == []
    # an edit made through the real folder is seen under the link too
    base = repo.root / "libs/shared/base.py"
    base.write_text(base.read_text().replace("1, scale=2", "1"))
    after = audit([repo.root], Options())
    assert after.findings == [] and after.errors == []


def test_nested_links_are_followed(git_repo: Callable[..., GitRepo]) -> None:
    repo = git_repo()
    repo.write({**FILES, "libs/core/__init__.py": "", "libs/core/base.py": BASE,
                "libs/shared/base.py": "from app.shared.core.base import Base\n"})
    _link(repo.root, "app/shared", "../libs/shared")
    _link(repo.root, "libs/shared/core", "../core")
    repo.commit("init")
    listed = _listed(repo.root)
    assert "app/shared/core/base.py" in listed and "libs/shared/core/base.py" in listed
    code, report = _cli(repo.root)
    assert report["errors"] == [] and code == 1
    assert [f["symbol"] for f in report["findings"]] == ["app.impl.Impl.hook"]


OUTSIDE = """
class Secret:
    def leak(self):
        return "outside-secret"
"""


def test_links_out_of_the_checkout_are_not_followed(
    tmp_path: Path, git_repo: Callable[..., GitRepo]
) -> None:
    outside = write_tree(tmp_path / "outside", {"shared/__init__.py": "",
                                                "shared/base.py": BASE + OUTSIDE})
    repo = git_repo()
    repo.write({"app/__init__.py": "", "app/impl.py": IMPL})
    _link(repo.root, "app/shared", str(outside / "shared"))  # absolute
    _link(repo.root, "app/relative", os.path.relpath(outside / "shared", repo.root / "app"))
    _link(repo.root, "app/gitdir", "../.git")  # the git directory: never
    repo.commit("init")
    (repo.root / ".git" / "hooks" / "x.py").write_text(OUTSIDE)
    assert _listed(repo.root) == ["app/__init__.py", "app/impl.py"]
    plain = write_tree(tmp_path / "plain", {"app/__init__.py": "", "app/impl.py": IMPL})
    _link(plain, "app/shared", str(outside / "shared"))
    assert _listed(plain) == ["app/__init__.py", "app/impl.py"]
    code, report = _cli(repo.root)
    assert "outside-secret" not in json.dumps(report) and "Secret" not in json.dumps(report)
    errors = report["errors"]
    assert isinstance(errors, list)
    assert [e["path"] for e in errors] == ["app/impl.py", "app/impl.py"]
    assert all("cannot resolve base class" in e["message"] for e in errors)
    assert report["findings"] == [] and code == 0


@pytest.mark.parametrize("git", [True, False], ids=["git", "no-git"])
def test_loops_of_links_end(tmp_path: Path, git: bool) -> None:
    files = {"a/__init__.py": "", "a/x.py": BASE, "b/__init__.py": "", "b/y.py": "Y = 1\n"}
    if git:
        repo = GitRepo(tmp_path / "repo")
        repo.write(files)
        root = repo.root
    else:
        root = write_tree(tmp_path / "repo", files)
    _link(root, "a/self", ".")
    _link(root, "a/up", "..")
    _link(root, "a/up2", "../../repo")
    _link(root, "a/to_b", "../b")
    _link(root, "b/to_a", "../a")  # a/to_b/to_a would be a again
    if git:
        repo.commit("init")
    listed = _listed(root)
    assert listed == ["a/__init__.py", "a/to_b/__init__.py", "a/to_b/y.py", "a/x.py",
                      "b/__init__.py", "b/to_a/__init__.py", "b/to_a/x.py", "b/y.py"]
    result = audit([root], Options(use_cache=False))
    assert result.errors == [] and result.findings == []


LIMNORIA_LIKE = {
    "src/__init__.py": "",
    "src/registry.py": BASE,
    "src/conf.py": """
from supybot.registry import Base


class Channel(Base):
    def hook(self, x):
        return x
""",
}


def test_a_finding_in_a_linked_package_is_reported_once(tmp_path: Path) -> None:
    """Limnoria's ``supybot -> src`` (first contact, round 19): the package is read under both
    names, so that ``from supybot.registry import Value`` resolves, but the finding in
    ``src/conf.py`` is one finding, reported at the real file."""
    root = write_tree(tmp_path / "repo", LIMNORIA_LIKE)
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    _link(root, "supybot", "src")
    result = audit([root], Options(use_cache=False, history=False))
    assert {"src/conf.py", "supybot/conf.py"} <= set(result.project.files)
    drifts = [f for f in result.findings if f.code == "HG002"]
    assert [(f.path, f.line) for f in drifts] == [("src/conf.py", 5)], drifts
    assert drifts[0].severity is Severity.ERROR
