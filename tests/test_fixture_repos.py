"""Sanity checks for the fixture-repo builders in fixtures/repos/build.py."""

from __future__ import annotations

import ast
import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BUILD_PY = ROOT / "fixtures" / "repos" / "build.py"

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git not installed")


def _load_build():
    spec = importlib.util.spec_from_file_location("hookguard_fixture_build", BUILD_PY)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


build = _load_build()

M3 = "trtllm_mini/attention_backend/sparse/minimax_m3/cache_manager.py"
BASE = "trtllm_mini/pyexecutor/kv_cache_manager_v2.py"


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=repo, capture_output=True, text=True, check=True
    ).stdout


@pytest.mark.parametrize("stage,count", [("incident", 3), ("half_fixed", 4), ("fixed", 5)])
def test_kvcache_stage_history(tmp_path: Path, stage: str, count: int) -> None:
    repo = build.build_kvcache_repo(tmp_path / stage, stage=stage)
    assert repo == tmp_path / stage
    assert git(repo, "rev-parse", "--abbrev-ref", "HEAD").strip() == "main"
    assert int(git(repo, "rev-list", "--count", "HEAD")) == count
    assert git(repo, "status", "--porcelain") == ""
    subjects = git(repo, "log", "--format=%s", "--reverse").splitlines()
    assert subjects[2] == "Move page-table construction into _prepare_page_table_tensor"
    # commit 3 (the incident) does not touch M3's file
    commits = git(repo, "rev-list", "--reverse", "HEAD").split()
    changed = git(repo, "diff", "--name-only", commits[1], commits[2]).splitlines()
    if stage == "incident":
        assert changed == git(repo, "diff", "--name-only", "HEAD~1", "HEAD").splitlines()
    assert BASE in changed
    assert M3 not in changed
    if count >= 4:  # commits 4 and 5 touch only M3
        for i in range(3, count):
            assert git(repo, "diff", "--name-only", commits[i - 1], commits[i]).split() == [M3]
    for rel in git(repo, "ls-files", "*.py").splitlines():
        ast.parse((repo / rel).read_text(encoding="utf-8"), filename=rel)


def test_incident_state(tmp_path: Path) -> None:
    repo = build.build_kvcache_repo(tmp_path / "r")
    base = (repo / BASE).read_text()
    m3 = (repo / M3).read_text()
    assert "def _build_pool_mapping_tensors" not in base
    assert "def _prepare_page_table_tensor(self, index_mapper_capacity: int) -> None:" in base
    assert "def _build_pool_mapping_tensors" in m3
    assert "self._build_pool_mapping_tensors()" in m3
    assert "_legacy_warmup" not in base and "_on_pool_resize" not in base
    first = git(repo, "show", f"HEAD~2:{BASE}")
    assert "def _legacy_warmup" in first and "def _on_pool_resize" in first
    assert "def _build_pool_mapping_tensors" in first


def test_builds_are_deterministic(tmp_path: Path) -> None:
    a = build.build_kvcache_repo(tmp_path / "a", stage="fixed")
    b = build.build_kvcache_repo(tmp_path / "b", stage="fixed")
    assert git(a, "rev-parse", "HEAD") == git(b, "rev-parse", "HEAD")


def test_nonempty_dest_rejected(tmp_path: Path) -> None:
    (tmp_path / "x").write_text("")
    with pytest.raises(FileExistsError):
        build.build_kvcache_repo(tmp_path)


def test_unknown_stage(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        build.build_kvcache_repo(tmp_path / "r", stage="nope")


def test_expected_md_matches_sources() -> None:
    text = (BUILD_PY.parent / "EXPECTED.md").read_text(encoding="utf-8")
    assert build.STAGES == ("incident", "half_fixed", "fixed")
    for stage in build.STAGES:
        for f in build.expected_findings(stage):
            row = f"| {f['rule']} | `{f['path']}` | `{f['qualname']}` | {f['line']} |"
            assert row in text, row
        for f in build.must_not_report(stage):
            assert f"| `{f['path']}` | `{f['qualname']}` | {f['line']} |" in text
    for f in build.expected_import_forms():
        assert f"| {f['rule']} | `{f['path']}` | `{f['qualname']}` | {f['line']} |" in text


def test_import_forms_repo(tmp_path: Path) -> None:
    repo = build.build_import_forms_repo(tmp_path / "imp")
    assert int(git(repo, "rev-list", "--count", "HEAD")) == 1
    link = repo / "src/pkg/loop/up"
    assert link.is_symlink() and link.resolve() == (repo / "src/pkg").resolve()
    bad = repo / "src/pkg/bad"
    assert (bad / "not_utf8.py").read_bytes().startswith(b"\xff\xfe")
    assert b"\x00" in (bad / "nul_bytes.py").read_bytes()
    for name in ("syntax_error.py", "not_utf8.py", "nul_bytes.py"):
        with pytest.raises((SyntaxError, ValueError)):
            ast.parse((bad / name).read_bytes())
    for path in (repo / "src/pkg").glob("[!b]*/*.py"):  # skips bad/ (and loop/up contents)
        ast.parse(path.read_bytes())
    for f in build.expected_import_forms():
        source = (repo / str(f["path"])).read_text()
        assert "@override" in source.splitlines()[int(f["line"]) - 2]


def test_cli(tmp_path: Path) -> None:
    dest = tmp_path / "cli"
    out = subprocess.run(
        [sys.executable, str(BUILD_PY), str(dest), "--stage", "half_fixed"],
        capture_output=True, text=True, check=True,
    ).stdout
    assert out.strip() == str(dest)
    assert int(git(dest, "rev-list", "--count", "HEAD")) == 4
