"""Bad input: one clear line naming file and line; the rest of the audit goes on."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from hookguard.engine import Options, audit
from tests.conftest import write_tree

STALE = ("from typing_extensions import override\nclass Base: ...\nclass Child(Base):\n"
         "    @override\n    def gone(self): ...\n")


def run(root: Path) -> tuple[list[str], list[tuple[str, int, str]], list[str]]:
    result = audit([root], Options(use_cache=False))
    return ([f.symbol for f in result.findings],
            [(e.path, e.line, e.message) for e in result.errors], result.notes)


def test_each_bad_file_is_one_error_and_findings_survive(tmp_path: Path) -> None:
    write_tree(tmp_path, {"good.py": STALE, "syntax.py": "def broken(:\n    pass\n"})
    (tmp_path / "latin1.py").write_bytes(b"x = '\xe9\xe8'\n")
    (tmp_path / "binary.py").write_bytes(b"\x00\x01\x02ELF")
    (tmp_path / "deep.py").write_text("x = " + "(" * 5000 + "1" + ")" * 5000 + "\n")
    findings, errors, _ = run(tmp_path)
    assert findings == ["good.Child.gone"]
    by_path = {path: (line, message) for path, line, message in errors}
    assert by_path["syntax.py"][0] == 1 and "syntax error" in by_path["syntax.py"][1]
    assert "latin1.py" in by_path and "utf-8" in by_path["latin1.py"][1].lower()
    assert "NUL" in by_path["binary.py"][1]
    assert "deep.py" in by_path
    assert all("\n" not in message for _, _, message in errors)


def test_huge_file_is_skipped_with_a_reason(tmp_path: Path) -> None:
    write_tree(tmp_path, {"pyproject.toml": "[tool.hookguard]\nmax-file-size = 1000\n",
                          "good.py": STALE})
    (tmp_path / "generated.py").write_text("X = 1\n" * 1000)
    findings, errors, _ = run(tmp_path)
    assert findings == ["good.Child.gone"]
    assert errors and errors[0][0] == "generated.py" and "max-file-size" in errors[0][2]


def test_symlink_loop_and_dangling_link(tmp_path: Path) -> None:
    write_tree(tmp_path, {"pkg/good.py": STALE})
    os.symlink("..", tmp_path / "pkg" / "loop")
    os.symlink("missing.py", tmp_path / "pkg" / "dangling.py")
    findings, _, _ = run(tmp_path)
    assert findings == ["good.Child.gone"]  # pkg has no __init__.py: a plain directory


def test_not_a_git_checkout_gives_one_note(tmp_path: Path) -> None:
    write_tree(tmp_path, {"good.py": STALE})
    _, _, notes = run(tmp_path)
    assert notes == ["not a git checkout: history evidence skipped"]


def test_exit_code_still_reflects_findings_with_bad_files(tmp_path: Path) -> None:
    write_tree(tmp_path, {"syntax.py": "def broken(:\n"})
    clean = subprocess.run([sys.executable, "-m", "hookguard", "audit", "--format", "json"],
                           cwd=tmp_path, capture_output=True, text=True)
    # A file that cannot be analysed fails the run, as in ruff and mypy: never a silent pass.
    assert clean.returncode == 1 and len(json.loads(clean.stdout)["errors"]) == 1
    assert "1 file not analysed" in clean.stderr
    write_tree(tmp_path, {"good.py": STALE})
    stale = subprocess.run([sys.executable, "-m", "hookguard", "audit"], cwd=tmp_path,
                           capture_output=True, text=True)
    assert stale.returncode == 1
    assert "syntax.py:1: input problem: syntax error" in stale.stdout


def test_file_vanishing_mid_run(tmp_path: Path) -> None:
    """A path listed by discovery but gone before reading becomes an error, not a crash."""
    from hookguard.model.loader import load_worktree

    write_tree(tmp_path, {"a.py": STALE})
    records, _ = load_worktree(tmp_path, ["a.py", "gone.py"], None, 10**6)
    gone = next(r for r in records if r.path == "gone.py")
    assert gone.error is not None and "cannot read" in gone.error


def test_compiler_warnings_about_audited_code_stay_quiet(tmp_path: Path) -> None:
    # ``"\d"`` is an invalid escape: a DeprecationWarning on 3.11, a SyntaxWarning on 3.12+.
    write_tree(tmp_path, {"pkg/__init__.py": "", "pkg/child.py": 'PATTERN = "\\d+"\n' + STALE})
    proc = subprocess.run(
        [sys.executable, "-W", "error", "-m", "hookguard", "audit", str(tmp_path),
         "--format", "json", "--no-cache"],
        capture_output=True, text=True, check=False,
    )
    assert proc.returncode == 1, proc.stderr
    report = json.loads(proc.stdout)
    assert [f["path"] for f in report["findings"]] == ["pkg/child.py"]
    assert not report["errors"]
    assert "Warning" not in proc.stderr
