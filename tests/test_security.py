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
