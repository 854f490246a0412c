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


# -- rule names --------------------------------------------------------------------------------
STALE_AND_DRIFT = {
    "a.py": "from typing_extensions import override\nclass B:\n    def f(self):\n"
            "        self.g(1)\n    def g(self, x): ...\nclass C(B):\n    @override\n"
            "    def gone(self): ...\n    def g(self): ...\n",
}


def test_unknown_rule_names_are_usage_errors_with_a_suggestion(tmp_path: Path) -> None:
    write_tree(tmp_path, STALE_AND_DRIFT)
    proc = cli(tmp_path, "audit", "--no-cache", "--select", "HG0001")
    assert proc.returncode == 2
    assert proc.stderr.startswith("hookguard: error: unknown rule 'HG0001'; did you mean 'HG001'?")
    typo = cli(tmp_path, "audit", "--no-cache", "--select", "stale-overide")
    assert typo.returncode == 2 and "did you mean 'stale-override'?" in typo.stderr
    assert "did you mean" not in cli(tmp_path, "audit", "--select", "zzzzzz").stderr
    for setting, line in (('select = ["HG0001"]', 3), ('ignore = ["signature-drif"]', 3),
                          ('severity = { stale-overide = "warning" }', 3)):
        (tmp_path / "pyproject.toml").write_text(f"[tool.hookguard]\nhistory = false\n{setting}\n")
        config = cli(tmp_path, "audit", "--no-cache")
        assert config.returncode == 2, setting
        assert f"pyproject.toml:{line}: unknown rule" in config.stderr, config.stderr
        assert "did you mean" in config.stderr
    assert "did you mean 'HG001'?" in cli(tmp_path, "explain", "HG01").stderr


def test_rule_names_in_any_case_select_that_rule(tmp_path: Path) -> None:
    write_tree(tmp_path, STALE_AND_DRIFT)
    everything = json.loads(cli(tmp_path, "audit", "--no-cache", "--format", "json").stdout)
    assert sorted({f["code"] for f in everything["findings"]}) == ["HG001", "HG002"]
    for ident in ("hg001", "HG001", "stale-override", "Stale-Override"):
        proc = cli(tmp_path, "audit", "--no-cache", "--format", "json", "--select", ident)
        assert {f["code"] for f in json.loads(proc.stdout)["findings"]} == {"HG001"}, ident
    (tmp_path / "pyproject.toml").write_text(
        '[tool.hookguard]\nignore = ["hg001"]\nseverity = { signature-drift = "warning" }\n')
    proc = cli(tmp_path, "audit", "--no-cache", "--format", "json")
    assert [(f["code"], f["severity"]) for f in json.loads(proc.stdout)["findings"]] == [
        ("HG002", "warning")]


# -- configuration errors point at the right line ----------------------------------------------
def test_config_errors_name_the_line_in_our_section(tmp_path: Path) -> None:
    other_tool = "[tool.ruff]\nselect = ['E']\nexclude = ['x']\nrots = 1\n\n"
    (tmp_path / "pyproject.toml").write_text(
        "[project]\nname = 'x'\n\n" + other_tool + "[tool.hookguard]\nhistory = true\n"
        "exclude = 3\n")
    proc = cli(tmp_path, "audit", "--no-cache")
    assert proc.returncode == 2
    assert "pyproject.toml:11: 'exclude' must be a list of strings" in proc.stderr, proc.stderr
    (tmp_path / "pyproject.toml").write_text(
        other_tool + "[tool.hookguard]\nhistory = true\n# roots\n\nrots = ['src']\n"
        "[tool.other]\nrots = 2\n")
    proc = cli(tmp_path, "audit", "--no-cache")
    assert "pyproject.toml:10: unknown key 'rots'; did you mean 'roots'?" in proc.stderr
    (tmp_path / "pyproject.toml").write_text(
        "[tool.hookguard]\nhistory = false\n\n[tool.hookguard.severity]\nHG0002 = 'warning'\n")
    assert "pyproject.toml:4: unknown rule 'HG0002'" in cli(tmp_path, "audit").stderr


def test_invalid_toml_names_its_line(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n\n[tool.hookguard]\n"
                                             "roots = [\n  'src',\n  oops\n]\n")
    proc = cli(tmp_path, "audit", "--no-cache")
    assert proc.returncode == 2
    assert "pyproject.toml:7: invalid TOML" in proc.stderr, proc.stderr


# -- a reader that stops early -----------------------------------------------------------------
KV_BASE = "pyexecutor.kv_cache_manager_v2.KVCacheManagerV2"


@pytest.mark.parametrize("args", [("explain", "HG001"), ("explain",),
                                  ("hooks", KV_BASE, "--format", "json")])
def test_closed_pipe_is_not_a_traceback(incident: Path, args: tuple[str, ...]) -> None:
    """``hookguard explain HG001 | head -1``: the reader closes the pipe before we write."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        proc = subprocess.run([sys.executable, "-m", "hookguard", *args], cwd=incident,
                              stdout=write_end, stderr=subprocess.PIPE, text=True, check=False)
    finally:
        os.close(write_end)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
