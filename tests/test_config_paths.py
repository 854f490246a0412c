"""Paths in ``[tool.hookguard]`` that name nothing (issue 26, item 3).

A typo in ``roots`` used to pass as ``All checks passed! 0 files``, exit 0. Now a root, a
contract path or an ``include`` path that names nothing is a configuration error (exit 2) at
its pyproject.toml line; an ``exclude`` path is one when a name close to it exists (a typo),
and a note otherwise (leaving out nothing hides nothing); a glob pattern that matches no Python
file is a note."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from hookguard.config import ConfigError, check_paths, parse_config
from tests.conftest import write_tree

STALE = ("from typing_extensions import override\n\n\nclass Base:\n    pass\n\n\n"
         "class Child(Base):\n    @override\n    def gone(self):\n        pass\n")
CONTRACT = ('[[hook]]\nclass = "pkg.mod.Base"\nmethod = "run"\n\n'
            '[hook.fields.x]\ndtype = "int32"\n')


def checkout(root: Path, settings: str, extra: dict[str, str] | None = None) -> Path:
    """A checkout (a plain folder: no git needed) whose pyproject.toml's section holds
    ``settings`` from line 4."""
    return write_tree(root, {
        "pyproject.toml": f'[project]\nname = "shop"\n[tool.hookguard]\n{settings}\n',
        "src/pkg/__init__.py": "", "src/pkg/mod.py": STALE,
        "vendored/old.py": STALE, "contracts/manager.toml": CONTRACT, **(extra or {}),
    })


def audit(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "hookguard", "audit", "--no-cache", "--no-history",
         "--format", "plain", *args],
        cwd=root, capture_output=True, text=True, env={**os.environ, "NO_COLOR": "1"},
    )


@pytest.mark.parametrize(("settings", "line", "message"), [
    ('roots = ["does_not_exist"]', 4,
     "root 'does_not_exist' matches nothing: no such file or folder in the checkout"),
    ('roots = ["scr"]', 4, "did you mean 'src'?"),
    ('roots = ["src/pkk"]', 4, "did you mean 'src/pkg'?"),
    ('roots = [\n  "src",\n  "tols",\n]', 6, "root 'tols' matches nothing"),
    ('roots = ["src/*"]', 4, "roots are folders or files of the checkout, not glob patterns"),
    ('roots = ["pyproject.toml"]', 4, "is a file that is not Python"),
    ('roots = ["./src"]', 4, "'./src' is never matched: paths here are relative to the "
                             "checkout's root, without '.' or '..' parts (write 'src')"),
    ('exclude = ["src/./pkg/mod.py"]', 4, "(write 'src/pkg/mod.py')"),
    ('include = ["../shop/src"]', 4, "without '.' or '..' parts"),
    ('contracts = ["contract"]', 4, "contract path 'contract' matches nothing"),
    ('contracts = ["src"]', 4, "contract folder 'src' holds no .toml file"),
    ('include = ["src/pkg/mdo.py"]', 4, "include path 'src/pkg/mdo.py' matches nothing"),
    ('exclude = ["vendord"]', 4, "exclude path 'vendord' matches nothing: no such file or "
                                 "folder in the checkout; did you mean 'vendored'?"),
    ('history = true\nexclude = [\n  "vendored",\n  "vendord/",\n]', 7, "did you mean"),
])
def test_a_path_that_names_nothing_is_a_config_error(
    tmp_path: Path, settings: str, line: int, message: str
) -> None:
    root = checkout(tmp_path / "shop", settings)
    proc = audit(root)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stdout == ""
    (error,) = proc.stderr.splitlines()
    assert error.startswith(f"hookguard: error: {root / 'pyproject.toml'}:{line}: "), error
    assert message in error


@pytest.mark.parametrize("settings", [
    'roots = ["src", "vendored/old.py"]',
    'roots = ["src/", ".", "/vendored/"]',
    'contracts = ["contracts", "./contracts/manager.toml"]',
    'exclude = ["vendored", "src/pkg/mod.py", "vendored/"]',
    'include = ["src", "vendored/*.py"]',
])
def test_paths_that_exist_pass(tmp_path: Path, settings: str) -> None:
    proc = audit(checkout(tmp_path / "shop", settings))
    assert proc.returncode in (0, 1), proc.stderr
    assert "hookguard: note:" not in proc.stderr and "error:" not in proc.stderr


@pytest.mark.parametrize(("settings", "note"), [
    # A folder a build makes, absent from a fresh clone: nothing like it exists.
    ('exclude = ["generated"]', ":4: exclude path 'generated' matches nothing"),
    ('exclude = ["gen/*_pb2.py"]', ":4: exclude pattern 'gen/*_pb2.py' matches no Python file"),
    ('exclude = ["vendored", "docs/**"]', ":4: exclude pattern 'docs/**' matches no Python"),
    ('include = ["src/*.py", "tools/*"]', ":4: include pattern 'tools/*' matches no Python"),
])
def test_an_exclusion_or_pattern_that_matches_nothing_is_a_note(
    tmp_path: Path, settings: str, note: str
) -> None:
    root = checkout(tmp_path / "shop", settings)
    proc = audit(root)
    assert proc.returncode in (0, 1), proc.stderr
    (line,) = [n for n in proc.stderr.splitlines() if n.startswith("hookguard: note:")]
    assert line.startswith(f"hookguard: note: {root / 'pyproject.toml'}:"), line
    assert note in line


def test_the_issue_case_no_longer_passes(tmp_path: Path) -> None:
    """``roots = ["does_not_exist"]`` printed ``All checks passed! 0 files`` and exited 0
    over a checkout with a stale override."""
    root = checkout(tmp_path / "shop", "")
    assert audit(root).returncode == 1  # the stale override, found
    (root / "pyproject.toml").write_text('[tool.hookguard]\nroots = ["does_not_exist"]\n')
    proc = audit(root)
    assert proc.returncode == 2 and "All checks passed" not in proc.stdout + proc.stderr
    assert f"{root / 'pyproject.toml'}:2: root 'does_not_exist' matches nothing" in proc.stderr


def test_every_command_that_reads_the_checkout_refuses_it(tmp_path: Path) -> None:
    root = checkout(tmp_path / "shop", 'roots = ["scr"]')
    for args in (["hooks", "Base"], ["fix", "--diff"], ["report", "--html", "r.html"],
                 ["contracts", "check"]):
        proc = subprocess.run([sys.executable, "-m", "hookguard", *args, "--no-cache"]
                              if args[0] != "contracts" else
                              [sys.executable, "-m", "hookguard", *args],
                              cwd=root, capture_output=True, text=True)
        assert proc.returncode == 2, (args, proc.stdout, proc.stderr)
        assert "root 'scr' matches nothing" in proc.stderr, args


def test_a_git_checkout_lists_files_as_the_audit_does(tmp_path: Path) -> None:
    """Patterns are matched against the files the audit reads: ignored files are not
    there."""
    root = checkout(tmp_path / "shop", 'exclude = ["build_out/*"]',
                    {"build_out/gen.py": "x = 1\n", ".gitignore": "build_out/\n"})
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    proc = audit(root)
    assert "exclude pattern 'build_out/*' matches no Python file" in proc.stderr


def test_check_paths_directly(tmp_path: Path) -> None:
    text = '[tool.hookguard]\nroots = ["src"]\nexclude = ["gen/*"]\n'
    root = checkout(tmp_path / "shop", "")
    config = parse_config(text, "pyproject.toml")
    assert check_paths(config, root, text) == [
        "pyproject.toml:3: exclude pattern 'gen/*' matches no Python file in the checkout"]
    bad = parse_config('[tool.hookguard]\nroots = ["nope"]\n', "pyproject.toml")
    with pytest.raises(ConfigError) as raised:
        check_paths(bad, root, '[tool.hookguard]\nroots = ["nope"]\n')
    assert (raised.value.path, raised.value.line) == ("pyproject.toml", 2)
