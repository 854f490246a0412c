"""What every run prints: the summary line, paths as the user sees them, escaped hostile names,
and the report file. Real checkouts in tmp dirs, the real command line in a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from hookguard.findings import Finding, InputError, Severity
from hookguard.report.escape import printable, safe_path
from hookguard.report.github import render_github
from hookguard.report.plain import render_plain
from tests.conftest import GitRepo, write_tree

# A base that calls a hook with an argument and a subclass whose override takes none: HG002.
DRIFT = (
    "class A:\n    def f(self):\n        self.g(1)\n\n    def g(self, x):\n        pass\n\n\n"
    "class B(A):\n    def g(self):\n        pass\n"
)
# DRIFT's first version: the base's call fitted B.g, until the hook gained ``x`` (a drift with
# history; an override no call ever fitted, in every commit, is only a warning)
FITTED = DRIFT.replace("self.g(1)", "self.g()").replace("def g(self, x)", "def g(self)")
CLEAN = "class A:\n    def f(self):\n        self.g(1)\n\n    def g(self, x):\n        pass\n"


def cli(cwd: Path, *args: str, env: dict[str, str] | None = None
        ) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "hookguard", *args], cwd=cwd, capture_output=True, text=True,
        check=False, env={**os.environ, "PYTHONIOENCODING": "utf-8", **(env or {})},
        errors="surrogateescape",
    )


# -- the summary line --------------------------------------------------------------------------
def test_clean_run_prints_a_summary(tmp_path: Path) -> None:
    GitRepo(tmp_path).commit("add", {"pkg/__init__.py": "", "pkg/a.py": CLEAN,
                                     "pkg/b.py": "X = 1\n"})
    proc = cli(tmp_path, "audit", "--no-cache")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == ""
    assert proc.stderr.startswith("hookguard: All checks passed! 3 files, 1 class ("), proc.stderr
    rich = cli(tmp_path, "audit", "--no-cache", "--format", "rich")
    assert "All checks passed! 3 files, 1 class (" in rich.stdout


def test_summary_counts_findings(tmp_path: Path) -> None:
    write_tree(tmp_path, {"a.py": DRIFT})
    proc = cli(tmp_path, "audit", "--no-cache")
    assert proc.returncode == 1
    assert "hookguard: 1 error, 0 warnings in 1 file, 2 classes (" in proc.stderr, proc.stderr
    assert "not analysed" not in proc.stderr


def test_files_not_analysed_are_counted_with_reasons_and_fail_the_run(tmp_path: Path) -> None:
    write_tree(tmp_path, {"a.py": CLEAN, "broken.py": "def f(:\n", "broken2.py": "class (\n"})
    proc = cli(tmp_path, "audit", "--no-cache")
    # As ruff and mypy: a file that cannot be parsed is an error (exit 1) ...
    assert proc.returncode == 1, proc.stderr
    assert "broken.py:1: input problem: syntax error" in proc.stdout
    assert "; 2 files not analysed (syntax error: 2)" in proc.stderr, proc.stderr
    # ... unless --exit-zero.
    assert cli(tmp_path, "audit", "--no-cache", "--exit-zero").returncode == 0
    (tmp_path / "broken2.py").write_bytes(b"\xff\xfe\x00 not python")
    mixed = cli(tmp_path, "audit", "--no-cache")
    assert "; 2 files not analysed (file contains NUL bytes, syntax error)" in mixed.stderr, (
        mixed.stderr)
    (tmp_path / "broken2.py").unlink()
    one = cli(tmp_path, "audit", "--no-cache")
    assert "; 1 file not analysed (syntax error)" in one.stderr and one.returncode == 1
    # Without the broken files the same checkout passes.
    (tmp_path / "broken.py").unlink()
    assert cli(tmp_path, "audit", "--no-cache").returncode == 0


UNRESOLVED = {"pkg/__init__.py": "", "pkg/c.py": "from pkg.missing import Gone\n\n\n"
              "class C(Gone):\n    def f(self):\n        pass\n"}


def test_input_problems_are_named_as_such(tmp_path: Path) -> None:
    """Never "error:" (a finding's severity, which the summary counts): ``input problem:``,
    and the summary counts them apart (issue 26, item 9)."""
    write_tree(tmp_path, UNRESOLVED)
    only = cli(tmp_path, "audit", "--no-cache")
    assert only.returncode == 0, only.stdout + only.stderr  # the file was analysed
    assert only.stdout.startswith("pkg/c.py:4: input problem: cannot resolve base class 'Gone'")
    assert ": error:" not in only.stdout
    assert "hookguard: 0 errors, 0 warnings in 2 files, 1 class (" in only.stderr
    assert only.stderr.rstrip().endswith("; 1 input problem"), only.stderr
    assert "not analysed" not in only.stderr
    write_tree(tmp_path, {"broken.py": "def f(:\n"})
    both = cli(tmp_path, "audit", "--no-cache")
    assert both.returncode == 1
    lines = [line for line in both.stdout.splitlines() if not line.startswith("note:")]
    assert sorted(lines) == ["broken.py:1: input problem: syntax error: invalid syntax",
                             "pkg/c.py:4: input problem: cannot resolve base class 'Gone' of C "
                             "(pkg.missing.Gone is not defined in the checkout)"], lines
    assert "; 1 file not analysed (syntax error); 1 input problem" in both.stderr, both.stderr
    rich = cli(tmp_path, "audit", "--no-cache", "--format", "rich", env={"COLUMNS": "300"})
    assert "broken.py:1: input problem: syntax error" in rich.stdout
    assert "pkg/c.py:4: input problem: cannot resolve base class 'Gone'" in rich.stdout
    assert ": error:" not in rich.stdout
    # Findings, then input problems, then notes, in plain output.
    write_tree(tmp_path, {"pkg/d.py": DRIFT})
    mixed = cli(tmp_path, "audit", "--no-cache").stdout.splitlines()
    kinds = ["finding" if ": HG" in line else "note" if line.startswith("note:") else "input"
             for line in mixed]
    assert kinds == sorted(kinds, key=["finding", "input", "note"].index), mixed


def test_check_summary_names_new_findings(git_repo: Callable[..., GitRepo]) -> None:
    repo = git_repo()
    repo.commit("base", {"a.py": CLEAN})
    proc = cli(repo.root, "check", "--base", "HEAD", "--no-cache")
    assert proc.returncode == 0
    assert "hookguard check (" in proc.stderr and "): no new findings 1 file" in proc.stderr
    repo.write({"a.py": DRIFT})
    repo.git("add", "a.py")
    staged = cli(repo.root, "check", "--staged", "--no-cache")
    assert staged.returncode == 1
    assert "hookguard check (staged tree vs HEAD): 1 new error, 0 new warnings" in staged.stderr


# -- paths relative to the current directory ---------------------------------------------------
def test_plain_and_rich_paths_are_relative_to_the_current_directory(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "repo")
    repo.commit("add", {"pkg/__init__.py": "", "pkg/sub/__init__.py": "", "pkg/sub/m.py": FITTED,
                        "tools/__init__.py": ""})
    repo.commit("g takes x", {"pkg/sub/m.py": DRIFT})
    inside = cli(repo.root / "pkg", "audit", "--no-cache")
    assert inside.stdout.startswith("sub/m.py:10:5: HG002 [error] "), inside.stdout
    beside = cli(repo.root / "tools", "audit", "..", "--no-cache")
    # Outside the current directory: absolute, as ruff prints it.
    assert beside.stdout.startswith(f"{repo.root}/pkg/sub/m.py:10:5: HG002"), beside.stdout
    rich = cli(repo.root / "pkg", "audit", "--no-cache", "--format", "rich",
               env={"COLUMNS": "200"})
    assert rich.stdout.startswith("sub/m.py\n") and "see: sub/m.py:3" in rich.stdout
    # JSON keeps repository-relative paths, as documented.
    document = json.loads(cli(repo.root / "pkg", "audit", "--no-cache", "--format", "json").stdout)
    assert [f["path"] for f in document["findings"]] == ["pkg/sub/m.py"]


# -- hostile names -----------------------------------------------------------------------------
def test_file_names_cannot_inject_workflow_commands_or_control_sequences(tmp_path: Path) -> None:
    evil = "::error title=owned::x\x1b[31m\u202e.py"
    write_tree(tmp_path, {evil: DRIFT, "::warning::y.py": "def f(:\n"})
    plain = cli(tmp_path, "audit", "--no-cache")
    assert plain.returncode == 1
    lines = (plain.stdout + plain.stderr).splitlines()
    assert len(lines) == 4, lines  # the finding, the file not parsed, a note, the summary
    assert not any(line.startswith("::") for line in lines)
    assert "\x1b" not in plain.stdout and "\u202e" not in plain.stdout
    assert r"./::error title=owned::x\x1b[31m\u202e.py:10:5: HG002" in plain.stdout
    github = cli(tmp_path, "audit", "--no-cache", "--format", "github",
                 env={"GITHUB_STEP_SUMMARY": ""})
    commands = [line for line in github.stdout.splitlines() if line.startswith("::")]
    # Only hookguard's own workflow commands (two errors, the note that this is not a git
    # checkout); the file name is escaped inside a property.
    assert [c.split(" ", 1)[0] for c in commands] == ["::error", "::error", "::notice"]
    assert "file=%3A%3Aerror title=owned%3A%3Ax\\x1b[31m\\u202e.py," in commands[0]
    assert "\x1b" not in github.stdout
    rich = cli(tmp_path, "audit", "--no-cache", "--format", "rich", env={"COLUMNS": "300"})
    assert "\x1b" not in rich.stdout and "\u202e" not in rich.stdout
    assert not any(line.startswith("::") for line in rich.stdout.splitlines())


def test_messages_cannot_inject_lines() -> None:
    finding = Finding("stale-override", "HG001", Severity.ERROR, "a.py", 1, 1, "m.C.f", "f",
                      "first\n::error::forged\r\x1b]0;title\x07")
    error = InputError("b\nc.py", 2, "bad\n::warning::forged")
    plain = render_plain([finding], [error], ["note\n::notice::forged"])
    assert plain.count("\n") == 3 and "::error::forged" in plain
    assert not any(line.startswith("::") for line in plain.splitlines())
    assert "\x1b" not in plain and "\x07" not in plain and "\r" not in plain
    github = render_github([finding], [error], ["note"], "summary\n::error::forged")
    assert [line.split(" ")[0].split("::")[1] for line in github.splitlines()
            if line.startswith("::")] == ["error", "error", "notice"]
    assert "\x1b" not in github


def test_printable_keeps_ordinary_text() -> None:
    assert printable("Résumé 日本 tab-free") == "Résumé 日本 tab-free"
    assert printable("a\tb\x00c\x7f\x9b") == r"a\x09b\x00c\x7f\x9b"
    assert printable("bad\udcff.py") == r"bad\xff.py"
    assert safe_path("::x") == "./::x" and safe_path("pkg/a.py") == "pkg/a.py"


@pytest.mark.skipif(sys.platform == "darwin", reason="macOS file systems reject non-UTF-8 names")
def test_non_utf8_file_name_does_not_crash(git_repo: Callable[..., GitRepo]) -> None:
    repo = git_repo()
    repo.commit("base", {"ok.py": CLEAN})
    name = os.fsencode(repo.root) + b"/bad\xff.py"
    with open(name, "w") as stream:
        stream.write(DRIFT)
    repo.git("add", "-A")
    for fmt in ("plain", "rich", "json", "sarif", "github"):
        proc = cli(repo.root, "audit", "--format", fmt, "--no-cache")
        assert proc.returncode == 1, (fmt, proc.stderr)
        assert "Traceback" not in proc.stderr
        if fmt in ("plain", "rich", "github"):
            assert r"bad\xff.py" in proc.stdout, (fmt, proc.stdout)
    sarif = json.loads(cli(repo.root, "audit", "--format", "sarif", "--no-cache").stdout)
    (result,) = sarif["runs"][0]["results"]
    assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "bad%FF.py"
    document = json.loads(cli(repo.root, "audit", "--format", "json").stdout)  # cached run too
    assert [f["code"] for f in document["findings"]] == ["HG002"]
    check = cli(repo.root, "check", "--staged", "--no-cache")
    assert check.returncode == 1 and "Traceback" not in check.stderr
    assert r"bad\xff.py:10:5: HG002" in check.stdout


# -- the report file ---------------------------------------------------------------------------
def test_output_to_a_missing_directory_is_a_usage_error(tmp_path: Path) -> None:
    write_tree(tmp_path, {"a.py": CLEAN})
    proc = cli(tmp_path, "audit", "--no-cache", "--output", "/nonexistent/x")
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        "hookguard: error: cannot write the report to /nonexistent/x: No such file or directory"
    ]
    written = cli(tmp_path, "audit", "--no-cache", "--format", "json", "--output", "r.json")
    assert written.returncode == 0
    assert json.loads((tmp_path / "r.json").read_text())["findings"] == []


# -- layout ------------------------------------------------------------------------------------
def test_commands_do_not_import_the_cli() -> None:
    """``cli`` is the parser and the dispatch; the commands import only ``commands.common``."""
    commands = sorted(p.stem for p in Path("hookguard/commands").glob("*.py")
                      if p.stem not in ("__init__", "common"))
    assert {"audit", "check", "explain", "fix", "hooks", "contracts"} <= set(commands)
    code = ("import importlib, sys\n"
            f"for name in {commands!r}:\n"
            "    importlib.import_module('hookguard.commands.' + name)\n"
            "print('hookguard.cli' in sys.modules)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True, cwd=Path(__file__).resolve().parents[1])
    assert proc.stdout.strip() == "False"


def test_rich_output_never_cuts_an_identifier(tmp_path: Path) -> None:
    from tests.conftest import load_fixture_builder

    repo = load_fixture_builder().build_kvcache_repo(tmp_path / "kv")
    proc = cli(repo, "audit", "--no-cache", "--format", "rich", env={"COLUMNS": "70"})
    assert proc.returncode == 1
    lines = proc.stdout.splitlines()
    assert max(len(line) for line in lines) <= 70
    for name in ("MiniMaxM3KVCacheManagerV2._build_pool_mapping_tensors",
                 "DeepseekV4CacheManager._on_pool_resize",
                 "chain: MiniMaxM3KVCacheManagerV2 → KVCacheManagerV2",
                 "trtllm_mini.attention_backend.sparse.minimax_m3.cache_manager"):
        assert any(name in line for line in lines), name


def test_a_rebuilt_cache_is_one_calm_note(tmp_path: Path) -> None:
    """Every cache file damaged: one note for the run, not one per shard (issue 13, item 7)."""
    repo = GitRepo(tmp_path / "r")
    repo.commit("add", {f"pkg/m{i}.py": f"class C{i}:\n    pass\n" for i in range(40)})
    assert cli(repo.root, "audit").returncode == 0
    files = list((repo.root / ".hookguard_cache").glob("*.msgpack"))
    assert len(files) > 2
    for file in files:
        file.write_bytes(b"garbage")
    proc = cli(repo.root, "audit")
    assert proc.returncode == 0
    notes = [line for line in proc.stdout.splitlines() if line.startswith("note:")]
    assert len(notes) == 1 and notes[0].endswith("rebuilding"), notes
    again = cli(repo.root, "audit")
    assert [line for line in again.stdout.splitlines() if line.startswith("note:")] == []


def test_usage_errors_escape_the_names_they_quote(tmp_path: Path) -> None:
    proc = cli(tmp_path, "audit", "no\x1b[2Jsuch")
    assert proc.returncode == 2
    expected = f"hookguard: error: {tmp_path}/no\\x1b[2Jsuch: no such file or directory\n"
    assert proc.stderr == expected
