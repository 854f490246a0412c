"""pre-commit's CI modes (issue 26, item 2), with the real pre-commit tool and real git.

``pre-commit run --all-files`` and ``pre-commit run --from-ref A --to-ref B`` reported Passed
over a commit that broke an override, because the hook ran ``check --staged`` and nothing was
staged. The hook now runs ``hookguard pre-commit``, which checks the range pre-commit gives
(``PRE_COMMIT_FROM_REF``/``PRE_COMMIT_TO_REF``), the staged change when there is one, and the
whole checkout when nothing is staged."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from hookguard.commands.precommit import Mode, choose, refs_from
from tests.conftest import GIT_ENV, ROOT, GitRepo
from tests.test_precommit import BASE, CHILD, readme_hook_config

BIN = str(Path(sys.executable).parent)
needs_pre_commit = pytest.mark.skipif(
    shutil.which("pre-commit", path=BIN + os.pathsep + os.environ.get("PATH", "")) is None,
    reason="the pre-commit tool is not installed (pip install '.[test]')",
)
RENAMED = BASE.replace("build_tables", "prepare_tables")
OTHER = "class Unrelated:\n    def run(self):\n        return 1\n"


def env_for(tmp_path: Path) -> dict[str, str]:
    env = {**os.environ, **GIT_ENV, "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home")}
    for name in ("PRE_COMMIT_FROM_REF", "PRE_COMMIT_TO_REF", "PRE_COMMIT_SOURCE",
                 "PRE_COMMIT_ORIGIN", "PRE_COMMIT"):
        env.pop(name, None)
    env["PATH"] = BIN + os.pathsep + env.get("PATH", "")
    return env


def history(git_repo: Callable[..., GitRepo]) -> tuple[GitRepo, list[str]]:
    """main: the family and the README's hook config; a rename that leaves the subclass's
    override stale (committed without the hook, as a merged pull request would be); then an
    unrelated file."""
    repo = git_repo()
    first = repo.commit("Add manager", {
        "core/__init__.py": "", "core/manager.py": BASE, "plugins/__init__.py": "",
        "plugins/sparse.py": CHILD, ".pre-commit-config.yaml": readme_hook_config(),
    })
    rename = repo.commit("Rename build_tables", {"core/manager.py": RENAMED})
    other = repo.commit("Add an unrelated module", {"core/other.py": OTHER})
    return repo, [first, rename, other]


def pre_commit(repo: GitRepo, env: dict[str, str], *args: str) -> tuple[int, str]:
    proc = subprocess.run(["pre-commit", "run", *args], cwd=repo.root, env=env,
                          capture_output=True, text=True)
    return proc.returncode, proc.stdout + proc.stderr


@needs_pre_commit
def test_all_files_audits_the_whole_checkout(
    git_repo: Callable[..., GitRepo], tmp_path: Path
) -> None:
    repo, (first, _, _) = history(git_repo)
    env = env_for(tmp_path)
    code, output = pre_commit(repo, env, "--all-files")
    assert code == 1, output
    assert "Failed" in output and "Passed" not in output
    assert "plugins/sparse.py" in output and "prepare_tables" in output
    assert "nothing is staged (pre-commit run --all-files or --files): auditing the whole " \
           "checkout" in output
    repo.git("checkout", "-q", first)  # before the rename: the checkout is clean
    code, output = pre_commit(repo, env, "--all-files")
    assert code == 0 and "Passed" in output, output


@needs_pre_commit
def test_from_ref_to_ref_checks_that_range(
    git_repo: Callable[..., GitRepo], tmp_path: Path
) -> None:
    repo, (first, rename, other) = history(git_repo)
    env = env_for(tmp_path)
    code, output = pre_commit(repo, env, "--from-ref", first, "--to-ref", rename)
    assert code == 1, output
    assert "plugins/sparse.py" in output and "prepare_tables" in output
    assert f"checking what {first}..{rename} breaks" in output
    # The whole history of the branch: the same finding, the head not checked out.
    code, output = pre_commit(repo, env, "--from-ref", first, "--to-ref", other)
    assert code == 1 and "plugins/sparse.py" in output, output
    # A range that breaks nothing new passes, though the checkout has the stale override.
    code, output = pre_commit(repo, env, "--from-ref", rename, "--to-ref", other)
    assert code == 0 and "Passed" in output, output


@needs_pre_commit
def test_staged_changes_are_still_what_a_commit_checks(
    git_repo: Callable[..., GitRepo], tmp_path: Path
) -> None:
    """With something staged, the hook checks the staged change against HEAD: a commit that
    repairs the override goes through; one that renames the hook again is blocked."""
    repo, _ = history(git_repo)
    env = env_for(tmp_path)
    subprocess.run(["pre-commit", "install"], cwd=repo.root, env=env, check=True,
                   capture_output=True)
    repo.write({"plugins/sparse.py": CHILD.replace("build_tables", "prepare_tables")})
    repo.git("add", "plugins/sparse.py")
    ok = subprocess.run(["git", "commit", "-m", "Port the override"], cwd=repo.root, env=env,
                        capture_output=True, text=True)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    repo.write({"core/manager.py": RENAMED.replace("prepare_tables", "make_tables")})
    repo.git("add", "core/manager.py")
    blocked = subprocess.run(["git", "commit", "-m", "Rename again"], cwd=repo.root, env=env,
                             capture_output=True, text=True)
    output = blocked.stdout + blocked.stderr
    assert blocked.returncode != 0, output
    assert "hookguard check (staged tree vs HEAD)" in output and "make_tables" in output


@needs_pre_commit
def test_pre_push_checks_what_is_pushed(
    git_repo: Callable[..., GitRepo], tmp_path: Path
) -> None:
    """The pre-push stage: pre-commit passes the remote's and the local commit as the range."""
    repo, (first, _, _) = history(git_repo)
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True,
                   env={**os.environ, **GIT_ENV})
    repo.git("remote", "add", "origin", str(remote))
    repo.git("push", "-q", "origin", f"{first}:refs/heads/main")
    env = env_for(tmp_path)
    subprocess.run(["pre-commit", "install", "--hook-type", "pre-push"], cwd=repo.root,
                   env=env, check=True, capture_output=True)
    push = subprocess.run(["git", "push", "origin", "main"], cwd=repo.root, env=env,
                          capture_output=True, text=True)
    assert push.returncode != 0, push.stdout + push.stderr
    assert "plugins/sparse.py" in push.stdout + push.stderr
    remote_main = subprocess.run(["git", "rev-parse", "main"], cwd=remote, capture_output=True,
                                 text=True, check=True).stdout.strip()
    assert remote_main == first


@needs_pre_commit
def test_the_published_hook_runs_the_modes(
    git_repo: Callable[..., GitRepo], tmp_path: Path
) -> None:
    """The hook of this repository's .pre-commit-hooks.yaml, pinned to HEAD, as users pin
    it (pre-commit builds its own environment for it)."""
    try:
        rev = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True,
                             text=True, check=True).stdout.strip()
    except subprocess.CalledProcessError:
        pytest.skip("this checkout is not a git repository with commits")
    manifest = subprocess.run(["git", "show", f"{rev}:.pre-commit-hooks.yaml"], cwd=ROOT,
                              capture_output=True, text=True).stdout
    if "hookguard pre-commit" not in manifest:
        pytest.skip("HEAD's manifest predates the pre-commit command")
    repo, (first, rename, _) = history(git_repo)
    repo.write({".pre-commit-config.yaml":
                f"repos:\n- repo: {ROOT}\n  rev: {rev}\n  hooks:\n  - id: hookguard\n"})
    repo.git("commit", "-q", "-am", "Use the published hook")
    env = env_for(tmp_path)
    code, output = pre_commit(repo, env, "--all-files")
    assert code == 1 and "plugins/sparse.py" in output, output
    code, output = pre_commit(repo, env, "--from-ref", first, "--to-ref", rename)
    assert code == 1 and "plugins/sparse.py" in output, output


def test_the_hook_entry_is_the_pre_commit_command() -> None:
    yaml = pytest.importorskip("yaml")
    (hook,) = [h for h in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
               if h["id"] == "hookguard"]
    assert hook["entry"] == "hookguard pre-commit"
    assert hook["pass_filenames"] is False and hook["require_serial"] is True
    assert "entry: hookguard pre-commit" in readme_hook_config()


# -- choosing the mode ------------------------------------------------------------------------
@pytest.mark.parametrize(("environ", "refs"), [
    ({}, None),
    ({"PRE_COMMIT_FROM_REF": "a", "PRE_COMMIT_TO_REF": "b"}, ("a", "b")),
    ({"PRE_COMMIT_FROM_REF": "a"}, None),
    # pre-commit >= 2: the legacy names too, the other way round; the new names win.
    ({"PRE_COMMIT_FROM_REF": "a", "PRE_COMMIT_TO_REF": "b", "PRE_COMMIT_ORIGIN": "a",
      "PRE_COMMIT_SOURCE": "b"}, ("a", "b")),
    # pre-commit < 2: --source is the base, --origin the head.
    ({"PRE_COMMIT_SOURCE": "base", "PRE_COMMIT_ORIGIN": "head"}, ("base", "head")),
    ({"PRE_COMMIT_FROM_REF": "", "PRE_COMMIT_TO_REF": ""}, None),
])
def test_refs_from_the_environment(
    environ: dict[str, str], refs: tuple[str, str] | None
) -> None:
    assert refs_from(environ) == refs


def test_choose(git_repo: Callable[..., GitRepo]) -> None:
    repo = git_repo()
    assert choose(repo.root, {}).kind == "all"  # no commits yet
    repo.commit("one", {"a.py": "x = 1\n"})
    assert choose(repo.root, {}).kind == "all"  # nothing staged
    repo.write({"a.py": "x = 2\n"})
    assert choose(repo.root, {}).kind == "all"  # changed, not staged
    repo.git("add", "a.py")
    assert choose(repo.root, {}) == Mode("staged")
    ranged = choose(repo.root, {"PRE_COMMIT_FROM_REF": "x", "PRE_COMMIT_TO_REF": "y"})
    assert (ranged.kind, ranged.base, ranged.head) == ("range", "x", "y")


def test_legacy_variables_reach_check(git_repo: Callable[..., GitRepo], tmp_path: Path) -> None:
    repo, (first, rename, _) = history(git_repo)
    env = {**env_for(tmp_path), "PRE_COMMIT_SOURCE": first, "PRE_COMMIT_ORIGIN": rename}
    proc = subprocess.run([sys.executable, "-m", "hookguard", "pre-commit", "--format", "plain",
                           "--no-cache"], cwd=repo.root, env=env, capture_output=True, text=True)
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout.startswith("plugins/sparse.py:5:")
    assert f"hookguard check ({first[:10]}..{rename[:10]})" in proc.stderr


def test_outside_a_repository_is_a_usage_error(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "hookguard", "pre-commit"], cwd=tmp_path,
                          capture_output=True, text=True,
                          env={**os.environ, "GIT_CEILING_DIRECTORIES": str(tmp_path)})
    assert proc.returncode == 2 and "not in a git repository" in proc.stderr
