"""The evidence shapes issue 23's first contact showed to be no proof, each with a case that must
fire (the proof holds) and one that must not be an error (the proof is missing): minimal
fixtures written from the description, not copies of the repositories."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from hookguard.engine import Options, audit
from hookguard.findings import Finding, Severity
from tests.conftest import GitRepo


@pytest.fixture(autouse=True)
def private_key_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))


def audited(repo: GitRepo) -> dict[str, Finding]:
    result = audit([repo.root], Options(use_cache=False, workers=1))
    return {f"{f.code} {f.symbol}": f for f in result.findings}


# -- shape 3: a base outside the checkout, above the class that lost the hook ------------------
def _lost_hook_repo(repo: GitRepo, base_of_base: str, imports: str) -> None:
    base = (f"{imports}\n\nclass Base({base_of_base}):\n    def run(self):\n"
            "        self.on_epoch_end()\n\n    def on_epoch_end(self):\n        pass\n")
    repo.commit("base", {
        "pkg/__init__.py": "", "pkg/base.py": base,
        "pkg/sub.py": "from pkg.base import Base\n\n\nclass Sub(Base):\n"
                      "    def on_epoch_end(self):\n        self.saved = True\n",
    })
    repo.commit("Drop on_epoch_end", {"pkg/base.py": base.replace(
        "        self.on_epoch_end()\n\n    def on_epoch_end(self):\n        pass\n",
        "        pass\n")})


def test_a_framework_base_above_the_class_that_lost_the_hook_makes_no_proof(
    git_repo: Callable[..., GitRepo],
) -> None:
    """``Base(lightning.Callback)`` dropped ``on_epoch_end``; ``Callback`` may still define it,
    and the framework call it: the override may still run."""
    repo = git_repo()
    _lost_hook_repo(repo, "Callback", "from lightning.pytorch import Callback")
    found = audited(repo)["HG001 pkg.sub.Sub.on_epoch_end"]
    assert found.severity is Severity.WARNING
    assert "Callback, a base outside the checkout, may define it" in found.message


def test_a_known_external_base_that_lacks_the_name_keeps_the_proof(
    git_repo: Callable[..., GitRepo],
) -> None:
    """``torch.nn.Module`` is known (``model/externals.py``) and defines no ``on_epoch_end``."""
    repo = git_repo()
    _lost_hook_repo(repo, "nn.Module", "import torch.nn as nn")
    assert audited(repo)["HG001 pkg.sub.Sub.on_epoch_end"].severity is Severity.ERROR
