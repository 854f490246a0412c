"""The command line as users meet it: formats, exit codes, explain, hooks, config errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from hookguard.rules import ALL_RULES
from tests.conftest import load_fixture_builder, write_tree

build = load_fixture_builder()


def cli(
    cwd: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "hookguard", *args], cwd=cwd, capture_output=True, text=True,
        check=False, env={**os.environ, **(env or {})},
    )


@pytest.fixture(scope="module")
def incident(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build.build_kvcache_repo(tmp_path_factory.mktemp("cli") / "kv")


def test_json_schema(incident: Path) -> None:
    proc = cli(incident, "audit", "--format", "json", "--no-cache")
    assert proc.returncode == 1
    document = json.loads(proc.stdout)
    assert set(document) >= {"findings", "errors", "notes"}
    for finding in document["findings"]:
        assert set(finding) >= {"rule", "code", "severity", "path", "line", "column", "symbol",
                                "message", "evidence"}
        assert finding["severity"] in ("error", "warning")
        assert not finding["path"].startswith("/") and "\\" not in finding["path"]
        source = (incident / finding["path"]).read_text().splitlines()[finding["line"] - 1]
        assert f"def {finding['symbol'].rsplit('.', 1)[1]}(" in source


def test_plain_lines_when_not_a_tty(incident: Path) -> None:
    proc = cli(incident, "audit", "--no-cache")
    lines = proc.stdout.splitlines()
    assert lines and all(line.split(":")[1].isdigit() for line in lines)
    assert any(": HG001 [error] " in line for line in lines)
    assert "error" in proc.stderr  # the summary goes to stderr


def test_rich_output_groups_by_file_and_shows_chain(incident: Path) -> None:
    proc = cli(incident, "audit", "--format", "rich", "--no-cache", env={"COLUMNS": "200"})
    assert "chain:" in proc.stdout and "fix:" in proc.stdout
    assert "\x1b[" not in proc.stdout  # not a terminal: no colour codes


def test_exit_zero_and_path_scope(incident: Path) -> None:
    assert cli(incident, "audit", "--exit-zero", "--no-cache").returncode == 0
    scoped = cli(incident, "audit", "trtllm_mini/legacy", "--format", "json", "--no-cache")
    assert scoped.returncode == 0 and json.loads(scoped.stdout)["findings"] == []


def test_usage_and_config_errors_exit_2(tmp_path: Path) -> None:
    assert cli(tmp_path, "audit", "--format", "nope").returncode == 2
    assert cli(tmp_path, "explain", "HG999").returncode == 2
    assert cli(tmp_path, "audit", "does-not-exist").returncode == 2
    (tmp_path / "pyproject.toml").write_text("[tool.hookguard]\nrots = ['src']\n")
    proc = cli(tmp_path, "audit")
    assert proc.returncode == 2
    assert "pyproject.toml:2: unknown key 'rots'" in proc.stderr
    (tmp_path / "pyproject.toml").write_text("[tool.hookguard]\nroots = 3\n")
    assert "must be a list of strings" in cli(tmp_path, "audit").stderr


def test_config_roots_exclude_and_severity(tmp_path: Path) -> None:
    write_tree(tmp_path, {
        "pyproject.toml": """
            [tool.hookguard]
            exclude = ["vendored"]
            severity = { stale-override = "warning" }
            duck-protocols = ["quack"]
        """,
        "a.py": "from typing_extensions import override\nclass B: ...\nclass C(B):\n"
                "    @override\n    def gone(self): ...\n    @override\n    def quack(self): ...\n",
        "vendored/x.py": "from typing_extensions import override\nclass B: ...\nclass C(B):\n"
                         "    @override\n    def gone(self): ...\n",
    })
    proc = cli(tmp_path, "audit", "--format", "json")
    findings = json.loads(proc.stdout)["findings"]
    assert [(f["path"], f["severity"]) for f in findings] == [("a.py", "warning")]
    assert proc.returncode == 0


def test_explain_every_rule_has_the_sections() -> None:
    for rule in ALL_RULES:
        for ident in (rule.code, rule.name):
            proc = cli(Path.cwd(), "explain", ident)
            assert proc.returncode == 0
            for section in ("## What it does", "## Why is this bad?", "## Example",
                            "## Autofix"):
                assert section in proc.stdout, (ident, section)
    listing = cli(Path.cwd(), "explain").stdout
    assert all(rule.code in listing for rule in ALL_RULES)


def test_version_does_not_import_libcst_or_torch() -> None:
    code = ("import sys; from hookguard.cli import main\n"
            "try:\n    main(['--version'])\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('libcst', 'torch')))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert proc.stdout.strip().endswith("[]")


def test_audit_does_not_import_libcst_or_torch(incident: Path) -> None:
    code = ("import sys; from hookguard.cli import main\n"
            f"main(['audit', {str(incident)!r}, '--exit-zero', '--format', 'json'])\n"
            "print(sorted({m.split('.')[0] for m in sys.modules} & {'libcst', 'torch'}))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert proc.stdout.strip().endswith("[]")


def test_hooks_map(incident: Path) -> None:
    proc = cli(incident, "hooks", "pyexecutor.kv_cache_manager_v2.KVCacheManagerV2",
               "--format", "json", "--no-cache")
    assert proc.returncode == 0, proc.stderr
    cells = json.loads(proc.stdout)["cells"]
    m3 = "trtllm_mini.attention_backend.sparse.minimax_m3.cache_manager.MiniMaxM3KVCacheManagerV2"
    dsv4 = "trtllm_mini.attention_backend.sparse.deepseek_v4.cache_manager.DeepseekV4CacheManager"
    csa2 = "trtllm_mini.attention_backend.csa2.CSA2CacheManager"
    assert cells["_prepare_page_table_tensor"] == {
        m3: "stale", dsv4: "overridden+super", csa2: "overridden"}
    assert cells["_get_batch_cache_indices_by_pool_id"][m3] == "drifted"
    assert cells["get_batch_cache_indices"][m3] == "inherited"
    ambiguous = cli(incident, "hooks", "KVCacheManagerV2", "--no-cache")
    assert ambiguous.returncode == 2 and "ambiguous" in ambiguous.stderr
    table = cli(incident, "hooks", "pyexecutor.kv_cache_manager_v2.KVCacheManagerV2",
                "--format", "rich", env={"COLUMNS": "200"})
    assert "MiniMaxM3KVCacheManagerV2" in table.stdout and "stale" in table.stdout
