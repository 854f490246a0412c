"""``hookguard check`` reads the contracts from the base too (issue 24, item 3): a pull request
that edits a contract file cannot loosen what its own change is checked against."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from tests.conftest import GitRepo

MANAGER = """\
class Manager:
    def __init__(self):
        self.prepare()

    def prepare(self):
        self.table = {}
        self.pointers = []

    def lookup(self, key):
        return self.table[key]
"""
CONTRACT = """\
[[hook]]
class = "core.manager.Manager"
method = "prepare"

[hook.fields.table]
type = "dict"

[hook.fields.pointers]
type = "list"
"""
CHILD = """\
from core.manager import Manager


class Sparse(Manager):
    def prepare(self):
        self.table = {}
"""


def check(root: Path, *args: str) -> tuple[int, dict[str, object]]:
    proc = subprocess.run([sys.executable, "-m", "hookguard", "check", "--base", "main",
                           "--format", "json", "--no-cache", *args],
                          cwd=root, capture_output=True, text=True, check=False)
    return proc.returncode, json.loads(proc.stdout)


def _repo(git_repo: Callable[..., GitRepo]) -> GitRepo:
    repo = git_repo()
    repo.commit("manager and its contract", {
        "core/__init__.py": "", "core/manager.py": MANAGER, "contracts/manager.toml": CONTRACT})
    repo.git("checkout", "-q", "-b", "feature")
    return repo


def test_a_change_that_drops_a_contract_field_is_checked_against_the_base(
    git_repo: Callable[..., GitRepo],
) -> None:
    repo = _repo(git_repo)
    repo.commit("a sparse manager, and the contract loosened", {
        "core/sparse.py": CHILD,
        "contracts/manager.toml": CONTRACT.replace('[hook.fields.pointers]\ntype = "list"\n', ""),
    })
    code, report = check(repo.root)
    assert code == 1
    findings = report["findings"]
    assert isinstance(findings, list)
    (finding,) = findings
    assert finding["code"] == "HG003" and finding["severity"] == "error"
    assert "pointers" in finding["message"]
    notes = report["notes"]
    assert isinstance(notes, list)
    assert any("edits contract files (contracts/manager.toml)" in n for n in notes), notes


def test_a_change_that_deletes_the_contracts_is_checked_against_the_base(
    git_repo: Callable[..., GitRepo],
) -> None:
    repo = _repo(git_repo)
    repo.git("rm", "-q", "contracts/manager.toml")
    repo.commit("a sparse manager, no contracts", {"core/sparse.py": CHILD})
    code, report = check(repo.root)
    assert code == 1 and [f["code"] for f in report["findings"]] == ["HG003"]  # type: ignore[union-attr]


def test_the_same_change_with_the_contract_kept_is_the_same_verdict_without_a_note(
    git_repo: Callable[..., GitRepo],
) -> None:
    repo = _repo(git_repo)
    repo.commit("a sparse manager", {"core/sparse.py": CHILD})
    code, report = check(repo.root)
    assert code == 1 and not [n for n in report["notes"] if "contract" in n]  # type: ignore[union-attr]
    repo.commit("it sets the pointers", {"core/sparse.py": CHILD + "        self.pointers = []\n"})
    assert check(repo.root)[0] == 0
