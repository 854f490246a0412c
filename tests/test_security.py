"""Issue 11: nothing in a checkout or a contract can run code, hang hookguard or poison its
results. The other cases live beside what they test: the cache in ``tests/test_cache.py``, the
fixer in ``tests/test_fix_safety.py``, contracts in ``tests/test_contract_bounds.py``,
``tests/test_expression_fuzz.py`` and ``tests/runtime/test_runtime_expression_bounds.py``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.conftest import write_tree


def test_python_m_from_a_checkout_root_does_not_import_its_modules(tmp_path: Path) -> None:
    """Case 11: ``python -m hookguard`` run from a checkout's root imports no planted
    ``argparse.py`` (``python -m`` puts the current directory first on ``sys.path``)."""
    marker = tmp_path / "pwned"
    planted = f"open({str(marker)!r}, 'w').write('ran')\nraise SystemExit(99)\n"
    names = ["argparse", "json", "typing", "dataclasses", "hashlib", "enum", "re"]
    root = write_tree(tmp_path / "repo", {f"{n}.py": planted for n in names})
    (root / "a.py").write_text("class A: ...\n")
    for args in (["--version"], ["audit", "--no-cache"]):
        out = subprocess.run([sys.executable, "-m", "hookguard", *args], cwd=root,
                             capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr
        assert not marker.exists()


def _audit(root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "hookguard", "audit", "--no-cache"], cwd=root,
                          capture_output=True, text=True, timeout=120)


def test_deeply_nested_contract_expression_is_one_error_line_and_exit_2(tmp_path: Path) -> None:
    """Case 6.2: a RecursionError traceback and exit 1 ("findings")."""
    deep = "-" * 5000 + "1"
    root = write_tree(tmp_path / "repo", {
        "pkg/__init__.py": "", "pkg/mod.py": "class Base:\n    def setup(self): ...\n",
        "contracts/hooks.toml": f'[[hook]]\nclass = "pkg.mod.Base"\nmethod = "setup"\n'
                                f'invariants = ["{deep}"]\n'})
    out = _audit(root)
    assert out.returncode == 2, out.stderr
    assert "Traceback" not in out.stderr
    (line,) = [line for line in out.stderr.splitlines() if "error" in line]
    assert line.startswith(f"hookguard: error: {root / 'contracts/hooks.toml'}:4: bad invariant:")
    assert len(line) < 300


def test_hostile_contract_file_does_not_stall_the_audit(tmp_path: Path) -> None:
    """Case 4: a 12 KB malformed contract took 137 s before the TOML was even parsed."""
    import time

    root = write_tree(tmp_path / "repo", {"a.py": "class A: ...\n",
                                          "contracts/hostile.toml": "[" + " " * 12_000 + "\n"})
    started = time.perf_counter()
    out = _audit(root)
    assert time.perf_counter() - started < 30
    assert out.returncode == 2
    assert f"{root / 'contracts/hostile.toml'}:1: invalid TOML" in out.stderr
