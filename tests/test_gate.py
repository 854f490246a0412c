"""``hookguard check``: the pull-request gate and the staged-tree (pre-commit) gate."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from tests.conftest import GitRepo, load_fixture_builder

build = load_fixture_builder()

BASE = """
class Manager:
    def __init__(self):
        self.build_tables()

    def build_tables(self):
        self.tables = []

    def close(self):
        pass
"""
RENAMED = BASE.replace("build_tables", "prepare_tables")
CHILD = """
from core.manager import Manager


class SparseManager(Manager):
    def build_tables(self):
        self.tables = [1, 2, 3]
"""


def hookguard(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "hookguard", *args],
        cwd=cwd, capture_output=True, text=True, check=False,
    )


def rename_repo(git_repo: Callable[..., GitRepo]) -> GitRepo:
    repo = git_repo()
    repo.commit("Add manager", {"core/__init__.py": "", "core/manager.py": BASE,
                                "plugins/__init__.py": "", "plugins/sparse.py": CHILD})
    repo.commit("Rename build_tables to prepare_tables", {"core/manager.py": RENAMED})
    return repo


def test_rename_in_base_flags_untouched_subclass(git_repo: Callable[..., GitRepo]) -> None:
    repo = rename_repo(git_repo)
    changed = repo.git("diff", "--name-only", "HEAD~1", "HEAD").split()
    assert changed == ["core/manager.py"]
    proc = hookguard(repo.root, "check", "--base", "HEAD~1", "--format", "json", "--no-cache")
    assert proc.returncode == 1, proc.stderr
    (finding,) = json.loads(proc.stdout)["findings"]
    assert finding["path"] == "plugins/sparse.py"
    assert finding["symbol"] == "plugins.sparse.SparseManager.build_tables"
    assert finding["evidence"]["kind"] == "diff"
    assert finding["evidence"]["new"] == "prepare_tables"
    assert finding["evidence"]["subject"] == "Rename build_tables to prepare_tables"
    assert finding["evidence"]["commit"] == repo.git("rev-parse", "HEAD").strip()
    assert finding["evidence"]["changed_path"] == "core/manager.py"


def test_already_stale_at_base_is_not_new(git_repo: Callable[..., GitRepo]) -> None:
    repo = rename_repo(git_repo)
    repo.commit("Unrelated change", {"core/util.py": "def helper():\n    return 1\n"})
    gate = hookguard(repo.root, "check", "--base", "HEAD~1", "--no-cache")
    assert gate.returncode == 0, gate.stdout + gate.stderr
    full = hookguard(repo.root, "audit", "--format", "json", "--no-cache")
    assert full.returncode == 1
    assert [f["path"] for f in json.loads(full.stdout)["findings"]] == ["plugins/sparse.py"]


def test_moved_code_is_not_new(git_repo: Callable[..., GitRepo]) -> None:
    repo = rename_repo(git_repo)
    moved = "\n\n# a comment that moves everything down\n" + CHILD
    repo.commit("Reformat plugin", {"plugins/sparse.py": moved})
    assert hookguard(repo.root, "check", "--base", "HEAD~1", "--no-cache").returncode == 0


def test_branch_base_uses_merge_base(git_repo: Callable[..., GitRepo]) -> None:
    repo = git_repo()
    repo.commit("Add manager", {"core/__init__.py": "", "core/manager.py": BASE,
                                "plugins/__init__.py": "", "plugins/sparse.py": CHILD})
    repo.git("checkout", "-q", "-b", "feature")
    repo.commit("Rename build_tables to prepare_tables", {"core/manager.py": RENAMED})
    repo.git("checkout", "-q", "main")
    repo.commit("Main moves on", {"core/other.py": "X = 1\n"})
    repo.git("checkout", "-q", "feature")
    proc = hookguard(repo.root, "check", "--base", "main", "--format", "json", "--no-cache")
    assert proc.returncode == 1
    assert json.loads(proc.stdout)["findings"][0]["path"] == "plugins/sparse.py"


def test_dirty_work_tree_is_ignored_and_untouched(git_repo: Callable[..., GitRepo]) -> None:
    repo = rename_repo(git_repo)
    (repo.root / "plugins/sparse.py").write_text("this is not python (")
    proc = hookguard(repo.root, "check", "--base", "HEAD~1", "--no-cache")
    assert proc.returncode == 1
    assert (repo.root / "plugins/sparse.py").read_text() == "this is not python ("
    assert repo.git("status", "--porcelain").strip() == "M plugins/sparse.py"


def test_missing_base_revision_exits_2_with_fix(git_repo: Callable[..., GitRepo]) -> None:
    repo = rename_repo(git_repo)
    proc = hookguard(repo.root, "check", "--base", "origin/main")
    assert proc.returncode == 2
    message = proc.stderr.strip()
    assert len(message.splitlines()) == 1
    assert "fetch-depth: 0" in message and "git fetch --depth=200 origin main" in message


def test_shallow_clone_missing_base(git_repo: Callable[..., GitRepo], tmp_path: Path) -> None:
    repo = rename_repo(git_repo)
    base = repo.git("rev-parse", "HEAD~1").strip()
    clone = tmp_path / "shallow"
    subprocess.run(["git", "clone", "-q", "--depth", "1", f"file://{repo.root}", str(clone)],
                   check=True, capture_output=True)
    proc = hookguard(clone, "check", "--base", base)
    assert proc.returncode == 2
    assert "shallow clone" in proc.stderr and "fetch-depth: 0" in proc.stderr
    # History evidence degrades: audit still runs, with a note, and exits cleanly.
    audit = hookguard(clone, "audit", "--format", "json", "--no-cache")
    assert audit.returncode == 0, audit.stdout
    assert any("shallow clone" in n for n in json.loads(audit.stdout)["notes"])


def test_staged_rename_fails_and_names_untouched_subclass(
    git_repo: Callable[..., GitRepo]
) -> None:
    repo = git_repo()
    repo.commit("Add manager", {"core/__init__.py": "", "core/manager.py": BASE,
                                "plugins/__init__.py": "", "plugins/sparse.py": CHILD})
    repo.write({"core/manager.py": RENAMED})
    assert hookguard(repo.root, "check", "--staged", "--no-cache").returncode == 0  # not staged
    repo.git("add", "core/manager.py")
    proc = hookguard(repo.root, "check", "--staged", "--format", "json", "--no-cache")
    assert proc.returncode == 1
    (finding,) = json.loads(proc.stdout)["findings"]
    assert finding["path"] == "plugins/sparse.py"
    assert finding["evidence"]["new"] == "prepare_tables"
    assert finding["evidence"]["subject"] == "staged changes"


def test_incident_fixture_gate(tmp_path: Path) -> None:
    repo = build.build_kvcache_repo(tmp_path / "kv")
    proc = hookguard(repo, "check", "--base", "HEAD~1", "--format", "json", "--no-cache")
    assert proc.returncode == 1
    symbols = {f["symbol"].rsplit(".", 2)[-2:][1] for f in json.loads(proc.stdout)["findings"]
               if f["rule"] == "stale-override"}
    assert symbols == {"_build_pool_mapping_tensors"}


def test_new_keyword_at_base_call_site_is_drift_with_its_cause(
    git_repo: Callable[..., GitRepo]
) -> None:
    repo = git_repo()
    base = ("class Manager:\n    def lookup(self, ids):\n        return self.fetch(ids, pool=0)\n\n"
            "    def fetch(self, ids, *, pool=0):\n        return ids\n")
    child = ("from core.manager import Manager\n\nclass Sparse(Manager):\n"
             "    def fetch(self, ids, *, pool=0):\n        return []\n")
    repo.commit("Add manager", {"core/__init__.py": "", "core/manager.py": base,
                                "plugins/__init__.py": "", "plugins/sparse.py": child})
    grown = base.replace("fetch(ids, pool=0)", "fetch(ids, pool=0, scale=2)").replace(
        "*, pool=0)", "*, pool=0, scale=1)")
    repo.commit("Pass scale to fetch", {"core/manager.py": grown})
    proc = hookguard(repo.root, "check", "--base", "HEAD~1", "--format", "json", "--no-cache")
    assert proc.returncode == 1
    (finding,) = json.loads(proc.stdout)["findings"]
    assert finding["rule"] == "signature-drift" and finding["path"] == "plugins/sparse.py"
    causes = finding["evidence"]["caused_by"]
    assert any("Manager.lookup now passes scale=" in c and "Pass scale to fetch" in c
               for c in causes)


def test_another_call_an_already_broken_override_cannot_accept_is_new(
    git_repo: Callable[..., GitRepo]
) -> None:
    repo = git_repo()
    base = ("class Pipeline:\n    def free(self):\n        self.offload(device='cuda')\n\n"
            "    def offload(self, gpu_id=None, device='cuda'):\n        return device\n")
    loader = ("class Loader:\n    def load(self, device):\n        return device\n")
    child = ("from core.pipeline import Pipeline\nfrom core.loader import Loader\n\n"
             "class Community(Pipeline, Loader):\n"
             "    def offload(self, gpu_id=0):\n        return gpu_id\n")
    repo.commit("Add pipeline", {"core/__init__.py": "", "core/pipeline.py": base,
                                 "core/loader.py": loader,
                                 "examples/__init__.py": "", "examples/community.py": child})
    repo.commit("Unrelated", {"core/loader.py": loader + "\n\ndef helper():\n    return 1\n"})
    quiet = hookguard(repo.root, "check", "--base", "HEAD~1", "--no-cache")
    assert quiet.returncode == 0, quiet.stdout  # broken before, and nothing new breaks it
    repo.commit("Offload again after loading", {"core/loader.py": loader.replace(
        "return device", "self.offload(device=device)\n        return device")})
    proc = hookguard(repo.root, "check", "--base", "HEAD~1", "--format", "json", "--no-cache")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    (finding,) = json.loads(proc.stdout)["findings"]
    assert finding["symbol"] == "examples.community.Community.offload"
    assert "this change adds: Loader.load calls offload" in finding["message"]


def test_the_documented_github_workflow_commands(
    git_repo: Callable[..., GitRepo], tmp_path: Path
) -> None:
    """Run the gate steps of docs/ci.md, as written, on a pull-request-shaped clone."""
    import os
    import re
    import shlex

    from tests.conftest import GIT_ENV, ROOT

    upstream = rename_repo(git_repo)
    upstream.git("reset", "-q", "--hard", "HEAD~1")  # main: before the rename
    upstream.git("checkout", "-q", "-b", "feature")
    upstream.commit("Rename build_tables to prepare_tables", {"core/manager.py": RENAMED})
    upstream.git("checkout", "-q", "main")
    clone = tmp_path / "pr"
    subprocess.run(["git", "clone", "-q", str(upstream.root), str(clone)], check=True)
    subprocess.run(["git", "checkout", "-q", "feature"], cwd=clone, check=True,
                   env={**os.environ, **GIT_ENV})
    workflow = (ROOT / "docs" / "ci.md").read_text()
    runs = re.findall(r"run: >-\n((?:\s{10}.*\n)+)|run: (hookguard .*)", workflow)
    commands = [" ".join((block or line).split()) for block, line in runs]
    commands = [c.replace('"origin/${{ github.base_ref }}"', "origin/main") for c in commands
                if c.startswith("hookguard ")]
    assert len(commands) == 2
    summary = tmp_path / "summary.md"
    env = {**os.environ, "GITHUB_STEP_SUMMARY": str(summary)}
    annotate = subprocess.run([sys.executable, "-m", "hookguard", *shlex.split(commands[0])[1:]],
                              cwd=clone, capture_output=True, text=True, env=env)
    assert annotate.returncode == 1
    assert annotate.stdout.startswith("::error file=plugins/sparse.py,line=5")
    assert "prepare\\_tables" in summary.read_text()  # markdown-escaped in the job summary
    sarif = subprocess.run([sys.executable, "-m", "hookguard", *shlex.split(commands[1])[1:]],
                           cwd=clone, capture_output=True, text=True, env=env)
    assert sarif.returncode == 0, sarif.stderr
    log = json.loads((clone / "hookguard.sarif").read_text())
    (result,) = log["runs"][0]["results"]
    assert result["ruleId"] == "HG001"
    assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == \
        "plugins/sparse.py"


BACKEND = ("class Backend:\n    def mark_as_done(self, request, result):\n"
           "        self.on_chord_part_return(request, 'SUCCESS', result)\n\n"
           "    def on_chord_part_return(self, request, state, result):\n"
           "        return None\n")
KEY_VALUE_STORE = (
    "from core.backend import Backend\n\nclass KeyValueStore(Backend):\n"
    "    def on_chord_part_return(self, request, state, result, propagate=None):\n"
    "        return result\n")


def backend_repo(git_repo: Callable[..., GitRepo], backend: str) -> GitRepo:
    repo = git_repo()
    repo.commit("backends", {"core/__init__.py": "", "core/backend.py": backend,
                             "plugins/__init__.py": "", "plugins/store.py": KEY_VALUE_STORE})
    return repo


def test_a_call_the_change_adds_that_no_class_can_accept_is_drift(
    git_repo: Callable[..., GitRepo]
) -> None:
    backend = BACKEND.replace("\n    def on_chord_part_return", (
        "\n    def forget(self, request):\n"
        "        self.on_chord_part_return(request)  # long broken, for every class\n\n"
        "    def on_chord_part_return"))
    repo = backend_repo(git_repo, backend)
    quiet = hookguard(repo.root, "audit", "--no-cache", "--format", "json")
    assert json.loads(quiet.stdout)["findings"] == []  # the old broken caller proves nothing
    repo.commit("Report chord parts without the result", {"core/backend.py": backend.replace(
        "self.on_chord_part_return(request, 'SUCCESS', result)",
        "self.on_chord_part_return(request, 'SUCCESS')")})
    proc = hookguard(repo.root, "check", "--base", "HEAD~1", "--format", "json", "--no-cache")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    (finding,) = json.loads(proc.stdout)["findings"]
    assert finding["symbol"] == "plugins.store.KeyValueStore.on_chord_part_return"
    assert "Backend.mark_as_done" in finding["message"]


def test_a_broken_call_in_a_method_the_change_adds_is_not_drift(
    git_repo: Callable[..., GitRepo]
) -> None:
    backend = BACKEND
    repo = backend_repo(git_repo, backend)
    # A new method, that nothing calls yet, with a call no class accepts (a dead caller):
    # the change that wrote it broke nothing that ran.
    repo.commit("Add a batched helper", {"core/backend.py": backend + (
        "\n    def mark_many(self, requests):  # TODO unused\n"
        "        return [self.on_chord_part_return(r) for r in requests]\n")})
    proc = hookguard(repo.root, "check", "--base", "HEAD~1", "--format", "json", "--no-cache")
    assert proc.returncode == 0, proc.stdout + proc.stderr


LIVE_ANYWAY = {
    "a base still calls it on self": (
        "core/manager.py",
        RENAMED + "\n    def rebuild(self):\n        self.build_tables()\n"),
    "code outside calls it": (
        "tools/rebuild.py",
        "def rebuild(manager):\n    manager.build_tables()\n"),
    "an isinstance-narrowed call reaches it": (
        "tools/rebuild.py",
        "from plugins.sparse import SparseManager\n\n\ndef rebuild(manager):\n"
        "    if isinstance(manager, SparseManager):\n        manager.build_tables()\n"),
}


def test_an_override_that_runs_anyway_is_not_stale_in_check_or_audit(
    git_repo: Callable[..., GitRepo]
) -> None:
    for why, (path, text) in LIVE_ANYWAY.items():
        repo = git_repo(why.replace(" ", "-"))
        repo.commit("Add manager", {"core/__init__.py": "", "core/manager.py": BASE,
                                    "plugins/__init__.py": "", "plugins/sparse.py": CHILD,
                                    "tools/__init__.py": ""})
        repo.commit("Rename build_tables to prepare_tables",
                    {"core/manager.py": RENAMED, path: text})
        for args in (("check", "--base", "HEAD~1"), ("audit",), ("audit", "--no-history")):
            proc = hookguard(repo.root, *args, "--format", "json", "--no-cache")
            findings = json.loads(proc.stdout)["findings"]
            assert not [f for f in findings if f["rule"] == "stale-override"], (why, args)
    # The same rename with nothing that still reaches the override: reported by each.
    repo = rename_repo(git_repo)
    for args in (("check", "--base", "HEAD~1"), ("audit",)):
        proc = hookguard(repo.root, *args, "--format", "json", "--no-cache")
        assert [f["rule"] for f in json.loads(proc.stdout)["findings"]] == ["stale-override"]
