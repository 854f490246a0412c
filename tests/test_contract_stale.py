"""HG004 contract-stale and ``hookguard contracts check``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from hookguard.engine import Options, audit
from tests.conftest import write_tree

CODE = {
    "pkg/__init__.py": "",
    "pkg/manager.py": """
        class Manager:
            def prepare(self, n):
                self.table = [0] * n
                if self.fast:
                    self._staging(n)

            def _staging(self, n):
                self.staging = [0] * n

            def old_prepare(self):
                pass
    """,
}


def contract(method: str, fields: list[str], renamed: list[str], cls: str = "pkg.manager.Manager"
             ) -> str:
    text = f'[[hook]]\nclass = "{cls}"\nmethod = "{method}"\nrenamed_from = {renamed!r}\n'
    for name in fields:
        text += f"\n[hook.fields.{name}]\ntype = \"list\"\n"
    return text.replace("'", '"')


def stale_messages(root: Path) -> list[str]:
    result = audit([root], Options(use_cache=False, select=("contract-stale",),
                                   contracts=("contracts",)))
    return [f.message for f in result.findings]


def test_good_contract_is_silent(tmp_path: Path) -> None:
    write_tree(tmp_path, {**CODE, "contracts/m.toml": contract("prepare", ["table", "staging"],
                                                               ["build"])})
    assert stale_messages(tmp_path) == []


def test_stale_contract_findings(tmp_path: Path) -> None:
    write_tree(tmp_path, {**CODE, "contracts/m.toml":
                          contract("prepare", ["table", "pointers"], ["old_prepare"])
                          + "\n" + contract("gone", [], [])})
    messages = stale_messages(tmp_path)
    assert any("renamed_from lists old_prepare, but Manager still defines it" in m
               for m in messages)
    assert any("field pointers is never assigned by Manager.prepare" in m for m in messages)
    assert any("Manager has no method gone" in m for m in messages)
    assert len(messages) == 3


def test_contracts_check_command(tmp_path: Path) -> None:
    write_tree(tmp_path, {**CODE, "contracts/m.toml": contract(
        "prepare", ["table"], [], cls="elsewhere.Manager")})
    proc = subprocess.run([sys.executable, "-m", "hookguard", "contracts", "check",
                           "--format", "plain"], cwd=tmp_path, capture_output=True, text=True)
    assert proc.returncode == 1
    assert "contracts/m.toml:1:1: HG004" in proc.stdout
    assert "elsewhere.Manager is not in the checkout" in proc.stdout
    # In a plain audit a contract for a class outside the checkout describes a dependency.
    assert stale_messages(tmp_path) == []
    (tmp_path / "contracts/m.toml").write_text(
        "[[hook]]\nclass = \"pkg.manager.Manager\"\nmetod = \"x\"\n")
    bad = subprocess.run([sys.executable, "-m", "hookguard", "contracts", "check"],
                         cwd=tmp_path, capture_output=True, text=True)
    assert bad.returncode == 2 and "contracts/m.toml:3" in bad.stderr and "metod" in bad.stderr
